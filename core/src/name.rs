//! Registry names: the rules a tool's identity must follow, how
//! one is derived from a format's own name, and the normalized form that
//! uniqueness is checked on (so `web_search` can't squat on `web-search`).

use std::sync::LazyLock;

use regex::Regex;

/// Shortest registry name.
pub const MIN_LEN: usize = 3;
/// Longest registry name.
pub const MAX_LEN: usize = 50;

/// The registry name pattern: lowercase kebab-case.
pub const PATTERN: &str = "^[a-z][a-z0-9]*(-[a-z0-9]+)*$";

static NAME_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(PATTERN).expect("static pattern"));

/// The uniqueness form of a name: lowercase, with `_` and `-` the same.
/// Idempotent: `normalize(normalize(x)) == normalize(x)`.
pub fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// Check a registry name; `Err` says what is wrong, as a sentence fragment
/// usable after "`name` ".
pub fn validate(name: &str) -> Result<(), String> {
    let len = name.chars().count();
    if len < MIN_LEN {
        return Err(format!(
            "is too short ({len} characters; at least {MIN_LEN})"
        ));
    }
    if len > MAX_LEN {
        return Err(format!("is too long ({len} characters; at most {MAX_LEN})"));
    }
    if !NAME_RE.is_match(name) {
        return Err(
            "is not lowercase kebab-case (letters, digits and single hyphens, starting with a letter)".to_string()
        );
    }
    Ok(())
}

/// True if `name` is a valid registry name.
pub fn is_valid(name: &str) -> bool {
    validate(name).is_ok()
}

/// Derive a registry name from a format's own id or name: lowercased, with
/// `_` and spaces turned into `-`. Nothing else is changed, so the result
/// may still be invalid (check it with [`validate`]).
pub fn derive(source: &str) -> String {
    source.trim().to_lowercase().replace(['_', ' '], "-")
}

/// A best-effort valid-looking slug for suggestions in error messages (not
/// applied silently): lowercase ASCII letters and digits, every other run of
/// characters becomes one `-`.
pub fn suggest(source: &str) -> String {
    let mut out = String::new();
    for c in source.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    let trimmed = trimmed.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    let mut s: String = trimmed.chars().take(MAX_LEN).collect();
    while s.ends_with('-') {
        s.pop();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert!(is_valid("web-search"));
        assert!(is_valid("abc"));
        assert!(is_valid("a1-b2"));
        assert!(!is_valid("ab"));
        assert!(!is_valid(&"a".repeat(51)));
        assert!(is_valid(&"a".repeat(50)));
        assert!(!is_valid("Web-search"));
        assert!(!is_valid("web_search"));
        assert!(!is_valid("web--search"));
        assert!(!is_valid("-web"));
        assert!(!is_valid("web-"));
        assert!(!is_valid("1web"));
    }

    #[test]
    fn derivation() {
        assert_eq!(derive("create_issue"), "create-issue");
        assert_eq!(derive("Coin Flip Tool"), "coin-flip-tool");
        assert_eq!(derive("X/Twitter Post"), "x/twitter-post");
        assert!(!is_valid(&derive("X/Twitter Post")));
        assert_eq!(suggest("X/Twitter Post"), "x-twitter-post");
    }

    #[test]
    fn normalization() {
        assert_eq!(normalize("Web_Search"), "web-search");
        assert_eq!(normalize("web-search"), normalize("web_search"));
    }
}
