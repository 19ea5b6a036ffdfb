//! A project with installed pins for the CLI benches (`verify`, `mcp`):
//! each pin is a real corpus definition (`../shared/corpus`, or core's
//! checked-in fixtures when it is absent) under a registry name and a call
//! name of its own, installed from its bundle the way `toolreg install` does.

use std::path::{Path, PathBuf};

use toolreg_cli::client::Download;
use toolreg_cli::install;
use toolreg_cli::lock::{LockedTool, Lockfile};
use toolreg_core::ToolFiles;

/// Definition files (MCP and Matimo http/command tools, which need no code files).
fn definitions() -> Vec<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = manifest.join("../../shared/corpus");
    let root = if corpus.is_dir() {
        corpus
    } else {
        manifest.join("../core/tests/fixtures")
    };
    let mut out = Vec::new();
    for (format, file) in [("mcp", "tool.json"), ("matimo", "definition.yaml")] {
        let Ok(entries) = std::fs::read_dir(root.join(format)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path().join(file);
            if path.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A bundle "downloaded" from memory. (The CLI's one error type carries
/// the detail it prints, so it is large; the lint against returning it from
/// a closure does not matter for a bench.)
#[allow(clippy::result_large_err)]
fn local(bytes: Vec<u8>) -> impl FnOnce() -> toolreg_cli::Result<Download> {
    move || {
        Ok(Download {
            url: "file://bench".into(),
            bytes,
        })
    }
}

/// A project with `pins` installed pins and their toolreg.lock.
pub fn project(pins: usize) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let mut lock = Lockfile::default();
    let mut usable = Vec::new();
    for path in definitions() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(&path).unwrap();
        usable.push((name, bytes));
    }
    let mut i = 0;
    let mut skipped = 0;
    while lock.tools().len() < pins {
        assert!(skipped < 1000, "no corpus definition loads");
        let (file, bytes) = &usable[i % usable.len()];
        i += 1;
        let name = format!("bench-tool-{:03}", lock.tools().len());
        let mut files = ToolFiles::new();
        files.insert(file.clone(), renamed(file, bytes, &name.replace('-', "_")));
        let version = if file == "tool.json" {
            "version = \"1.0.0\"\n"
        } else {
            ""
        };
        files.insert(
            "toolreg.toml",
            format!("[tool]\nname = \"{name}\"\nlicense = \"MIT\"\n{version}"),
        );
        let Ok(loaded) = toolreg_core::load(&files) else {
            skipped += 1;
            continue;
        };
        let bundle = toolreg_core::bundle::pack(&files).unwrap();
        let pin = LockedTool {
            name,
            version: loaded.tool.version.clone(),
            sha256: toolreg_core::digest::sha256_hex(&bundle),
            registry: "http://127.0.0.1:1".into(),
            execution: loaded.tool.execution.kind,
            definition: Some(toolreg_core::fingerprint::of_tool(&loaded.tool)),
            accepted_findings: Vec::new(),
            provenance: None,
        };
        install::install(project.path(), &pin, local(bundle)).unwrap();
        lock.upsert(pin);
    }
    lock.save(project.path()).unwrap();
    std::fs::write(project.path().join("toolreg.toml"), "[tools]\n").unwrap();
    project
}

/// The definition with its call name set to `call` (so that no two pins
/// of the project export the same tool).
fn renamed(file: &str, bytes: &[u8], call: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    if file == "tool.json" {
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        doc["name"] = serde_json::Value::String(call.to_string());
        return serde_json::to_vec_pretty(&doc).unwrap();
    }
    text.lines()
        .map(|l| {
            if l.starts_with("name:") {
                format!("name: {call}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}
