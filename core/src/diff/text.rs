//! Which changes bring new text the model may read: strings anywhere in
//! the MCP export (outside `icons`, which clients show but never hand to the
//! model) and object keys that are not JSON Schema or MCP keywords. The
//! diff rates such a change at least medium, whatever keyword it sits under.

use std::collections::HashSet;

use serde_json::Value;

use super::{ChangeKind, Ctx};

/// True for a JSON Schema (2020-12 and draft-07) or MCP `Tool` keyword: an
/// object key that is vocabulary, not text. Any other key (`x-*`, a
/// parameter or `$defs` name, a `_meta` entry) is text the model may read.
fn is_keyword(key: &str) -> bool {
    matches!(
        key,
        "$schema"
            | "$id"
            | "$ref"
            | "$defs"
            | "$anchor"
            | "$dynamicRef"
            | "$dynamicAnchor"
            | "$vocabulary"
            | "$comment"
            | "definitions"
            | "type"
            | "enum"
            | "const"
            | "multipleOf"
            | "maximum"
            | "exclusiveMaximum"
            | "minimum"
            | "exclusiveMinimum"
            | "maxLength"
            | "minLength"
            | "pattern"
            | "maxItems"
            | "minItems"
            | "uniqueItems"
            | "maxContains"
            | "minContains"
            | "maxProperties"
            | "minProperties"
            | "required"
            | "dependentRequired"
            | "dependencies"
            | "properties"
            | "patternProperties"
            | "additionalProperties"
            | "propertyNames"
            | "items"
            | "prefixItems"
            | "additionalItems"
            | "contains"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "not"
            | "if"
            | "then"
            | "else"
            | "dependentSchemas"
            | "format"
            | "contentEncoding"
            | "contentMediaType"
            | "contentSchema"
            | "title"
            | "description"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "name"
            | "inputSchema"
            | "outputSchema"
            | "annotations"
            | "icons"
            | "_meta"
            | "readOnlyHint"
            | "destructiveHint"
            | "idempotentHint"
            | "openWorldHint"
    )
}

/// True when an added or changed value brings text the model may read that
/// the old value did not have: a string, or an object key that is not a
/// keyword (its own key too, when it is added).
pub(super) fn adds_text(
    kind: ChangeKind,
    ctx: Ctx,
    key: Option<&str>,
    old: Option<&Value>,
    new: Option<&Value>,
) -> bool {
    let Some(new) = new else { return false };
    if ctx == Ctx::Unread {
        return false;
    }
    if kind == ChangeKind::Added && key.is_some_and(|k| !is_keyword(k)) {
        return true;
    }
    match (old, new) {
        (_, Value::Null | Value::Bool(_) | Value::Number(_)) => false,
        (Some(Value::String(o)), Value::String(n)) => o != n,
        (None | Some(Value::Null | Value::Bool(_) | Value::Number(_)), _) => has_text(new),
        (Some(old), _) => {
            let mut before = HashSet::new();
            texts(old, &mut |t| {
                before.insert(t);
                false
            });
            texts(new, &mut |t| !before.contains(t))
        }
    }
}

/// True when `v` holds any string or non-keyword key.
fn has_text(v: &Value) -> bool {
    texts(v, &mut |_| true)
}

/// Calls `found` with every string and non-keyword object key in `v`, until
/// it returns true; true when it did.
fn texts<'a>(v: &'a Value, found: &mut impl FnMut(&'a str) -> bool) -> bool {
    match v {
        Value::String(s) => found(s),
        Value::Array(items) => items.iter().any(|i| texts(i, found)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (!is_keyword(k) && found(k)) || texts(v, found)),
        _ => false,
    }
}
