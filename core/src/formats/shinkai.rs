//! The Shinkai tool format: `metadata.json` (Shinkai Metadata 0.9.8) with
//! the tool's code beside it in `tool.ts` (Deno) or `tool.py` (Python).
//!
//! Field mapping: the registry name comes from `id` (else from
//! the display `name`), the call name is `id` or a slug of `name`, `name` is
//! the title; `parameters`, `result` and `configurations` are JSON Schemas;
//! `oauth[]` are the auth needs (a `clientSecret` holding a value is the
//! lint's `S1` block finding, like every other credential in every format);
//! `tools[]` are dependencies. Every Shinkai
//! tool runs its code, so its execution kind is always `function`. Unknown
//! keys (`runner`, `homePage`, `sql_tables`, `output_arg`, ...) are kept.

use serde_json::{json, Map, Value};

use super::{opt_string, Draft, NameSource, Report};
use crate::error::Problem;
use crate::files::ToolFiles;
use crate::manifest::parse_author;
use crate::policy::ExecutionKind;
use crate::validate;

/// The code files a Shinkai tool may carry, by language.
pub const CODE_FILES: &[&str] = &["tool.ts", "tool.py"];

const KNOWN_KEYS: &[&str] = &[
    "name",
    "version",
    "description",
    "author",
    "keywords",
    "license",
    "homepage",
    "parameters",
    "result",
    "configurations",
    "oauth",
    "tools",
];

/// Keys copied into the execution detail (and kept in extensions too).
const EXECUTION_KEYS: &[&str] = &["runner", "operating_system", "tool_set", "tool_type"];

pub(crate) fn parse(text: &str, files: &ToolFiles, report: &mut Report) -> Option<Draft> {
    let doc = super::read_json("metadata.json", text, report)?;
    let Value::Object(doc) = doc else {
        report.error(Problem::new(
            "",
            format!(
                "metadata.json must be a JSON object, not {}",
                validate::type_name(&doc)
            ),
        ));
        return None;
    };
    let mut draft = Draft::new(ExecutionKind::Function);

    let id = opt_string(doc.get("id"));
    let display = match doc.get("name") {
        Some(Value::String(n)) if !n.trim().is_empty() => Some(n.clone()),
        Some(other) if !other.is_null() => {
            report.error(Problem::new(
                "name",
                format!("must be a string, not {}", validate::type_name(other)),
            ));
            None
        }
        _ => {
            report.error(Problem::new("name", "is missing").with_fix("add a display `name`"));
            None
        }
    };
    draft.name = match (&id, &display) {
        (Some(id), _) => Some(NameSource {
            value: id.clone(),
            path: "id",
        }),
        (None, Some(n)) => Some(NameSource {
            value: n.clone(),
            path: "name",
        }),
        _ => None,
    };
    draft.call_name = match (&id, &display) {
        (Some(id), _) => id.clone(),
        (None, Some(n)) => call_slug(n),
        _ => String::new(),
    };
    if !draft.call_name.is_empty() {
        super::check_call_name(
            if id.is_some() { "id" } else { "name" },
            &draft.call_name,
            report,
        );
    }
    draft.title = display;
    draft.version = doc.get("version").map(|v| (v.clone(), "version"));
    draft.description = opt_string(doc.get("description"));
    draft.license = opt_string(doc.get("license"));
    draft.homepage = opt_string(doc.get("homepage")).or_else(|| opt_string(doc.get("homePage")));
    match doc.get("author") {
        Some(Value::String(a)) if !a.trim().is_empty() => draft.authors.push(parse_author(a)),
        _ => {}
    }
    match doc.get("keywords") {
        None | Some(Value::Null) => {}
        Some(Value::Array(k)) => {
            for (i, item) in k.iter().enumerate() {
                match item.as_str() {
                    Some(s) => draft.keywords.push(s.to_string()),
                    None => {
                        report.error(Problem::new(format!("keywords[{i}]"), "must be a string"))
                    }
                }
            }
        }
        Some(_) => report.error(Problem::new("keywords", "must be an array of strings")),
    }

    // Schemas.
    match doc.get("parameters") {
        None | Some(Value::Null) => {}
        Some(p) => {
            let p = without_any_type("parameters", p.clone(), report);
            report.extend(validate::check_schema("parameters", &p));
            if p.get("type").is_some_and(|t| t != "object") {
                report.error(Problem::new("parameters.type", "must be `object`"));
            }
            draft.parameters = p;
        }
    }
    if let Some(r) = doc.get("result").filter(|v| !v.is_null()) {
        let r = without_any_type("result", r.clone(), report);
        report.extend(validate::check_schema("result", &r));
        draft.result = Some(r);
    }
    if let Some(c) = doc.get("configurations").filter(|v| !v.is_null()) {
        let c = without_any_type("configurations", c.clone(), report);
        report.extend(validate::check_schema("configurations", &c));
        draft.config_schema = Some(c);
    }

    // OAuth: the auth needs. A client secret in them is the lint's S1.
    match doc.get("oauth") {
        None | Some(Value::Null) => {}
        Some(Value::Array(entries)) => {
            for (i, entry) in entries.iter().enumerate() {
                if let Some(secret) = entry.get("clientSecret") {
                    if !(secret.is_string() || secret.is_null()) {
                        report.error(Problem::new(
                            format!("oauth[{i}].clientSecret"),
                            format!("must be a string, not {}", validate::type_name(secret)),
                        ));
                    }
                }
                draft.auth.push(entry.clone());
            }
        }
        Some(other) => report.error(Problem::new(
            "oauth",
            format!("must be an array, not {}", validate::type_name(other)),
        )),
    }

    match doc.get("tools") {
        None | Some(Value::Null) => {}
        Some(Value::Array(t)) => {
            for (i, item) in t.iter().enumerate() {
                match item.as_str() {
                    Some(s) => draft.dependencies.push(s.to_string()),
                    None => report.error(Problem::new(
                        format!("tools[{i}]"),
                        "must be a tool router key string",
                    )),
                }
            }
        }
        Some(_) => report.error(Problem::new(
            "tools",
            "must be an array of tool router keys",
        )),
    }

    // The code file.
    let tool_type = doc.get("tool_type").and_then(Value::as_str);
    let expected: &[&str] = match tool_type {
        Some("typescript") => &["tool.ts"],
        Some("python") => &["tool.py"],
        _ => CODE_FILES,
    };
    let code_file = expected.iter().find(|f| files.contains(f)).copied();
    if code_file.is_none() {
        let (path, what) = match expected {
            [one] => (*one, format!("`{one}`")),
            _ => (
                "tool.ts",
                "`tool.ts` (TypeScript, Deno) or `tool.py` (Python)".to_string(),
            ),
        };
        report.error(
            Problem::new(
                path,
                format!(
                    "a Shinkai tool needs its code beside metadata.json, but {what} is missing"
                ),
            )
            .with_fix(format!("add {what} to the tool directory")),
        );
    }
    let mut detail = Map::new();
    for key in EXECUTION_KEYS {
        if let Some(v) = doc.get(*key) {
            detail.insert((*key).to_string(), v.clone());
        }
    }
    detail.insert(
        "code_file".into(),
        code_file.map_or(Value::Null, |f| json!(f)),
    );
    draft.execution.detail = Value::Object(detail);

    for (k, v) in &doc {
        if !KNOWN_KEYS.contains(&k.as_str()) {
            draft.extensions.insert(k.clone(), v.clone());
        }
    }
    draft.document = Some(Value::Object(doc));
    Some(draft)
}

/// A call name from a display name: lowercase letters, digits, `_` and `-`;
/// every other run of characters becomes `-`.
pub fn call_slug(display: &str) -> String {
    let mut out = String::new();
    for c in display.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Shinkai schemas use `"type": "any"` (not a JSON Schema type) to mean any
/// value. Drop it from the canonical schema (no `type` accepts any value)
/// and warn, rather than refuse a tool that Shinkai itself runs.
fn without_any_type(path: &str, mut schema: Value, report: &mut Report) -> Value {
    strip_any(path, &mut schema, report);
    schema
}

fn strip_any(path: &str, v: &mut Value, report: &mut Report) {
    match v {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("any") {
                map.remove("type");
                report.warn(
                    Problem::new(
                        validate::join(path, "type"),
                        "`any` is not a JSON Schema type; treated as any value",
                    )
                    .with_fix("omit `type` to accept any value"),
                );
            }
            for (k, child) in map.iter_mut() {
                strip_any(&validate::join(path, k), child, report);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                strip_any(&format!("{path}[{i}]"), child, report);
            }
        }
        _ => {}
    }
}
