//! The Matimo tool format: `definition.yaml` (or `.yml`), as in Matimo
//! v0.1.0-alpha.11. Parsed with serde-saphyr under a tight budget (it is
//! untrusted input: aliases, depth, size and document count are all bounded).
//!
//! Field mapping: `name` is both the call name (verbatim) and the
//! source of the registry name; `parameters` (a map of name → spec with
//! `required: true|false`) becomes a JSON Schema object; `execution.type`
//! gives the execution kind; `output_schema` the result; `authentication`
//! the auth needs; `tags` the keywords; `examples` and every other key are
//! kept. A `type: provider` file is refused: it is not a tool.

use serde_json::{Map, Value};

use super::{opt_string, Draft, NameSource, Report};
use crate::error::Problem;
use crate::files::ToolFiles;
use crate::model::Hints;
use crate::policy::ExecutionKind;
use crate::validate::{self, join};

/// Extension key holding non-schema keys of parameter specs (`example:`,
/// `validation:`, ...), by parameter name, so nothing is dropped.
pub const PARAMETER_EXTRAS: &str = "x-matimo-parameter-extras";

/// Keys of a Matimo parameter spec that are JSON Schema keywords and go into
/// the parameter's schema as they are.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "description",
    "enum",
    "default",
    "items",
    "properties",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "const",
    "title",
    "examples",
    "nullable",
];

/// Top-level keys the model names; everything else goes to `extensions`.
const KNOWN_KEYS: &[&str] = &[
    "name",
    "version",
    "description",
    "parameters",
    "execution",
    "output_schema",
    "authentication",
    "tags",
    "examples",
    "requires_approval",
];

/// The execution types Matimo knows.
pub const EXECUTION_TYPES: &[&str] = &["function", "script", "command", "http"];

const HTTP_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        // Repeated keys and merge keys reach the reader, which names each
        // one (see `document`): YAML's own refusal names only a line.
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        merge_keys: serde_saphyr::MergeKeyPolicy::AsOrdinary,
        budget: serde_saphyr::budget! {
            max_events: 200_000,
            max_aliases: 1_000,
            max_anchors: 1_000,
            max_depth: 64,
            max_documents: 1,
            max_nodes: 100_000,
            max_total_scalar_bytes: 4 * 1024 * 1024,
            max_recorded_anchor_events: 100_000,
            max_recorded_anchor_bytes: 4 * 1024 * 1024,
            max_merge_keys: 1_000,
        },
    }
}

/// Parse Matimo YAML text into a JSON value, under the budget. Repeated
/// keys and merge keys are not refused here (the later value wins; `<<` is
/// an ordinary key): [`parse`] refuses them.
pub fn parse_yaml(text: &str) -> Result<Value, String> {
    super::document::yaml(text, yaml_options()).map(|d| d.value)
}

/// Read a Matimo definition. `None` if it can't be read as a tool at all
/// (the reason is in `report`).
pub(crate) fn parse(text: &str, files: &ToolFiles, report: &mut Report) -> Option<Draft> {
    let doc = match super::document::yaml(text, yaml_options()) {
        Ok(d) if !d.key_problems.is_empty() => {
            report.extend(d.key_problems);
            return None;
        }
        Ok(d) => d.value,
        Err(e) => {
            let first = e.lines().next().unwrap_or("").to_string();
            let problem = if first.contains("budget breached") {
                Problem::new("", format!("is not valid Matimo YAML: it exceeds the parser's limits ({first})"))
                    .with_fix("avoid deep nesting and repeated YAML aliases (`*anchor`); definitions are small documents")
            } else {
                Problem::new("", format!("is not valid Matimo YAML: {first}"))
            };
            report.error(problem);
            return None;
        }
    };
    let Value::Object(doc) = doc else {
        report.error(Problem::new(
            "",
            format!("must be a YAML mapping, not {}", validate::type_name(&doc)),
        ));
        return None;
    };
    if doc.get("type").and_then(Value::as_str) == Some("provider") {
        report.error(
            Problem::new(
                "type",
                "not a tool: a provider definition (`type: provider` configures OAuth endpoints that other tools use)",
            )
            .with_fix("publish the tools that use this provider, each with its own definition.yaml"),
        );
        return None;
    }

    let kind = execution_kind(doc.get("execution"));
    let mut draft = Draft::new(kind.unwrap_or(ExecutionKind::Function));

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
        None => report.error(Problem::new("name", "is missing").with_fix("add `name: my-tool`")),
    }
    draft.version = doc.get("version").map(|v| (v.clone(), "version"));
    draft.description = opt_string(doc.get("description"));
    match doc.get("tags") {
        None | Some(Value::Null) => {}
        Some(Value::Array(tags)) => {
            for (i, t) in tags.iter().enumerate() {
                match t.as_str() {
                    Some(s) => draft.keywords.push(s.to_string()),
                    None => report.error(Problem::new(format!("tags[{i}]"), "must be a string")),
                }
            }
        }
        Some(_) => report.error(Problem::new("tags", "must be a list of strings")),
    }

    // Parameters.
    let param_names = parameters(doc.get("parameters"), &mut draft, report);
    let param_refs: Vec<&str> = param_names.iter().map(String::as_str).collect();

    // Execution.
    execution(
        doc.get("execution"),
        kind,
        files,
        &param_refs,
        &mut draft,
        report,
    );

    // Result.
    if let Some(out) = doc.get("output_schema") {
        match out {
            Value::Object(map) => {
                let mut schema = map.clone();
                if let Some(max) = schema.remove("max_response_size") {
                    draft.extensions.insert("max_response_size".into(), max);
                }
                let schema = Value::Object(schema);
                report.extend(validate::check_schema("output_schema", &schema));
                draft.result = Some(schema);
            }
            Value::Null => {}
            other => report.error(Problem::new(
                "output_schema",
                format!(
                    "must be a JSON Schema mapping, not {}",
                    validate::type_name(other)
                ),
            )),
        }
    }

    // Authentication.
    match doc.get("authentication") {
        None | Some(Value::Null) => {}
        Some(auth @ Value::Object(_)) => draft.auth.push(auth.clone()),
        Some(other) => report.error(Problem::new(
            "authentication",
            format!(
                "must be a mapping with `type`, not {}",
                validate::type_name(other)
            ),
        )),
    }

    match doc.get("examples") {
        None | Some(Value::Null) => {}
        Some(Value::Array(ex)) => draft.examples = ex.clone(),
        Some(_) => report.error(Problem::new("examples", "must be a list")),
    }

    let requires_approval = match doc.get("requires_approval") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            report.error(Problem::new(
                "requires_approval",
                format!("must be true or false, not {}", validate::type_name(other)),
            ));
            None
        }
    };
    draft.hints = hints(kind, doc.get("execution"), requires_approval);

    for (k, v) in &doc {
        if !KNOWN_KEYS.contains(&k.as_str()) {
            draft.extensions.insert(k.clone(), v.clone());
        }
    }
    draft.document = Some(Value::Object(doc));
    Some(draft)
}

fn execution_kind(exec: Option<&Value>) -> Option<ExecutionKind> {
    match exec?.get("type")?.as_str()? {
        "function" => Some(ExecutionKind::Function),
        "script" => Some(ExecutionKind::Script),
        "command" => Some(ExecutionKind::Command),
        "http" => Some(ExecutionKind::Http),
        _ => None,
    }
}

/// Convert the `parameters` map into a JSON Schema object on `draft`, and
/// return the parameter names.
fn parameters(params: Option<&Value>, draft: &mut Draft, report: &mut Report) -> Vec<String> {
    let mut names = Vec::new();
    let map = match params {
        None | Some(Value::Null) => return names,
        Some(Value::Object(map)) => map,
        Some(other) => {
            report.error(
                Problem::new("parameters", format!("must be a mapping of parameter name to spec, not {}", validate::type_name(other)))
                    .with_fix("write `parameters:` followed by `name: {type: string, required: true}` entries"),
            );
            return names;
        }
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut extras = Map::new();
    // Parameters whose `type` passed the checks above; their schemas are
    // meta-validated together below (one validation, not one per parameter).
    let mut checked: Vec<String> = Vec::new();
    for (pname, spec) in map {
        names.push(pname.clone());
        let path = format!("parameters.{pname}");
        let Value::Object(spec) = spec else {
            report.error(
                Problem::new(
                    &path,
                    format!(
                        "must be a mapping with at least `type`, not {}",
                        validate::type_name(spec)
                    ),
                )
                .with_fix(
                    "write `type: string` (and `description`, `required`) under the parameter",
                ),
            );
            continue;
        };
        let mut schema = Map::new();
        let mut extra = Map::new();
        for (k, v) in spec {
            if k == "required" {
                match v {
                    Value::Bool(true) => required.push(Value::String(pname.clone())),
                    Value::Bool(false) => {}
                    Value::Array(_) => {
                        // A nested object's own `required` list.
                        schema.insert(k.clone(), v.clone());
                    }
                    other => report.error(Problem::new(
                        format!("{path}.required"),
                        format!("must be true or false, not {}", validate::type_name(other)),
                    )),
                }
            } else if SCHEMA_KEYS.contains(&k.as_str()) {
                schema.insert(k.clone(), v.clone());
            } else {
                extra.insert(k.clone(), v.clone());
            }
        }
        match schema.get("type") {
            None => {
                report.error(Problem::new(format!("{path}.type"), "is missing").with_fix(
                    "add `type:` (one of string, number, integer, boolean, array, object)",
                ))
            }
            Some(Value::String(t))
                if !matches!(
                    t.as_str(),
                    "string" | "number" | "integer" | "boolean" | "array" | "object" | "null"
                ) =>
            {
                report.error(
                    Problem::new(
                        format!("{path}.type"),
                        format!("`{t}` is not a parameter type"),
                    )
                    .with_fix("use one of string, number, integer, boolean, array, object"),
                )
            }
            _ => checked.push(pname.clone()),
        }
        if !extra.is_empty() {
            extras.insert(pname.clone(), Value::Object(extra));
        }
        properties.insert(pname.clone(), Value::Object(schema));
    }
    let to_check: Map<String, Value> = properties
        .iter()
        .filter(|(k, _)| checked.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !to_check.is_empty() {
        let whole = serde_json::json!({ "type": "object", "properties": to_check });
        for mut p in validate::check_schema("parameters", &whole) {
            if let Some(rest) = p.path.strip_prefix("parameters.properties.") {
                p.path = format!("parameters.{rest}");
            }
            report.error(p);
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), Value::String("object".into()));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    draft.parameters = Value::Object(schema);
    if !extras.is_empty() {
        draft
            .extensions
            .insert(PARAMETER_EXTRAS.into(), Value::Object(extras));
    }
    names
}

/// Check the execution block's shape for its type and record it as the detail.
fn execution(
    exec: Option<&Value>,
    kind: Option<ExecutionKind>,
    files: &ToolFiles,
    params: &[&str],
    draft: &mut Draft,
    report: &mut Report,
) {
    let exec = match exec {
        Some(Value::Object(map)) => map,
        None | Some(Value::Null) => {
            report.error(
                Problem::new("execution", "is missing; a Matimo tool needs an execution block")
                    .with_fix("add `execution:` with `type:` function, script, command or http and its fields"),
            );
            return;
        }
        Some(other) => {
            report.error(Problem::new(
                "execution",
                format!("must be a mapping, not {}", validate::type_name(other)),
            ));
            return;
        }
    };
    draft.execution.detail = Value::Object(exec.clone());
    let Some(kind) = kind else {
        let msg = match exec.get("type") {
            None => "is missing".to_string(),
            Some(Value::String(t)) => format!("`{t}` is not an execution type"),
            Some(other) => format!("must be a string, not {}", validate::type_name(other)),
        };
        report.error(
            Problem::new("execution.type", msg)
                .with_fix("use one of function, script, command, http"),
        );
        return;
    };
    let need_string = |field: &str, report: &mut Report| -> Option<String> {
        match exec.get(field) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            None => {
                report.error(Problem::new(
                    format!("execution.{field}"),
                    format!("is required for `type: {kind}`"),
                ));
                None
            }
            Some(other) => {
                report.error(Problem::new(
                    format!("execution.{field}"),
                    format!(
                        "must be a non-empty string for `type: {kind}`, not {}",
                        describe(other)
                    ),
                ));
                None
            }
        }
    };
    match kind {
        ExecutionKind::Http => {
            if let Some(method) = need_string("method", report) {
                if !HTTP_METHODS.contains(&method.to_ascii_uppercase().as_str()) {
                    report.error(
                        Problem::new(
                            "execution.method",
                            format!("`{method}` is not an HTTP method"),
                        )
                        .with_fix("use one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"),
                    );
                }
            }
            if let Some(url) = need_string("url", report) {
                validate::check_single_brace(
                    "execution.url",
                    &Value::String(url),
                    params,
                    &mut report.problems,
                );
            }
            for field in ["headers", "body", "query_params"] {
                if let Some(v) = exec.get(field) {
                    validate::check_single_brace(
                        &join("execution", field),
                        v,
                        params,
                        &mut report.problems,
                    );
                }
            }
        }
        ExecutionKind::Command => {
            need_string("command", report);
            for field in ["command", "args"] {
                if let Some(v) = exec.get(field) {
                    validate::check_single_brace(
                        &join("execution", field),
                        v,
                        params,
                        &mut report.problems,
                    );
                }
            }
        }
        ExecutionKind::Function => {
            if let Some(code) = need_string("code", report) {
                match validate::relative_file_path(&code) {
                    Err(why) => report.error(Problem::new("execution.code", why).with_fix(
                        "point `code:` at a file inside the tool directory, like `./tool.ts`",
                    )),
                    Ok(rel) => {
                        if !files.contains(&rel) {
                            report.error(
                                Problem::new("execution.code", format!("the code file `{code}` is not in the tool directory"))
                                    .with_fix(format!("add `{rel}` to the tool directory (it is packed into the bundle)")),
                            );
                        }
                    }
                }
            }
        }
        ExecutionKind::Script => {
            need_string("code", report);
        }
        ExecutionKind::Prompt | ExecutionKind::Schema => {}
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) if s.trim().is_empty() => "an empty string".into(),
        other => validate::type_name(other).into(),
    }
}

/// Hints as Matimo derives them: GET is read-only, DELETE destructive, and
/// `requires_approval` marks a tool as destructive.
fn hints(
    kind: Option<ExecutionKind>,
    exec: Option<&Value>,
    requires_approval: Option<bool>,
) -> Hints {
    let mut h = Hints {
        requires_approval,
        ..Hints::default()
    };
    if kind == Some(ExecutionKind::Http) {
        let method = exec
            .and_then(|e| e.get("method"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_uppercase();
        h.open_world = Some(true);
        match method.as_str() {
            "GET" | "HEAD" | "OPTIONS" => {
                h.read_only = Some(true);
                h.destructive = Some(false);
                h.idempotent = Some(true);
            }
            "DELETE" => {
                h.read_only = Some(false);
                h.destructive = Some(true);
                h.idempotent = Some(true);
            }
            "PUT" => {
                h.read_only = Some(false);
                h.idempotent = Some(true);
            }
            "POST" | "PATCH" => h.read_only = Some(false),
            _ => {}
        }
    }
    if requires_approval == Some(true) {
        h.destructive = Some(true);
        h.read_only = Some(false);
    }
    h
}
