//! Entry names that every consumer's file system can write as they are.
//!
//! A bundle is unpacked on Linux, macOS and Windows. Some names are written
//! there as a *different* file than the one the registry checked: Windows
//! drops a trailing `.` or space (`definition.yaml.` lands on
//! `definition.yaml`), reads `:` as an alternate data stream
//! (`tool.json::$DATA` is `tool.json`) and opens a device for `NUL`, `CON`,
//! `COM1`, … whatever the extension; macOS and Windows fold letter case, and
//! macOS normalizes Unicode. Files are written in sorted order, so such a
//! name can replace the checked definition on disk by an unchecked one.
//!
//! [`check`] refuses each of these, naming the entry and the rule: a trailing
//! `.` or space, `:`, control characters, Windows device names (with any
//! extension, in any letter case), and two names that are equal after case
//! folding and Unicode normalization (which also covers a file that folds
//! onto a directory of another entry).

use std::collections::{BTreeMap, BTreeSet};

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

use crate::error::Error;

/// Names Windows maps to a device in any directory, whatever follows the
/// first `.` (`NUL.txt` is `NUL`). `COM¹`–`COM³` and `LPT¹`–`LPT³` count too.
const DEVICE_NAMES: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$", "COM0", "COM1", "COM2", "COM3",
    "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "COM¹", "COM²", "COM³", "LPT0", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "LPT¹", "LPT²", "LPT³",
];

/// The name as shown in messages: control and invisible characters escaped,
/// so an error never carries them to a terminal.
pub(crate) fn shown(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            if c.is_control() || is_invisible(c) {
                c.escape_unicode().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Format and bidi controls that would hide or reorder text in a message.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// The key under which case-insensitive and normalizing file systems see a
/// name: Unicode compatibility caseless matching (D146 of the Unicode
/// standard), NFKD(fold(NFKD(fold(NFD(name))))). It folds strictly more
/// names together than any one file system does (NTFS folds case only,
/// APFS/HFS+ case and canonical equivalence), so a pair refused here is a
/// pair some consumer might write as one file.
pub fn fold_key(name: &str) -> String {
    name.chars()
        .nfd()
        .default_case_fold()
        .nfkd()
        .default_case_fold()
        .nfkd()
        .collect()
}

/// Why one path segment can't be written as itself everywhere, if it can't.
fn segment_problem(segment: &str) -> Option<String> {
    if let Some(c) = segment.chars().find(|c| c.is_control()) {
        return Some(format!(
            "contains the control character U+{:04X}; names may not contain control characters",
            c as u32
        ));
    }
    if segment.contains(':') {
        return Some(
            "contains `:`, which Windows reads as a drive or an alternate data stream \
             (`tool.json::$DATA` is written to `tool.json`)"
                .to_string(),
        );
    }
    if segment.ends_with('.') || segment.ends_with(' ') {
        let what = if segment.ends_with('.') {
            "`.`"
        } else {
            "a space"
        };
        return Some(format!(
            "ends in {what}, which Windows drops (`{}` would be written to `{}`)",
            shown(segment),
            shown(segment.trim_end_matches(['.', ' ']))
        ));
    }
    // Windows looks at the part before the first `.`, ignoring trailing spaces.
    let stem = segment
        .split('.')
        .next()
        .unwrap_or(segment)
        .trim_end_matches(' ');
    if let Some(device) = DEVICE_NAMES
        .iter()
        .find(|d| d.chars().count() == stem.chars().count() && eq_ignore_case(d, stem))
    {
        return Some(format!(
            "is the Windows device name `{device}` (with any extension, in any letter case), \
             which opens the device instead of a file"
        ));
    }
    None
}

fn eq_ignore_case(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

/// Refuse any path (normalized, `/`-separated) that some consumer's file
/// system would write as another file or not at all, and any two paths that
/// such a file system would see as the same file, or as a file and a
/// directory of the same name.
pub fn check<'a>(paths: impl IntoIterator<Item = &'a str>) -> Result<(), Error> {
    let mut folded: BTreeMap<String, &str> = BTreeMap::new();
    for path in paths {
        for segment in path.split('/') {
            if let Some(why) = segment_problem(segment) {
                let at = if segment == path {
                    String::new()
                } else {
                    format!(" (in `{}`)", shown(segment))
                };
                return Err(Error::Bundle(format!("`{}`{at} {why}", shown(path))));
            }
        }
        if let Some(first) = folded.insert(fold_key(path), path) {
            return Err(same_file(first, path));
        }
    }
    // A file that folds onto another entry's directory (`a` and `A/b`).
    let keys: BTreeSet<&str> = folded.keys().map(String::as_str).collect();
    for (key, path) in &folded {
        let dir = format!("{key}/");
        if let Some(child) = keys
            .range(dir.as_str()..)
            .next()
            .filter(|c| c.starts_with(&dir))
        {
            let other = folded.get(*child).copied().unwrap_or(child);
            return Err(Error::Bundle(format!(
                "`{}` and the directory of `{}` are the same name on a case-insensitive \
                 file system (equal after case folding and Unicode normalization)",
                shown(path),
                shown(other)
            )));
        }
    }
    Ok(())
}

fn same_file(first: &str, second: &str) -> Error {
    Error::Bundle(format!(
        "`{}` and `{}` are the same file on a case-insensitive or normalizing file system \
         (equal after case folding and Unicode normalization); rename one of them",
        shown(first),
        shown(second)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(paths: &[&str]) -> String {
        match check(paths.iter().copied()) {
            Ok(()) => panic!("{paths:?} should be refused"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn ordinary_names_pass() {
        check([
            "definition.yaml",
            "README.md",
            "docs/usage.md",
            ".hidden",
            "a.b.c",
            "café.txt",
            "CONSOLE.md",
            "nully",
            "COM10",
            "LPT",
        ])
        .unwrap();
    }

    #[test]
    fn trailing_dot_or_space_is_refused() {
        let e = refused(&["definition.yaml", "definition.yaml."]);
        assert!(
            e.contains("`definition.yaml.`") && e.contains("ends in `.`"),
            "{e}"
        );
        let e = refused(&["tool.json "]);
        assert!(e.contains("ends in a space"), "{e}");
        let e = refused(&["docs./a.md"]);
        assert!(e.contains("(in `docs.`)"), "{e}");
    }

    #[test]
    fn colons_and_control_characters_are_refused() {
        let e = refused(&["tool.json::$DATA"]);
        assert!(e.contains("`tool.json::$DATA`") && e.contains("`:`"), "{e}");
        let e = refused(&["a\u{1b}[2Kb.txt"]);
        assert!(e.contains("U+001B") && !e.contains('\u{1b}'), "{e}");
        assert!(refused(&["tab\there"]).contains("U+0009"));
        assert!(refused(&["c1\u{9b}x"]).contains("U+009B"));
    }

    #[test]
    fn device_names_are_refused_with_any_extension_and_case() {
        for name in [
            "CON",
            "nul",
            "NUL.txt",
            "docs/Aux.md",
            "com1",
            "LPT9.tar.gz",
            "prn .txt",
            "COM¹",
            "conin$",
        ] {
            let e = refused(&[name]);
            assert!(e.contains("Windows device name"), "{name}: {e}");
        }
    }

    #[test]
    fn names_equal_after_folding_are_refused() {
        let e = refused(&["tool.json", "TOOL.JSON"]);
        assert!(
            e.contains("`tool.json`") && e.contains("`TOOL.JSON`"),
            "{e}"
        );
        // Precomposed é vs e + combining acute.
        refused(&["caf\u{e9}.md", "cafe\u{301}.md"]);
        // Full case folding: ß folds to ss.
        refused(&["straße.md", "STRASSE.md"]);
        // Compatibility: the ligature ﬁ is fi.
        refused(&["ﬁle.md", "file.md"]);
        // Directories fold too.
        refused(&["Docs/a.md", "docs/A.md"]);
        let e = refused(&["a", "A/b"]);
        assert!(e.contains("directory"), "{e}");
    }
}
