//! `toolreg init [PATH] --format F [--name N]`: scaffold a tool directory
//! of a format that validates as written (checked before anything is
//! written), with an http/prompt/schema tool where the format allows one so
//! that any publisher tier may publish it. A skill (`--format skill`) is
//! named as its directory and carries its version in `metadata.version`.

use std::path::Path;

use serde_json::json;
use toolreg_core::ToolFiles;

use super::{load_tool, Context};
use crate::args::FormatArg;
use crate::error::{Error, Result};
use crate::output;

pub fn run(
    ctx: &Context,
    path: Option<&Path>,
    format: FormatArg,
    name: Option<&str>,
) -> Result<i32> {
    let dir = ctx.path(path);
    let name = match (name, format) {
        (_, FormatArg::Skill) => skill_name(&dir, name)?,
        (Some(n), _) => {
            check_registry_name(n)?;
            n.to_string()
        }
        (None, _) => name_from_dir(&dir),
    };
    let files = scaffold(format, &name);
    for (rel, _) in files.iter() {
        let target = dir.join(rel);
        if target.exists() {
            return Err(Error::Usage(format!(
                "{} already exists; init only creates new files",
                target.display()
            )));
        }
    }
    // What we scaffold must validate; check before writing anything.
    let loaded = load_tool(&format!("the {} scaffold", format.as_str()), &files)?;
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("could not create", &dir, e))?;
    let mut written = Vec::new();
    for (rel, bytes) in files.iter() {
        let target = dir.join(rel);
        std::fs::write(&target, bytes).map_err(|e| Error::io("could not write", &target, e))?;
        written.push(rel.to_string());
    }
    let t = &loaded.tool;
    if ctx.json {
        output::json(&json!({
            "path": dir.display().to_string(),
            "name": t.registry_name,
            "version": t.version.to_string(),
            "format": t.format,
            "execution": t.execution.kind,
            "files": written,
        }));
    } else {
        crate::outln!(
            "created {} tool {} {} in {} ({})",
            t.format,
            t.registry_name,
            t.version,
            dir.display(),
            written.join(", ")
        );
        crate::outln!("next: edit it, then `toolreg validate` and `toolreg publish`");
    }
    Ok(0)
}

/// A registry name: lowercase kebab-case, 3–50 characters.
pub fn is_registry_name(name: &str) -> bool {
    let len_ok = (3..=50).contains(&name.len());
    let starts = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    let chars_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let dashes_ok = !name.ends_with('-') && !name.contains("--");
    len_ok && starts && chars_ok && dashes_ok
}

fn check_registry_name(name: &str) -> Result<()> {
    if is_registry_name(name) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "`{name}` is not a registry name: use 3–50 characters of lowercase kebab-case, like `web-search`"
        )))
    }
}

/// Kebab-case form of arbitrary text (`My_Tool v2` → `my-tool-v2`), if it makes a valid name.
pub fn kebab(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    let out: String = out
        .chars()
        .take(50)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string();
    is_registry_name(&out).then_some(out)
}

fn name_from_dir(dir: &Path) -> String {
    dir.file_name()
        .and_then(|f| f.to_str())
        .and_then(kebab)
        .unwrap_or_else(|| "my-tool".to_string())
}

/// A skill's name is its directory's name (the Agent Skills
/// specification): the directory must be named as a registry name, and
/// `--name`, if given, must be that name.
fn skill_name(dir: &Path, name: Option<&str>) -> Result<String> {
    let dir_name = dir.file_name().and_then(|f| f.to_str()).unwrap_or("");
    if let Some(n) = name.filter(|n| *n != dir_name) {
        return Err(Error::Usage(format!(
            "--name {n}: a skill's name is its directory's name (`{dir_name}`); run `toolreg init {n} --format skill` to create the directory {n}"
        )));
    }
    if !is_registry_name(dir_name) {
        return Err(Error::Usage(format!(
            "the directory name `{dir_name}` can't be a skill's name: a skill is named as its directory,              in 3–50 characters of lowercase kebab-case, like `tidy-notes`; run `toolreg init tidy-notes --format skill`"
        )));
    }
    Ok(dir_name.to_string())
}

fn title(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn toolreg_toml(name: &str) -> String {
    format!(
        "# Registry metadata the definition format does not carry.\n[tool]\nname = \"{name}\"\nversion = \"0.1.0\"\nlicense = \"MIT\"\nkeywords = [\"example\"]\n"
    )
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// The files of a new tool of `format` named `name`.
pub fn scaffold(format: FormatArg, name: &str) -> ToolFiles {
    let call = name.replace('-', "_");
    let title = title(name);
    let mut files = ToolFiles::new();
    if format == FormatArg::Skill {
        // SKILL.md is the skill's documentation: no README.md beside it.
        files.insert(
            "SKILL.md",
            format!(
                "---\nname: {name}\ndescription: Say what {title} does, and when an agent should use it.\nlicense: MIT\nmetadata:\n  version: \"0.1.0\"\n---\n\n# {title}\n\nStep-by-step instructions the agent follows when it uses this skill.\n\n1. First, do this.\n2. Then, do that.\n"
            ),
        );
        return files;
    }
    files.insert(
        "README.md",
        format!("# {title}\n\nDescribe what {name} does, its parameters and what it returns.\n"),
    );
    match format {
        FormatArg::Matimo => {
            files.insert(
                "definition.yaml",
                format!(
                    "name: {name}\nversion: '0.1.0'\ndescription: 'Look up {title} results for a query'\n\n\
parameters:\n  query:\n    type: string\n    description: 'What to look up'\n    required: true\n\n\
execution:\n  type: http\n  method: GET\n  url: 'https://api.example.com/search?q={{query}}'\n  headers:\n    Accept: 'application/json'\n\n\
output_schema:\n  type: object\n  properties:\n    results:\n      type: array\n      items:\n        type: string\n"
                ),
            );
        }
        FormatArg::Mcp => {
            files.insert(
                "tool.json",
                pretty(&json!({
                    "name": call,
                    "title": title,
                    "description": format!("Look up {title} results for a query."),
                    "inputSchema": {
                        "type": "object",
                        "properties": {"query": {"type": "string", "description": "What to look up"}},
                        "required": ["query"]
                    },
                    "annotations": {"readOnlyHint": true, "openWorldHint": true}
                })),
            );
            files.insert("toolreg.toml", toolreg_toml(name));
        }
        FormatArg::Prompt => {
            files.insert(
                "prompt.json",
                pretty(&json!({
                    "version": "0.1.0",
                    "model_prompt": "Rewrite the following text in a {{tone}} tone:\n\n{{text}}",
                    "metadata": {
                        "prompt_name": title,
                        "description": format!("{title}: rewrites a text in a chosen tone."),
                        "variables": [
                            {"name": "text", "type": "text", "description": "The text to rewrite.", "default": ""},
                            {"name": "tone", "type": "single-select", "description": "The tone to use.",
                             "default": "friendly", "allowed_values": ["friendly", "formal"]}
                        ],
                        "expected_output": {"type": "text"}
                    }
                })),
            );
            files.insert("toolreg.toml", toolreg_toml(name));
        }
        FormatArg::Skill => {}
        FormatArg::Shinkai => {
            files.insert(
                "metadata.json",
                pretty(&json!({
                    "id": name,
                    "version": "0.1.0",
                    "name": title,
                    "description": format!("{title}: echoes a message back."),
                    "author": "you",
                    "keywords": ["example"],
                    "tool_type": "typescript",
                    "configurations": {"type": "object", "properties": {}, "required": []},
                    "parameters": {
                        "type": "object",
                        "properties": {"message": {"type": "string", "description": "The message to echo"}},
                        "required": ["message"]
                    },
                    "result": {
                        "type": "object",
                        "properties": {"echo": {"type": "string", "description": "The message"}},
                        "required": ["echo"]
                    }
                })),
            );
            files.insert(
                "tool.ts",
                "type CONFIG = Record<string, never>;\ntype INPUTS = { message: string };\ntype OUTPUT = { echo: string };\n\n\
export async function run(_config: CONFIG, inputs: INPUTS): Promise<OUTPUT> {\n  return { echo: inputs.message };\n}\n",
            );
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_directories() {
        assert_eq!(kebab("My_Tool v2").as_deref(), Some("my-tool-v2"));
        assert_eq!(kebab("--x--"), None);
        assert_eq!(kebab("ok"), None, "too short");
        assert!(is_registry_name("web-search"));
        assert!(!is_registry_name("Web-Search"));
        assert!(!is_registry_name("web--search"));
        assert!(!is_registry_name("9lives"));
    }

    #[test]
    fn every_scaffold_is_valid_and_has_the_requested_format() {
        for format in [
            FormatArg::Matimo,
            FormatArg::Shinkai,
            FormatArg::Mcp,
            FormatArg::Prompt,
            FormatArg::Skill,
        ] {
            let files = scaffold(format, "demo-tool");
            let loaded = toolreg_core::load(&files).unwrap_or_else(|e| {
                panic!(
                    "{} scaffold invalid: {e}: {:?}",
                    format.as_str(),
                    e.problems()
                )
            });
            assert_eq!(loaded.tool.format.as_str(), format.as_str());
            assert_eq!(loaded.tool.registry_name, "demo-tool");
            assert_eq!(loaded.tool.version.to_string(), "0.1.0");
        }
    }
}
