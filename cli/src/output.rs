//! Printing results and errors: JSON for `--json`, plain text otherwise.
//! Errors go to stderr as `error: <what failed and why>` then indented detail.

use std::io::Write;

use crate::error::Error;

/// `println!` that ignores a closed stdout (`toolreg search x | head -1`)
/// instead of panicking.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `print!` that ignores a closed stdout.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// Print a value as JSON on stdout, pretty.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) {
    // The values printed are JSON documents and plain structs of strings,
    // numbers and lists, which always serialize.
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot encode the answer: {e}") }).to_string()
    });
    crate::outln!("{text}");
}

/// Report a failed command.
pub fn report(err: &Error, json_mode: bool) {
    if json_mode {
        json(&err.to_json());
    }
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {err}");
    for line in err.details() {
        let _ = writeln!(stderr, "  {line}");
    }
}

/// A status line on stderr (kept off stdout, which carries results).
pub fn status(line: impl AsRef<str>) {
    let _ = writeln!(std::io::stderr().lock(), "{}", line.as_ref());
}

/// Cut `text` to at most `max` characters, marking the cut with `…`.
pub fn truncate(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut s: String = one_line.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Render rows as a left-aligned table with a header.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
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
    for row in rows {
        out.push_str(&line(row.clone()));
        out.push('\n');
    }
    out
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
