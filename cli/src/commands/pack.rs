//! `toolreg pack [PATH] [-o FILE]`: validate a tool directory, pack it into
//! a deterministic bundle and print the bundle's sha256 on stdout.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolreg_core::digest::sha256_hex;

use super::{load_tool, read_tool_dir, Context};
use crate::error::{Error, Result};
use crate::output;

/// A packed, validated bundle.
pub struct Packed {
    pub loaded: toolreg_core::Loaded,
    pub bytes: Vec<u8>,
    pub sha256: String,
}

/// Validate and pack `dir`.
pub fn pack(dir: &Path) -> Result<Packed> {
    let files = read_tool_dir(dir)?;
    let loaded = load_tool(&dir.display().to_string(), &files)?;
    let bytes = toolreg_core::bundle::pack(&files).map_err(|source| Error::Core {
        context: format!("cannot pack {}", dir.display()),
        source,
    })?;
    let sha256 = sha256_hex(&bytes);
    Ok(Packed {
        loaded,
        bytes,
        sha256,
    })
}

pub fn run(ctx: &Context, path: Option<&Path>, out: Option<&Path>) -> Result<i32> {
    let dir = ctx.path(path);
    let packed = pack(&dir)?;
    let t = &packed.loaded.tool;
    let file: PathBuf = match out {
        Some(o) => ctx.path(Some(o)),
        None => ctx
            .cwd
            .join(format!("{}-{}.tgz", t.registry_name, t.version)),
    };
    std::fs::write(&file, &packed.bytes).map_err(|e| Error::io("could not write", &file, e))?;
    if ctx.json {
        output::json(&json!({
            "name": t.registry_name,
            "version": t.version.to_string(),
            "file": file.display().to_string(),
            "size": packed.bytes.len(),
            "sha256": packed.sha256,
        }));
    } else {
        for w in &packed.loaded.warnings {
            output::status(format!("warning: {w}"));
        }
        output::status(format!(
            "packed {} {} into {} ({} bytes)",
            t.registry_name,
            t.version,
            file.display(),
            packed.bytes.len()
        ));
        crate::outln!("{}", packed.sha256);
    }
    Ok(0)
}
