//! Deterministic packing and limited unpacking of tool bundles.
//!
//! A bundle is a gzip'd tar of a tool directory. [`pack`] writes it so that
//! the same files always give the same bytes (and so the same sha256) on any
//! machine: entries sorted by path, regular files only, mode 0644, mtime 0,
//! uid/gid 0, empty user/group names, and a gzip header without mtime or file
//! name and a fixed OS byte.
//!
//! [`unpack`] reads an untrusted bundle within [`Limits`]: it refuses
//! absolute paths, `..`, links, devices and FIFOs, non-UTF-8 names, duplicate
//! entries (also `a` vs `./a`), too many entries, and too many bytes — the
//! decompressed stream is read through a bounded reader, so a decompression
//! bomb stops at the limit instead of being inflated. It also refuses names
//! that a consumer's file system would write as another file ([`names`]).
//! [`pack`] refuses the same names, so a packed bundle is one the registry
//! accepts.
//!
//! What a bundle may carry besides its definition depends on the tool's
//! execution kind ([`contents`]); [`crate::load`] checks that, since it is
//! where the kind is known.

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::path::Path;
use std::rc::Rc;

use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use tar::{EntryType, Header};

use crate::error::Error;
use crate::files::ToolFiles;

pub mod contents;
pub mod names;

/// Limits enforced when a bundle is unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted compressed bundle (default 10 MiB).
    pub max_compressed: u64,
    /// Largest total unpacked size (default 64 MiB).
    pub max_unpacked: u64,
    /// Most entries in the tar (default 2,000).
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_compressed: 10 * 1024 * 1024,
            max_unpacked: 64 * 1024 * 1024,
            max_entries: 2000,
        }
    }
}

/// The gzip OS byte written by [`pack`] (255 = "unknown"), fixed so bundles
/// don't depend on the packing machine.
const GZIP_OS_UNKNOWN: u8 = 255;

/// Pack a tool directory into a deterministic `.tar.gz`.
///
/// Every path must be relative, `/`-separated, without `.`/`..` components
/// or empty segments; otherwise [`Error::Bundle`] names the path.
pub fn pack(files: &ToolFiles) -> Result<Vec<u8>, Error> {
    check_file_dir_clashes(files.paths())?;
    names::check(files.paths())?;
    for path in files.paths() {
        check_pack_path(path)?;
    }
    write_tar_gz(files, Headers::Gnu)
}

/// Pack files as a plain ustar `.tar.gz`, for clients whose tar reader
/// knows no GNU long-name records (skill clients): the same determinism as
/// [`pack`], but each path must fit a ustar header (a 100-byte name after
/// at most a 155-byte directory prefix); [`Error::Bundle`] names one that
/// doesn't.
pub fn pack_ustar(files: &ToolFiles) -> Result<Vec<u8>, Error> {
    write_tar_gz(files, Headers::Ustar)
}

/// The tar header format [`write_tar_gz`] writes.
#[derive(Clone, Copy)]
enum Headers {
    /// GNU headers: any path length (long names as GNU records).
    Gnu,
    /// Plain ustar headers: paths that fit the header only.
    Ustar,
}

/// The files, in path order, as regular entries with fixed metadata, in a
/// gzip stream without a timestamp.
fn write_tar_gz(files: &ToolFiles, headers: Headers) -> Result<Vec<u8>, Error> {
    let io_err = |e: io::Error| Error::Bundle(format!("could not write the bundle: {e}"));
    let gz: GzEncoder<Vec<u8>> = GzBuilder::new()
        .mtime(0)
        .operating_system(GZIP_OS_UNKNOWN)
        .write(Vec::new(), Compression::default());
    let mut builder = tar::Builder::new(gz);
    // ToolFiles iterates in sorted path order.
    for (path, bytes) in files.iter() {
        let mut header = match headers {
            Headers::Gnu => Header::new_gnu(),
            Headers::Ustar => Header::new_ustar(),
        };
        header.set_entry_type(EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_username("").map_err(io_err)?;
        header.set_groupname("").map_err(io_err)?;
        match headers {
            Headers::Gnu => builder.append_data(&mut header, path, bytes),
            Headers::Ustar => {
                header.set_path(path).map_err(|_| {
                    Error::Bundle(format!(
                        "the path `{path}` is too long for a ustar archive, which holds at most 100 bytes of file name after at most 155 bytes of directories"
                    ))
                })?;
                header.set_cksum();
                builder.append(&header, bytes)
            }
        }
        .map_err(io_err)?;
    }
    let gz = builder.into_inner().map_err(io_err)?;
    let mut out = gz.finish().map_err(io_err)?;
    out.flush().map_err(io_err)?;
    Ok(out)
}

/// Read a directory and pack it (see [`pack`]).
pub fn pack_dir(dir: &Path) -> Result<Vec<u8>, Error> {
    pack(&ToolFiles::read_dir(dir)?)
}

fn check_pack_path(path: &str) -> Result<(), Error> {
    let bad = |why: &str| Err(Error::Bundle(format!("cannot pack `{path}`: {why}")));
    if path.is_empty() {
        return bad("empty path");
    }
    if path.starts_with('/') || path.contains('\\') || has_drive_prefix(path) {
        return bad("paths must be relative and use `/` separators");
    }
    for part in path.split('/') {
        match part {
            "" => return bad("empty path segment"),
            "." | ".." => return bad("`.` and `..` segments are not allowed"),
            _ => {}
        }
    }
    Ok(())
}

fn has_drive_prefix(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Unpack a bundle within `limits`, refusing everything the module
/// documentation lists.
///
/// Directory entries are accepted and ignored (the result holds files only).
/// Errors: [`Error::TooLarge`] for the size and entry-count limits (naming
/// the limit), [`Error::Bundle`] naming the offending entry otherwise.
pub fn unpack(bytes: &[u8], limits: &Limits) -> Result<ToolFiles, Error> {
    if bytes.len() as u64 > limits.max_compressed {
        return Err(Error::TooLarge {
            what: format!("the compressed bundle ({} bytes)", bytes.len()),
            limit: format!("max_compressed = {} bytes", limits.max_compressed),
        });
    }
    let unpacked_limit = || Error::TooLarge {
        what: "the unpacked bundle".to_string(),
        limit: format!("max_unpacked = {} bytes", limits.max_unpacked),
    };
    // The raw tar stream may exceed the content total by its headers and
    // padding (at most a few blocks per entry); anything beyond that is a bomb.
    let stream_budget = limits
        .max_unpacked
        .saturating_add(
            (limits.max_entries as u64)
                .saturating_add(4)
                .saturating_mul(3 * 512),
        )
        .saturating_add(64 * 1024);
    let tripped = Rc::new(Cell::new(false));
    let reader = Bounded {
        inner: flate2::read::GzDecoder::new(bytes),
        remaining: stream_budget,
        tripped: Rc::clone(&tripped),
    };
    let mut archive = tar::Archive::new(reader);
    let map_io = |e: io::Error, context: &str| {
        if tripped.get() {
            unpacked_limit()
        } else {
            Error::Bundle(format!("{context}: {e}"))
        }
    };

    let mut files = ToolFiles::new();
    let mut seen: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    let mut total: u64 = 0;
    let mut count: usize = 0;
    let entries = archive
        .entries()
        .map_err(|e| map_io(e, "not a gzip'd tar archive"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| map_io(e, "not a valid gzip'd tar archive"))?;
        count += 1;
        if count > limits.max_entries {
            return Err(Error::TooLarge {
                what: format!("the number of entries (more than {})", limits.max_entries),
                limit: format!("max_entries = {}", limits.max_entries),
            });
        }
        let raw_path = entry.path_bytes().into_owned();
        let name = String::from_utf8(raw_path).map_err(|e| {
            Error::Bundle(format!(
                "entry #{count} has a non-UTF-8 name ({}); names must be UTF-8",
                String::from_utf8_lossy(e.as_bytes())
            ))
        })?;
        let kind = entry.header().entry_type();
        let path = normalize_entry_path(&name)?;
        match kind {
            EntryType::Regular | EntryType::Continuous => {}
            // Directories are implied by file paths; a pax global header
            // (`git archive` writes one) carries only metadata.
            EntryType::Directory | EntryType::XGlobalHeader => continue,
            EntryType::Symlink | EntryType::Link => {
                return Err(Error::Bundle(format!("`{name}` is a link; bundles may not contain links")))
            }
            EntryType::Char | EntryType::Block => {
                return Err(Error::Bundle(format!("`{name}` is a device; bundles may contain regular files only")))
            }
            EntryType::Fifo => {
                return Err(Error::Bundle(format!("`{name}` is a FIFO; bundles may contain regular files only")))
            }
            other => {
                return Err(Error::Bundle(format!(
                    "`{name}` has an unsupported entry type ({other:?}); bundles may contain regular files only"
                )))
            }
        }
        let Some(path) = path else {
            return Err(Error::Bundle(format!("`{name}` is not a file path")));
        };
        if let Some(first) = seen.get(&path) {
            return Err(Error::Bundle(if *first == name {
                format!("duplicate entry `{name}`")
            } else {
                format!("duplicate entry `{path}` (as `{first}` and `{name}`)")
            }));
        }
        let size = entry
            .header()
            .size()
            .map_err(|e| Error::Bundle(format!("`{name}` has a bad size: {e}")))?;
        if total.saturating_add(size) > limits.max_unpacked {
            return Err(unpacked_limit());
        }
        let mut content = Vec::with_capacity(size.min(1024 * 1024) as usize);
        (&mut entry)
            .take(size)
            .read_to_end(&mut content)
            .map_err(|e| map_io(e, &format!("could not read `{name}`")))?;
        total += content.len() as u64;
        if total > limits.max_unpacked {
            return Err(unpacked_limit());
        }
        seen.insert(path.clone(), name);
        files.insert(path, content);
    }
    check_file_dir_clashes(files.paths())?;
    names::check(files.paths())?;
    Ok(files)
}

/// Refuse a path that is both a file and a directory (`a` and `a/b`): it
/// can't be written to disk.
fn check_file_dir_clashes<'a>(paths: impl Iterator<Item = &'a str>) -> Result<(), Error> {
    let all: std::collections::BTreeSet<&str> = paths.collect();
    for p in &all {
        let dir = format!("{p}/");
        if let Some(child) = all
            .range(dir.as_str()..)
            .next()
            .filter(|c| c.starts_with(&dir))
        {
            return Err(Error::Bundle(format!(
                "`{p}` is both a file and a directory (`{child}`)"
            )));
        }
    }
    Ok(())
}

/// Check an entry name and return its normalized relative path (without
/// `./` and empty segments). `Ok(None)` for the root itself (`./`).
fn normalize_entry_path(name: &str) -> Result<Option<String>, Error> {
    if name.starts_with('/') || has_drive_prefix(name) {
        return Err(Error::Bundle(format!(
            "`{name}` is an absolute path; bundle paths must be relative"
        )));
    }
    if name.contains('\\') {
        return Err(Error::Bundle(format!(
            "`{name}` contains `\\`; bundle paths use `/` separators"
        )));
    }
    if name.contains('\0') {
        return Err(Error::Bundle(format!("`{name}` contains a NUL byte")));
    }
    let mut parts = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(Error::Bundle(format!(
                    "`{name}` contains `..`; bundle paths must stay inside the bundle"
                )))
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    Ok(Some(parts.join("/")))
}

/// A reader that fails once more than `remaining` bytes were asked of it,
/// recording that the limit (not the data) was the cause.
struct Bounded<R> {
    inner: R,
    remaining: u64,
    tripped: Rc<Cell<bool>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            // Is there more? Probe one byte; if so the limit is exceeded.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    self.tripped.set(true);
                    Err(io::Error::other(
                        "the unpacked bundle exceeds its size limit",
                    ))
                }
            };
        }
        let max = buf
            .len()
            .min(self.remaining.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..max])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_paths_are_normalized() {
        assert_eq!(
            normalize_entry_path("./a/b").unwrap().as_deref(),
            Some("a/b")
        );
        assert_eq!(
            normalize_entry_path("a//b/").unwrap().as_deref(),
            Some("a/b")
        );
        assert_eq!(normalize_entry_path("./").unwrap(), None);
        assert!(normalize_entry_path("../a").is_err());
        assert!(normalize_entry_path("/etc/passwd").is_err());
        assert!(normalize_entry_path("C:/x").is_err());
    }
}
