//! Definition changes as text, the same wherever they are printed (`update`,
//! `outdated`, `verify --against`): one line per change — severity, kind,
//! JSON Pointer — and, in full, its old and new values, texts as a word diff
//! in git's `--word-diff` style (`[-deleted-]{+inserted+}`).

use serde_json::Value;
use toolreg_core::diff::{self, DefinitionChange, SegmentOp};

/// One change as `severity  kind  pointer` (indented 4), with `full` then its
/// old and new value (indented 8). Ends with a newline.
pub fn render(c: &DefinitionChange, full: bool) -> String {
    let mut out = format!(
        "    {:<6}  {:<7}  {}\n",
        c.severity.as_str(),
        c.kind.as_str(),
        c.pointer
    );
    if !full {
        return out;
    }
    match (&c.old, &c.new) {
        (Some(Value::String(old)), Some(Value::String(new))) => {
            out.push_str(&format!("        {}\n", word_diff(old, new)));
        }
        (old, new) => {
            if let Some(old) = old {
                out.push_str(&format!("        - {old}\n"));
            }
            if let Some(new) = new {
                out.push_str(&format!("        + {new}\n"));
            }
        }
    }
    out
}

/// A text change as one line: `[-deleted-]{+inserted+}` around what differs.
pub fn word_diff(old: &str, new: &str) -> String {
    diff::words(old, new)
        .into_iter()
        .map(|s| match s.op {
            SegmentOp::Equal => s.text,
            SegmentOp::Delete => format!("[-{}-]", s.text),
            SegmentOp::Insert => format!("{{+{}+}}", s.text),
        })
        .collect()
}
