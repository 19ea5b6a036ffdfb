//! Validation rules shared by the four formats: SemVer versions, JSON Schema
//! well-formedness (against the schema's own meta-schema), and the
//! placeholders that templates use (`{param}` in Matimo http/command blocks,
//! `{{var}}` in prompt templates).
//!
//! Every check returns [`Problem`]s instead of stopping, so [`crate::load`]
//! can report everything that is wrong at once.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::error::Problem;

/// The fix suggested for every non-SemVer version.
pub const VERSION_FIX: &str =
    "use a SemVer 2.0 version like `1.0.0`, or set `[tool].version` in toolreg.toml";

/// Parse a strict SemVer 2.0 version (`1.2.3`, `1.0.0-rc.1+build`); `Err`
/// says why not, as a sentence fragment.
pub fn version(text: &str) -> Result<semver::Version, String> {
    semver::Version::parse(text).map_err(|e| format!("`{text}` is not a SemVer 2.0 version ({e})"))
}

/// Check a version value as found in a definition (a string, or a number in
/// formats that allow one) and report at `path`.
pub fn version_value(path: &str, value: &Value) -> Result<semver::Version, Problem> {
    match value {
        Value::String(s) => version(s).map_err(|m| Problem::new(path, m).with_fix(VERSION_FIX)),
        Value::Number(n) => Err(Problem::new(
            path,
            format!("`{n}` is a number, not a SemVer 2.0 version string"),
        )
        .with_fix(VERSION_FIX)),
        other => Err(Problem::new(
            path,
            format!(
                "must be a SemVer 2.0 version string, not {}",
                type_name(other)
            ),
        )
        .with_fix(VERSION_FIX)),
    }
}

/// A JSON value's type in words, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON Schema type names, for messages.
pub const SCHEMA_TYPES: &str = "string, number, integer, boolean, array, object, null";

/// Check that `schema` is a well-formed JSON Schema (validated against the
/// meta-schema its `$schema` names, 2020-12 by default; draft-07 and the
/// other built-in drafts are accepted). Each finding is reported at `path`
/// followed by the location inside the schema (`inputSchema.properties.a.type`).
pub fn check_schema(path: &str, schema: &Value) -> Vec<Problem> {
    if !schema.is_object() && !schema.is_boolean() {
        return vec![Problem::new(
            path,
            format!("must be a JSON Schema object, not {}", type_name(schema)),
        )];
    }
    // Only the built-in drafts: an unknown `$schema` would make the
    // validator fetch that URI (a local file, with `resolve-file`), and a
    // definition is untrusted input.
    if let Some(uri) = schema.get("$schema") {
        let known = schema.is_object()
            && uri.is_string()
            && jsonschema::Draft::default().detect(schema) != jsonschema::Draft::Unknown;
        if !known {
            return vec![Problem::new(
                join(path, "$schema"),
                format!("{uri} names no known JSON Schema draft"),
            )
            .with_fix("remove `$schema` (2020-12 is assumed) or name draft-07 or 2020-12")];
        }
    }
    let validator = match jsonschema::meta::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return vec![Problem::new(
                join(path, "$schema"),
                format!("names no known JSON Schema draft ({e})"),
            )
            .with_fix("remove `$schema` (2020-12 is assumed) or name draft-07 or 2020-12")]
        }
    };
    if validator.is_valid(schema) {
        return Vec::new();
    }
    let mut problems: Vec<Problem> = Vec::new();
    for error in validator.iter_errors(schema) {
        let pointer = error.instance_path().as_str().to_string();
        let at = pointer_to_path(path, &pointer);
        let instance = error.instance();
        let message = if pointer.ends_with("/type") && !matches!(instance.as_ref(), Value::Array(_))
        {
            format!(
                "{} is not a JSON Schema type (use one of {SCHEMA_TYPES})",
                instance.as_ref()
            )
        } else {
            error.to_string()
        };
        if !problems
            .iter()
            .any(|p| p.path == at && p.message == message)
        {
            problems.push(Problem::new(at, message));
        }
    }
    problems
}

/// `prefix` + a JSON pointer as a dotted field path (`a.b[0].c`).
pub fn pointer_to_path(prefix: &str, pointer: &str) -> String {
    let mut out = prefix.to_string();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            out = join(&out, &seg);
        }
    }
    out
}

/// Join two field path parts with a `.`.
pub fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

static SINGLE_BRACE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}").expect("static pattern"));
static DOUBLE_BRACE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{\{\s*([^{}\s]+)\s*\}\}").expect("static pattern"));

/// The `{name}` placeholders in a Matimo string, in order of appearance.
pub fn single_brace_placeholders(text: &str) -> Vec<&str> {
    single_brace_spans(text).map(|(_, name)| name).collect()
}

/// The `{name}` placeholders in a Matimo string with the byte range each
/// occupies (braces included), in order of appearance: what a server fills
/// in when it runs the tool.
pub fn single_brace_spans(text: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    SINGLE_BRACE
        .captures_iter(text)
        .filter_map(|c| Some((c.get(0)?.range(), c.get(1)?.as_str())))
}

/// The `{{name}}` placeholders in a prompt template, in order of appearance.
pub fn double_brace_placeholders(text: &str) -> Vec<&str> {
    double_brace_spans(text).map(|(_, name)| name).collect()
}

/// The `{{name}}` placeholders in a prompt template with the byte range each
/// occupies (braces included), in order of appearance: what is filled in
/// when the prompt is rendered.
pub fn double_brace_spans(text: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    DOUBLE_BRACE
        .captures_iter(text)
        .filter_map(|c| Some((c.get(0)?.range(), c.get(1)?.as_str())))
}

/// True for `{UPPER_CASE}` placeholders, which Matimo fills from the
/// environment (auth tokens, settings), not from parameters.
pub fn is_env_placeholder(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Report every `{param}` placeholder in the strings of `value` (recursively)
/// that is neither an environment placeholder nor one of `params`.
pub fn check_single_brace(path: &str, value: &Value, params: &[&str], problems: &mut Vec<Problem>) {
    match value {
        Value::String(s) => {
            for name in single_brace_placeholders(s) {
                if !is_env_placeholder(name) && !params.contains(&name) {
                    problems.push(
                        Problem::new(path, format!("placeholder `{{{name}}}` refers to no parameter"))
                            .with_fix(format!(
                                "add a parameter `{name}`, or write environment placeholders in UPPER_CASE"
                            )),
                    );
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_single_brace(&format!("{path}[{i}]"), item, params, problems);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                check_single_brace(&join(path, k), v, params, problems);
            }
        }
        _ => {}
    }
}

/// Check a relative file path named by a definition (a Matimo `code:`):
/// returns the normalized path inside the tool directory (without `./`), or
/// why it is not acceptable.
pub fn relative_file_path(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        return Err("is empty".to_string());
    }
    if raw.starts_with('/') || raw.starts_with('\\') || raw.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "`{raw}` is an absolute path; it must be relative to the tool directory"
        ));
    }
    let mut parts = Vec::new();
    for part in raw.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err(format!("`{raw}` leaves the tool directory (`..`)")),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(format!("`{raw}` names no file"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions() {
        assert!(version("1.0.0").is_ok());
        assert!(version("1.0.0-rc.1+b5").is_ok());
        assert!(version("1").is_err());
        assert!(version("1.0").is_err());
        assert!(version("v1.0.0").is_err());
        assert!(version("01.0.0").is_err());
        let p = version_value("version", &json!(3)).unwrap_err();
        assert_eq!(p.path, "version");
        assert!(p.fix.unwrap().contains("1.0.0"));
    }

    #[test]
    fn schemas() {
        assert!(check_schema(
            "p",
            &json!({"type": "object", "properties": {"a": {"type": "number"}}})
        )
        .is_empty());
        let problems = check_schema(
            "p",
            &json!({"type": "object", "properties": {"a": {"type": "numbr"}}}),
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "p.properties.a.type");
        let problems = check_schema(
            "p",
            &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert!(!check_schema("p", &json!({"required": "a"})).is_empty());
        assert!(!check_schema("p", &json!("x")).is_empty());
        let problems = check_schema(
            "p",
            &json!({"$schema": "file:///etc/passwd", "type": "object"}),
        );
        assert_eq!(problems[0].path, "p.$schema", "{problems:?}");
        let problems = check_schema("p", &json!({"$schema": 7, "type": "object"}));
        assert_eq!(problems[0].path, "p.$schema", "{problems:?}");
    }

    #[test]
    fn placeholders() {
        assert_eq!(
            single_brace_placeholders("https://x/{owner}/{repo}?t={TOKEN}"),
            vec!["owner", "repo", "TOKEN"]
        );
        assert!(is_env_placeholder("GITHUB_TOKEN"));
        assert!(!is_env_placeholder("owner"));
        assert!(!is_env_placeholder("Owner"));
        assert_eq!(
            double_brace_placeholders("a {{x}} b {{ y }}"),
            vec!["x", "y"]
        );
        let mut problems = Vec::new();
        check_single_brace(
            "execution.url",
            &json!("/{a}/{b}/{KEY}"),
            &["a"],
            &mut problems,
        );
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("`{b}`"));
    }

    #[test]
    fn file_paths() {
        assert_eq!(relative_file_path("./calc.ts").unwrap(), "calc.ts");
        assert_eq!(relative_file_path("src/a.ts").unwrap(), "src/a.ts");
        assert!(relative_file_path("../a.ts").is_err());
        assert!(relative_file_path("/etc/a.ts").is_err());
        assert!(relative_file_path("C:\\a.ts").is_err());
    }
}
