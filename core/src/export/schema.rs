//! JSON Schema helpers the exports share: JSON Pointers, local `$ref`
//! resolution, and folding a top-level `allOf`/`anyOf`/`oneOf` into one
//! object schema for the APIs that refuse composition at the root of a
//! tool's parameters (Anthropic, Gemini, OpenAI strict mode).

use serde_json::Value;

use super::ExportWarning;

/// The composition keywords, in the order they are folded.
const COMPOSITION: [&str; 3] = ["allOf", "anyOf", "oneOf"];

/// The loss report being built by one conversion.
#[derive(Debug, Default)]
pub(crate) struct LossReport {
    pub(crate) warnings: Vec<ExportWarning>,
}

impl LossReport {
    /// Records that `keyword` at `pointer` was dropped or changed.
    pub(crate) fn warn(&mut self, pointer: &str, keyword: &str, message: impl Into<String>) {
        let w = ExportWarning {
            pointer: if pointer.is_empty() {
                "/".to_string()
            } else {
                pointer.to_string()
            },
            keyword: keyword.to_string(),
            message: message.into(),
        };
        // A `$ref`'d definition is converted once per use; report it once.
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }
}

/// `pointer` extended by one reference token, escaped as RFC 6901 says.
pub(crate) fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// Resolves a same-document `$ref` (`#`, `#/$defs/x`, percent-encoded or
/// not) against `root`: the target and its JSON Pointer. `None` for remote
/// references, anchors, and pointers to nothing.
pub(crate) fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
    let fragment = percent_decode(reference.strip_prefix('#')?)?;
    if fragment.is_empty() {
        return Some((root, String::new()));
    }
    if !fragment.starts_with('/') {
        return None;
    }
    root.pointer(&fragment).map(|v| (v, fragment))
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The string items of a `required`-style array.
pub(crate) fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The root parameters schema with any top-level `allOf`, `anyOf` or `oneOf`
/// folded into one object schema: every alternative's `properties` join the
/// root's, `allOf`'s `required` lists are joined, and for `anyOf`/`oneOf` only
/// properties every alternative requires stay required (reported: which
/// alternative needs what is lost). A keyword whose alternatives aren't all
/// object schemas is dropped and reported. `base` is the schema's pointer.
pub(crate) fn fold_root_composition(schema: &Value, base: &str, report: &mut LossReport) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    if !COMPOSITION.iter().any(|k| obj.contains_key(*k)) {
        return schema.clone();
    }
    let mut out = obj.clone();
    let mut props = out
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut required = string_list(out.get("required"));
    for kw in COMPOSITION {
        let Some(alternatives) = out.remove(kw) else {
            continue;
        };
        let branches = alternatives
            .as_array()
            .map(|list| {
                list.iter()
                    .enumerate()
                    .map(|(i, b)| {
                        let ptr = child(&child(base, kw), &i.to_string());
                        match b.get("$ref").and_then(Value::as_str) {
                            Some(r) => resolve_local(schema, r)
                                .map(|(v, p)| (v, format!("{base}{p}")))
                                .unwrap_or((b, ptr)),
                            None => (b, ptr),
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let all_objects = !branches.is_empty()
            && branches.iter().all(|(b, _)| {
                b.as_object().is_some_and(|o| {
                    o.get("type").is_none_or(|t| t == "object")
                        && o.get("properties").is_none_or(Value::is_object)
                })
            });
        if !all_objects {
            report.warn(
                base,
                kw,
                format!(
                    "`{kw}` at the top level has alternatives that aren't object schemas; dropped"
                ),
            );
            continue;
        }
        let mut each_required: Vec<Vec<String>> = Vec::new();
        for (branch, ptr) in &branches {
            let Some(b) = branch.as_object() else {
                continue;
            };
            for (k, v) in b {
                match k.as_str() {
                    "properties" => {
                        for (name, s) in v.as_object().into_iter().flatten() {
                            match props.get(name) {
                                Some(existing) if existing != s => report.warn(
                                    &child(&child(ptr, "properties"), name),
                                    name,
                                    "a second, different schema for this property in another alternative; the first one is kept",
                                ),
                                Some(_) => {}
                                None => {
                                    props.insert(name.clone(), s.clone());
                                }
                            }
                        }
                    }
                    "required" => {}
                    "type" | "description" | "title" | "$comment" => {}
                    other => report.warn(
                        ptr,
                        other,
                        format!(
                            "dropped when the `{kw}` alternatives were merged into one object schema"
                        ),
                    ),
                }
            }
            each_required.push(string_list(b.get("required")));
        }
        let joined: Vec<String> = if kw == "allOf" {
            each_required.concat()
        } else {
            let first = each_required.first().cloned().unwrap_or_default();
            first
                .into_iter()
                .filter(|n| each_required.iter().all(|r| r.contains(n)))
                .collect()
        };
        if kw != "allOf" {
            report.warn(
                base,
                kw,
                format!(
                    "`{kw}` at the top level: its {} alternatives were merged into one object schema; which properties each alternative requires is lost",
                    branches.len()
                ),
            );
        }
        for name in joined {
            if !required.contains(&name) {
                required.push(name);
            }
        }
    }
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), Value::Object(props));
    if required.is_empty() {
        out.remove("required");
    } else {
        out.insert(
            "required".into(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_escape_and_refs_resolve() {
        assert_eq!(child("/a", "b/c~d"), "/a/b~1c~0d");
        let root = json!({"$defs": {"a b": {"type": "string"}}});
        let (v, p) = resolve_local(&root, "#/$defs/a%20b").unwrap();
        assert_eq!(v["type"], "string");
        assert_eq!(p, "/$defs/a b");
        assert!(resolve_local(&root, "https://example.com/x.json").is_none());
        assert!(resolve_local(&root, "#anchor").is_none());
        assert!(resolve_local(&root, "#/$defs/missing").is_none());
        assert!(resolve_local(&root, "#/%zz").is_none());
    }

    #[test]
    fn top_level_one_of_is_folded() {
        let s = json!({"type": "object", "oneOf": [
            {"properties": {"id": {"type": "string"}, "k": {"type": "string"}}, "required": ["id", "k"]},
            {"properties": {"name": {"type": "string"}}, "required": ["name", "k"]}
        ]});
        let mut r = LossReport::default();
        let out = fold_root_composition(&s, "/inputSchema", &mut r);
        assert_eq!(out["properties"].as_object().unwrap().len(), 3);
        assert_eq!(out["required"], json!(["k"]));
        assert!(out.get("oneOf").is_none());
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].keyword, "oneOf");
        assert_eq!(r.warnings[0].pointer, "/inputSchema");
    }

    #[test]
    fn all_of_joins_required_and_non_objects_are_dropped() {
        let s = json!({"type": "object", "$defs": {"b": {"properties": {"b": {}}, "required": ["b"]}},
            "allOf": [{"properties": {"a": {}}, "required": ["a"]}, {"$ref": "#/$defs/b"}],
            "anyOf": [{"type": "string"}]});
        let mut r = LossReport::default();
        let out = fold_root_composition(&s, "", &mut r);
        assert_eq!(out["required"], json!(["a", "b"]));
        assert!(out.get("anyOf").is_none());
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert_eq!(r.warnings[0].keyword, "anyOf");
    }
}
