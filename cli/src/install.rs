//! Installing pinned bundles into `.toolreg/tools/NAME/VERSION/`, and
//! checking that what is installed is still what the lock pins.
//!
//! The order matters: download, verify the sha256 against the lock BEFORE
//! anything is unpacked, unpack with the core's limits, check the bundle is
//! the tool the lock names (and, when the lock records one, that its
//! definition fingerprint is the pinned one), write into a temporary
//! directory beside the destination (each file created new, never over
//! another), then rename it into place. A failed
//! install leaves nothing half-written.
//!
//! Beside each installed directory live two files:
//!
//! * `VERSION.files.json`, the file manifest: the bundle's sha256, the
//!   definition fingerprint and the sha256 of every file unpacked. It is
//!   beside the directory, not in it, so that the directory holds exactly
//!   the bundle's files and an agent reading it never sees it.
//! * `VERSION.sha256`, the marker: the bundle digest, written last. Without
//!   it the directory is never trusted, so a crash mid-install only causes
//!   a reinstall.
//!
//! [`check`] ([`drift`]) compares an installed pin with its manifest and
//! the lock — every file edited, added or removed, and the fingerprint
//! recomputed from the files on disk — and [`install`] reinstalls a pin
//! that drifted.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use toolreg_core::bundle::{self, Limits};
use toolreg_core::digest::sha256_hex;
use toolreg_core::fingerprint;

use crate::client::Download;
use crate::error::{Error, Result};
use crate::lock::LockedTool;

pub mod drift;

pub use drift::{check, Drift, FileManifest, State};

/// Where installed tools live, relative to the project.
pub const TOOLS_DIR: &str = ".toolreg/tools";

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The pin was not installed; now it is.
    Installed,
    /// The installed files had drifted from the lock; they were replaced.
    Repaired,
    /// Already installed and intact: nothing was downloaded.
    AlreadyInstalled,
}

/// The result of [`install`]: what was done, the definition fingerprint of
/// the installed tool, and (for a repair) how the old install had drifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub outcome: Outcome,
    pub definition: String,
    pub repaired: Vec<Drift>,
}

/// `.toolreg/tools/NAME/VERSION` under `root`.
pub fn tool_dir(root: &Path, tool: &LockedTool) -> PathBuf {
    root.join(TOOLS_DIR)
        .join(&tool.name)
        .join(tool.version.to_string())
}

fn marker(root: &Path, tool: &LockedTool) -> PathBuf {
    root.join(TOOLS_DIR)
        .join(&tool.name)
        .join(format!("{}.sha256", tool.version))
}

/// `.toolreg/tools/NAME/VERSION.files.json` under `root`: the file manifest.
pub fn manifest_path(root: &Path, tool: &LockedTool) -> PathBuf {
    root.join(TOOLS_DIR)
        .join(&tool.name)
        .join(format!("{}.files.json", tool.version))
}

/// True when the directory exists and its marker records the locked digest
/// (whether or not its files drifted since; see [`check`]).
pub fn is_installed(root: &Path, tool: &LockedTool) -> bool {
    tool_dir(root, tool).is_dir()
        && std::fs::read_to_string(marker(root, tool))
            .map(|m| m.trim() == tool.sha256)
            .unwrap_or(false)
}

/// The definition fingerprint of the tool a bundle defines (to compare a
/// downloaded bundle with what the registry recorded, before installing it).
pub fn bundle_fingerprint(what: &str, bytes: &[u8]) -> Result<String> {
    let files = bundle::unpack(bytes, &Limits::default()).map_err(|source| Error::Core {
        context: format!("the bundle of {what} cannot be unpacked"),
        source,
    })?;
    let loaded = toolreg_core::load(&files).map_err(|source| Error::Core {
        context: format!("the bundle of {what} has no valid definition"),
        source,
    })?;
    Ok(fingerprint::of_tool(&loaded.tool))
}

/// Install one pinned tool, fetching its bundle with `fetch` only when it
/// is not installed or has drifted (then it is replaced: a repair).
pub fn install(
    root: &Path,
    tool: &LockedTool,
    fetch: impl FnOnce() -> Result<Download>,
) -> Result<Installed> {
    let repaired = match check(root, tool)? {
        State::Intact { definition, .. } => {
            return Ok(Installed {
                outcome: Outcome::AlreadyInstalled,
                definition,
                repaired: Vec::new(),
            })
        }
        State::NotInstalled => None,
        State::Drifted(drift) => Some(drift),
    };
    let download = fetch()?;
    let actual = sha256_hex(&download.bytes);
    if actual != tool.sha256 {
        return Err(Error::DigestMismatch {
            name: tool.name.clone(),
            version: tool.version.to_string(),
            expected: tool.sha256.clone(),
            actual,
            url: download.url,
        });
    }
    let what = format!("{} {}", tool.name, tool.version);
    let files =
        bundle::unpack(&download.bytes, &Limits::default()).map_err(|source| Error::Core {
            context: format!("the bundle of {what} cannot be unpacked"),
            source,
        })?;
    let loaded = toolreg_core::load(&files).map_err(|source| Error::Core {
        context: format!("the bundle of {what} has no valid definition"),
        source,
    })?;
    let t = &loaded.tool;
    if toolreg_core::name::normalize(&t.registry_name) != toolreg_core::name::normalize(&tool.name)
        || t.version != tool.version
        || t.execution.kind != tool.execution
    {
        return Err(Error::Installed(format!(
            "the bundle pinned as {what} ({}) is {} {} ({}); nothing was installed",
            tool.execution, t.registry_name, t.version, t.execution.kind
        )));
    }
    let definition = fingerprint::of_tool(t);
    if let Some(pinned) = &tool.definition {
        if *pinned != definition {
            return Err(Error::Installed(format!(
                "the bundle of {what} defines a tool with fingerprint {definition}, but toolreg.lock pins {pinned}; nothing was installed"
            )));
        }
    }
    let manifest = FileManifest {
        name: tool.name.clone(),
        version: tool.version.to_string(),
        sha256: tool.sha256.clone(),
        definition: definition.clone(),
        files: files
            .iter()
            .map(|(rel, bytes)| (rel.to_string(), sha256_hex(bytes)))
            .collect(),
    };

    let dest = tool_dir(root, tool);
    let parent = dest.parent().unwrap_or(root).to_path_buf();
    std::fs::create_dir_all(&parent).map_err(|e| Error::io("could not create", &parent, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".installing-")
        .tempdir_in(&parent)
        .map_err(|e| Error::io("could not create a temporary directory in", &parent, e))?;
    for (rel, bytes) in files.iter() {
        let target = safe_join(staging.path(), rel)?;
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("could not create", dir, e))?;
        }
        write_new(&target, bytes)?;
    }
    let marker = marker(root, tool);
    let manifest_file = manifest_path(root, tool);
    // The marker goes first-removed, last-written: without it the directory
    // is never trusted, so a crash in between only causes a reinstall.
    for stale in [&marker, &manifest_file] {
        match std::fs::remove_file(stale) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("could not remove", stale, e)),
        }
    }
    if dest.exists() {
        std::fs::remove_dir_all(&dest).map_err(|e| Error::io("could not replace", &dest, e))?;
    }
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, &dest) {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(Error::io("could not move the unpacked bundle to", &dest, e));
    }
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    std::fs::write(&manifest_file, text)
        .map_err(|e| Error::io("could not write", &manifest_file, e))?;
    std::fs::write(&marker, format!("{}\n", tool.sha256))
        .map_err(|e| Error::io("could not write", &marker, e))?;
    Ok(Installed {
        outcome: if repaired.is_some() {
            Outcome::Repaired
        } else {
            Outcome::Installed
        },
        definition,
        repaired: repaired.unwrap_or_default(),
    })
}

/// Write a file that must not exist yet. The staging directory starts
/// empty, so an existing file means two bundle entries name the same file on
/// this file system (case folding, normalization): refuse rather than let the
/// later entry replace the earlier one.
fn write_new(target: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Installed(format!(
                    "the bundle holds two entries that are the same file `{}` on this file system; nothing was installed",
                    target.display()
                ))
            } else {
                Error::io("could not create", target, e)
            }
        })?;
    file.write_all(bytes)
        .map_err(|e| Error::io("could not write", target, e))
}

/// `base/rel` for a relative path with only normal components.
fn safe_join(base: &Path, rel: &str) -> Result<PathBuf> {
    let path = Path::new(rel);
    if rel.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(Error::Installed(format!(
            "the bundle contains an unsafe path `{rel}`; nothing was installed"
        )));
    }
    Ok(base.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolreg_core::ExecutionKind;

    pub(super) const TOOL_JSON: &str = r#"{"name": "get_weather", "description": "Weather for a city",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}"#;

    pub(super) fn bundle_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tool.json"), TOOL_JSON).unwrap();
        std::fs::write(
            dir.path().join("toolreg.toml"),
            "[tool]\nname = \"get-weather\"\nversion = \"1.0.0\"\n",
        )
        .unwrap();
        dir
    }

    pub(super) fn pinned(bytes: &[u8]) -> LockedTool {
        LockedTool {
            name: "get-weather".into(),
            version: "1.0.0".parse().unwrap(),
            sha256: sha256_hex(bytes),
            registry: "http://127.0.0.1:1".into(),
            execution: ExecutionKind::Schema,
            definition: None,
            accepted_findings: Vec::new(),
            provenance: None,
        }
    }

    pub(super) fn local(bytes: &[u8]) -> impl FnOnce() -> Result<Download> + '_ {
        move || {
            Ok(Download {
                url: "file://local".into(),
                bytes: bytes.to_vec(),
            })
        }
    }

    #[test]
    fn installs_then_is_a_no_op() {
        let bytes = bundle::pack_dir(bundle_dir().path()).unwrap();
        let project = tempfile::tempdir().unwrap();
        let tool = pinned(&bytes);
        let done = install(project.path(), &tool, local(&bytes)).unwrap();
        assert_eq!(done.outcome, Outcome::Installed);
        assert!(toolreg_core::fingerprint::is_fingerprint(&done.definition));
        let dir = tool_dir(project.path(), &tool);
        assert!(dir.join("tool.json").is_file());
        assert!(is_installed(project.path(), &tool));
        let manifest: FileManifest =
            serde_json::from_slice(&std::fs::read(manifest_path(project.path(), &tool)).unwrap())
                .unwrap();
        assert_eq!(manifest.definition, done.definition);
        assert_eq!(
            manifest.files.keys().collect::<Vec<_>>(),
            ["tool.json", "toolreg.toml"]
        );
        assert_eq!(
            manifest.files["tool.json"],
            sha256_hex(TOOL_JSON.as_bytes())
        );
        let again = install(project.path(), &tool, || panic!("must not download again")).unwrap();
        assert_eq!(again.outcome, Outcome::AlreadyInstalled);
        assert_eq!(again.definition, done.definition);
    }

    #[test]
    fn digest_mismatch_is_refused_before_unpacking() {
        let bytes = bundle::pack_dir(bundle_dir().path()).unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut tool = pinned(&bytes);
        tool.sha256 = sha256_hex(b"something else");
        let err = install(project.path(), &tool, local(&bytes)).unwrap_err();
        assert!(matches!(err, Error::DigestMismatch { .. }), "{err}");
        assert!(err.to_string().contains(&sha256_hex(&bytes)), "{err}");
        assert!(!project
            .path()
            .join(TOOLS_DIR)
            .join("get-weather")
            .join("1.0.0")
            .exists());
    }

    #[test]
    fn wrong_tool_or_garbage_leaves_nothing_behind() {
        let project = tempfile::tempdir().unwrap();
        let garbage = b"not a gzip".to_vec();
        let err = install(project.path(), &pinned(&garbage), local(&garbage)).unwrap_err();
        assert!(err.to_string().contains("cannot be unpacked"), "{err}");

        let bytes = bundle::pack_dir(bundle_dir().path()).unwrap();
        let mut tool = pinned(&bytes);
        tool.execution = ExecutionKind::Http;
        let err = install(project.path(), &tool, local(&bytes)).unwrap_err();
        assert!(err.to_string().contains("nothing was installed"), "{err}");
        let parent = project.path().join(TOOLS_DIR).join("get-weather");
        let leftovers: Vec<_> = std::fs::read_dir(&parent)
            .map(|d| d.collect())
            .unwrap_or_default();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn files_are_created_new_never_over_another() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("tool.json");
        write_new(&target, b"checked").unwrap();
        let err = write_new(&target, b"unchecked").unwrap_err();
        assert!(err.to_string().contains("same file"), "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"checked");
    }

    #[test]
    fn a_directory_without_marker_is_reinstalled() {
        let bytes = bundle::pack_dir(bundle_dir().path()).unwrap();
        let project = tempfile::tempdir().unwrap();
        let tool = pinned(&bytes);
        let dir = tool_dir(project.path(), &tool);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("junk"), "half-written").unwrap();
        assert_eq!(
            install(project.path(), &tool, local(&bytes))
                .unwrap()
                .outcome,
            Outcome::Installed
        );
        assert!(!dir.join("junk").exists());
        assert!(dir.join("tool.json").exists());
    }

    #[test]
    fn a_bundle_whose_fingerprint_is_not_the_pinned_one_is_refused() {
        let bytes = bundle::pack_dir(bundle_dir().path()).unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut tool = pinned(&bytes);
        tool.definition = Some(format!("sha256:{}", "0".repeat(64)));
        let err = install(project.path(), &tool, local(&bytes)).unwrap_err();
        assert!(
            err.to_string().contains("toolreg.lock pins sha256:0000")
                && err.to_string().contains("nothing was installed"),
            "{err}"
        );
        assert!(!tool_dir(project.path(), &tool).exists());
    }
}
