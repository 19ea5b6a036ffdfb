//! Gemini export: the tool as a Gemini `FunctionDeclaration`, either with
//! `parameters` in Gemini's `Schema` (a subset of OpenAPI 3.0's schema
//! object; [`to_gemini`]) or with the JSON Schema as it is in
//! `parameters_json_schema` ([`to_gemini_json_schema`], lossless).

use serde_json::{json, Map, Value};

use super::schema::{child, fold_root_composition, resolve_local, LossReport};
use super::Converted;
use crate::model::Tool;

/// How many `$ref`s may be expanded inside one another along one path; a
/// recursive definition stops there.
const MAX_REF_DEPTH: usize = 8;
/// Schema nodes written in all: a bound on what inlining shared
/// definitions can grow to.
const MAX_NODES: usize = 10_000;
/// Nesting depth of the written schema.
const MAX_DEPTH: usize = 64;

/// The type names Gemini's `Schema.type` has (besides `null`).
const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

/// A call name made acceptable as a Gemini function name: letters, digits,
/// `_`, `.`, `:` and `-`, starting with a letter or `_`, at most 64
/// characters. Other characters become `_`; an empty name becomes `tool`.
pub fn gemini_function_name(call_name: &str) -> String {
    if call_name.is_empty() {
        return "tool".to_string();
    }
    let mut s: String = call_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        s.insert(0, '_');
    }
    s.chars().take(64).collect()
}

fn name_warning(tool: &Tool, report: &mut LossReport) -> String {
    let name = gemini_function_name(&tool.call_name);
    if name != tool.call_name {
        report.warn(
            "/name",
            "name",
            format!(
                "Gemini function names use letters, digits, `_.:-`, start with a letter or `_` and have at most 64 characters; `{}` is exported as `{name}`",
                tool.call_name
            ),
        );
    }
    name
}

/// The tool as a Gemini `FunctionDeclaration` whose `parameters` is a
/// Gemini `Schema`. Converted: a type list with `null` becomes `nullable`
/// (several other types become `anyOf`), local `$ref`s are inlined (a
/// recursive one is expanded [`MAX_REF_DEPTH`] levels deep, then replaced by
/// an untyped schema and reported), `const` becomes a one-value `enum`,
/// non-string enum values become strings (reported), `oneOf` becomes
/// `anyOf` (reported), `allOf` is merged into its schema, the first of
/// `examples` becomes `example`, and a top-level composition is folded into
/// one object schema. Every other keyword Gemini's `Schema` lacks
/// (`additionalProperties`, `exclusiveMinimum`, `uniqueItems`, `not`,
/// `$schema`, ...) is dropped and reported. A tool without parameters has no
/// `parameters` (Gemini refuses an object schema without properties there).
pub fn to_gemini(tool: &Tool) -> Converted {
    let mut report = LossReport::default();
    let name = name_warning(tool, &mut report);
    let base = "/inputSchema";
    let root = fold_root_composition(&tool.parameters, base, &mut report);
    let mut g = Gemini {
        root: &root,
        base,
        report,
        refs: Vec::new(),
        nodes: 0,
    };
    let mut parameters = g.schema(&root, base, 0).unwrap_or_else(|| json!({}));
    if let Some(obj) = parameters.as_object_mut() {
        obj.insert("type".into(), json!("object"));
    }
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    out.insert("description".into(), json!(tool.description));
    let has_properties = parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_properties {
        out.insert("parameters".into(), parameters);
    }
    Converted {
        value: Value::Object(out),
        warnings: g.report.warnings,
    }
}

/// The tool as a Gemini `FunctionDeclaration` with the parameters' JSON
/// Schema unchanged in `parameters_json_schema`. Only the name may change.
pub fn to_gemini_json_schema(tool: &Tool) -> Converted {
    let mut report = LossReport::default();
    let name = name_warning(tool, &mut report);
    Converted {
        value: json!({
            "name": name,
            "description": tool.description,
            "parameters_json_schema": tool.parameters,
        }),
        warnings: report.warnings,
    }
}

struct Gemini<'a> {
    root: &'a Value,
    base: &'a str,
    report: LossReport,
    /// The definitions being expanded, innermost last.
    refs: Vec<String>,
    nodes: usize,
}

impl Gemini<'_> {
    /// One JSON Schema as a Gemini `Schema`; `None` when nothing of it can
    /// be kept (the schema `false`, a value that is no schema).
    fn schema(&mut self, v: &Value, ptr: &str, depth: usize) -> Option<Value> {
        self.nodes += 1;
        let obj = match v {
            Value::Bool(true) => return Some(json!({})),
            Value::Object(obj) => obj,
            other => {
                self.report.warn(
                    ptr,
                    "",
                    format!("the schema `{other}` has no Gemini equivalent; dropped"),
                );
                return None;
            }
        };
        if depth > MAX_DEPTH || self.nodes > MAX_NODES {
            self.report.warn(
                ptr,
                "",
                format!("the schema is nested deeper than {MAX_DEPTH} levels or larger than {MAX_NODES} nodes once `$ref`s are inlined; replaced by an untyped schema"),
            );
            return Some(json!({}));
        }
        if let Some(reference) = obj.get("$ref") {
            let r = reference.as_str().unwrap_or_default();
            match resolve_local(self.root, r) {
                Some((target, target_ptr))
                    if !self.refs.contains(&target_ptr) && self.refs.len() < MAX_REF_DEPTH =>
                {
                    // Keywords beside `$ref` apply too; they win over the target's.
                    let mut merged = target.as_object().cloned().unwrap_or_default();
                    if target.as_bool() == Some(false) {
                        return self.schema(target, ptr, depth);
                    }
                    for (k, val) in obj {
                        if k != "$ref" {
                            merged.insert(k.clone(), val.clone());
                        }
                    }
                    self.refs.push(target_ptr.clone());
                    let at = format!("{}{target_ptr}", self.base);
                    let out = self.schema(&Value::Object(merged), &at, depth + 1);
                    self.refs.pop();
                    return out;
                }
                Some(_) => self.report.warn(
                    ptr,
                    "$ref",
                    format!("{r} is recursive (or nests more than {MAX_REF_DEPTH} references); not expanded further, the schema here is left untyped"),
                ),
                None => self.report.warn(
                    ptr,
                    "$ref",
                    format!("{r} is not a reference inside this schema; dropped"),
                ),
            }
        }

        let mut out = Map::new();
        let mut nullable = false;
        let mut type_alternatives: Vec<Value> = Vec::new();
        let mut any_of: Option<Vec<Value>> = None;
        for (k, val) in obj {
            let kp = child(ptr, k);
            match k.as_str() {
                "$ref" | "$defs" | "definitions" | "allOf" | "const" => {}
                "type" => {
                    let names: Vec<&str> = match val {
                        Value::String(t) => vec![t.as_str()],
                        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                        _ => Vec::new(),
                    };
                    if names.contains(&"null") && names.len() > 1 {
                        nullable = true;
                    }
                    let kept: Vec<&str> = names
                        .iter()
                        .copied()
                        .filter(|t| TYPES.contains(t))
                        .collect();
                    if names.iter().any(|t| *t != "null" && !TYPES.contains(t)) || names.is_empty()
                    {
                        self.report.warn(
                            ptr,
                            k,
                            format!("`type` {val} names no type Gemini has; the unknown names are dropped"),
                        );
                    }
                    match kept.as_slice() {
                        [] if names == ["null"] => {
                            out.insert("type".into(), json!("null"));
                        }
                        [] => {}
                        [one] => {
                            out.insert("type".into(), json!(one));
                        }
                        several => {
                            type_alternatives =
                                several.iter().map(|t| json!({"type": t})).collect();
                        }
                    }
                }
                "enum" => {
                    if let Some(values) = self.enum_values(val, ptr, k, &mut nullable) {
                        out.insert("enum".into(), Value::Array(values));
                    }
                }
                "anyOf" | "oneOf" => {
                    let Some(list) = val.as_array() else {
                        self.report.warn(
                            ptr,
                            k,
                            format!("`{k}` is not a list of schemas; dropped"),
                        );
                        continue;
                    };
                    if k == "oneOf" {
                        self.report.warn(
                            ptr,
                            k,
                            "Gemini has no `oneOf`: written as `anyOf`, so a value matching several alternatives is no longer refused",
                        );
                    }
                    let mut branches = any_of.take().unwrap_or_default();
                    for (i, b) in list.iter().enumerate() {
                        let Some(c) = self.schema(b, &child(&kp, &i.to_string()), depth + 1) else {
                            continue;
                        };
                        if c.get("type").is_some_and(|t| t == "null")
                            && c.as_object().is_some_and(|o| o.len() == 1)
                        {
                            nullable = true;
                        } else {
                            branches.push(c);
                        }
                    }
                    any_of = Some(branches);
                }
                "properties" => {
                    let Some(map) = val.as_object() else {
                        self.report
                            .warn(ptr, k, "`properties` is not a map of schemas; dropped");
                        continue;
                    };
                    let mut props = Map::new();
                    for (name, s) in map {
                        if let Some(c) = self.schema(s, &child(&kp, name), depth + 1) {
                            props.insert(name.clone(), c);
                        }
                    }
                    out.insert("properties".into(), Value::Object(props));
                }
                "items" => {
                    if val.is_array() {
                        self.report.warn(
                            ptr,
                            k,
                            "a tuple (`items` as a list) has no Gemini equivalent; dropped",
                        );
                    } else if let Some(c) = self.schema(val, &kp, depth + 1) {
                        out.insert("items".into(), c);
                    }
                }
                "examples" => match val.as_array().and_then(|e| e.first()) {
                    Some(first) if !obj.contains_key("example") => {
                        out.insert("example".into(), first.clone());
                        if val.as_array().is_some_and(|e| e.len() > 1) {
                            self.report.warn(ptr, k, "Gemini keeps one `example`: the first of `examples` is kept, the others dropped");
                        }
                    }
                    _ => self.report.warn(ptr, k, "no Gemini equivalent; dropped"),
                },
                "additionalProperties" if val == &Value::Bool(true) => {}
                "nullable" => match val.as_bool() {
                    Some(b) => nullable |= b,
                    None => self.report.warn(ptr, k, "not a boolean; dropped"),
                },
                "title" | "description" | "format" | "pattern" => {
                    self.keep(&mut out, ptr, k, val, val.is_string(), "a string");
                }
                "minimum" | "maximum" => {
                    self.keep(&mut out, ptr, k, val, val.is_number(), "a number");
                }
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
                | "maxProperties" => {
                    self.keep(&mut out, ptr, k, val, val.is_u64(), "a count");
                }
                "required" | "propertyOrdering" => {
                    let ok = val
                        .as_array()
                        .is_some_and(|l| l.iter().all(Value::is_string));
                    self.keep(&mut out, ptr, k, val, ok, "a list of names");
                }
                "default" | "example" => {
                    out.insert(k.clone(), val.clone());
                }
                other => self.report.warn(
                    ptr,
                    other,
                    format!("Gemini's Schema has no `{other}`; dropped"),
                ),
            }
        }
        // `const` is a one-value enum (unless `enum` is there already).
        if let Some(c) = obj.get("const") {
            if out.contains_key("enum") {
                self.report
                    .warn(ptr, "const", "`const` beside `enum`; `const` dropped");
            } else if let Some(values) =
                self.enum_values(&Value::Array(vec![c.clone()]), ptr, "const", &mut nullable)
            {
                out.insert("enum".into(), Value::Array(values));
            }
        }
        if out
            .get("enum")
            .is_some_and(|e| e.as_array().is_some_and(Vec::is_empty))
        {
            out.remove("enum");
        }
        if let (Some(_), false) = (&any_of, type_alternatives.is_empty()) {
            self.report.warn(
                ptr,
                "type",
                "a list of several types beside `anyOf`: the type list is dropped, `anyOf` kept",
            );
            type_alternatives.clear();
        }
        let alternatives = any_of.unwrap_or(type_alternatives);
        match alternatives.len() {
            0 => {}
            1 => {
                if let Some(Value::Object(only)) = alternatives.into_iter().next() {
                    for (k, v) in only {
                        out.entry(k).or_insert(v);
                    }
                }
            }
            _ => {
                out.insert("anyOf".into(), Value::Array(alternatives));
            }
        }
        if let Some(all_of) = obj.get("allOf") {
            self.merge_all_of(&mut out, all_of, ptr, depth);
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Some(Value::Object(out))
    }

    fn keep(
        &mut self,
        out: &mut Map<String, Value>,
        ptr: &str,
        k: &str,
        val: &Value,
        ok: bool,
        what: &str,
    ) {
        if ok {
            out.insert(k.to_string(), val.clone());
        } else {
            self.report
                .warn(ptr, k, format!("Gemini wants {what} here; dropped"));
        }
    }

    /// Enum values as Gemini takes them: strings (numbers and booleans are
    /// written as strings, reported), `null` as `nullable`. `None` (reported)
    /// when a value is an object or a list.
    fn enum_values(
        &mut self,
        val: &Value,
        ptr: &str,
        k: &str,
        nullable: &mut bool,
    ) -> Option<Vec<Value>> {
        let Some(list) = val.as_array() else {
            self.report.warn(ptr, k, "not a list of values; dropped");
            return None;
        };
        let mut out = Vec::with_capacity(list.len());
        let mut stringified = false;
        for v in list {
            match v {
                Value::Null => *nullable = true,
                Value::String(_) => out.push(v.clone()),
                Value::Number(_) | Value::Bool(_) => {
                    stringified = true;
                    out.push(Value::String(v.to_string()));
                }
                _ => {
                    self.report.warn(
                        ptr,
                        k,
                        "values that are objects or lists have no Gemini equivalent; dropped",
                    );
                    return None;
                }
            }
        }
        if stringified {
            self.report.warn(
                ptr,
                k,
                "Gemini enum values are strings: numbers and booleans are written as strings",
            );
        }
        Some(out)
    }

    /// `allOf`: each alternative converted and merged into `out`: properties
    /// and `required` joined, other keywords added where `out` lacks them
    /// (a different value for one it has is dropped and reported).
    fn merge_all_of(
        &mut self,
        out: &mut Map<String, Value>,
        all_of: &Value,
        ptr: &str,
        depth: usize,
    ) {
        let Some(list) = all_of.as_array() else {
            self.report
                .warn(ptr, "allOf", "`allOf` is not a list of schemas; dropped");
            return;
        };
        let kp = child(ptr, "allOf");
        for (i, b) in list.iter().enumerate() {
            let Some(Value::Object(branch)) =
                self.schema(b, &child(&kp, &i.to_string()), depth + 1)
            else {
                continue;
            };
            for (k, v) in branch {
                match (k.as_str(), out.get_mut(&k)) {
                    ("properties", Some(Value::Object(props))) => {
                        for (name, s) in v.as_object().into_iter().flatten() {
                            props.entry(name.clone()).or_insert_with(|| s.clone());
                        }
                    }
                    ("required", Some(Value::Array(req))) => {
                        for name in v.as_array().into_iter().flatten() {
                            if !req.contains(name) {
                                req.push(name.clone());
                            }
                        }
                    }
                    (_, Some(existing)) => {
                        if *existing != v {
                            self.report.warn(
                                &child(&kp, &i.to_string()),
                                &k,
                                format!("`allOf` alternatives disagree on `{k}`; the first value is kept"),
                            );
                        }
                    }
                    (_, None) => {
                        out.insert(k, v);
                    }
                }
            }
        }
    }
}
