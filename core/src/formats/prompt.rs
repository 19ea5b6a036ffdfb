//! The prompt format ("JSON Format for LLM Tools"): `prompt.json` with a
//! `model_prompt` template (`{{var}}` placeholders) and `metadata`.
//!
//! Field mapping: `metadata.prompt_name` is the title and the
//! source of the registry and call names; `metadata.variables[]` become the
//! parameters (text → string; single-select → string + enum; multi-select →
//! array of enum; `default` kept); `metadata.expected_output` becomes a
//! string result schema (kept whole in extensions too, since it is not a
//! schema); `metadata.parameters` + `model_version` are the model params;
//! `metadata.creator` the author; the avatar an icon. Every placeholder in
//! the template must name a variable. The execution kind is `prompt`.

use serde_json::{json, Map, Value};

use super::{opt_string, Draft, NameSource, Report};
use crate::error::Problem;
use crate::model::{Author, Hints};
use crate::policy::ExecutionKind;
use crate::validate;

const KNOWN_METADATA_KEYS: &[&str] = &[
    "prompt_name",
    "description",
    "model_version",
    "creator",
    "parameters",
    "variables",
    "expected_output",
    "avatar_type",
    "avatar",
];

/// The variable types of the format.
pub const VARIABLE_TYPES: &[&str] = &["text", "single-select", "multi-select"];

pub(crate) fn parse(text: &str, report: &mut Report) -> Option<Draft> {
    let doc = super::read_json("prompt.json", text, report)?;
    let Value::Object(doc) = doc else {
        report.error(Problem::new(
            "",
            format!(
                "prompt.json must be a JSON object, not {}",
                validate::type_name(&doc)
            ),
        ));
        return None;
    };
    let mut draft = Draft::new(ExecutionKind::Prompt);
    draft.version = doc.get("version").map(|v| (v.clone(), "version"));
    draft.hints = Hints {
        read_only: Some(true),
        open_world: Some(false),
        ..Hints::default()
    };

    let empty = Map::new();
    let meta = match doc.get("metadata") {
        Some(Value::Object(m)) => m,
        Some(other) => {
            report.error(Problem::new(
                "metadata",
                format!("must be an object, not {}", validate::type_name(other)),
            ));
            &empty
        }
        None => {
            report.error(
                Problem::new("metadata", "is missing")
                    .with_fix("add `metadata` with `prompt_name` and `variables`"),
            );
            &empty
        }
    };

    match meta.get("prompt_name") {
        Some(Value::String(n)) if !n.trim().is_empty() => {
            draft.name = Some(NameSource {
                value: n.clone(),
                path: "metadata.prompt_name",
            });
            draft.call_name = super::shinkai::call_slug(n);
            draft.title = Some(n.clone());
            super::check_call_name("metadata.prompt_name", &draft.call_name, report);
        }
        Some(other) => report.error(Problem::new(
            "metadata.prompt_name",
            format!(
                "must be a non-empty string, not {}",
                validate::type_name(other)
            ),
        )),
        None => {
            if doc.get("metadata").is_some_and(Value::is_object) {
                report.error(Problem::new("metadata.prompt_name", "is missing"));
            }
        }
    }
    draft.description = opt_string(meta.get("description"));

    if let Some(Value::Object(c)) = meta.get("creator") {
        if let Some(name) = opt_string(c.get("name")) {
            draft.authors.push(Author {
                name,
                email: opt_string(c.get("email")),
                organization: opt_string(c.get("organization")),
            });
        }
    }

    // Variables → parameters.
    let mut var_names: Vec<String> = Vec::new();
    let mut properties = Map::new();
    let mut required = Vec::new();
    match meta.get("variables") {
        None | Some(Value::Null) => {}
        Some(Value::Array(vars)) => {
            for (i, var) in vars.iter().enumerate() {
                let path = format!("metadata.variables[{i}]");
                let Some(var) = var.as_object() else {
                    report.error(Problem::new(
                        &path,
                        "must be an object with `name` and `type`",
                    ));
                    continue;
                };
                let Some(name) = opt_string(var.get("name")) else {
                    report.error(Problem::new(format!("{path}.name"), "is missing or empty"));
                    continue;
                };
                if var_names.contains(&name) {
                    report.error(Problem::new(
                        format!("{path}.name"),
                        format!("`{name}` is declared twice"),
                    ));
                    continue;
                }
                var_names.push(name.clone());
                if let Some(schema) = variable_schema(&path, var, report) {
                    if !var.contains_key("default") {
                        required.push(Value::String(name.clone()));
                    }
                    properties.insert(name, schema);
                }
            }
        }
        Some(other) => report.error(Problem::new(
            "metadata.variables",
            format!("must be an array, not {}", validate::type_name(other)),
        )),
    }
    let mut params = Map::new();
    params.insert("type".into(), json!("object"));
    params.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        params.insert("required".into(), Value::Array(required));
    }
    draft.parameters = Value::Object(params);

    // Template.
    match doc.get("model_prompt") {
        Some(Value::String(t)) => {
            let used = validate::double_brace_placeholders(t);
            let mut reported: Vec<&str> = Vec::new();
            for name in &used {
                if !var_names.iter().any(|v| v == name) && !reported.contains(name) {
                    reported.push(name);
                    report.error(
                        Problem::new("model_prompt", format!("placeholder `{{{{{name}}}}}` refers to no variable in metadata.variables"))
                            .with_fix(format!("add a variable named `{name}` or remove the placeholder")),
                    );
                }
            }
            for v in &var_names {
                if !used.contains(&v.as_str()) {
                    report.warn(Problem::new(
                        "model_prompt",
                        format!("variable `{v}` is never used in the template (no `{{{{{v}}}}}`)"),
                    ));
                }
            }
            draft.template = Some(t.clone());
        }
        Some(other) => report.error(Problem::new(
            "model_prompt",
            format!("must be a string, not {}", validate::type_name(other)),
        )),
        None => report.error(
            Problem::new("model_prompt", "is missing")
                .with_fix("add the prompt template with `{{variable}}` placeholders"),
        ),
    }

    // Expected output → result.
    if let Some(out) = meta.get("expected_output") {
        match out.as_object() {
            Some(o) => {
                let mut schema = Map::new();
                schema.insert("type".into(), json!("string"));
                if let Some(Value::Array(allowed)) = o.get("allowed_values") {
                    schema.insert("enum".into(), Value::Array(allowed.clone()));
                }
                if let Some(t) = o.get("type").and_then(Value::as_str) {
                    schema.insert(
                        "description".into(),
                        json!(format!("model output of type `{t}`")),
                    );
                }
                draft.result = Some(Value::Object(schema));
                draft
                    .extensions
                    .insert("expected_output".into(), out.clone());
            }
            None => report.error(Problem::new(
                "metadata.expected_output",
                "must be an object with `type`",
            )),
        }
    }

    // Model parameters.
    let mut model = Map::new();
    if let Some(Value::Object(p)) = meta.get("parameters") {
        model.extend(p.clone());
    }
    if let Some(mv) = meta.get("model_version") {
        model.insert("model_version".into(), mv.clone());
    }
    if !model.is_empty() {
        draft.model_params = Some(Value::Object(model));
    }

    // Avatar → icon.
    if let Some(avatar) = opt_string(meta.get("avatar")) {
        let src = match meta.get("avatar_type").and_then(Value::as_str) {
            Some("base64") => format!("data:image/png;base64,{avatar}"),
            _ => avatar,
        };
        draft.icons.push(json!({ "src": src }));
    }

    for (k, v) in meta {
        if !KNOWN_METADATA_KEYS.contains(&k.as_str()) {
            draft.extensions.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in &doc {
        if !matches!(k.as_str(), "version" | "model_prompt" | "metadata") {
            draft.extensions.insert(k.clone(), v.clone());
        }
    }
    draft.document = Some(Value::Object(doc));
    Some(draft)
}

/// The JSON Schema of one variable, or `None` (with problems reported).
fn variable_schema(path: &str, var: &Map<String, Value>, report: &mut Report) -> Option<Value> {
    let ty = var.get("type").and_then(Value::as_str).unwrap_or("text");
    let mut schema = Map::new();
    let allowed = match var.get("allowed_values") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(a.clone()),
        Some(_) => {
            report.error(Problem::new(
                format!("{path}.allowed_values"),
                "must be an array",
            ));
            None
        }
    };
    match ty {
        "text" => {
            schema.insert("type".into(), json!("string"));
        }
        "single-select" | "multi-select" => {
            let Some(allowed) = allowed.filter(|a| !a.is_empty()) else {
                report.error(
                    Problem::new(
                        format!("{path}.allowed_values"),
                        format!("is required for a `{ty}` variable"),
                    )
                    .with_fix("list the values the variable may take"),
                );
                return None;
            };
            if ty == "single-select" {
                schema.insert("type".into(), json!("string"));
                schema.insert("enum".into(), Value::Array(allowed));
            } else {
                schema.insert("type".into(), json!("array"));
                schema.insert("items".into(), json!({ "type": "string", "enum": allowed }));
                schema.insert("uniqueItems".into(), json!(true));
            }
        }
        other => {
            report.error(
                Problem::new(
                    format!("{path}.type"),
                    format!("`{other}` is not a variable type"),
                )
                .with_fix("use one of text, single-select, multi-select"),
            );
            return None;
        }
    }
    if let Some(d) = opt_string(var.get("description")) {
        schema.insert("description".into(), Value::String(d));
    }
    if let Some(default) = var.get("default") {
        schema.insert("default".into(), default.clone());
    }
    Some(Value::Object(schema))
}
