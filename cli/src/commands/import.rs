//! `toolreg import FILE [-o DIR]`: split an MCP `tools/list` result into
//! one tool directory per tool (`tool.json` + a `toolreg.toml` with the
//! registry name and version 0.1.0). Every tool is validated first; if any
//! is invalid or a directory already exists, nothing is written.

use std::path::Path;

use serde_json::{json, Value};
use toolreg_core::{Problem, ToolFiles};

use super::{init::kebab, load_tool, Context};
use crate::error::{Error, Result};
use crate::output;

pub fn run(ctx: &Context, file: &Path, out: Option<&Path>) -> Result<i32> {
    let file = ctx.path(Some(file));
    let text = std::fs::read(&file).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Usage(format!("{} does not exist", file.display())),
        _ => Error::io("could not read", &file, e),
    })?;
    let what = file.display().to_string();
    // Read as a definition is read: a key repeated in one object is
    // refused with its pointer (one of its values would be lost).
    let parsed = std::str::from_utf8(&text)
        .map_err(|e| e.to_string())
        .and_then(toolreg_core::formats::document::json)
        .map_err(|e| Error::Invalid {
            what: what.clone(),
            problems: vec![Problem::new("", format!("not valid JSON: {e}"))],
        })?;
    if !parsed.key_problems.is_empty() {
        return Err(Error::Invalid {
            what,
            problems: parsed.key_problems,
        });
    }
    let doc = parsed.value;
    let tools = tools_of(&doc).ok_or_else(|| Error::Invalid {
        what: what.clone(),
        problems: vec![Problem::new(
            "tools",
            "no tools array: expected a tools/list result {\"tools\": [...]}, a JSON-RPC response {\"result\": {\"tools\": [...]}} or an array of tools",
        )],
    })?;
    if tools.is_empty() {
        return Err(Error::Invalid {
            what,
            problems: vec![Problem::new("tools", "the tools array is empty")],
        });
    }
    let base = ctx.path(out);
    let mut planned: Vec<(String, ToolFiles)> = Vec::new();
    let mut problems = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let call = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(dir_name) = kebab(call) else {
            problems.push(Problem::new(
                format!("tools[{i}].name"),
                format!("`{call}` cannot be turned into a registry name (3–50 characters of kebab-case)"),
            ));
            continue;
        };
        if planned.iter().any(|(d, _)| d == &dir_name) {
            problems.push(Problem::new(
                format!("tools[{i}].name"),
                format!("a second tool named `{dir_name}`"),
            ));
            continue;
        }
        let mut files = ToolFiles::new();
        let body = serde_json::to_string_pretty(tool).unwrap_or_default() + "\n";
        files.insert("tool.json", body);
        files.insert(
            "toolreg.toml",
            format!(
                "# Imported from {} by toolreg import.\n[tool]\nname = \"{dir_name}\"\nversion = \"0.1.0\"\n{}",
                file_name(&file),
                siblings_line(tools, call)
            ),
        );
        match load_tool(&dir_name, &files) {
            Ok(_) => planned.push((dir_name, files)),
            Err(Error::Invalid { problems: p, .. }) => {
                problems.extend(p.into_iter().map(|mut p| {
                    p.path = if p.path.is_empty() {
                        format!("tools[{i}]")
                    } else {
                        format!("tools[{i}].{}", p.path)
                    };
                    p
                }))
            }
            Err(e) => return Err(e),
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid {
            what: format!("{what} (nothing was written)"),
            problems,
        });
    }
    for (dir_name, _) in &planned {
        let dir = base.join(dir_name);
        if dir.exists() {
            return Err(Error::Usage(format!(
                "{} already exists; nothing was written",
                dir.display()
            )));
        }
    }
    let mut created = Vec::new();
    for (dir_name, files) in &planned {
        let dir = base.join(dir_name);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("could not create", &dir, e))?;
        for (rel, bytes) in files.iter() {
            let target = dir.join(rel);
            std::fs::write(&target, bytes).map_err(|e| Error::io("could not write", &target, e))?;
        }
        created.push(dir.display().to_string());
    }
    if ctx.json {
        output::json(&json!({ "created": created }));
    } else {
        for c in &created {
            crate::outln!("created {c}");
        }
        crate::outln!(
            "{} tool(s) imported at version 0.1.0; set versions and licenses in each toolreg.toml",
            created.len()
        );
    }
    Ok(0)
}

/// `siblings = [...]`: the call names of the other tools of the same
/// tools/list, so that the lint weighs a description naming one of them as
/// a note (the registry can't check the claim), not a flag.
fn siblings_line(tools: &[Value], own: &str) -> String {
    let names: Vec<String> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .filter(|n| *n != own && toolreg_core::formats::is_call_name(n))
        .take(toolreg_core::manifest::MAX_SIBLINGS)
        .map(|n| format!("\"{n}\""))
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("siblings = [{}]\n", names.join(", "))
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .and_then(|f| f.to_str())
        .unwrap_or("the tools/list result")
        .to_string()
}

/// The tools array of a tools/list result, a JSON-RPC response, or a bare array.
fn tools_of(doc: &Value) -> Option<&Vec<Value>> {
    doc.as_array()
        .or_else(|| doc.get("tools").and_then(Value::as_array))
        .or_else(|| {
            doc.get("result")
                .and_then(|r| r.get("tools"))
                .and_then(Value::as_array)
        })
}
