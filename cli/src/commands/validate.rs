//! `toolreg validate [PATH]`: validate a tool directory or a single
//! definition file and report every problem at once, each with its field
//! path, then the definition lint's findings (rule, pointer, excerpt). A
//! block finding (hidden characters, a live credential) makes the
//! definition invalid. Exit 0 valid, 1 invalid, 2 usage (including a path
//! that does not exist).

use std::path::Path;

use serde_json::json;
use toolreg_core::{Format, ToolFiles};

use super::{load_tool, read_tool_dir, Context};
use crate::error::{Error, Result};
use crate::output;

pub fn run(ctx: &Context, path: Option<&Path>) -> Result<i32> {
    let path = ctx.path(path);
    let files = files_for(&path)?;
    let what = path.display().to_string();
    match load_tool(&what, &files) {
        Ok(loaded) => {
            let t = &loaded.tool;
            let blocks = toolreg_core::lint::block_problems(&loaded.findings);
            if ctx.json {
                output::json(&json!({
                    "valid": blocks.is_empty(),
                    "name": t.registry_name,
                    "call_name": t.call_name,
                    "version": t.version.to_string(),
                    "format": t.format,
                    "execution": t.execution.kind,
                    "warnings": loaded.warnings,
                    "findings": loaded.findings,
                    "problems": blocks,
                }));
                return Ok(if blocks.is_empty() { 0 } else { 1 });
            }
            if !blocks.is_empty() {
                print_flags(&loaded);
                return Err(Error::Invalid {
                    what,
                    problems: blocks,
                });
            }
            crate::outln!(
                "{what}: valid {} tool {} {} (execution: {})",
                t.format,
                t.registry_name,
                t.version,
                t.execution.kind
            );
            for w in &loaded.warnings {
                crate::outln!("  warning: {w}");
            }
            for f in &loaded.findings {
                crate::outln!("  finding: {f}");
            }
            Ok(0)
        }
        Err(Error::Invalid { what, problems }) if ctx.json => {
            output::json(&json!({ "valid": false, "path": what, "problems": problems }));
            Ok(1)
        }
        Err(e) => Err(e),
    }
}

/// The flag findings, as status lines (the blocks are in the error).
pub fn print_flags(loaded: &toolreg_core::Loaded) {
    for f in loaded.findings.iter().filter(|f| !f.is_block()) {
        output::status(format!("finding: {f}"));
    }
}

/// The files to validate: a directory as is; a definition file with the
/// rest of its directory when it has a definition file name, else alone
/// (with a `toolreg.toml` beside it), under the name its content suggests.
pub fn files_for(path: &Path) -> Result<ToolFiles> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Usage(format!("{} does not exist", path.display())),
        _ => Error::io("could not read", path, e),
    })?;
    if meta.is_dir() {
        return read_tool_dir(path);
    }
    let file_name = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if Format::ALL
        .iter()
        .any(|f| f.file_names().contains(&file_name))
    {
        return read_tool_dir(dir);
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io("could not read", path, e))?;
    let canonical = guess_definition_name(path, &bytes)?;
    let mut files = ToolFiles::new();
    files.insert(canonical, bytes);
    let manifest = dir.join("toolreg.toml");
    if manifest.is_file() {
        let m = std::fs::read(&manifest).map_err(|e| Error::io("could not read", &manifest, e))?;
        files.insert("toolreg.toml", m);
    }
    Ok(files)
}

/// The definition file name a stray file stands for, from its extension and content.
fn guess_definition_name(path: &Path, bytes: &[u8]) -> Result<&'static str> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if ext == "yaml" || ext == "yml" {
        return Ok("definition.yaml");
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| Error::Invalid {
        what: path.display().to_string(),
        problems: vec![toolreg_core::Problem::new(
            "",
            format!("not YAML by name and not valid JSON: {e}"),
        )],
    })?;
    if value.get("tools").is_some_and(|t| t.is_array()) || value.is_array() {
        return Err(Error::Invalid {
            what: path.display().to_string(),
            problems: vec![toolreg_core::Problem::new(
                "tools",
                "this is an MCP tools/list result (several tools), not one tool",
            )
            .with_fix(format!("split it with `toolreg import {}`", path.display()))],
        });
    }
    Ok(if value.get("inputSchema").is_some() {
        "tool.json"
    } else if value.get("model_prompt").is_some() {
        "prompt.json"
    } else {
        "metadata.json"
    })
}
