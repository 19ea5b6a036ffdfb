//! Which changes bring new text the model may read: strings anywhere in
//! the MCP export (outside `icons`, which clients show but never hand to the
//! model) and object keys that are not JSON Schema or MCP keywords. The
//! diff rates such a change at least medium, whatever keyword it sits under.

use std::collections::HashSet;

use serde_json::Value;

use super::{ChangeKind, Ctx};

/// JSON Schema (2020-12 and draft-07) and MCP `Tool` keywords: object keys
/// that are vocabulary, not text. Any other key (`x-*`, a parameter or
/// `$defs` name, a `_meta` entry) is text the model may read.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "definitions",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "dependencies",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "name",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

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
    if kind == ChangeKind::Added && key.is_some_and(|k| !KEYWORDS.contains(&k)) {
        return true;
    }
    let mut before = HashSet::new();
    if let Some(old) = old {
        texts(old, &mut before);
    }
    let mut after = HashSet::new();
    texts(new, &mut after);
    after.iter().any(|t| !before.contains(t))
}

/// Every string and non-keyword object key in `v`.
fn texts<'a>(v: &'a Value, out: &mut HashSet<&'a str>) {
    match v {
        Value::String(s) => {
            out.insert(s);
        }
        Value::Array(items) => items.iter().for_each(|i| texts(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                if !KEYWORDS.contains(&k.as_str()) {
                    out.insert(k);
                }
                texts(v, out);
            }
        }
        _ => {}
    }
}
