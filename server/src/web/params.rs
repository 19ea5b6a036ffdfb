//! A tool's parameters (a JSON Schema of `type: object`) as rows of a
//! readable table: name, type, required, description, allowed values and
//! default, with nested objects indented under their parent.

use serde_json::{Map, Value};

/// Nesting deeper than this is shown as its type only.
const MAX_DEPTH: usize = 4;
/// A schema with more properties than this is cut, with a note.
const MAX_ROWS: usize = 300;

/// One row of the parameters table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamRow {
    /// Property name; `[]` marks the items of an array.
    pub name: String,
    /// 0 for top-level parameters.
    pub depth: usize,
    pub type_label: String,
    pub required: bool,
    pub description: String,
    /// Allowed values (`enum`, or `const`), as JSON text.
    pub allowed: Vec<String>,
    /// The default, as JSON text.
    pub default: Option<String>,
}

/// Rows for every property of `schema`, and whether the list was cut short.
pub fn rows(schema: &Value) -> (Vec<ParamRow>, bool) {
    let mut out = Vec::new();
    let mut cut = false;
    if let Some(obj) = schema.as_object() {
        walk_properties(obj, 0, &mut out, &mut cut);
    }
    (out, cut)
}

fn walk_properties(
    schema: &Map<String, Value>,
    depth: usize,
    out: &mut Vec<ParamRow>,
    cut: &mut bool,
) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in props {
        if out.len() >= MAX_ROWS {
            *cut = true;
            return;
        }
        push_row(
            name.clone(),
            prop,
            required.contains(&name.as_str()),
            depth,
            out,
            cut,
        );
    }
}

fn push_row(
    name: String,
    prop: &Value,
    required: bool,
    depth: usize,
    out: &mut Vec<ParamRow>,
    cut: &mut bool,
) {
    let empty = Map::new();
    let obj = prop.as_object().unwrap_or(&empty);
    out.push(ParamRow {
        name: name.clone(),
        depth,
        type_label: type_label(prop),
        required,
        description: obj
            .get("description")
            .or_else(|| obj.get("title"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        allowed: allowed_values(obj),
        default: obj.get("default").map(json_text),
    });
    if depth + 1 > MAX_DEPTH {
        return;
    }
    if obj.contains_key("properties") {
        walk_properties(obj, depth + 1, out, cut);
    } else if let Some(items) = obj.get("items").and_then(Value::as_object) {
        if items.contains_key("properties") {
            walk_properties(items, depth + 1, out, cut);
        }
    }
}

fn allowed_values(obj: &Map<String, Value>) -> Vec<String> {
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return values.iter().map(json_text).collect();
    }
    if let Some(c) = obj.get("const") {
        return vec![json_text(c)];
    }
    // Arrays of an enum (a multi-select): show the item choices.
    if let Some(values) = obj
        .get("items")
        .and_then(|i| i.get("enum"))
        .and_then(Value::as_array)
    {
        return values.iter().map(json_text).collect();
    }
    Vec::new()
}

/// A short, human type: `string`, `integer | null`, `array of string`, `one of: string | number`.
pub fn type_label(schema: &Value) -> String {
    let Some(obj) = schema.as_object() else {
        return match schema {
            Value::Bool(true) => "any".into(),
            Value::Bool(false) => "nothing".into(),
            _ => "any".into(),
        };
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        return format!("see {r}");
    }
    for (key, word) in [
        ("oneOf", "one of"),
        ("anyOf", "any of"),
        ("allOf", "all of"),
    ] {
        if let Some(alts) = obj.get(key).and_then(Value::as_array) {
            let parts: Vec<String> = alts.iter().map(type_label).collect();
            return format!("{word}: {}", parts.join(" | "));
        }
    }
    let base = match obj.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if obj.contains_key("properties") => "object".into(),
        _ if obj.contains_key("enum") => "enum".into(),
        _ => "any".into(),
    };
    let base = if base == "array" {
        match obj.get("items") {
            Some(items) => format!("array of {}", type_label(items)),
            None => base,
        }
    } else {
        base
    };
    match obj.get("format").and_then(Value::as_str) {
        Some(f) => format!("{base} ({f})"),
        None => base,
    }
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_schema_with_required_enum_and_default() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "limit": {"type": "integer", "default": 10},
                "mode": {"type": "string", "enum": ["fast", "full"]}
            },
            "required": ["query"]
        });
        let (rows, cut) = rows(&schema);
        assert!(!cut);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].name, "query");
        assert!(rows[0].required);
        assert_eq!(rows[0].description, "What to look for");
        assert!(!rows[1].required);
        assert_eq!(rows[1].default.as_deref(), Some("10"));
        assert_eq!(rows[2].allowed, vec!["\"fast\"", "\"full\""]);
    }

    #[test]
    fn nested_objects_and_arrays_of_objects_are_indented() {
        let schema = json!({
            "type": "object",
            "properties": {
                "filter": {"type": "object", "properties": {"owner": {"type": "string"}}, "required": ["owner"]},
                "labels": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
            }
        });
        let (rows, _) = rows(&schema);
        let shape: Vec<(&str, usize, bool)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.depth, r.required))
            .collect();
        assert_eq!(
            shape,
            vec![
                ("filter", 0, false),
                ("owner", 1, true),
                ("labels", 0, false),
                ("name", 1, false)
            ]
        );
        assert_eq!(rows[2].type_label, "array of object");
    }

    #[test]
    fn type_labels() {
        assert_eq!(
            type_label(&json!({"type": ["string", "null"]})),
            "string | null"
        );
        assert_eq!(
            type_label(&json!({"oneOf": [{"type": "string"}, {"type": "number"}]})),
            "one of: string | number"
        );
        assert_eq!(
            type_label(&json!({"type": "string", "format": "date-time"})),
            "string (date-time)"
        );
        assert_eq!(type_label(&json!({"$ref": "#/$defs/x"})), "see #/$defs/x");
        assert_eq!(type_label(&json!(true)), "any");
    }

    #[test]
    fn no_properties_means_no_rows() {
        assert!(rows(&json!({"type": "object"})).0.is_empty());
        assert!(rows(&json!(null)).0.is_empty());
    }
}
