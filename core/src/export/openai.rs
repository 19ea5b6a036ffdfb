//! OpenAI export: the tool as a function-calling tool,
//! `{"type":"function","function":{name,description,parameters}}`, and in
//! strict mode (`"strict": true`) when the parameters can follow OpenAI's
//! strict rules.

use serde_json::{json, Map, Value};

use super::schema::{child, fold_root_composition, resolve_local, string_list, LossReport};
use super::Converted;
use crate::error::Error;
use crate::model::Tool;

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

/// Strict mode's limits: object nesting depth, properties in all, and enum
/// values in all.
const MAX_DEPTH: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;

/// The string formats strict mode accepts.
const FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Annotations strict mode doesn't take; dropping them changes no rule on
/// the arguments.
const ANNOTATIONS: [&str; 11] = [
    "default",
    "examples",
    "example",
    "$comment",
    "$schema",
    "$id",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
];

/// The tool as a strict OpenAI function (`"strict": true`), converted to the
/// strict rules where that keeps the meaning:
///
/// * every object gets `additionalProperties: false` and lists all its
///   properties in `required`; an optional property becomes required and
///   nullable (reported: the model sends `null` instead of leaving it out);
/// * a top-level `allOf`/`anyOf`/`oneOf` is folded into one object schema,
///   and `oneOf` elsewhere becomes `anyOf` (reported);
/// * annotations strict mode lacks (`default`, `examples`, `$schema`, ...)
///   and unsupported `format`s are dropped (reported).
///
/// Refused with the reason (naming the place) when a rule can't be kept:
/// a free-form object or map (`additionalProperties` true or a schema, an
/// object without properties below the root), a schema without a type,
/// a constraint strict mode lacks (`minLength`, `uniqueItems`, `not`,
/// `allOf` below the root, ...), a remote `$ref`, or the size limits
/// (10 levels, 5000 properties, 1000 enum values).
pub fn to_openai_strict(tool: &Tool) -> Result<Converted, Error> {
    let mut report = LossReport::default();
    let name = openai_function_name(&tool.call_name);
    if name != tool.call_name {
        report.warn(
            "/name",
            "name",
            format!(
                "OpenAI function names match ^[a-zA-Z0-9_-]{{1,64}}$; `{}` is exported as `{name}`",
                tool.call_name
            ),
        );
    }
    let root = fold_root_composition(&tool.parameters, "/inputSchema", &mut report);
    let mut strict = Strict {
        root: &root,
        report,
        properties: 0,
        enum_values: 0,
    };
    let parameters = strict
        .node(&root, "/inputSchema", 0, true)
        .map_err(|reason| Error::Export {
            format: "openai (strict)".into(),
            reason,
        })?;
    Ok(Converted {
        value: json!({
            "type": "function",
            "function": {
                "name": name,
                "description": tool.description,
                "parameters": parameters,
                "strict": true,
            }
        }),
        warnings: strict.report.warnings,
    })
}

/// Warnings for a plain (non-strict) OpenAI export: only a renamed function.
pub(crate) fn openai_warnings(tool: &Tool) -> Vec<crate::export::ExportWarning> {
    let mut report = LossReport::default();
    let name = openai_function_name(&tool.call_name);
    if name != tool.call_name {
        report.warn(
            "/name",
            "name",
            format!(
                "OpenAI function names match ^[a-zA-Z0-9_-]{{1,64}}$; `{}` is exported as `{name}`",
                tool.call_name
            ),
        );
    }
    report.warnings
}

struct Strict<'a> {
    root: &'a Value,
    report: LossReport,
    properties: usize,
    enum_values: usize,
}

impl Strict<'_> {
    fn node(&mut self, v: &Value, ptr: &str, depth: usize, is_root: bool) -> Result<Value, String> {
        let at = if ptr.is_empty() { "/" } else { ptr };
        let Some(obj) = v.as_object() else {
            return Err(format!(
                "{at}: the boolean schema `{v}` has no equivalent in strict mode, which needs a typed schema"
            ));
        };
        if depth > MAX_DEPTH {
            return Err(format!(
                "{at}: nested deeper than {MAX_DEPTH} levels, strict mode's limit"
            ));
        }
        let typed = ["type", "anyOf", "oneOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| obj.contains_key(*k));
        if !typed {
            return Err(format!(
                "{at}: the schema has no `type` (it accepts any value); strict mode needs one"
            ));
        }
        if obj.contains_key("anyOf") && obj.contains_key("oneOf") {
            return Err(format!(
                "{at}: both `anyOf` and `oneOf`; strict mode has only `anyOf`"
            ));
        }
        let types: Vec<&str> = match obj.get("type") {
            None => Vec::new(),
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
                list.iter().filter_map(Value::as_str).collect()
            }
            Some(other) => return Err(format!("{at}: `type` is {other}, not a type name")),
        };
        if is_root && types != ["object"] {
            return Err(format!(
                "{at}: the parameters must be one `type: object` schema in strict mode"
            ));
        }
        let mut out = Map::new();
        for (k, val) in obj {
            let kp = child(ptr, k);
            match k.as_str() {
                "type" | "description" | "title" | "pattern" | "multipleOf" | "minimum"
                | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "minItems"
                | "maxItems" | "const" => {
                    out.insert(k.clone(), val.clone());
                }
                "properties" | "required" | "additionalProperties" => {}
                "enum" => {
                    self.enum_values += val.as_array().map_or(0, Vec::len);
                    if self.enum_values > MAX_ENUM_VALUES {
                        return Err(format!(
                            "{kp}: more than {MAX_ENUM_VALUES} enum values in all, strict mode's limit"
                        ));
                    }
                    out.insert(k.clone(), val.clone());
                }
                "format" => match val.as_str() {
                    Some(f) if FORMATS.contains(&f) => {
                        out.insert(k.clone(), val.clone());
                    }
                    _ => self.report.warn(
                        at,
                        k,
                        format!("strict mode accepts only the formats {}; `{val}` dropped", FORMATS.join(", ")),
                    ),
                },
                "$ref" => match val.as_str() {
                    Some(r) if resolve_local(self.root, r).is_some() => {
                        out.insert(k.clone(), val.clone());
                    }
                    _ => {
                        return Err(format!(
                            "{kp}: {val} is not a reference inside this schema; strict mode resolves only local `$ref`s"
                        ))
                    }
                },
                "items" => {
                    if val.is_array() {
                        return Err(format!(
                            "{kp}: a tuple (`items` as a list) has no equivalent in strict mode"
                        ));
                    }
                    out.insert(k.clone(), self.node(val, &kp, depth + 1, false)?);
                }
                "anyOf" | "oneOf" => {
                    let Some(list) = val.as_array() else {
                        return Err(format!("{kp}: not a list of schemas"));
                    };
                    if k == "oneOf" {
                        self.report.warn(
                            at,
                            k,
                            "strict mode has only `anyOf`: written as `anyOf`, so a value matching several alternatives is no longer refused",
                        );
                    }
                    let mut branches = Vec::with_capacity(list.len());
                    for (i, b) in list.iter().enumerate() {
                        branches.push(self.node(b, &child(&kp, &i.to_string()), depth + 1, false)?);
                    }
                    out.insert("anyOf".into(), Value::Array(branches));
                }
                "$defs" | "definitions" => {
                    let Some(defs) = val.as_object() else {
                        return Err(format!("{kp}: not a map of schemas"));
                    };
                    let mut converted = Map::new();
                    for (name, d) in defs {
                        converted.insert(name.clone(), self.node(d, &child(&kp, name), depth + 1, false)?);
                    }
                    out.insert(k.clone(), Value::Object(converted));
                }
                other if ANNOTATIONS.contains(&other) || other.starts_with("x-") => {
                    self.report.warn(
                        at,
                        other,
                        "an annotation strict mode doesn't take; dropped",
                    );
                }
                other => {
                    return Err(format!(
                        "{at}: `{other}` has no equivalent in strict mode"
                    ))
                }
            }
        }
        if types.contains(&"object") || obj.contains_key("properties") {
            self.object(obj, &mut out, ptr, depth, is_root)?;
        }
        Ok(Value::Object(out))
    }

    fn object(
        &mut self,
        obj: &Map<String, Value>,
        out: &mut Map<String, Value>,
        ptr: &str,
        depth: usize,
        is_root: bool,
    ) -> Result<(), String> {
        let at = if ptr.is_empty() { "/" } else { ptr };
        let closed = match obj.get("additionalProperties") {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => {
                return Err(format!(
                    "{}: the object allows properties it doesn't name (a free-form map); strict mode needs `additionalProperties: false`",
                    child(ptr, "additionalProperties")
                ))
            }
        };
        let empty = Map::new();
        let props = match obj.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return Err(format!("{at}: `properties` is not a map of schemas")),
        };
        if props.is_empty() && !closed && !is_root {
            return Err(format!(
                "{at}: an object without declared properties accepts any object; strict mode can only express an empty one"
            ));
        }
        self.properties += props.len();
        if self.properties > MAX_PROPERTIES {
            return Err(format!(
                "{at}: more than {MAX_PROPERTIES} properties in all, strict mode's limit"
            ));
        }
        let required = string_list(obj.get("required"));
        let mut converted = Map::new();
        for (name, schema) in props {
            let pp = child(&child(ptr, "properties"), name);
            let mut c = self.node(schema, &pp, depth + 1, false)?;
            if !required.contains(name) {
                c = make_nullable(c);
                self.report.warn(
                    &pp,
                    "required",
                    "an optional property is made required and nullable: the model sends null instead of leaving it out",
                );
            }
            converted.insert(name.clone(), c);
        }
        let names: Vec<Value> = converted.keys().cloned().map(Value::String).collect();
        out.insert("properties".into(), Value::Object(converted));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }
}

/// Whether the schema already accepts `null`.
fn accepts_null(o: &Map<String, Value>) -> bool {
    let by_type = match o.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(list)) => list.iter().any(|t| t == "null"),
        _ => false,
    };
    let by_enum = o
        .get("enum")
        .and_then(Value::as_array)
        .is_none_or(|e| e.contains(&Value::Null));
    let by_any_of = o
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter()
                .any(|b| b.get("type").is_some_and(|t| t == "null"))
        });
    (by_type && by_enum && !o.contains_key("const") && !o.contains_key("$ref"))
        || (by_any_of && !o.contains_key("type"))
}

/// The schema widened to also accept `null`: `null` joins a plain `type`
/// (and `enum`), a `{"type":"null"}` alternative joins a plain `anyOf`, and
/// anything else is wrapped as `{"anyOf":[schema, {"type":"null"}]}` with
/// its `description` and `title` kept on the outside.
fn make_nullable(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return v;
    };
    if accepts_null(&o) {
        return Value::Object(o);
    }
    let plain = !o.contains_key("$ref") && !o.contains_key("const");
    if plain && o.contains_key("type") && !o.contains_key("anyOf") {
        match o.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                o.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(list)) if !list.iter().any(|t| t == "null") => {
                list.push(json!("null"));
            }
            _ => {}
        }
        if let Some(Value::Array(e)) = o.get_mut("enum") {
            if !e.contains(&Value::Null) {
                e.push(Value::Null);
            }
        }
        return Value::Object(o);
    }
    if plain && !o.contains_key("type") {
        if let Some(Value::Array(list)) = o.get_mut("anyOf") {
            list.push(json!({"type": "null"}));
            return Value::Object(o);
        }
    }
    let mut outer = Map::new();
    for k in ["description", "title"] {
        if let Some(d) = o.remove(k) {
            outer.insert(k.into(), d);
        }
    }
    outer.insert("anyOf".into(), json!([Value::Object(o), {"type": "null"}]));
    Value::Object(outer)
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

    #[test]
    fn nullable_widening() {
        assert_eq!(
            make_nullable(json!({"type": "string"})),
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            make_nullable(json!({"type": "string", "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(
            make_nullable(json!({"type": ["string", "null"]})),
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            make_nullable(json!({"anyOf": [{"type": "string"}]})),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"$ref": "#/$defs/a", "description": "d"})),
            json!({"description": "d", "anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"const": "x"})),
            json!({"anyOf": [{"const": "x"}, {"type": "null"}]})
        );
    }
}
