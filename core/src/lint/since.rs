//! Which findings are new: the one comparison of two lists of findings,
//! used by the version diff (the findings a newer version has that an older
//! did not) and by the rescan (the findings the current rules report that
//! the stored list lacks, and the stored ones they no longer report).

use std::borrow::Cow;
use std::collections::HashMap;

use super::{Finding, Rule};

/// The findings of `now` that `before` did not have. A finding is known by
/// its rule and its pointer — not its offsets, which move whenever the
/// text before it changes — counted per string: a string that had one hit
/// of a rule and now has two has one new finding (the later one). A line
/// of a file (`/<file>:<line>`, a skill's text) moves whenever a line is
/// added above it, so there the finding is known by its file and its
/// excerpt instead of the line number.
pub fn new_since<'a>(before: &[Finding], now: &'a [Finding]) -> Vec<&'a Finding> {
    let mut known: HashMap<(Rule, Cow<'_, str>), usize> = HashMap::new();
    for f in before {
        *known.entry((f.rule, identity(f))).or_default() += 1;
    }
    now.iter()
        .filter(|f| match known.get_mut(&(f.rule, identity(f))) {
            Some(left) if *left > 0 => {
                *left -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// What a finding is known by besides its rule: its pointer, or for a
/// line of a file, the file and the excerpt.
fn identity(f: &Finding) -> Cow<'_, str> {
    match f.pointer.rsplit_once(':') {
        Some((file, line))
            if file.starts_with('/')
                && !line.is_empty()
                && line.bytes().all(|b| b.is_ascii_digit()) =>
        {
            Cow::Owned(format!("{file}\u{0}{}", f.excerpt))
        }
        _ => Cow::Borrowed(f.pointer.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::Severity;

    fn finding(rule: Rule, pointer: &str, start: usize) -> Finding {
        Finding {
            rule,
            severity: Severity::Flag,
            pointer: pointer.into(),
            start,
            end: start + 4,
            excerpt: "text".into(),
            message: "found".into(),
        }
    }

    #[test]
    fn findings_are_known_by_rule_and_pointer_counted_per_string() {
        let before = [
            finding(Rule::P1, "/description", 3),
            finding(Rule::P2, "/description", 9),
        ];
        let now = [
            // Moved by an edit before it: not new.
            finding(Rule::P1, "/description", 20),
            // A second hit of the same rule in the same string: new.
            finding(Rule::P1, "/description", 40),
            // Same rule, another string: new.
            finding(Rule::P2, "/parameters/a/description", 0),
        ];
        let new: Vec<(Rule, &str, usize)> = new_since(&before, &now)
            .into_iter()
            .map(|f| (f.rule, f.pointer.as_str(), f.start))
            .collect();
        assert_eq!(
            new,
            vec![
                (Rule::P1, "/description", 40),
                (Rule::P2, "/parameters/a/description", 0)
            ]
        );
        // And the other way: what is no longer found.
        let gone: Vec<Rule> = new_since(&now, &before).iter().map(|f| f.rule).collect();
        assert_eq!(gone, vec![Rule::P2]);
        assert!(new_since(&now, &now).is_empty());
    }

    #[test]
    fn a_line_of_a_file_is_known_by_its_file_and_excerpt() {
        let at = |pointer: &str, excerpt: &str| Finding {
            excerpt: excerpt.into(),
            ..finding(Rule::P3, pointer, 0)
        };
        let before = [at("/SKILL.md:10", "do not tell the user")];
        // Moved down by a line added above it: not new.
        let now = [
            at("/SKILL.md:11", "do not tell the user"),
            at("/SKILL.md:12", "keep it secret"),
            at("/references/a.md:11", "do not tell the user"),
        ];
        let new: Vec<&str> = new_since(&before, &now)
            .iter()
            .map(|f| f.pointer.as_str())
            .collect();
        assert_eq!(new, vec!["/SKILL.md:12", "/references/a.md:11"]);
    }
}
