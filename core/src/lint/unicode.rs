//! Rules `U1`–`U5`: characters that hide or disguise text.
//!
//! * `U1` Unicode tag characters (U+E0000–U+E007F): text invisible to people
//!   but read by models; the message decodes it.
//! * `U2` bidirectional controls (U+202A–U+202E, U+2066–U+2069).
//! * `U3` control characters other than tab, LF and CR (ANSI escape and OSC
//!   sequences that hide a line in a terminal).
//! * `U4` zero-width and invisible characters (U+200B–U+200F,
//!   U+2060–U+2064, U+FEFF, U+00AD, variation selectors): block in
//!   identifiers, flag in prose. In prose, the joiners and variation
//!   selectors that emoji and some scripts need are allowed where they do
//!   that job.
//! * `U5` identifiers that mix scripts beyond what Unicode TR39's "highly
//!   restrictive" level allows, or that are look-alikes of an ASCII name
//!   (their TR39 skeleton is ASCII), via `unicode-security`.
//!
//! The code point ranges are the ones the rule table names; script and
//! confusable data come from `unicode-security` and `unicode-script`.

use unicode_normalization::UnicodeNormalization;
use unicode_script::{Script, UnicodeScript};
use unicode_security::{skeleton, RestrictionLevel, RestrictionLevelDetection};

use super::collect::Findings;
use super::walk::{Role, Site};
use super::{Rule, Severity};

/// Unicode tag characters, U+E0000–U+E007F.
pub fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// Bidirectional embedding, override and isolate controls.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Control characters other than tab, LF and CR.
pub fn is_bad_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Zero-width and invisible characters (including variation selectors).
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}'
        | '\u{00AD}')
        || is_variation_selector(c)
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Run the `U` rules on one string.
pub(crate) fn check(site: &Site<'_>, out: &mut Findings) {
    let s = site.text;
    if s.is_ascii() {
        if s.bytes()
            .any(|b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7F)
        {
            let chars: Vec<char> = s.chars().collect();
            controls(site, &chars, out);
        }
        return;
    }
    let chars: Vec<char> = s.chars().collect();
    tags(site, &chars, out);
    runs(site, &chars, is_bidi_control, out, |run| {
        (
            Rule::U2,
            Severity::Block,
            format!(
                "bidirectional control character{} {} (can reorder how the text is shown)",
                plural(run.len()),
                code_points(run)
            ),
        )
    });
    controls(site, &chars, out);
    invisible(site, &chars, out);
    if site.role.is_identifier() {
        confusable(site, out);
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn code_points(run: &[char]) -> String {
    let mut names: Vec<String> = run.iter().map(|c| format!("U+{:04X}", *c as u32)).collect();
    names.dedup();
    if names.len() > 4 {
        names.truncate(4);
        names.push("…".into());
    }
    names.join(" ")
}

/// Report each maximal run of chars matching `pred`.
fn runs(
    site: &Site<'_>,
    chars: &[char],
    pred: fn(char) -> bool,
    out: &mut Findings,
    describe: impl Fn(&[char]) -> (Rule, Severity, String),
) {
    let mut i = 0;
    while i < chars.len() {
        if !pred(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && pred(chars[i]) {
            i += 1;
        }
        let (rule, severity, message) = describe(&chars[start..i]);
        site.report(out, rule, severity, start, i, message, false);
    }
}

/// U1: runs of tag characters, decoded. An emoji tag sequence (a black flag
/// followed by a short lowercase region code and CANCEL TAG, as in the
/// flags of Scotland or Wales) is not hidden text and is allowed.
fn tags(site: &Site<'_>, chars: &[char], out: &mut Findings) {
    let mut i = 0;
    while i < chars.len() {
        if !is_tag(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_tag(chars[i]) {
            i += 1;
        }
        let run = &chars[start..i];
        if start > 0 && chars[start - 1] == '\u{1F3F4}' && is_flag_tag_sequence(run) {
            continue;
        }
        let decoded: String = run
            .iter()
            .filter_map(|&c| {
                let v = c as u32 - 0xE0000;
                (0x20..0x7F).contains(&v).then(|| char::from(v as u8))
            })
            .collect();
        let shown: String = decoded.chars().take(200).collect();
        let cut = if decoded.chars().count() > 200 {
            "…"
        } else {
            ""
        };
        site.report(
            out,
            Rule::U1,
            Severity::Block,
            start,
            i,
            format!(
                "{} invisible Unicode tag character{} hiding the text \"{}{cut}\"",
                run.len(),
                plural(run.len()),
                super::text::escape(&shown)
            ),
            false,
        );
    }
}

fn is_flag_tag_sequence(run: &[char]) -> bool {
    let Some((last, body)) = run.split_last() else {
        return false;
    };
    *last == '\u{E007F}'
        && (2..=6).contains(&body.len())
        && body
            .iter()
            .all(|&c| matches!(c, '\u{E0030}'..='\u{E0039}' | '\u{E0061}'..='\u{E007A}'))
}

/// U3: runs of control characters.
fn controls(site: &Site<'_>, chars: &[char], out: &mut Findings) {
    runs(site, chars, is_bad_control, out, |run| {
        let what = if run.contains(&'\u{1B}') {
            " (a terminal escape sequence can hide or rewrite text)"
        } else {
            ""
        };
        (
            Rule::U3,
            Severity::Block,
            format!(
                "control character{} {}{what}",
                plural(run.len()),
                code_points(run)
            ),
        )
    });
}

/// U4: runs of invisible characters, minus (in prose) the joiners and
/// variation selectors that emoji and scripts need.
fn invisible(site: &Site<'_>, chars: &[char], out: &mut Findings) {
    let identifier = site.role.is_identifier();
    let mut i = 0;
    while i < chars.len() {
        if !is_invisible(chars[i]) || (!identifier && is_allowed_in_prose(chars, i)) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && is_invisible(chars[i])
            && (identifier || !is_allowed_in_prose(chars, i))
        {
            i += 1;
        }
        let run = &chars[start..i];
        let (severity, where_) = if identifier {
            (Severity::Block, "in a name")
        } else {
            (Severity::Flag, "in text")
        };
        site.report(
            out,
            Rule::U4,
            severity,
            start,
            i,
            format!(
                "invisible character{} {} {where_}",
                plural(run.len()),
                code_points(run)
            ),
            false,
        );
    }
}

/// Emoji presentation selectors after a symbol, and zero-width (non-)joiners
/// inside emoji sequences or between letters of scripts that use them.
fn is_allowed_in_prose(chars: &[char], i: usize) -> bool {
    let prev = i.checked_sub(1).map(|p| chars[p]);
    let next = chars.get(i + 1).copied();
    let symbol = |c: char| !c.is_ascii() && !c.is_alphanumeric() && !is_invisible(c) && !is_tag(c);
    let letter = |c: char| !c.is_ascii() && c.is_alphabetic();
    match chars[i] {
        '\u{FE0E}' | '\u{FE0F}' => {
            prev.is_some_and(|p| symbol(p) || p.is_ascii_digit() || p == '#' || p == '*')
        }
        '\u{200D}' => {
            let after_emoji = prev.is_some_and(|p| symbol(p) || p == '\u{FE0F}');
            (after_emoji && next.is_some_and(symbol))
                || (prev.is_some_and(letter) && next.is_some_and(letter))
        }
        '\u{200C}' => prev.is_some_and(letter) && next.is_some_and(letter),
        _ => false,
    }
}

/// U5: identifiers mixing scripts (beyond TR39 "highly restrictive") or
/// whose TR39 skeleton is a different, pure ASCII name.
fn confusable(site: &Site<'_>, out: &mut Findings) {
    let s = site.text;
    // Enum values with spaces are labels ("Русский (Russian)"), not names.
    if site.role == Role::EnumValue && s.chars().any(char::is_whitespace) {
        return;
    }
    let letters: String = s.chars().filter(|c| c.is_alphanumeric()).collect();
    if letters.is_empty() || letters.is_ascii() {
        return;
    }
    let n = s.chars().count();
    let nfkc: String = s.nfkc().collect();
    if nfkc != s {
        site.report(out,
            Rule::U5,
            Severity::Block,
            0,
            n,
            format!(
                "the {} `{}` is written with compatibility or decomposed characters; it reads as `{}`",
                site.role.noun(),
                super::text::escape(s),
                super::text::escape(&nfkc)
            ),
            false,
        );
        return;
    }
    let level = letters.as_str().detect_restriction_level();
    if level > RestrictionLevel::HighlyRestrictive {
        let mut scripts: Vec<&'static str> = Vec::new();
        for c in letters.chars() {
            let script = c.script();
            if !matches!(script, Script::Common | Script::Inherited | Script::Unknown) {
                let name = script.full_name();
                if !scripts.contains(&name) {
                    scripts.push(name);
                }
            }
        }
        let what = if scripts.len() > 1 {
            format!("mixes the scripts {}", scripts.join(", "))
        } else {
            "uses characters not allowed in identifiers".to_string()
        };
        site.report(
            out,
            Rule::U5,
            Severity::Block,
            0,
            n,
            format!(
                "the {} `{}` {what}",
                site.role.noun(),
                super::text::escape(s)
            ),
            false,
        );
        return;
    }
    let foreign = letters.chars().any(|c| {
        !matches!(
            c.script(),
            Script::Latin | Script::Common | Script::Inherited
        )
    });
    if !foreign {
        return;
    }
    let skel: String = skeleton(s).collect();
    if skel.is_ascii() && skel != s {
        site.report(
            out,
            Rule::U5,
            Severity::Block,
            0,
            n,
            format!(
                "the {} `{}` is a look-alike of `{skel}` written with other characters",
                site.role.noun(),
                super::text::escape(s)
            ),
            false,
        );
    }
}
