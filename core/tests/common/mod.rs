//! Helpers shared by the integration tests: locating the shared corpus and
//! the checked-in fixtures, and turning a definition into a complete tool
//! directory (stand-in code files, a `toolreg.toml` where one is needed).

#![allow(dead_code)]

pub mod ordinary;

use std::path::{Path, PathBuf};

use toolreg_core::ToolFiles;

/// `../shared/corpus` relative to the workspace root, if present. When it is
/// absent the caller skips (after a `SKIPPED:` line) — or this panics when
/// `CI` or `TOOLREG_REQUIRE_SERVICES` is set.
pub fn corpus() -> Option<PathBuf> {
    toolreg_test_support::corpus()
}

/// The checked-in fixtures (MIT/Apache matimo/ and mcp/ files).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every definition file under `root/<format>/` (recursively), sorted, as
/// paths relative to `root` with `/` separators.
pub fn definition_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(root, &path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
        {
            out.push(
                path.strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/"),
            );
        }
    }
}

/// The corpus files listed in KNOWN_BROKEN.txt (relative path, reason).
pub fn known_broken(root: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root.join("KNOWN_BROKEN.txt")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (path, reason) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (path.to_string(), reason.trim().to_string())
        })
        .collect()
}

/// The tool directory for one definition file as the corpus has it, with
/// the definition under its bundle file name (a tools/list file becomes
/// `tool.json`), plus stand-in code files so function tools are complete.
/// No `toolreg.toml` is added.
pub fn tool_dir(root: &Path, rel: &str) -> ToolFiles {
    let path = root.join(rel);
    let bytes = std::fs::read(&path).unwrap();
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let bundle_name = match file_name {
        "definition.yaml" | "definition.yml" | "metadata.json" | "tool.json" | "prompt.json" => {
            file_name
        }
        _ => "tool.json",
    };
    let mut files = ToolFiles::new();
    files.insert(bundle_name, bytes.clone());
    match bundle_name {
        "definition.yaml" | "definition.yml" => {
            let doc =
                toolreg_core::formats::matimo::parse_yaml(std::str::from_utf8(&bytes).unwrap())
                    .unwrap();
            if let Some(code) = doc.pointer("/execution/code").and_then(|c| c.as_str()) {
                if doc.pointer("/execution/type").and_then(|t| t.as_str()) == Some("function") {
                    let code = code.trim_start_matches("./");
                    files.insert(code, "// stand-in for the tool's code (not part of the corpus)\nexport default async function () {}\n");
                }
            }
        }
        "metadata.json" => {
            let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            if doc.get("tool_type").and_then(|t| t.as_str()) == Some("python") {
                files.insert(
                    "tool.py",
                    "# stand-in\ndef run(config, params):\n    return {}\n",
                );
            } else {
                files.insert("tool.ts", "// stand-in for the tool's code (not part of the corpus)\nexport async function run() { return {}; }\n");
            }
        }
        _ => {}
    }
    files
}

/// The `toolreg.toml` a corpus file needs to be publishable: a version for
/// formats or files without a SemVer one, a name where the format's own
/// name gives no valid registry name.
pub fn needed_toml(rel: &str) -> Option<&'static str> {
    if rel.starts_with("mcp/") {
        return Some("[tool]\nversion = \"1.0.0\"\nlicense = \"MIT\"\n");
    }
    match rel {
        "shinkai/twitter-post/metadata.json" => Some("[tool]\nname = \"twitter-post\"\n"),
        "shinkai/stagehand-generic/metadata.json" => Some("[tool]\nversion = \"1.0.0\"\n"),
        "prompt/tone-rewriter/prompt.json" => Some("[tool]\nversion = \"3.0.0\"\n"),
        _ => None,
    }
}

/// [`tool_dir`] plus the [`needed_toml`] if any.
pub fn complete_tool_dir(root: &Path, rel: &str) -> ToolFiles {
    let mut files = tool_dir(root, rel);
    if let Some(toml) = needed_toml(rel) {
        files.insert("toolreg.toml", toml);
    }
    files
}
