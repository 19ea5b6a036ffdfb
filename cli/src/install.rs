//! Installing pinned bundles into `.toolreg/tools/NAME/VERSION/`.
//!
//! The order matters: download, verify the sha256 against the lock BEFORE
//! anything is unpacked, unpack with the core's limits, check the bundle is
//! the tool the lock names, write into a temporary directory beside the
//! destination (each file created new, never over another), then rename it
//! into place. A failed install leaves nothing half-written. A marker file `VERSION.sha256` beside the directory records
//! what is installed, so a second install is a no-op.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use toolreg_core::bundle::{self, Limits};
use toolreg_core::digest::sha256_hex;

use crate::client::Download;
use crate::error::{Error, Result};
use crate::lock::LockedTool;

/// Where installed tools live, relative to the project.
pub const TOOLS_DIR: &str = ".toolreg/tools";

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Installed,
    AlreadyInstalled,
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

/// True when the directory exists and its marker records the locked digest.
pub fn is_installed(root: &Path, tool: &LockedTool) -> bool {
    tool_dir(root, tool).is_dir()
        && std::fs::read_to_string(marker(root, tool))
            .map(|m| m.trim() == tool.sha256)
            .unwrap_or(false)
}

/// Install one pinned tool, fetching its bundle with `fetch` only when needed.
pub fn install(
    root: &Path,
    tool: &LockedTool,
    fetch: impl FnOnce() -> Result<Download>,
) -> Result<Outcome> {
    if is_installed(root, tool) {
        return Ok(Outcome::AlreadyInstalled);
    }
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
    // The marker goes first-removed, last-written: without it the directory
    // is never trusted, so a crash in between only causes a reinstall.
    match std::fs::remove_file(&marker) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("could not remove", &marker, e)),
    }
    if dest.exists() {
        std::fs::remove_dir_all(&dest).map_err(|e| Error::io("could not replace", &dest, e))?;
    }
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, &dest) {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(Error::io("could not move the unpacked bundle to", &dest, e));
    }
    std::fs::write(&marker, format!("{}\n", tool.sha256))
        .map_err(|e| Error::io("could not write", &marker, e))?;
    Ok(Outcome::Installed)
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

    const TOOL_JSON: &str = r#"{"name": "get_weather", "description": "Weather for a city",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}"#;

    fn bundle_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tool.json"), TOOL_JSON).unwrap();
        std::fs::write(
            dir.path().join("toolreg.toml"),
            "[tool]\nname = \"get-weather\"\nversion = \"1.0.0\"\n",
        )
        .unwrap();
        dir
    }

    fn pinned(bytes: &[u8]) -> LockedTool {
        LockedTool {
            name: "get-weather".into(),
            version: "1.0.0".parse().unwrap(),
            sha256: sha256_hex(bytes),
            registry: "http://127.0.0.1:1".into(),
            execution: ExecutionKind::Schema,
        }
    }

    fn local(bytes: &[u8]) -> impl FnOnce() -> Result<Download> + '_ {
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
        assert_eq!(
            install(project.path(), &tool, local(&bytes)).unwrap(),
            Outcome::Installed
        );
        let dir = tool_dir(project.path(), &tool);
        assert!(dir.join("tool.json").is_file());
        assert!(is_installed(project.path(), &tool));
        let again = install(project.path(), &tool, || panic!("must not download again")).unwrap();
        assert_eq!(again, Outcome::AlreadyInstalled);
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
            install(project.path(), &tool, local(&bytes)).unwrap(),
            Outcome::Installed
        );
        assert!(!dir.join("junk").exists());
        assert!(dir.join("tool.json").exists());
    }
}
