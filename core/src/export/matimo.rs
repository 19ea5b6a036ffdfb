//! Matimo export: the canonical model written back as a Matimo definition
//! (parameters as a map with `required: bool`, the execution block, output
//! schema, authentication and tags). Only tools with an execution block can
//! be expressed.

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::formats::matimo::PARAMETER_EXTRAS;
use crate::model::{Format, Tool};
use crate::policy::ExecutionKind;

/// The tool as a Matimo definition document (a JSON value in Matimo's
/// layout; [`super::export`] writes it as YAML). Needs an execution block, so only
/// `http`, `command`, `function` and `script` tools read from Matimo can be
/// expressed: `schema` (MCP) and `prompt` tools have none, and a Shinkai
/// tool's Deno/Python code can't be a Matimo `function` (a JS/TS module).
pub fn to_matimo(tool: &Tool) -> Result<Value, Error> {
    let fail = |reason: String| Error::Export {
        format: "matimo".into(),
        reason,
    };
    match tool.execution.kind {
        ExecutionKind::Schema => {
            return Err(fail(
                "an MCP tool is a declaration (execution kind `schema`) and a Matimo definition needs an execution block (http, command, function or script)".into(),
            ))
        }
        ExecutionKind::Prompt => {
            return Err(fail(
                "a prompt tool (execution kind `prompt`) has no execution block, which a Matimo definition needs".into(),
            ))
        }
        _ => {}
    }
    if tool.format == Format::Shinkai {
        return Err(fail(
            "a Shinkai tool runs tool.ts/tool.py in Shinkai's runtime; a Matimo `function` loads a JS/TS module, so it can't be expressed".into(),
        ));
    }
    if !tool.execution.detail.is_object() {
        return Err(fail(format!(
            "the {} tool has no execution block to export",
            tool.execution.kind
        )));
    }

    let mut out = Map::new();
    out.insert("name".into(), json!(tool.call_name));
    out.insert("version".into(), json!(tool.version.to_string()));
    out.insert("description".into(), json!(tool.description));
    // An explicit `requires_approval: false` is kept too, so the export
    // reads back as the same model.
    if let Some(approval) = tool.hints.requires_approval {
        out.insert("requires_approval".into(), json!(approval));
    }

    // Parameters: JSON Schema object → Matimo map with `required: bool`.
    let required: Vec<&str> = tool
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let extras = tool
        .extensions
        .get(PARAMETER_EXTRAS)
        .and_then(Value::as_object);
    let mut params = Map::new();
    if let Some(props) = tool.parameters.get("properties").and_then(Value::as_object) {
        for (name, schema) in props {
            let mut spec = schema.as_object().cloned().unwrap_or_default();
            spec.insert("required".into(), json!(required.contains(&name.as_str())));
            if let Some(Value::Object(extra)) = extras.and_then(|e| e.get(name)) {
                for (k, v) in extra {
                    spec.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            params.insert(name.clone(), Value::Object(spec));
        }
    }
    out.insert("parameters".into(), Value::Object(params));
    out.insert("execution".into(), tool.execution.detail.clone());
    if let Some(result) = &tool.result {
        let mut r = result.clone();
        if let (Some(obj), Some(max)) =
            (r.as_object_mut(), tool.extensions.get("max_response_size"))
        {
            obj.insert("max_response_size".into(), max.clone());
        }
        out.insert("output_schema".into(), r);
    }
    if let Some(auth) = tool.auth.first() {
        out.insert("authentication".into(), auth.clone());
    }
    if !tool.keywords.is_empty() {
        out.insert("tags".into(), json!(tool.keywords));
    }
    if !tool.examples.is_empty() {
        out.insert("examples".into(), Value::Array(tool.examples.clone()));
    }
    if tool.format == Format::Matimo {
        for (k, v) in &tool.extensions {
            if k != PARAMETER_EXTRAS && k != "max_response_size" {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    Ok(Value::Object(out))
}
