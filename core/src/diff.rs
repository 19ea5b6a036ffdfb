//! What changed between two versions of a tool, as the agent's model sees
//! it: a structural diff of their MCP exports ([`crate::export::to_mcp`]),
//! each change at a JSON Pointer (RFC 6901) with a severity, and a
//! word-level diff of texts for showing description changes.
//!
//! Severities say how much a change can alter what an agent does:
//!
//! * **high** — a parameter added (new input the model is asked to fill,
//!   the classic rug pull: "also pass the contents of ~/.ssh"), or an input
//!   type widened to accept anything (`type` dropped, a schema replaced by
//!   `true` or `{}`, `additionalProperties` opened up);
//! * **medium** — a description or title changed (instructions the model
//!   reads), a parameter removed, a `type`, `enum` or `const` changed, and
//!   any other text the model may read that is new: a string added or
//!   changed anywhere outside `icons` (the call name, `default`,
//!   `examples`, `$comment`, `pattern`, `format`, `x-*` and unknown
//!   keywords, `_meta`, …), or an object member whose key is not a JSON
//!   Schema or MCP keyword (a key is text too);
//! * **low** — everything else: hints and other non-text values, numbers
//!   and limits, strings removed, icons.
//!
//! A change to a whole object (a parameter's schema added, `annotations`
//! gained) is one change at that object's pointer, as severe as the most
//! severe change inside it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::export::to_mcp;

mod words;
use crate::model::Tool;
pub use words::{
    bounded_words, words, Granularity, Segment, SegmentOp, WordDiff, MAX_WORD_DIFF_WORDS,
    WORD_DIFF_DEADLINE,
};

mod text;

use text::adds_text;

/// How much a change can alter what an agent does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeSeverity {
    /// Anything not medium or high.
    Low,
    /// A description or title changed, a parameter removed, a type or enum changed.
    Medium,
    /// A parameter added, or an input type widened to accept anything.
    High,
}

impl ChangeSeverity {
    /// `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSeverity::Low => "low",
            ChangeSeverity::Medium => "medium",
            ChangeSeverity::High => "high",
        }
    }
}

impl std::fmt::Display for ChangeSeverity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a pointer's value appeared, disappeared or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Only the newer version has it.
    Added,
    /// Only the older version has it.
    Removed,
    /// Both have it, with different values.
    Changed,
}

impl ChangeKind {
    /// `added`, `removed` or `changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
        }
    }
}

/// One change between two definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefinitionChange {
    /// JSON Pointer (RFC 6901) into the MCP export, e.g. `/inputSchema/properties/city`.
    pub pointer: String,
    /// Added, removed or changed.
    pub kind: ChangeKind,
    /// The older value (`null` when added).
    #[serde(default)]
    pub old: Option<Value>,
    /// The newer value (`null` when removed).
    #[serde(default)]
    pub new: Option<Value>,
    /// How much it can alter what an agent does.
    pub severity: ChangeSeverity,
}

/// The changes between two versions' call-visible definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// The older version (or whatever the caller compares from).
    pub from: String,
    /// The newer version.
    pub to: String,
    /// Every change, in document order.
    pub changes: Vec<DefinitionChange>,
    /// Lint findings of the newer version that the older one did not have
    /// (filled by the caller that runs the lint; empty here).
    pub new_findings: Vec<Value>,
}

impl Diff {
    /// The highest severity of any change (`None` when nothing changed).
    pub fn highest(&self) -> Option<ChangeSeverity> {
        self.changes.iter().map(|c| c.severity).max()
    }

    /// True when the two definitions are the same.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// The diff between two tool versions' MCP exports, labelled with their versions.
pub fn between_tools(old: &Tool, new: &Tool) -> Diff {
    between(
        &old.version.to_string(),
        &new.version.to_string(),
        &to_mcp(old),
        &to_mcp(new),
    )
}

/// The diff between two MCP `Tool` objects (exports, or a tool from a live
/// `tools/list` answer), labelled `from` and `to`.
pub fn between(from: &str, to: &str, old: &Value, new: &Value) -> Diff {
    let mut out = Out {
        changes: Vec::new(),
        keep_values: true,
    };
    diff_value(&mut out, &mut String::new(), old, new, Ctx::Root, None);
    Diff {
        from: from.to_string(),
        to: to.to_string(),
        changes: out.changes,
        new_findings: Vec::new(),
    }
}

/// What a value in the MCP export is, which decides its changes' severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// The Tool object itself.
    Root,
    /// A JSON Schema (`input` for the parameters, else the output schema).
    Schema { input: bool },
    /// A map of names to schemas; `params` when the names are parameters
    /// (`properties`, `patternProperties`), not `$defs`.
    Members { input: bool, params: bool },
    /// An array of schemas (`anyOf`, `oneOf`, `allOf`, `prefixItems`).
    SchemaList { input: bool },
    /// Anything else (annotations, `_meta`, keyword values).
    Plain,
    /// What clients show but never hand to the model (`icons`).
    Unread,
}

impl Ctx {
    /// The context of the member `key` (or array element, `None`) of a value in this context.
    fn child(self, key: Option<&str>) -> Ctx {
        match (self, key) {
            (Ctx::Root, Some("inputSchema")) => Ctx::Schema { input: true },
            (Ctx::Root, Some("outputSchema")) => Ctx::Schema { input: false },
            (Ctx::Root, Some("icons")) | (Ctx::Unread, _) => Ctx::Unread,
            (Ctx::Schema { input }, Some(k)) => match k {
                "properties" | "patternProperties" => Ctx::Members {
                    input,
                    params: true,
                },
                "$defs" | "definitions" | "dependentSchemas" => Ctx::Members {
                    input,
                    params: false,
                },
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "additionalItems" => Ctx::Schema { input },
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => Ctx::SchemaList { input },
                _ => Ctx::Plain,
            },
            (Ctx::Members { input, .. }, Some(_)) => Ctx::Schema { input },
            (Ctx::SchemaList { input }, None) => Ctx::Schema { input },
            _ => Ctx::Plain,
        }
    }

    /// True for a schema of the parameters (or inside them).
    fn is_input_schema(self) -> bool {
        matches!(self, Ctx::Schema { input: true })
    }
}

/// JSON Schema keywords that describe but never constrain.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
];

/// True when a schema accepts every value: `true`, or an object with no
/// constraining keyword (`{}`, `{"description": "..."}`).
fn accepts_anything(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => unconstrained(map),
        _ => false,
    }
}

fn unconstrained(map: &Map<String, Value>) -> bool {
    map.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}

/// Where a value sits: the context of the value holding it, and its key
/// there (`None` for an array element).
type Place<'a> = Option<(Ctx, Option<&'a str>)>;

/// True when a `type` keyword's value admits every JSON type.
fn admits_every_type(ty: &Value) -> bool {
    let Some(list) = ty.as_array() else {
        return false;
    };
    let has = |t: &str| list.iter().any(|v| v.as_str() == Some(t));
    ["string", "boolean", "object", "array", "null"]
        .iter()
        .all(|t| has(t))
        && has("number")
}

fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Where changes are collected. Inside a container that is added, removed
/// or replaced whole, changes are only counted for their severity
/// ([`inner_max`]), so their values are not copied (`keep_values` false).
struct Out {
    changes: Vec<DefinitionChange>,
    keep_values: bool,
}

fn diff_value(
    out: &mut Out,
    pointer: &mut String,
    old: &Value,
    new: &Value,
    ctx: Ctx,
    place: Place<'_>,
) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => diff_object(out, pointer, a, b, ctx),
        (Value::Array(a), Value::Array(b))
            if a.len() == b.len()
                && (matches!(ctx, Ctx::SchemaList { .. })
                    || (a.iter().all(Value::is_object) && b.iter().all(Value::is_object))) =>
        {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let len = pointer.len();
                push_token(pointer, &i.to_string());
                diff_value(out, pointer, x, y, ctx.child(None), Some((ctx, None)));
                pointer.truncate(len);
            }
        }
        _ => {
            let c = whole(pointer, Some(old), Some(new), ctx, place, out.keep_values);
            out.changes.push(c);
        }
    }
}

fn diff_object(
    out: &mut Out,
    pointer: &mut String,
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    ctx: Ctx,
) {
    let start = out.changes.len();
    let keep = out.keep_values;
    for (key, old) in a {
        let len = pointer.len();
        push_token(pointer, key);
        match b.get(key) {
            Some(new) => diff_value(
                out,
                pointer,
                old,
                new,
                ctx.child(Some(key)),
                Some((ctx, Some(key))),
            ),
            None => out.changes.push(whole(
                pointer,
                Some(old),
                None,
                ctx.child(Some(key)),
                Some((ctx, Some(key))),
                keep,
            )),
        }
        pointer.truncate(len);
    }
    for (key, new) in b {
        if a.contains_key(key) {
            continue;
        }
        let len = pointer.len();
        push_token(pointer, key);
        out.changes.push(whole(
            pointer,
            None,
            Some(new),
            ctx.child(Some(key)),
            Some((ctx, Some(key))),
            keep,
        ));
        pointer.truncate(len);
    }
    // An input schema that constrained and now accepts anything: what
    // was removed from it widened the type.
    if ctx.is_input_schema() && unconstrained(b) && !unconstrained(a) {
        for c in &mut out.changes[start..] {
            if c.kind == ChangeKind::Removed {
                c.severity = ChangeSeverity::High;
            }
        }
    }
}

/// One change for a value that is not descended into (a scalar, an array,
/// or an object on one side only); `ctx` is the value's own context. With
/// `keep_values` false the change carries no values (only its kind and
/// severity are wanted).
fn whole(
    pointer: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    ctx: Ctx,
    place: Place<'_>,
    keep_values: bool,
) -> DefinitionChange {
    let kind = match (old, new) {
        (None, _) => ChangeKind::Added,
        (_, None) => ChangeKind::Removed,
        _ => ChangeKind::Changed,
    };
    let parent = place.map(|(p, _)| p);
    let key = place.and_then(|(_, k)| k);
    let mut severity = rule(kind, parent, key, old, new, ctx);
    // A container on one side only (or of another shape): as severe as the
    // most severe change inside it, compared with an empty one.
    if severity < ChangeSeverity::High {
        let inner = match (old, new) {
            // Something removed widens nothing: at most medium.
            (Some(o @ (Value::Object(_) | Value::Array(_))), None) => {
                inner_max(o, &empty_like(o), ctx).map(|s| s.min(ChangeSeverity::Medium))
            }
            (None, Some(n @ (Value::Object(_) | Value::Array(_)))) => {
                inner_max(&empty_like(n), n, ctx)
            }
            (Some(o), Some(n)) if o.is_object() || n.is_object() => {
                let empty = Value::Object(Map::new());
                let o2 = if o.is_object() { o } else { &empty };
                let n2 = if n.is_object() { n } else { &empty };
                inner_max(o2, n2, ctx)
            }
            _ => None,
        };
        if let Some(s) = inner {
            severity = severity.max(s);
        }
    }
    if severity < ChangeSeverity::Medium && adds_text(kind, ctx, key, old, new) {
        severity = ChangeSeverity::Medium;
    }
    let (old, new) = if keep_values {
        (old.cloned(), new.cloned())
    } else {
        (None, None)
    };
    DefinitionChange {
        pointer: if keep_values {
            pointer.to_string()
        } else {
            String::new()
        },
        kind,
        old,
        new,
        severity,
    }
}

fn empty_like(v: &Value) -> Value {
    match v {
        Value::Array(_) => Value::Array(Vec::new()),
        _ => Value::Object(Map::new()),
    }
}

fn inner_max(old: &Value, new: &Value, ctx: Ctx) -> Option<ChangeSeverity> {
    let mut inner = Out {
        changes: Vec::new(),
        keep_values: false,
    };
    diff_value(&mut inner, &mut String::new(), old, new, ctx, None);
    inner.changes.iter().map(|c| c.severity).max()
}

/// The severity rules for one change (see the module doc).
fn rule(
    kind: ChangeKind,
    parent: Option<Ctx>,
    key: Option<&str>,
    old: Option<&Value>,
    new: Option<&Value>,
    ctx: Ctx,
) -> ChangeSeverity {
    let params = |input_only: bool| matches!(parent, Some(Ctx::Members { input, params: true }) if input || !input_only);
    // A parameter added.
    if kind == ChangeKind::Added && params(true) {
        return ChangeSeverity::High;
    }
    // An input type widened to accept anything.
    if ctx.is_input_schema() {
        if let Some(n) = new {
            if accepts_anything(n) && !old.is_some_and(accepts_anything) && old.is_some() {
                return ChangeSeverity::High;
            }
        }
    }
    if matches!(parent, Some(Ctx::Schema { input: true })) {
        match key {
            Some("type") if new.is_some_and(admits_every_type) => return ChangeSeverity::High,
            Some("additionalProperties") => {
                let open = new.is_none_or(accepts_anything);
                let was_closed = old.is_some_and(|o| !accepts_anything(o));
                if open && was_closed {
                    return ChangeSeverity::High;
                }
            }
            _ => {}
        }
    }
    let keyword = !matches!(parent, Some(Ctx::Members { .. }));
    if keyword && matches!(key, Some("description" | "title")) {
        return ChangeSeverity::Medium;
    }
    if kind == ChangeKind::Removed && params(true) {
        return ChangeSeverity::Medium;
    }
    if matches!(parent, Some(Ctx::Schema { .. })) && matches!(key, Some("type" | "enum" | "const"))
    {
        return ChangeSeverity::Medium;
    }
    // A schema replaced by a value of another shape (`{"type": "string"}`
    // → `false`) is a type change; same-shape schemas are descended into.
    if kind == ChangeKind::Changed && matches!(ctx, Ctx::Schema { .. }) {
        return ChangeSeverity::Medium;
    }
    ChangeSeverity::Low
}
