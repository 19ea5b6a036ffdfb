//! Checking a call's arguments against the tool's `inputSchema` before
//! anything runs. A violation is an `isError` result naming every field
//! that is wrong (`arguments.owner: 5 is not of type "string"`); nothing is
//! executed. Schemas are compiled once, at start, without fetching anything
//! a `$ref` names: a definition is untrusted input.

use serde_json::Value;
use toolreg_core::validate::pointer_to_path;

use crate::exec::Refusal;

/// Compile a JSON Schema from a definition, offline.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .offline()
        .build(schema)
        .map_err(|e| e.to_string())
}

/// The most violations one message lists.
const MAX_LISTED: usize = 10;

/// `Ok` when `args` satisfy the schema; else the refusal naming each field.
pub fn check(validator: &jsonschema::Validator, args: &Value) -> Result<(), Refusal> {
    if validator.is_valid(args) {
        return Ok(());
    }
    let mut lines: Vec<String> = Vec::new();
    let mut total = 0;
    for e in validator.iter_errors(args) {
        total += 1;
        if lines.len() < MAX_LISTED {
            let at = pointer_to_path("arguments", e.instance_path().as_str());
            lines.push(format!("{at}: {e}"));
        }
    }
    if total > lines.len() {
        lines.push(format!("({} more)", total - lines.len()));
    }
    Err(Refusal::new(
        format!("invalid arguments, nothing was run: {}", lines.join("; ")),
        "error: invalid arguments",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_each_field_and_refuses_remote_refs() {
        let v = compile(&json!({
            "type": "object",
            "properties": {"owner": {"type": "string"}, "n": {"type": "integer", "maximum": 3}},
            "required": ["owner", "repo"]
        }))
        .unwrap();
        assert!(check(&v, &json!({"owner": "a", "repo": 1})).is_ok());
        let err = check(&v, &json!({"owner": 5, "n": 9})).unwrap_err();
        assert!(
            err.message
                .contains("arguments.owner: 5 is not of type \"string\""),
            "{}",
            err.message
        );
        assert!(
            err.message
                .contains("arguments.n: 9 is greater than the maximum of 3"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("\"repo\" is a required property"),
            "{}",
            err.message
        );
        assert_eq!(err.outcome, "error: invalid arguments");
        assert!(compile(&json!({"$ref": "https://example.com/s.json"})).is_err());
        assert!(compile(&json!({"$ref": "file:///etc/passwd"})).is_err());
    }
}
