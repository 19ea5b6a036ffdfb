//! Rule `S1` over the raw text of every file of a tool directory: a live
//! credential in a YAML comment (served verbatim with the definition), in
//! `README.md` (rendered on the web), in a code file or under `docs/` is as
//! exposed as one in a description, but no parsed string holds it.
//!
//! Every file that is UTF-8 text (no NUL byte) is read whole. A hit is
//! named `/<file>:<line>`, with character offsets in that line. Hits in
//! the definition or `toolreg.toml` that a parsed string also holds are
//! left out: the walk of the document reports those at their JSON pointer.
//! The placeholder exemption of [`secrets`](super::secrets) applies.

use serde_json::Value;

use super::collect::{Findings, Take};
use super::secrets::tokens;
use super::text::{char_index, excerpt};
use super::{Finding, Rule, Severity};
use crate::files::ToolFiles;

/// Scan every text file of `files`; `doc` is the parsed definition (its
/// strings are already linted).
pub(crate) fn check(doc: Option<&Value>, files: &ToolFiles, out: &mut Findings) {
    for (name, bytes) in files.iter() {
        if bytes.contains(&0) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        let hits = tokens(text);
        if hits.is_empty() {
            continue;
        }
        let parsed = name == crate::manifest::FILE_NAME
            || crate::formats::definition_file_names().contains(&name);
        let manifest = (name == crate::manifest::FILE_NAME)
            .then(|| text.parse::<toml::Table>().ok())
            .flatten()
            .and_then(|t| serde_json::to_value(t).ok());
        for t in hits {
            let token = &text[t.start..t.end];
            if parsed
                && (doc.is_some_and(|d| holds(d, token))
                    || manifest.as_ref().is_some_and(|m| holds(m, token)))
            {
                continue;
            }
            out.begin_string();
            if out.take(Rule::S1, Severity::Block) != Take::Keep {
                out.count(Rule::S1, Severity::Block);
                continue;
            }
            let line_start = text[..t.start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[t.end..].find('\n').map_or(text.len(), |i| t.end + i);
            let line = &text[line_start..line_end];
            let number = text[..t.start].bytes().filter(|&b| b == b'\n').count() + 1;
            let start = char_index(line, t.start - line_start);
            let end = char_index(line, t.end - line_start);
            out.push(Finding {
                rule: Rule::S1,
                severity: Severity::Block,
                pointer: format!("/{name}:{number}"),
                start,
                end,
                excerpt: excerpt(line, start, end, true),
                message: format!("{} is published in the file {name}, line {number}", t.what),
            });
        }
    }
}

/// True if `pointer` names a line of a raw text file (`/<file>:<line>`)
/// rather than a string of the definition.
pub fn is_file_pointer(pointer: &str) -> bool {
    pointer.rsplit_once(':').is_some_and(|(file, line)| {
        file.starts_with('/') && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
    })
}

/// True if a string of `v` (a key or a value) holds `token`.
fn holds(v: &Value, token: &str) -> bool {
    match v {
        Value::String(s) => s.contains(token),
        Value::Array(items) => items.iter().any(|i| holds(i, token)),
        Value::Object(map) => map
            .iter()
            .any(|(k, c)| k.contains(token) || holds(c, token)),
        _ => false,
    }
}
