//! [`ToolFiles`]: a tool directory held in memory, keyed by relative path
//! with `/` separators. Built from a directory on disk or from an unpacked
//! bundle; it is what [`crate::load`] reads.
//!
//! A directory read from disk also knows its own name
//! ([`ToolFiles::dir_name`]): an Agent Skill's `name` must equal it. An
//! unpacked bundle has no directory (its files sit at the root of the
//! archive), so there the registry name in `toolreg.toml` stands for it
//! (see [`crate::formats::skill`]).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Error;

/// A tool directory in memory: relative `/`-separated path → file bytes, sorted by path.
///
/// Two are equal when their files are: the name of the directory they were
/// read from is not part of the comparison.
#[derive(Debug, Clone, Default)]
pub struct ToolFiles {
    files: BTreeMap<String, Vec<u8>>,
    dir_name: Option<String>,
}

impl PartialEq for ToolFiles {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files
    }
}

impl Eq for ToolFiles {}

impl ToolFiles {
    /// An empty tool directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add or replace the file at `path`.
    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }

    /// The bytes of the file at `path`, if present.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// True if there is a file at `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Paths in sorted order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Every (path, bytes) pair, in sorted path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True if there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Total size of all files in bytes.
    pub fn total_size(&self) -> u64 {
        self.files.values().map(|v| v.len() as u64).sum()
    }

    /// The name of the directory the files were read from
    /// ([`ToolFiles::read_dir`], [`ToolFiles::set_dir_name`]); `None` for
    /// files built in memory or unpacked from a bundle.
    pub fn dir_name(&self) -> Option<&str> {
        self.dir_name.as_deref()
    }

    /// Say which directory the files stand for (its last path component):
    /// what an Agent Skill's `name` must equal. `None` forgets it.
    pub fn set_dir_name(&mut self, name: Option<String>) {
        self.dir_name = name;
    }

    /// Read every regular file under `dir` (recursively), skipping `.git`,
    /// `.toolreg`, `target` and `node_modules` directories. Symlinks are
    /// refused, as the server would refuse them in a bundle. The
    /// directory's own name (of its canonical path, so `.` has one) is
    /// kept as [`ToolFiles::dir_name`].
    pub fn read_dir(dir: &Path) -> Result<Self, Error> {
        let mut out = ToolFiles::new();
        read_into(dir, dir, &mut out)?;
        out.dir_name = dir
            .canonicalize()
            .ok()
            .as_deref()
            .and_then(Path::file_name)
            .or_else(|| dir.file_name())
            .and_then(|n| n.to_str())
            .map(str::to_string);
        Ok(out)
    }
}

const SKIPPED_DIRS: &[&str] = &[".git", ".toolreg", "target", "node_modules"];

fn read_into(root: &Path, dir: &Path, out: &mut ToolFiles) -> Result<(), Error> {
    let io = |path: &Path, source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| io(dir, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
        let name = entry.file_name();
        let rel = path.strip_prefix(root).map_err(|_| {
            Error::Bundle(format!("{} is outside the tool directory", path.display()))
        })?;
        let rel = rel
            .to_str()
            .ok_or_else(|| Error::Bundle(format!("{} has a non-UTF-8 name", path.display())))?
            .replace('\\', "/");
        if meta.file_type().is_symlink() {
            return Err(Error::Bundle(format!(
                "{rel} is a symbolic link; bundles may not contain links"
            )));
        }
        if meta.is_dir() {
            if SKIPPED_DIRS.iter().any(|s| name == *s) {
                continue;
            }
            read_into(root, &path, out)?;
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).map_err(|e| io(&path, e))?;
            out.insert(rel, bytes);
        } else {
            return Err(Error::Bundle(format!("{rel} is not a regular file")));
        }
    }
    Ok(())
}
