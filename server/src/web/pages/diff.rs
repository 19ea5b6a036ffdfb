//! The diff page, `GET /tools/{name}/diff/{A}...{B}`: what changed from
//! version A to version B in the definition an agent's model reads (their
//! MCP exports, compared by `toolreg_core::diff`), as a table of changes
//! with severity badges — texts as word-level highlights (`<ins>`/`<del>`),
//! other values old and new — and the lint findings new in B.

use askama::Template;
use serde_json::Value;
use toolreg_core::diff::{self, ChangeKind, ChangeSeverity, Granularity, SegmentOp};
use toolreg_core::lint;

use super::{tool_url, version_url};
use crate::web::assets::{Assets, ASSETS};
use crate::web::catalog::VersionDetail;

/// `GET /tools/{name}/diff/{A}...{B}`.
#[derive(Template)]
#[template(path = "web/diff.html")]
pub struct DiffPage {
    pub assets: &'static Assets,
    pub d: DiffView,
}

pub struct DiffView {
    pub name: String,
    pub from: String,
    pub to: String,
    pub tool_url: String,
    pub from_url: String,
    pub to_url: String,
    /// `2 changes: 1 high, 1 medium, 0 low`, or that nothing changed.
    pub summary: String,
    /// The highest severity (`high`, `medium`, `low`), empty without changes.
    pub highest: &'static str,
    pub changes: Vec<ChangeRow>,
    pub findings: Vec<FindingRow>,
}

/// One row of the changes table.
pub struct ChangeRow {
    pub severity: &'static str,
    pub kind: &'static str,
    pub pointer: String,
    /// A text changed into another text: its word diff (else empty).
    pub words: Vec<Word>,
    /// When the word diff is coarser than word by word (long or very
    /// different texts), a sentence saying so.
    pub coarse: Option<&'static str>,
    /// Other values, as compact JSON.
    pub old: Option<String>,
    pub new: Option<String>,
}

/// A run of words: `equal`, `ins` or `del`.
pub struct Word {
    pub op: &'static str,
    pub text: String,
}

/// A lint finding of B that A did not have (`lint::new_since`).
pub struct FindingRow {
    pub rule: String,
    pub pointer: String,
    pub excerpt: String,
    pub message: String,
}

impl DiffPage {
    pub fn new(name: &str, from: &VersionDetail, to: &VersionDetail) -> DiffPage {
        let (a, b) = (from.version.version.clone(), to.version.version.clone());
        let d = diff::between_tools(&from.tool, &to.tool);
        let count = |s: ChangeSeverity| d.changes.iter().filter(|c| c.severity == s).count();
        let summary = if d.changes.is_empty() {
            "The definition the model reads is the same in both versions.".to_string()
        } else {
            format!(
                "{} change{}: {} high, {} medium, {} low.",
                d.changes.len(),
                if d.changes.len() == 1 { "" } else { "s" },
                count(ChangeSeverity::High),
                count(ChangeSeverity::Medium),
                count(ChangeSeverity::Low)
            )
        };
        let changes = d
            .changes
            .iter()
            .map(|c| {
                let mut coarse = None;
                let words = match (c.kind, &c.old, &c.new) {
                    (ChangeKind::Changed, Some(Value::String(o)), Some(Value::String(n))) => {
                        let d = diff::bounded_words(o, n);
                        coarse = match d.granularity {
                            Granularity::Words => None,
                            Granularity::Lines => Some("The texts are long: compared line by line."),
                            Granularity::Approximate => Some(
                                "The texts differ too much to compare word by word in time: larger runs are marked.",
                            ),
                        };
                        d.segments
                            .into_iter()
                            .map(|s| Word {
                                op: match s.op {
                                    SegmentOp::Equal => "equal",
                                    SegmentOp::Insert => "ins",
                                    SegmentOp::Delete => "del",
                                },
                                text: s.text,
                            })
                            .collect()
                    }
                    _ => Vec::new(),
                };
                let compact = |v: &Option<Value>| {
                    if words.is_empty() {
                        v.as_ref().map(Value::to_string)
                    } else {
                        None
                    }
                };
                ChangeRow {
                    severity: c.severity.as_str(),
                    kind: c.kind.as_str(),
                    pointer: c.pointer.clone(),
                    old: compact(&c.old),
                    new: compact(&c.new),
                    words,
                    coarse,
                }
            })
            .collect();
        let findings = lint::new_since(&from.version.findings, &to.version.findings)
            .into_iter()
            .map(|f| FindingRow {
                rule: f.rule.as_str().to_string(),
                pointer: f.pointer.clone(),
                excerpt: f.excerpt.clone(),
                message: f.message.clone(),
            })
            .collect();
        DiffPage {
            assets: &ASSETS,
            d: DiffView {
                name: name.to_string(),
                tool_url: tool_url(name),
                from_url: version_url(name, &a),
                to_url: version_url(name, &b),
                from: a,
                to: b,
                summary,
                highest: d.highest().map_or("", ChangeSeverity::as_str),
                changes,
                findings,
            },
        }
    }
}

/// `/tools/{name}/diff/{from}...{to}`.
pub fn diff_url(name: &str, from: &str, to: &str) -> String {
    format!("/tools/{name}/diff/{from}...{to}")
}
