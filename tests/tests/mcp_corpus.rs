//! The real corpus through `toolreg mcp serve`: every corpus definition
//! that installs (each under a registry name of its own, with stand-in code
//! files where the bundle needs them) is served, and its `tools/list` entry
//! is accepted by the MCP Python SDK's `Tool` type (at 2026-07-28 and
//! 2025-11-25) and the TypeScript SDK's `ToolSchema` (2025-11-25). At
//! 2026-07-28 each listed tool hashes to the lock's definition fingerprint.
//! Pins exporting one call name are served in separate runs (`--tools`),
//! since one server refuses two tools under one name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolreg_core::fingerprint;
use toolreg_e2e::mcp::{write, Sdk, Workspace};
use toolreg_e2e::{bin, shared_corpus};

/// Every definition file of the corpus (relative paths), but the ones
/// KNOWN_BROKEN.txt lists.
fn definitions(corpus: &Path) -> Vec<String> {
    let broken = std::fs::read_to_string(corpus.join("KNOWN_BROKEN.txt")).unwrap();
    let broken: Vec<&str> = broken
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut out = Vec::new();
    for format in ["matimo", "mcp", "prompt", "shinkai"] {
        for entry in std::fs::read_dir(corpus.join(format)).unwrap().flatten() {
            for file in [
                "definition.yaml",
                "tool.json",
                "prompt.json",
                "metadata.json",
            ] {
                let rel = format!("{format}/{}/{file}", entry.file_name().to_string_lossy());
                if corpus.join(&rel).is_file() && !broken.contains(&rel.as_str()) {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    out
}

/// A publishable tool directory for one corpus definition, named after its
/// format and corpus directory: the definition, the code files it names (stand-ins),
/// and a toolreg.toml with the name (and a version where the file has none
/// that is SemVer).
fn tool_dir(corpus: &Path, rel: &str, into: &Path) -> String {
    let src = corpus.join(rel);
    let dir_name = src.parent().unwrap().file_name().unwrap().to_string_lossy();
    let format = rel.split('/').next().unwrap_or_default();
    let name: String = format!("{format}-{dir_name}")
        .to_lowercase()
        .replace('_', "-")
        .chars()
        .take(50)
        .collect();
    let name = name.trim_end_matches('-').to_string();
    let dir = into.join(&name);
    let file = src.file_name().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(&src).unwrap();
    write(&dir.join(&file), &text);
    if file == "definition.yaml" {
        let doc = toolreg_core::formats::matimo::parse_yaml(&text).unwrap();
        if doc.pointer("/execution/type").and_then(Value::as_str) == Some("function") {
            if let Some(code) = doc.pointer("/execution/code").and_then(Value::as_str) {
                write(
                    &dir.join(code.trim_start_matches("./")),
                    "export default async () => ({});\n",
                );
            }
        }
    }
    if file == "metadata.json" {
        let doc: Value = serde_json::from_str(&text).unwrap();
        if doc.get("tool_type").and_then(Value::as_str) == Some("python") {
            write(
                &dir.join("tool.py"),
                "async def run(c, p):\n    return {}\n",
            );
        } else {
            write(
                &dir.join("tool.ts"),
                "export async function run() { return {}; }\n",
            );
        }
    }
    let mut manifest = format!("[tool]\nname = \"{name}\"\n");
    write(&dir.join("toolreg.toml"), &manifest);
    let needs_version = match toolreg_core::load(&toolreg_core::ToolFiles::read_dir(&dir).unwrap())
    {
        Ok(_) => false,
        Err(e) => e.problems().iter().any(|p| p.path == "version"),
    };
    if needs_version {
        manifest.push_str("version = \"1.0.0\"\n");
        write(&dir.join("toolreg.toml"), &manifest);
    }
    name
}

#[test]
fn every_corpus_tool_that_installs_is_served_and_every_sdk_accepts_its_listing() {
    let Some(sdk) = Sdk::find() else { return };
    let Some(corpus) = shared_corpus() else {
        return;
    };
    let mut ws = Workspace::start();
    let agent = ws.agent.clone();
    let defs = definitions(&corpus);
    assert!(defs.len() >= 30, "{defs:?}");
    let mut names = Vec::new();
    for rel in &defs {
        let into = ws.root().join("tools");
        let name = tool_dir(&corpus, rel, &into);
        ws.publish_and_add(&name, &into.join(&name));
        names.push(name);
    }
    ws.install_and_stop_registry();

    // registry name → (call name, pinned fingerprint)
    let lock: toml::Value =
        toml::from_str(&std::fs::read_to_string(agent.join("toolreg.lock")).unwrap()).unwrap();
    let mut pins: BTreeMap<String, (String, String)> = BTreeMap::new();
    for t in lock["tool"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap().to_string();
        let dir: PathBuf = agent
            .join(".toolreg/tools")
            .join(&name)
            .join(t["version"].as_str().unwrap());
        let tool = toolreg_core::load(&toolreg_core::ToolFiles::read_dir(&dir).unwrap())
            .unwrap()
            .tool;
        pins.insert(
            name,
            (
                tool.call_name,
                t["definition"].as_str().unwrap().to_string(),
            ),
        );
    }
    assert_eq!(pins.len(), names.len());
    // one run per layer of distinct call names
    let mut layers: Vec<Vec<String>> = Vec::new();
    for (name, (call, _)) in &pins {
        match layers
            .iter_mut()
            .find(|l| l.iter().all(|n| pins[n].0 != *call))
        {
            Some(layer) => layer.push(name.clone()),
            None => layers.push(vec![name.clone()]),
        }
    }
    let mut served = 0;
    for layer in &layers {
        let tools = layer.join(",");
        let serve = [
            bin("toolreg").display().to_string(),
            "mcp".into(),
            "serve".into(),
            "--project".into(),
            agent.display().to_string(),
            "--tools".into(),
            tools,
        ];
        let args: Vec<&str> = serve.iter().map(String::as_str).collect();
        let plan = json!({"steps": [{"op": "list_tools"}]});
        for lifecycle in ["discover", "initialize"] {
            let run = sdk.python_stdio(lifecycle, &args, &[], &plan);
            let listed = &run.step(0);
            assert_eq!(run.code, 0, "{}", run.stderr);
            let tools = listed["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("{listed}\n{}", run.stderr));
            assert_eq!(tools.len(), layer.len(), "{}", run.stderr);
            // each one read by the SDK's own Tool type
            assert_eq!(listed["sdk_tools"].as_array().unwrap().len(), layer.len());
            assert_eq!(listed["sdk_count"], json!(layer.len()));
            if lifecycle == "discover" {
                for (t, name) in tools.iter().zip(layer) {
                    assert_eq!(t["name"], json!(pins[name].0));
                    assert_eq!(fingerprint::of_mcp(t), pins[name].1, "{name}");
                }
            }
        }
        let ts = sdk.node_stdio(&args, &[], &plan);
        assert_eq!(ts.code, 0, "{}", ts.stderr);
        assert_eq!(
            ts.step(0)["sdk_tools"].as_array().map(Vec::len),
            Some(layer.len()),
            "{}",
            ts.out
        );
        served += layer.len();
    }
    assert_eq!(served, pins.len());
}
