//! Exports: every corpus and fixture tool exports to a valid MCP `Tool` and
//! a valid OpenAI function (checked against JSON Schemas of those shapes),
//! Matimo exports parse back to the same tool, and tools without an
//! execution block refuse a Matimo export with the reason.

mod common;

use std::path::Path;

use serde_json::{json, Value};
use toolreg_core::export::{export, to_mcp, to_openai, ExportFormat};
use toolreg_core::{load, Error, ExecutionKind, Format, Tool, ToolFiles};

/// The MCP `Tool` shape (schema 2026-07-28), reduced to what a client relies on.
fn mcp_tool_shape() -> Value {
    json!({
        "type": "object",
        "required": ["name", "inputSchema"],
        "properties": {
            "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,128}$"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "inputSchema": {
                "type": "object",
                "required": ["type"],
                "properties": {"type": {"const": "object"}}
            },
            "outputSchema": {
                "type": "object",
                "properties": {"type": {"enum": ["object", "array"]}}
            },
            "annotations": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "readOnlyHint": {"type": "boolean"},
                    "destructiveHint": {"type": "boolean"},
                    "idempotentHint": {"type": "boolean"},
                    "openWorldHint": {"type": "boolean"}
                },
                "additionalProperties": false
            },
            "icons": {
                "type": "array",
                "items": {"type": "object", "required": ["src"], "properties": {"src": {"type": "string"}}}
            },
            "_meta": {"type": "object"}
        },
        "additionalProperties": false
    })
}

/// OpenAI function-calling tool shape.
fn openai_shape() -> Value {
    json!({
        "type": "object",
        "required": ["type", "function"],
        "properties": {
            "type": {"const": "function"},
            "function": {
                "type": "object",
                "required": ["name", "description", "parameters"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                    "description": {"type": "string"},
                    "parameters": {"type": "object", "required": ["type"], "properties": {"type": {"const": "object"}}}
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    })
}

fn loaded_tools(root: &Path, skip: &[String]) -> Vec<(String, Tool)> {
    common::definition_files(root)
        .into_iter()
        .filter(|rel| !skip.contains(rel))
        .map(|rel| {
            let tool = load(&common::complete_tool_dir(root, &rel))
                .unwrap_or_else(|e| panic!("{rel}: {e}"))
                .tool;
            (rel, tool)
        })
        .collect()
}

fn check_exports(tools: &[(String, Tool)]) {
    let mcp = jsonschema::validator_for(&mcp_tool_shape()).unwrap();
    let openai = jsonschema::validator_for(&openai_shape()).unwrap();
    for (rel, tool) in tools {
        let m = to_mcp(tool);
        let errors: Vec<String> = mcp.iter_errors(&m).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{rel}: MCP export invalid: {errors:?}\n{m:#}"
        );
        assert_eq!(
            m["name"],
            tool.call_name.as_str(),
            "{rel}: exports use the call name"
        );
        // The exported inputSchema is itself a valid JSON Schema.
        assert!(jsonschema::meta::is_valid(&m["inputSchema"]), "{rel}");

        let o = to_openai(tool);
        let errors: Vec<String> = openai.iter_errors(&o).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{rel}: OpenAI export invalid: {errors:?}\n{o:#}"
        );

        // The bodies served over HTTP are the same JSON.
        let body: Value =
            serde_json::from_str(&export(tool, ExportFormat::Mcp).unwrap().body).unwrap();
        assert_eq!(body, m);
        let native = export(tool, ExportFormat::Native).unwrap();
        assert_eq!(native.body.as_bytes(), tool.original.as_slice(), "{rel}");
        let expected_type = if tool.format == Format::Matimo {
            "application/yaml"
        } else {
            "application/json"
        };
        assert_eq!(native.content_type, expected_type);
    }
}

#[test]
fn corpus_exports_have_the_mcp_and_openai_shapes() {
    let Some(root) = common::corpus() else { return };
    let broken: Vec<String> = common::known_broken(&root)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let tools = loaded_tools(&root, &broken);
    assert!(tools.len() >= 30);
    check_exports(&tools);
}

#[test]
fn fixture_exports_have_the_mcp_and_openai_shapes() {
    let root = common::fixtures();
    let skip = vec![
        "matimo/github-provider/definition.yaml".to_string(),
        "mcp/lists/spec-tools-list-with-cursor-and-ttl.json".to_string(),
    ];
    check_exports(&loaded_tools(&root, &skip));
}

#[test]
fn mcp_export_carries_title_output_schema_and_hints() {
    let root = common::fixtures();
    let t = load(&common::complete_tool_dir(
        &root,
        "mcp/spec-tool-with-array-output-schema/tool.json",
    ))
    .unwrap()
    .tool;
    let m = to_mcp(&t);
    assert_eq!(m["outputSchema"]["type"], "array");
    assert_eq!(m["title"], "User List");
    let t = load(&common::complete_tool_dir(
        &root,
        "mcp/github-delete_file/tool.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(to_mcp(&t)["annotations"]["destructiveHint"], true);
    let t = load(&common::complete_tool_dir(
        &root,
        "mcp/github-get_me/tool.json",
    ))
    .unwrap()
    .tool;
    let m = to_mcp(&t);
    assert_eq!(m["annotations"]["readOnlyHint"], true);
    assert_eq!(
        m["_meta"]["ui"]["resourceUri"],
        "ui://github-mcp-server/get-me"
    );
    let t = load(&common::complete_tool_dir(
        &root,
        "matimo/github-delete-repository/definition.yaml",
    ))
    .unwrap()
    .tool;
    let m = to_mcp(&t);
    assert_eq!(m["annotations"]["destructiveHint"], true);
    assert_eq!(m["outputSchema"]["type"], "object");
}

#[test]
fn openai_names_are_sanitized() {
    let mut files = ToolFiles::new();
    files.insert(
        "tool.json",
        r#"{"name": "weather.get", "inputSchema": {"type": "object"}}"#,
    );
    files.insert(
        "toolreg.toml",
        "[tool]\nname = \"weather-get\"\nversion = \"1.0.0\"\n",
    );
    let t = load(&files).unwrap().tool;
    assert_eq!(t.call_name, "weather.get");
    assert_eq!(to_openai(&t)["function"]["name"], "weather_get");
    assert_eq!(to_mcp(&t)["name"], "weather.get");
}

#[test]
fn matimo_exports_parse_back_to_the_same_tool() {
    let root = common::fixtures();
    let mut n = 0;
    for rel in common::definition_files(&root) {
        if !rel.starts_with("matimo/") || rel.contains("github-provider") {
            continue;
        }
        let files = common::complete_tool_dir(&root, &rel);
        let tool = load(&files).unwrap().tool;
        let exported = export(&tool, ExportFormat::Matimo).unwrap();
        assert_eq!(exported.content_type, "application/yaml");
        let mut again_files = files.clone();
        again_files.insert("definition.yaml", exported.body.clone());
        let again = load(&again_files)
            .unwrap_or_else(|e| panic!("{rel}: {e}\n{}", exported.body))
            .tool;
        assert_eq!(again.registry_name, tool.registry_name, "{rel}");
        assert_eq!(again.call_name, tool.call_name, "{rel}");
        assert_eq!(again.version, tool.version, "{rel}");
        assert_eq!(again.parameters, tool.parameters, "{rel}");
        assert_eq!(again.execution, tool.execution, "{rel}");
        assert_eq!(again.result, tool.result, "{rel}");
        assert_eq!(again.hints, tool.hints, "{rel}");
        assert_eq!(again.keywords, tool.keywords, "{rel}");
        assert_eq!(again.extensions, tool.extensions, "{rel}");
        n += 1;
    }
    assert_eq!(n, 10);
}

#[test]
fn matimo_export_is_refused_without_an_execution_block() {
    let root = common::fixtures();
    let t = load(&common::complete_tool_dir(
        &root,
        "mcp/github-create_issue/tool.json",
    ))
    .unwrap()
    .tool;
    assert_eq!(t.execution.kind, ExecutionKind::Schema);
    let err = export(&t, ExportFormat::Matimo).unwrap_err();
    assert!(matches!(err, Error::Export { .. }));
    assert!(err.to_string().contains("execution kind `schema`"), "{err}");

    let mut files = ToolFiles::new();
    files.insert(
        "prompt.json",
        r#"{"version": "1.0.0", "model_prompt": "Hi {{x}}", "metadata": {"prompt_name": "hello", "variables": [{"name": "x", "type": "text"}]}}"#,
    );
    let t = load(&files).unwrap().tool;
    let err = export(&t, ExportFormat::Matimo).unwrap_err();
    assert!(err.to_string().contains("execution kind `prompt`"), "{err}");
    // MCP and OpenAI always work.
    assert!(export(&t, ExportFormat::Mcp).is_ok());
    assert!(export(&t, ExportFormat::Openai).is_ok());

    let mut files = ToolFiles::new();
    files.insert(
        "metadata.json",
        r#"{"id": "abc-tool", "name": "Abc", "version": "1.0.0", "parameters": {"type": "object", "properties": {}}}"#,
    );
    files.insert("tool.ts", "x");
    let t = load(&files).unwrap().tool;
    let err = export(&t, ExportFormat::Matimo).unwrap_err();
    assert!(err.to_string().contains("Shinkai"), "{err}");
}

#[test]
fn export_format_ids_parse() {
    for id in ["mcp", "openai", "matimo", "native"] {
        let f: ExportFormat = id.parse().unwrap();
        assert_eq!(f.as_str(), id);
    }
    assert!("yaml"
        .parse::<ExportFormat>()
        .unwrap_err()
        .contains("mcp, openai, matimo, native"));
}
