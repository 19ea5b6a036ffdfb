//! Text helpers shared by the rules: the NFKC-normalized form that patterns
//! run on (with a map back to character offsets in the original string),
//! and excerpts in which invisible characters are shown as `\u{…}` escapes.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// Characters of context shown on each side of a hit in an excerpt.
const CONTEXT: usize = 24;
/// Longest hit shown whole in an excerpt; longer ones are cut in the middle.
const MAX_HIT: usize = 60;

/// A string in the form patterns run on: NFKC-normalized, with the
/// invisible characters the `U` rules report (tags, bidi controls,
/// zero-width characters) left out, so that `ig\u{200B}nore` still reads
/// `ignore`. Offsets found in it map back to the original string.
///
/// Normalization is done one character at a time (each character's NFKC
/// form), which keeps the offset map exact; composition across characters
/// does not change what the ASCII patterns of the rules match.
pub(crate) struct Normalized<'a> {
    /// The text patterns run on.
    pub text: Cow<'a, str>,
    /// For a normalized (non-ASCII) input: (byte offset in `text`, char
    /// index in the original) for every char of `text`. Empty when `text`
    /// is the original ASCII string (byte offset = char index).
    map: Vec<(usize, usize)>,
    /// Number of chars in the original.
    orig_chars: usize,
}

impl<'a> Normalized<'a> {
    pub fn new(s: &'a str) -> Self {
        if s.is_ascii() {
            return Normalized {
                text: Cow::Borrowed(s),
                map: Vec::new(),
                orig_chars: s.len(),
            };
        }
        let mut text = String::with_capacity(s.len());
        let mut map = Vec::with_capacity(s.len());
        let mut n = 0;
        for (i, c) in s.chars().enumerate() {
            n = i + 1;
            if is_hidden(c) {
                continue;
            }
            if c.is_ascii() {
                map.push((text.len(), i));
                text.push(c);
            } else {
                for d in std::iter::once(c).nfkc() {
                    map.push((text.len(), i));
                    text.push(d);
                }
            }
        }
        Normalized {
            text: Cow::Owned(text),
            map,
            orig_chars: n,
        }
    }

    /// The original character range of the byte range `start..end` of `text`.
    pub fn orig_range(&self, start: usize, end: usize) -> (usize, usize) {
        if self.map.is_empty() {
            return (start, end);
        }
        let first = self.map.partition_point(|&(b, _)| b < start);
        let last = self.map.partition_point(|&(b, _)| b < end);
        let s = self.map.get(first).map_or(self.orig_chars, |&(_, i)| i);
        let e = if last == 0 {
            s
        } else {
            self.map[last - 1].1 + 1
        };
        (s, e.max(s))
    }
}

/// Characters the normalized form leaves out: they are invisible and are
/// reported by the `U` rules themselves.
fn is_hidden(c: char) -> bool {
    crate::lint::unicode::is_tag(c)
        || crate::lint::unicode::is_bidi_control(c)
        || crate::lint::unicode::is_invisible(c)
}

/// True for characters an excerpt shows as a `\u{…}` escape: control
/// characters, whitespace other than the space, and the invisible
/// characters of the `U` rules.
pub(crate) fn needs_escape(c: char) -> bool {
    c.is_control() || (c.is_whitespace() && c != ' ') || is_hidden(c)
}

/// `s` with invisible characters as `\u{…}` escapes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    if needs_escape(c) {
        out.push_str(&format!("\\u{{{:X}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// The excerpt for chars `start..end` of `s`: the hit with a little
/// context, cut with `…`, invisible characters escaped. With `redact`, only
/// the first characters of the hit are shown (for credentials).
pub fn excerpt(s: &str, start: usize, end: usize, redact: bool) -> String {
    // Only the chars up to the end of the context are needed (strings may
    // be long); one more tells whether the excerpt is cut there.
    let chars: Vec<char> = s.chars().take(end + CONTEXT + 1).collect();
    let more = chars.len() > end + CONTEXT;
    let end = end.min(chars.len());
    let start = start.min(end);
    let from = start.saturating_sub(CONTEXT);
    let to = (end + CONTEXT).min(chars.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    chars[from..start]
        .iter()
        .for_each(|&c| push_escaped(&mut out, c));
    let hit = &chars[start..end];
    if redact {
        let shown = hit.len().min(8).min(hit.len() / 2);
        hit[..shown].iter().for_each(|&c| push_escaped(&mut out, c));
        out.push_str(&format!("…({} characters hidden)", hit.len() - shown));
    } else if hit.len() > MAX_HIT {
        let half = MAX_HIT / 2;
        hit[..half].iter().for_each(|&c| push_escaped(&mut out, c));
        out.push('…');
        hit[hit.len() - half..]
            .iter()
            .for_each(|&c| push_escaped(&mut out, c));
    } else {
        hit.iter().for_each(|&c| push_escaped(&mut out, c));
    }
    chars[end..to]
        .iter()
        .for_each(|&c| push_escaped(&mut out, c));
    if more {
        out.push('…');
    }
    out
}

/// Shannon entropy of `s` in bits per character.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts: std::collections::HashMap<char, usize> = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// The index of the char holding byte offset `b` of `s`.
pub(crate) fn char_index(s: &str, b: usize) -> usize {
    if s.is_ascii() {
        b.min(s.len())
    } else {
        s.char_indices().take_while(|&(i, _)| i < b).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_maps_back_to_original_chars() {
        let s = "ｉｇ\u{200B}ｎｏｒｅ all";
        let n = Normalized::new(s);
        assert_eq!(n.text, "ignore all");
        let b = n.text.find("ignore").unwrap();
        assert_eq!(n.orig_range(b, b + 6), (0, 7));
        let b = n.text.find("all").unwrap();
        assert_eq!(n.orig_range(b, b + 3), (8, 11));
    }

    #[test]
    fn excerpts_escape_and_cut() {
        assert_eq!(escape("a\u{200B}b\n"), "a\\u{200B}b\\u{A}");
        let long = format!("{}X{}", "a".repeat(40), "b".repeat(40));
        let e = excerpt(&long, 40, 41, false);
        assert!(
            e.starts_with('…') && e.ends_with('…') && e.contains('X'),
            "{e}"
        );
        let e = excerpt("key ghp_abcdefghijklmnop", 4, 24, true);
        assert!(e.contains("ghp_abcd…") && !e.contains("mnop"), "{e}");
    }
}
