//! Definition fingerprints of the real corpus (`../shared/corpus`): a golden
//! file pins every loadable definition's fingerprint, so an exporter change
//! that would alter the fingerprint of an existing version — and break every
//! lock that pins it — fails here. A tool served in a `tools/list` answer
//! exactly as exported has the export's fingerprint.
//!
//! After an intended change, regenerate the golden file with
//! `TOOLREG_BLESS=1 cargo test -p toolreg-core --test fingerprint` and say
//! in the change why existing locks may break.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolreg_core::{export, fingerprint, load};

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/corpus-fingerprints.txt")
}

/// `(corpus path, loaded tool)` for every corpus definition that loads.
fn corpus_tools(root: &Path) -> Vec<(String, toolreg_core::Tool)> {
    let broken: Vec<String> = common::known_broken(root)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    common::definition_files(root)
        .into_iter()
        .filter(|rel| !broken.contains(rel))
        .map(|rel| {
            let tool = load(&common::complete_tool_dir(root, &rel))
                .unwrap_or_else(|e| panic!("{rel}: {e}"))
                .tool;
            (rel, tool)
        })
        .collect()
}

#[test]
fn corpus_fingerprints_match_the_golden_file() {
    let Some(root) = common::corpus() else { return };
    let tools = corpus_tools(&root);
    assert!(tools.len() >= 30, "only {} corpus definitions", tools.len());
    let mut actual = String::from(
        "# Definition fingerprints of ../shared/corpus (path, fingerprint); checked by tests/fingerprint.rs.\n",
    );
    for (rel, tool) in &tools {
        actual.push_str(&format!("{rel} {}\n", fingerprint::of_tool(tool)));
    }
    if std::env::var_os("TOOLREG_BLESS").is_some() {
        std::fs::write(golden_path(), &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(golden_path()).unwrap_or_default();
    let changed: Vec<String> = expected
        .lines()
        .zip(actual.lines())
        .filter(|(e, a)| e != a)
        .map(|(e, a)| format!("  golden: {e}\n  now:    {a}"))
        .collect();
    assert!(
        expected == actual,
        "definition fingerprints changed: every lock pinning these versions would break.\n{}\n\
         (line counts: golden {}, now {}). If intended, run with TOOLREG_BLESS=1.",
        changed.join("\n"),
        expected.lines().count(),
        actual.lines().count()
    );
}

#[test]
fn every_fingerprint_is_distinct_and_well_formed() {
    let Some(root) = common::corpus() else { return };
    let tools = corpus_tools(&root);
    let mut seen = std::collections::BTreeMap::new();
    for (rel, tool) in &tools {
        let fp = fingerprint::of_tool(tool);
        assert!(fingerprint::is_fingerprint(&fp), "{rel}: {fp}");
        if let Some(other) = seen.insert(fp.clone(), rel.clone()) {
            panic!("{rel} and {other} share the fingerprint {fp}");
        }
    }
}

/// A live server lists each tool as exported, but with its own key order,
/// indentation and number spelling: the fingerprint is the same.
#[test]
fn a_tools_list_answer_of_the_exports_has_the_same_fingerprints() {
    let root = common::corpus().unwrap_or_else(common::fixtures);
    let broken: Vec<String> = if root.join("KNOWN_BROKEN.txt").is_file() {
        common::known_broken(&root)
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    } else {
        vec![
            "matimo/github-provider/definition.yaml".into(),
            "mcp/lists/spec-tools-list-with-cursor-and-ttl.json".into(),
        ]
    };
    let tools: Vec<_> = common::definition_files(&root)
        .into_iter()
        .filter(|rel| !broken.contains(rel))
        .filter_map(|rel| load(&common::complete_tool_dir(&root, &rel)).ok())
        .map(|l| l.tool)
        .collect();
    assert!(!tools.is_empty());
    // Reversed key order everywhere, integers written as `N.0`, pretty-printed.
    fn respell(v: &Value) -> String {
        match v {
            Value::Object(m) => {
                let members: Vec<String> = m
                    .iter()
                    .rev()
                    .map(|(k, v)| format!("{} : {}", Value::from(k.as_str()), respell(v)))
                    .collect();
                format!("{{\n  {}\n}}", members.join(",\n  "))
            }
            Value::Array(items) => {
                format!(
                    "[ {} ]",
                    items.iter().map(respell).collect::<Vec<_>>().join(" , ")
                )
            }
            Value::Number(n) if n.is_u64() || n.is_i64() => format!("{n}.0"),
            other => other.to_string(),
        }
    }
    let listed: Vec<String> = tools.iter().map(|t| respell(&export::to_mcp(t))).collect();
    let answer = format!(
        r#"{{"jsonrpc": "2.0", "id": 1, "result": {{"tools": [{}]}}}}"#,
        listed.join(",")
    );
    let parsed: Value = serde_json::from_str(&answer).unwrap();
    let live = parsed["result"]["tools"].as_array().unwrap();
    assert_eq!(live.len(), tools.len());
    for (tool, entry) in tools.iter().zip(live) {
        assert_ne!(
            serde_json::to_string(entry).unwrap(),
            serde_json::to_string(&export::to_mcp(tool)).unwrap(),
            "the respelling must change the text"
        );
        assert_eq!(
            fingerprint::of_mcp(entry),
            fingerprint::of_tool(tool),
            "{}",
            tool.call_name
        );
    }
}

/// Any change to what the model reads changes the fingerprint.
#[test]
fn a_changed_word_parameter_or_hint_changes_the_fingerprint() {
    let root = common::fixtures();
    let tool = load(&common::complete_tool_dir(
        &root,
        "mcp/github-create_issue/tool.json",
    ))
    .unwrap()
    .tool;
    let base = export::to_mcp(&tool);
    let fp = fingerprint::of_mcp(&base);
    let mut edits: Vec<Value> = Vec::new();
    let mut v = base.clone();
    v["description"] = Value::from(format!("{} ", tool.description));
    edits.push(v);
    let mut v = base.clone();
    v["inputSchema"]["properties"]["x"] = serde_json::json!({"type": "string"});
    edits.push(v);
    let mut v = base.clone();
    v["annotations"] = serde_json::json!({"destructiveHint": true});
    edits.push(v);
    let mut v = base.clone();
    v["name"] = Value::from("create_issue2");
    edits.push(v);
    for e in &edits {
        assert_ne!(fingerprint::of_mcp(e), fp, "{e}");
    }
}
