//! Exports of the canonical model: MCP Tool JSON, OpenAI function-calling
//! JSON, Matimo YAML, or the original document (`native`).
//!
//! Exports always use the tool's **call name** (what an agent calls), never
//! its registry name.

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::formats::matimo::PARAMETER_EXTRAS;
use crate::model::{Format, Tool};
use crate::policy::ExecutionKind;

/// Target of `GET .../definition?format=` and `toolreg export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// MCP `Tool` JSON.
    Mcp,
    /// OpenAI function-calling JSON.
    Openai,
    /// Matimo definition YAML.
    Matimo,
    /// The original definition, byte for byte.
    Native,
}

impl ExportFormat {
    /// The id used in the API (`mcp`, `openai`, `matimo`, `native`).
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Mcp => "mcp",
            ExportFormat::Openai => "openai",
            ExportFormat::Matimo => "matimo",
            ExportFormat::Native => "native",
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mcp" => Ok(ExportFormat::Mcp),
            "openai" => Ok(ExportFormat::Openai),
            "matimo" => Ok(ExportFormat::Matimo),
            "native" => Ok(ExportFormat::Native),
            _ => Err(format!(
                "unknown export format `{s}` (expected one of mcp, openai, matimo, native)"
            )),
        }
    }
}

/// An exported definition: its bytes and media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// Media type (`application/json`, `application/yaml`).
    pub content_type: &'static str,
    /// The exported document.
    pub body: String,
}

/// Media type of JSON exports.
pub const JSON: &str = "application/json";
/// Media type of YAML exports.
pub const YAML: &str = "application/yaml";

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

/// The tool as `{"type":"function","function":{name,description,parameters}}`.
///
/// OpenAI function names must match `^[a-zA-Z0-9_-]{1,64}$`, which call
/// names don't always do (MCP allows `.` and 128 characters): the name is
/// sanitized with [`openai_function_name`] — every other character becomes
/// `_` and it is cut to 64 characters — so an agent calls it by that name.
pub fn to_openai(tool: &Tool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": openai_function_name(&tool.call_name),
            "description": tool.description,
            "parameters": tool.parameters,
        }
    })
}

/// A call name made acceptable as an OpenAI function name
/// (`^[a-zA-Z0-9_-]{1,64}$`): other characters become `_`, the result is cut
/// to 64 characters, and an empty name becomes `tool`.
pub fn openai_function_name(call_name: &str) -> String {
    let s: String = call_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() {
        "tool".to_string()
    } else {
        s
    }
}

/// The tool as a Matimo definition document (a JSON value in Matimo's
/// layout; [`export`] writes it as YAML). Needs an execution block, so only
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

/// Export in any [`ExportFormat`]. Matimo needs an execution block, so
/// `schema` and `prompt` tools fail with that reason. `native` is the
/// original definition, byte for byte, with its format's media type.
pub fn export(tool: &Tool, format: ExportFormat) -> Result<Exported, Error> {
    let json_body = |v: &Value| {
        serde_json::to_string_pretty(v).map_err(|e| Error::Export {
            format: format.as_str().into(),
            reason: e.to_string(),
        })
    };
    match format {
        ExportFormat::Mcp => Ok(Exported {
            content_type: JSON,
            body: json_body(&to_mcp(tool))?,
        }),
        ExportFormat::Openai => Ok(Exported {
            content_type: JSON,
            body: json_body(&to_openai(tool))?,
        }),
        ExportFormat::Matimo => {
            let doc = to_matimo(tool)?;
            let body = serde_saphyr::to_string(&doc).map_err(|e| Error::Export {
                format: "matimo".into(),
                reason: e.to_string(),
            })?;
            Ok(Exported {
                content_type: YAML,
                body,
            })
        }
        ExportFormat::Native => {
            let body = String::from_utf8(tool.original.clone()).map_err(|_| Error::Export {
                format: "native".into(),
                reason: "the original definition is not UTF-8 text".into(),
            })?;
            let content_type = match tool.format {
                Format::Matimo => YAML,
                Format::Shinkai | Format::Mcp | Format::Prompt => JSON,
            };
            Ok(Exported { content_type, body })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_names() {
        assert_eq!(openai_function_name("get.weather"), "get_weather");
        assert_eq!(openai_function_name(""), "tool");
        assert_eq!(openai_function_name(&"a".repeat(100)).len(), 64);
        assert_eq!(openai_function_name("create_issue"), "create_issue");
    }
}
