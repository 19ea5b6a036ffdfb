//! The MCP format: one `Tool` object (schema 2026-07-28) in `tool.json`.
//!
//! Field mapping: `name` is the call name (verbatim) and,
//! normalized, the registry name; `title` (or `annotations.title`) the
//! title; `inputSchema` the parameters (must be `type: object`);
//! `outputSchema` the result; `annotations.*Hint` the hints; `icons` kept;
//! `_meta` and unknown keys go to extensions. MCP has no version, license or
//! keywords: those come from `toolreg.toml`. The execution kind is always
//! `schema` (a declaration; the server runs elsewhere). A whole `tools/list`
//! result is refused: `toolreg import` splits it into tool directories.

use serde_json::Value;

use super::{opt_string, Draft, NameSource, Report};
use crate::error::Problem;
use crate::model::Hints;
use crate::policy::ExecutionKind;
use crate::validate;

const KNOWN_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
];

/// If `doc` is a `tools/list` result (an object with a `tools` array and no
/// `name`/`inputSchema` of its own), the number of tools in it.
pub fn tools_list_len(doc: &Value) -> Option<usize> {
    let obj = doc.as_object()?;
    if obj.contains_key("name") || obj.contains_key("inputSchema") {
        return None;
    }
    obj.get("tools")?.as_array().map(Vec::len)
}

pub(crate) fn parse(text: &str, report: &mut Report) -> Option<Draft> {
    let doc = super::read_json("tool.json", text, report)?;
    if let Some(n) = tools_list_len(&doc) {
        let tools = if n == 1 { "tool" } else { "tools" };
        report.error(
            Problem::new(
                "tools",
                format!("a tools/list result with {n} {tools}, not one Tool; use `toolreg import`"),
            )
            .with_fix("run `toolreg import FILE` to split it into one tool directory per tool"),
        );
        return None;
    }
    if doc.is_array() {
        report.error(
            Problem::new(
                "",
                "tool.json holds an array, not one Tool; use `toolreg import`",
            )
            .with_fix("run `toolreg import FILE` to split it into one tool directory per tool"),
        );
        return None;
    }
    let Value::Object(doc) = doc else {
        report.error(Problem::new(
            "",
            format!(
                "tool.json must be a JSON object, not {}",
                validate::type_name(&doc)
            ),
        ));
        return None;
    };
    let mut draft = Draft::new(ExecutionKind::Schema);

    match doc.get("name") {
        Some(Value::String(n)) if !n.is_empty() => {
            draft.name = Some(NameSource {
                value: n.clone(),
                path: "name",
            });
            draft.call_name = n.clone();
            super::check_call_name("name", n, report);
        }
        Some(other) => report.error(Problem::new(
            "name",
            format!(
                "must be a non-empty string, not {}",
                validate::type_name(other)
            ),
        )),
        None => {
            report.error(Problem::new("name", "is missing").with_fix("add `\"name\": \"my_tool\"`"))
        }
    }
    let annotations = doc.get("annotations").and_then(Value::as_object);
    draft.title = opt_string(doc.get("title"))
        .or_else(|| opt_string(annotations.and_then(|a| a.get("title"))));
    draft.description = opt_string(doc.get("description"));

    match doc.get("inputSchema") {
        None => report.error(Problem::new("inputSchema", "is missing").with_fix(
            "add `\"inputSchema\": {\"type\": \"object\"}` (for a tool without parameters)",
        )),
        Some(schema) => {
            report.extend(validate::check_schema("inputSchema", schema));
            if schema.is_object() && schema.get("type").and_then(Value::as_str) != Some("object") {
                report.error(
                    Problem::new(
                        "inputSchema.type",
                        "must be `object`: MCP tool parameters are an object",
                    )
                    .with_fix("set `\"type\": \"object\"`"),
                );
            }
            draft.parameters = schema.clone();
        }
    }
    if let Some(out) = doc.get("outputSchema").filter(|v| !v.is_null()) {
        report.extend(validate::check_schema("outputSchema", out));
        draft.result = Some(out.clone());
    }

    if let Some(a) = doc.get("annotations") {
        match a.as_object() {
            Some(a) => {
                let mut hint = |key: &str| -> Option<bool> {
                    match a.get(key) {
                        None | Some(Value::Null) => None,
                        Some(Value::Bool(b)) => Some(*b),
                        Some(other) => {
                            report.error(Problem::new(
                                format!("annotations.{key}"),
                                format!(
                                    "must be true or false, not {}",
                                    validate::type_name(other)
                                ),
                            ));
                            None
                        }
                    }
                };
                draft.hints = Hints {
                    read_only: hint("readOnlyHint"),
                    destructive: hint("destructiveHint"),
                    idempotent: hint("idempotentHint"),
                    open_world: hint("openWorldHint"),
                    requires_approval: None,
                };
            }
            None => report.error(Problem::new("annotations", "must be an object")),
        }
    }
    match doc.get("icons") {
        None | Some(Value::Null) => {}
        Some(Value::Array(icons)) => {
            for (i, icon) in icons.iter().enumerate() {
                if icon.get("src").and_then(Value::as_str).is_none() {
                    report.error(Problem::new(
                        format!("icons[{i}].src"),
                        "is missing; an icon needs a `src` URI",
                    ));
                }
            }
            draft.icons = icons.clone();
        }
        Some(_) => report.error(Problem::new("icons", "must be an array")),
    }

    for (k, v) in &doc {
        if !KNOWN_KEYS.contains(&k.as_str()) {
            draft.extensions.insert(k.clone(), v.clone());
        }
    }
    draft.document = Some(Value::Object(doc));
    Some(draft)
}

/// Split an MCP `tools/list` result (`{"tools": [...], ...}`, or a bare
/// array of Tools) into its Tool objects, for `toolreg import`. Each Tool
/// can then be written as its own `tool.json`. Errors name what is wrong.
pub fn split_tools_list(text: &str) -> Result<Vec<Value>, crate::error::Error> {
    let invalid =
        |path: &str, msg: String| crate::error::Error::Invalid(vec![Problem::new(path, msg)]);
    let doc: Value =
        serde_json::from_str(text).map_err(|e| invalid("", format!("not valid JSON: {e}")))?;
    let tools = match &doc {
        Value::Array(items) => items,
        Value::Object(obj) => match obj.get("tools") {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(invalid(
                    "tools",
                    format!("must be an array, not {}", validate::type_name(other)),
                ))
            }
            None if obj.contains_key("name") => return Ok(vec![doc.clone()]),
            None => {
                return Err(invalid(
                    "tools",
                    "is missing; this is not a tools/list result".into(),
                ))
            }
        },
        other => {
            return Err(invalid(
                "",
                format!(
                    "must be a tools/list result object, not {}",
                    validate::type_name(other)
                ),
            ))
        }
    };
    for (i, tool) in tools.iter().enumerate() {
        if !tool.get("name").is_some_and(Value::is_string) {
            return Err(invalid(
                &format!("tools[{i}].name"),
                "is missing; every Tool needs a name".into(),
            ));
        }
    }
    Ok(tools.clone())
}
