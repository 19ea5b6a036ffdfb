//! MCP export: the tool as an MCP `Tool` object, for the newest protocol
//! version ([`to_mcp`]) or shaped for an older one ([`to_mcp_for`]).
//!
//! What each protocol's `Tool` has (from the published MCP schemas):
//! 2025-06-18 has `name`, `title`, `description`, `inputSchema`,
//! `outputSchema` (root `type: object` only), `annotations` and `_meta`;
//! 2025-11-25 adds `icons` (and `execution`, which the registry doesn't
//! write); 2026-07-28 lets `outputSchema` be any JSON Schema.

use serde_json::{json, Map, Value};

use super::schema::{child, LossReport};
use super::{Converted, McpProtocol};
use crate::model::{Format, Tool};

/// The tool as an MCP `Tool` object: `name` (the call name), `title`,
/// `description`, `inputSchema` (the parameters), `outputSchema` (when the
/// result is an object or array schema), `annotations` (title and hints),
/// `icons`, and `_meta` when the source was an MCP tool that had one.
pub fn to_mcp(tool: &Tool) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(tool.call_name));
    if let Some(title) = &tool.title {
        out.insert("title".into(), json!(title));
    }
    out.insert("description".into(), json!(tool.description));
    out.insert("inputSchema".into(), tool.parameters.clone());
    if let Some(result) = &tool.result {
        let ty = result.get("type").and_then(Value::as_str);
        if matches!(ty, Some("object" | "array")) {
            out.insert("outputSchema".into(), result.clone());
        }
    }
    let mut ann = Map::new();
    if let Some(title) = &tool.title {
        ann.insert("title".into(), json!(title));
    }
    let h = &tool.hints;
    for (key, v) in [
        ("readOnlyHint", h.read_only),
        ("destructiveHint", h.destructive),
        ("idempotentHint", h.idempotent),
        ("openWorldHint", h.open_world),
    ] {
        if let Some(b) = v {
            ann.insert(key.into(), json!(b));
        }
    }
    if !ann.is_empty() {
        out.insert("annotations".into(), Value::Object(ann));
    }
    let icons: Vec<Value> = tool
        .icons
        .iter()
        .filter(|i| i.get("src").is_some_and(Value::is_string))
        .cloned()
        .collect();
    if !icons.is_empty() {
        out.insert("icons".into(), Value::Array(icons));
    }
    if tool.format == Format::Mcp {
        if let Some(meta) = tool.extensions.get("_meta") {
            out.insert("_meta".into(), meta.clone());
        }
    }
    Value::Object(out)
}

/// The tool as an MCP `Tool` for `protocol`, with what had to change:
///
/// * before 2026-07-28 an `outputSchema` whose root isn't `type: object` is
///   wrapped as `{"type":"object","properties":{"result":…},"required":["result"]}`
///   (its local `$ref`s rewritten to match), so the server sends
///   `structuredContent` as `{"result": <value>}`;
/// * before 2026-07-28 boolean property schemas become `{}` (`true`) and
///   `{"not":{}}` (`false`), since those versions want objects there;
/// * before 2025-11-25 `icons` is dropped.
///
/// For [`McpProtocol::LATEST`] this is exactly [`to_mcp`], with no warnings.
pub fn to_mcp_for(tool: &Tool, protocol: McpProtocol) -> Converted {
    let mut value = to_mcp(tool);
    let mut report = LossReport::default();
    if protocol < McpProtocol::V2026_07_28 {
        if let Some(obj) = value.as_object_mut() {
            if let Some(output) = obj.get_mut("outputSchema") {
                if output.get("type").and_then(Value::as_str) != Some("object") {
                    report.warn(
                        "/outputSchema",
                        "type",
                        format!(
                            "protocol {protocol} allows only `type: object` at the root of `outputSchema`; the schema is wrapped as {{\"type\":\"object\",\"properties\":{{\"result\":…}},\"required\":[\"result\"]}}, so structuredContent must be sent as {{\"result\": <value>}}"
                        ),
                    );
                    *output = wrap_result(output.take());
                }
            }
            for field in ["inputSchema", "outputSchema"] {
                if let Some(props) = obj
                    .get_mut(field)
                    .and_then(|s| s.get_mut("properties"))
                    .and_then(Value::as_object_mut)
                {
                    for (name, schema) in props.iter_mut() {
                        if let Value::Bool(b) = schema {
                            report.warn(
                                &child(&format!("/{field}/properties"), name),
                                name,
                                format!("protocol {protocol} wants an object schema for each property; the boolean schema `{b}` is written as {}", if *b { "{}" } else { "{\"not\":{}}" }),
                            );
                            *schema = if *b { json!({}) } else { json!({"not": {}}) };
                        }
                    }
                }
            }
        }
    }
    if protocol < McpProtocol::V2025_11_25 {
        if let Some(obj) = value.as_object_mut() {
            if obj.remove("icons").is_some() {
                report.warn(
                    "/icons",
                    "icons",
                    format!("protocol {protocol} has no `icons` on a tool; dropped"),
                );
            }
        }
    }
    Converted {
        value,
        warnings: report.warnings,
    }
}

/// `{"type":"object","properties":{"result": schema},"required":["result"]}`,
/// with `$schema` moved to the new root and every same-document `$ref`
/// pointed one level down (`#/$defs/x` → `#/properties/result/$defs/x`).
fn wrap_result(mut schema: Value) -> Value {
    let dialect = schema.as_object_mut().and_then(|o| o.remove("$schema"));
    rebase_refs(&mut schema);
    let mut out = Map::new();
    if let Some(d) = dialect {
        out.insert("$schema".into(), d);
    }
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), json!({ "result": schema }));
    out.insert("required".into(), json!(["result"]));
    Value::Object(out)
}

fn rebase_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, c) in map.iter_mut() {
                match k.as_str() {
                    "$ref" => {
                        if let Value::String(r) = c {
                            let rest = r.strip_prefix('#').unwrap_or("x");
                            if rest.is_empty() || rest.starts_with('/') {
                                *r = format!("#/properties/result{rest}");
                            }
                        }
                    }
                    // These hold data, not schemas.
                    "const" | "enum" | "default" | "examples" | "example" => {}
                    // These map names (which could be `const`, `$ref`, ...) to schemas.
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" => {
                        if let Value::Object(m) = c {
                            m.values_mut().for_each(rebase_refs);
                        }
                    }
                    _ => rebase_refs(c),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rebase_refs),
        _ => {}
    }
}
