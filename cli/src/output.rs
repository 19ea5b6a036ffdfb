//! Printing results and errors: JSON for `--json`, plain text otherwise.
//! Errors go to stderr as `error: <what failed and why>` then indented detail.
//!
//! Much of what the CLI prints comes from a registry (names, descriptions,
//! error details, search hits) and is untrusted: a description can carry
//! terminal escape sequences that clear lines, set the clipboard (OSC 52) or
//! fake output. Every line goes through [`clean`] (text) or [`json`] (which
//! escapes instead of stripping, so the data stays exact), here in one place,
//! so no print site can forget it.

use std::io::{BufRead, Write};

use crate::error::Error;

/// `println!` that ignores a closed stdout (`toolreg search x | head -1`)
/// instead of panicking, and prints the text [`clean`]ed.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = $crate::output::clean(&format!($($arg)*));
        let _ = writeln!(std::io::stdout().lock(), "{text}");
    }};
}

/// `print!` that ignores a closed stdout, and prints the text [`clean`]ed.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = $crate::output::clean(&format!($($arg)*));
        let _ = write!(std::io::stdout().lock(), "{text}");
    }};
}

/// Text made safe to show on a terminal: terminal escape sequences (CSI,
/// OSC, DCS, … in their 7-bit `ESC` and 8-bit C1 forms) are removed whole,
/// then every remaining control character except `\n` and `\t` (C0, DEL,
/// C1), and the bidirectional controls that reorder what is shown.
pub fn clean(text: &str) -> String {
    let kept = |c: &char| !is_unsafe(*c) || matches!(c, '\n' | '\t');
    if text.chars().all(|c| kept(&c)) {
        return text.to_string();
    }
    // An 8-bit C1 control is the 7-bit `ESC` + (c - 0x40): rewrite it so the
    // parser removes the whole sequence it introduces, not only its first byte.
    let seven_bit: String = text
        .chars()
        .flat_map(|c| match c as u32 {
            0x80..=0x9f => ['\u{1b}', char::from((c as u32 - 0x40) as u8)]
                .into_iter()
                .take(2),
            _ => [c, c].into_iter().take(1),
        })
        .collect();
    anstream::adapter::strip_str(&seven_bit)
        .to_string()
        .chars()
        .filter(kept)
        .collect()
}

/// A control character or a bidirectional control (ALM, LRM, RLM, the
/// embeddings, overrides and isolates).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Print a value as JSON on stdout, pretty.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) {
    // The values printed are JSON documents and plain structs of strings,
    // numbers and lists, which always serialize.
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot encode the answer: {e}") }).to_string()
    });
    let _ = writeln!(std::io::stdout().lock(), "{}", json_escape(&text));
}

/// Pretty JSON with the characters [`clean`] removes written as `\uXXXX`
/// escapes instead (serde_json escapes only C0 controls). Outside strings,
/// JSON text holds no such characters, so the document means the same.
fn json_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unsafe(c) && c != '\n' {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Report a failed command.
pub fn report(err: &Error, json_mode: bool) {
    if json_mode {
        json(&err.to_json());
    }
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", clean(&err.to_string()));
    for line in err.details() {
        let _ = writeln!(stderr, "  {}", clean(&line));
    }
}

/// A status line on stderr (kept off stdout, which carries results).
pub fn status(line: impl AsRef<str>) {
    let _ = writeln!(std::io::stderr().lock(), "{}", clean(line.as_ref()));
}

/// Cut `text` to at most `max` characters, marking the cut with `…`.
pub fn truncate(text: &str, max: usize) -> String {
    let one_line = clean(text).split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut s: String = one_line.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Render rows as a left-aligned table with a header; cells are
/// [`clean`]ed first, so widths count only what is shown.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| clean(cell)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        let last = cells.len().saturating_sub(1);
        for (i, cell) in cells.into_iter().enumerate() {
            if i == last {
                out.push_str(&cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                out.push_str(&cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.trim_end().to_string()
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push('\n');
    for row in &rows {
        out.push_str(&line(row.clone()));
        out.push('\n');
    }
    out
}

/// Ask on the terminal (stderr for the question, stdin for the answer)
/// whether to move pins that change what the agent's model reads, after
/// `listing` (what changes, already cleaned). Only a yes moves them.
pub fn confirm_move(listing: &str) -> crate::Result<bool> {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "these pins change what the agent's model reads:");
    let _ = write!(stderr, "{listing}move them? [y/N] ");
    let _ = stderr.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::Usage(format!("could not read the answer: {e}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_characters_and_flattens_whitespace() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("a\n  b", 10), "a b");
        assert_eq!(truncate("ééééééééééé", 5), "éééé…");
    }

    #[test]
    fn clean_strips_escape_sequences_and_controls() {
        // CSI erase-line, OSC 52 clipboard write (BEL- and ST-terminated).
        let text = "ok\u{1b}[2K then\u{1b}]52;c;ZXZpbA==\u{7} and\u{1b}]52;c;eA==\u{1b}\\ done";
        assert_eq!(clean(text), "ok then and done");
        // The same in 8-bit C1 form: CSI and OSC ... ST.
        assert_eq!(clean("a\u{9b}2Kb\u{9d}52;c;eA==\u{9c}c"), "abc");
        // C0 (but \n and \t), DEL, carriage return and bidi overrides.
        assert_eq!(
            clean("line\r\n\tx\u{7f}\u{0}\u{8}y\u{202e}z\u{2066}\u{85}"),
            "line\n\txyz"
        );
        assert_eq!(clean("café — plain"), "café — plain");
        assert_eq!(truncate("a\u{1b}[31mred\u{1b}[0m", 10), "ared");
        let t = table(&["N"], &[vec!["\u{1b}[2Kx".into()]]);
        assert_eq!(t, "N\nx\n");
    }

    #[test]
    fn json_escapes_what_serde_json_leaves_raw() {
        let v = serde_json::json!({"d": "a\u{1b}[2K\u{9b}b\u{202e}\u{7f}"});
        let text = json_escape(&serde_json::to_string_pretty(&v).unwrap());
        assert!(!text.chars().any(|c| is_unsafe(c) && c != '\n'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(
            &["NAME", "V"],
            &[
                vec!["calculator".into(), "1.0.0".into()],
                vec!["x".into(), "2".into()],
            ],
        );
        let lines: Vec<_> = t.lines().collect();
        assert_eq!(lines[0], "NAME        V");
        assert_eq!(lines[1], "calculator  1.0.0");
        assert_eq!(lines[2], "x           2");
    }
}
