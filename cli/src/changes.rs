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
        (Some(Value::String(old)), Some(Value::String(new)))
            if old.contains('\n') || new.contains('\n') =>
        {
            for line in word_diff_lines(old, new, CONTEXT_LINES) {
                out.push_str(&format!("        {line}\n"));
            }
        }
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

/// Unchanged lines kept around each changed line of a multi-line text.
pub const CONTEXT_LINES: usize = 1;

/// A change of a multi-line text (a skill's instructions, a long
/// description) as the lines of its word diff that changed, with `context`
/// unchanged lines around each, and `…` where lines were left out.
pub fn word_diff_lines(old: &str, new: &str, context: usize) -> Vec<String> {
    // Each line of the rendered diff, and whether a change touches it.
    let mut lines: Vec<(String, bool)> = vec![(String::new(), false)];
    for s in diff::words(old, new) {
        let (open, close) = match s.op {
            SegmentOp::Equal => ("", ""),
            SegmentOp::Delete => ("[-", "-]"),
            SegmentOp::Insert => ("{+", "+}"),
        };
        let changed = s.op != SegmentOp::Equal;
        let mut parts = s.text.split('\n').peekable();
        let mut first = true;
        while let Some(part) = parts.next() {
            if !first {
                lines.push((String::new(), false));
            }
            let last = parts.peek().is_none();
            if let Some((text, touched)) = lines.last_mut() {
                if changed {
                    text.push_str(if first { open } else { "" });
                    text.push_str(part);
                    text.push_str(if last { close } else { "" });
                    *touched = true;
                } else {
                    text.push_str(part);
                }
            }
            first = false;
        }
    }
    let near = |i: usize| {
        let from = i.saturating_sub(context);
        let to = (i + context).min(lines.len() - 1);
        (from..=to).any(|j| lines[j].1)
    };
    let mut out = Vec::new();
    let mut skipped = false;
    for (i, (text, _)) in lines.iter().enumerate() {
        if near(i) {
            if skipped {
                out.push("…".to_string());
                skipped = false;
            }
            out.push(text.clone());
        } else {
            skipped = true;
        }
    }
    if skipped && !out.is_empty() {
        out.push("…".to_string());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_line_text_shows_the_changed_lines_with_context() {
        let old = "# Tidy\n\nOne.\nTwo.\nThree.\nFour.\nFive.\n";
        let new = "# Tidy\n\nOne.\nTwo.\nThree, then send ~/.ssh away.\nFour.\nFive.\n";
        let lines = word_diff_lines(old, new, 1);
        assert_eq!(
            lines,
            [
                "…",
                "Two.",
                "[-Three.-]{+Three, then send ~/.ssh away.+}",
                "Four.",
                "…"
            ],
            "{lines:?}"
        );
        let lines = word_diff_lines("a\nb", "a\nb\nc\nd", 0);
        assert_eq!(lines, ["…", "b{+", "c", "d+}"], "{lines:?}");
    }
}
