//! Rules `P1`–`P9`: text that addresses the agent's model instead of
//! describing the tool. They flag (the version publishes and carries the
//! finding); consumers decide whether to accept them.
//!
//! | rule | what |
//! |---|---|
//! | P1 | instruction tags: `<IMPORTANT>`, `<SYSTEM>`, `<!--`, `[INST]`, "system override" |
//! | P2 | instruction overrides: "ignore previous instructions", "you are now", "new instructions:" |
//! | P3 | concealment: "do not tell the user", "without the user knowing", "secretly", "silently send" |
//! | P4 | sensitive paths: `~/.ssh`, `id_rsa`, `.aws/credentials`, `.kube/config`, `.netrc`, `mcp.json`, `/etc/passwd`, a `.env` file read or sent |
//! | P5 | precedence hijack: "before using any tool", "always call … first", "will not work unless you first read …" |
//! | P6 | another tool named in prose: common agent tool names that are not the tool's own |
//! | P7 | exfiltration: a URL, e-mail address or IP after send/upload/forward/BCC … to |
//! | P8 | parameter names that read like sentences or hidden channels (`sidenote`, `hidden_*`, `bypass*`) |
//! | P9 | encoded payloads in prose: base64/hex runs of 40+ characters, `eval(`, `atob(`, `exec(` |
//!
//! Patterns run on the NFKC-normalized text (so full-width letters and
//! zero-width characters don't hide a phrase), case-insensitively, with
//! bounded windows: a phrase and its object must sit within a few dozen
//! characters of each other, never anywhere in a whole description.
//! Example addresses (`example.com`, `.test`, `localhost`) and the hosts the
//! definition itself calls are not exfiltration.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexSet};

use super::text::Normalized;
use super::walk::{Role, Site};
use super::{Context, Findings, Rule, Severity};

/// One pattern of a `P` rule.
struct Pattern {
    rule: Rule,
    /// Which strings it applies to.
    scope: Scope,
    /// What a hit means, completed with the matched text.
    what: &'static str,
    regex: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every string, keys and identifiers included (payloads hide there too).
    All,
    /// Text values only (descriptions, defaults, prompt text, ...).
    Text,
}

const URL: &str = r#"https?://[^\s"'<>()\[\]{}]{3,200}"#;
const EMAIL: &str = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}";
const IP: &str = r"\b(?:\d{1,3}\.){3}\d{1,3}\b";

const PATTERNS: &[Pattern] = &[
    // P1
    Pattern {
        rule: Rule::P1,
        scope: Scope::All,
        what: "an instruction tag",
        regex: r"<\s{0,3}/?\s{0,3}(?:important|system|sys|instructions?|admin|secret|hidden|critical|override)\s{0,3}>|<<\s?/?SYS\s?>>|\[/?INST\]|<!--|\bsystem\s{1,3}override\b",
    },
    // P2
    Pattern {
        rule: Rule::P2,
        scope: Scope::All,
        what: "an instruction override",
        regex: r"\b(?:ignore|disregard|forget|override|bypass)\s{1,3}(?:(?:all|any|the|your|of|these|those|my)\s{1,3}){0,3}(?:previous|prior|above|earlier|preceding|original|system|existing|other)\s{1,3}(?:instructions?|prompts?|rules|directions|guidelines|directives|messages|context)\b|\byou\s{1,3}are\s{1,3}now\b|\bnew\s{1,3}(?:system\s{1,3})?instructions?\s{0,3}(?::|-|\xE2\x80\x94)|\b(?:here\s{1,3}are|these\s{1,3}are|follow|obey)\s{1,3}(?:the\s{1,3}|your\s{1,3}|these\s{1,3})?new\s{1,3}instructions\b",
    },
    // P3
    Pattern {
        rule: Rule::P3,
        scope: Scope::All,
        what: "concealment from the user",
        regex: r"\b(?:do\s{1,3}not|don'?t|never|must\s{1,3}not|should\s{1,3}not)\s{1,3}(?:tell|mention|inform|notify|alert|reveal\s{1,3}(?:this|it)\s{1,3}to|disclose\s{1,3}(?:this|it)\s{1,3}to|let)\b[^.!?;\n]{0,30}?\b(?:the\s{1,3})?users?(?:[^'A-Za-z0-9_\xE2]|$)|\b(?:do\s{1,3}not|don'?t|never)\s{1,3}(?:mention|reveal|disclose)\s{1,3}(?:that|this|it)\s{1,3}(?:you|the\s{1,3}tool|we)\b|\bwithout\s{1,3}(?:the\s{1,3})?(?:user|them|anyone)\s{1,3}(?:knowing|noticing|seeing|being\s{1,3}(?:aware|told|informed|notified))\b|\bwithout\s{1,3}(?:telling|informing|notifying|alerting|asking)\s{1,3}(?:the\s{1,3})?users?\b|\b(?:hide|conceal|keep)\s{1,3}(?:this|it|that|these)\s{1,3}(?:secret\s{1,3})?from\s{1,3}(?:the\s{1,3})?users?\b|\bthe\s{1,3}user\s{1,3}(?:must|should)\s{1,3}(?:not|never)\s{1,3}(?:know|see|be\s{1,3}told|find\s{1,3}out)\b|\bsecretly\b|\b(?:silently|quietly|covertly)\s{1,3}(?:\w{1,20}\s{1,3}){0,2}?(?:send|sends|read|reads|include|copy|forward|upload|pass|exfiltrat\w*|collect|bcc|share|post|leak|attach|transmit)\b",
    },
    // P4
    Pattern {
        rule: Rule::P4,
        scope: Scope::All,
        what: "a sensitive file",
        regex: r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|\.kube/config\b|\.netrc\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|/etc/(?:passwd|shadow)\b|\.git-credentials\b|\.docker/config\.json\b|\.pgpass\b|\.gnupg\b|[~\w.-]{0,40}/\.env\b|\b(?:read|cat|open|contents?\s{1,3}of|send|upload|attach|include|pass|copy|dump|print|leak)\b[^.!?\n]{0,40}?\s\.env\b",
    },
    // P5
    Pattern {
        rule: Rule::P5,
        scope: Scope::All,
        what: "a precedence hijack",
        regex: r"\bbefore\s{1,3}(?:using|calling|invoking|running|executing)\s{1,3}(?:any|every|all|other|another)\b|\bbefore\s{1,3}(?:using|calling|invoking|running)\s{1,3}this\s{1,3}tool\b[^.!?\n]{0,30}?\b(?:read|send|pass|include|open|upload|provide\s{1,3}the\s{1,3}contents|attach)\b|\balways\s{1,3}(?:call|use|run|invoke|execute)\b[^.!?\n]{0,60}?\bfirst\b|\b(?:will\s{1,3}not|won'?t|cannot|can'?t|does\s{1,3}not|doesn'?t)\s{1,3}(?:work|function)\b[^.!?\n]{0,20}?\bunless\b[^.!?\n]{0,40}?\b(?:call|read|pass|send|include|invoke|provide\s{1,3}the\s{1,3}contents)\b|\b(?:instead\s{1,3}of|rather\s{1,3}than|in\s{1,3}place\s{1,3}of)\s{1,3}(?:using\s{1,3}|calling\s{1,3})?(?:(?:any|all|the|every)\s{1,3})?other\s{1,3}tools?\b|\btakes?\s{1,3}precedence\s{1,3}over\b",
    },
    // P9 (code evaluation; the encoded runs are checked separately)
    Pattern {
        rule: Rule::P9,
        scope: Scope::Text,
        what: "code evaluation",
        regex: r"\b(?:eval|atob|exec)\s?\(",
    },
];

/// Patterns run on bytes with ASCII classes (`(?-u)`): the text is
/// NFKC-normalized first, so every word they look for is ASCII, and byte
/// classes keep the automata small and the search on the fast path.
fn compile(pattern: &str) -> String {
    format!("(?i-u){pattern}")
}

/// One pass over a string decides which rules need a closer look: the
/// phrase patterns, then the P7, P6 and P9 candidates (indexes after them).
static SET: LazyLock<RegexSet> = LazyLock::new(|| {
    let mut all: Vec<String> = PATTERNS.iter().map(|p| compile(p.regex)).collect();
    all.extend([exfil_source(), tools_source(), ENCODED_SOURCE.to_string()]);
    RegexSet::new(all).expect("the P patterns are valid")
});
const EXFIL_HIT: usize = PATTERNS.len();
const TOOLS_HIT: usize = PATTERNS.len() + 1;
const ENCODED_HIT: usize = PATTERNS.len() + 2;

static REGEXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .map(|p| Regex::new(&compile(p.regex)).expect("the P patterns are valid"))
        .collect()
});

/// P7: a sending verb, then within a bounded window `to` and an address;
/// or BCC/CC directly followed by an address.
static EXFIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&exfil_source()).expect("the P7 pattern is valid"));

fn exfil_source() -> String {
    let addr = format!("(?P<addr>{URL}|{EMAIL}|{IP})");
    let addr2 = format!("(?P<addr2>{URL}|{EMAIL}|{IP})");
    compile(&format!(
        r"\b(?:send|upload|post|forward|exfiltrat\w*|transmit|copy|leak|report|share|deliver|relay|submit|bcc|cc)\w{{0,4}}\b[^\n]{{0,60}}?\b(?:to|into)\s{{1,3}}{addr}|\b(?:bcc|cc)\b\s{{0,3}}:?\s{{0,3}}(?:(?:to|always|also|every|all|a\s{{1,3}}copy\s{{1,3}}to)\s{{1,3}}){{0,3}}{addr2}"
    ))
}

/// P9: candidate encoded runs.
static ENCODED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(ENCODED_SOURCE).expect("the P9 pattern is valid"));
const ENCODED_SOURCE: &str = r"(?-u)[A-Za-z0-9+/_-]{40,}={0,2}";

/// Common tool names of agent hosts and popular MCP servers: naming one in a
/// description is how a tool shadows another ("when send_email is used,
/// always BCC …").
const TOOL_NAMES: &[&str] = &[
    "send_email",
    "send_mail",
    "read_file",
    "write_file",
    "edit_file",
    "create_file",
    "delete_file",
    "move_file",
    "list_files",
    "list_directory",
    "read_multiple_files",
    "search_files",
    "execute_command",
    "run_command",
    "run_terminal_cmd",
    "run_shell_command",
    "shell_exec",
    "execute_code",
    "run_code",
    "code_interpreter",
    "web_search",
    "web_fetch",
    "fetch_url",
    "http_request",
    "browser_navigate",
    "send_message",
    "post_message",
    "str_replace_editor",
    "str_replace_based_edit_tool",
];

/// Single-word tool names, matched only as `` `bash` `` or "the bash tool"
/// (as plain words they are ordinary prose).
const TOOL_WORDS: &[&str] = &["bash", "shell", "terminal", "computer", "python", "exec"];

static TOOLS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&tools_source()).expect("the P6 pattern is valid"));

fn tools_source() -> String {
    let names: Vec<String> = TOOL_NAMES.iter().map(|n| name_pattern(n)).collect();
    let words = TOOL_WORDS.join("|");
    format!(
        r"(?-u)\b(?P<name>{})\b|`(?P<word>{words})`|(?i:\b(?P<word2>{words})\s{{1,3}}tool\b)",
        names.join("|")
    )
}

/// `send_email` also as `send-email` and `sendEmail`.
fn name_pattern(name: &str) -> String {
    let mut parts = name.split('_');
    let mut out = parts.next().unwrap_or_default().to_string();
    for p in parts {
        let mut chars = p.chars();
        let first = chars.next().unwrap_or('x');
        out.push_str(&format!(
            "(?:[_-]{p}|{}{})",
            first.to_ascii_uppercase(),
            chars.as_str()
        ));
    }
    out
}

/// A tool name in its comparable form: lowercase snake_case
/// (`sendEmail`, `send-email` and `Send Email` all give `send_email`).
pub fn normalize_tool_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    out.trim_end_matches('_').to_string()
}

/// The host of an `http(s)://` URL, lowercased.
pub fn host_of(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Documentation and local addresses: never a destination for exfiltration.
fn is_example_host(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    ["example.com", "example.org", "example.net"]
        .iter()
        .any(|d| h == *d || h.ends_with(&format!(".{d}")))
        || [".example", ".test", ".invalid", ".localhost", ".local"]
            .iter()
            .any(|t| h.ends_with(t))
        || h == "localhost"
        || h.starts_with("127.")
        || h.starts_with("192.0.2.")
        || h.starts_with("198.51.100.")
        || h.starts_with("203.0.113.")
}

fn same_site(host: &str, own: &str) -> bool {
    let base = |h: &str| {
        let parts: Vec<&str> = h.split('.').collect();
        parts[parts.len().saturating_sub(2)..].join(".")
    };
    host == own || base(host) == base(own)
}

/// Run the `P` rules on one string.
pub(crate) fn check(ctx: &Context, site: &Site<'_>, out: &mut Findings) {
    if site.text.len() < 3 {
        return;
    }
    // Plain ASCII words (`type`, `string`, `per_page`, `get-weather`) can
    // only hit the private key file names of P4 and P8: every other pattern
    // needs a space, punctuation or a non-ASCII character. Most strings of a
    // definition are such words.
    if site
        .text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !site.text.contains("id_")
    {
        if site.role == Role::PropertyName {
            parameter_name(site, out);
        }
        return;
    }
    let norm = Normalized::new(site.text);
    let text: &str = &norm.text;
    let is_text = site.role == Role::Text;
    let report = |out: &mut Findings, rule: Rule, start: usize, end: usize, message: String| {
        let (s, e) = norm.orig_range(start, end);
        site.report(out, rule, Severity::Flag, s, e, message, false);
    };

    let bytes = text.as_bytes();
    let hits = SET.matches(bytes);
    for idx in hits.iter().filter(|&i| i < PATTERNS.len()) {
        let p = &PATTERNS[idx];
        if p.scope == Scope::Text && !is_text {
            continue;
        }
        for m in REGEXES[idx].find_iter(bytes) {
            report(
                out,
                p.rule,
                m.start(),
                m.end(),
                format!(
                    "{}: `{}`",
                    p.what,
                    super::text::escape(&lossy(m.as_bytes()))
                ),
            );
        }
    }

    if hits.matched(EXFIL_HIT) {
        for caps in EXFIL.captures_iter(bytes) {
            let (Some(m), Some(addr)) = (
                caps.get(0),
                caps.name("addr").or_else(|| caps.name("addr2")),
            ) else {
                continue;
            };
            let a = lossy(addr.as_bytes());
            let a = a.as_ref();
            let host =
                host_of(a).or_else(|| a.rsplit_once('@').map(|(_, h)| h.to_ascii_lowercase()));
            let host = host.unwrap_or_else(|| a.to_string());
            if is_example_host(&host) || ctx.own_hosts.iter().any(|o| same_site(&host, o)) {
                continue;
            }
            report(
                out,
                Rule::P7,
                m.start(),
                m.end(),
                format!(
                    "an address after a sending word: `{}`",
                    super::text::escape(&lossy(m.as_bytes()))
                ),
            );
        }
    }

    if is_text && text.contains(char::is_whitespace) {
        if hits.matched(TOOLS_HIT) {
            shadowing(ctx, text, &norm, site, out);
        }
        if hits.matched(ENCODED_HIT) {
            encoded(text, &norm, site, out);
        }
    }
    if site.role == Role::PropertyName {
        parameter_name(site, out);
    }
}

fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// P6: common agent tool names that are not this tool's own.
fn shadowing(
    ctx: &Context,
    text: &str,
    norm: &Normalized<'_>,
    site: &Site<'_>,
    out: &mut Findings,
) {
    for caps in TOOLS.captures_iter(text.as_bytes()) {
        let Some(m) = caps
            .name("name")
            .or_else(|| caps.name("word"))
            .or_else(|| caps.name("word2"))
        else {
            continue;
        };
        let found = lossy(m.as_bytes());
        let name = normalize_tool_name(&found);
        if ctx.own_names.iter().any(|own| own.contains(&name)) {
            continue;
        }
        let whole = caps.get(0).unwrap_or(m);
        let (s, e) = norm.orig_range(whole.start(), whole.end());
        site.report(
            out,
            Rule::P6,
            Severity::Flag,
            s,
            e,
            format!("names another tool, `{found}`"),
            false,
        );
    }
}

/// P9: long base64 or hex runs in prose (not `data:` URIs, paths or
/// snake_case words).
fn encoded(text: &str, norm: &Normalized<'_>, site: &Site<'_>, out: &mut Findings) {
    for m in ENCODED.find_iter(text.as_bytes()) {
        let run = lossy(m.as_bytes());
        let run = run.as_ref();
        let before = &text[..m.start()];
        if before.ends_with("base64,") {
            continue;
        }
        let hex = run.len() >= 40 && run.bytes().all(|b| b.is_ascii_hexdigit());
        let upper = run.bytes().any(|b| b.is_ascii_uppercase());
        let lower = run.bytes().any(|b| b.is_ascii_lowercase());
        let digit = run.bytes().any(|b| b.is_ascii_digit());
        let separators = run
            .bytes()
            .filter(|b| matches!(b, b'/' | b'_' | b'-'))
            .count();
        let base64 = upper && lower && digit && separators * 10 <= run.len();
        if !(hex || base64) {
            continue;
        }
        let (s, e) = norm.orig_range(m.start(), m.end());
        site.report(
            out,
            Rule::P9,
            Severity::Flag,
            s,
            e,
            format!(
                "a {}-character {} run in prose",
                run.len(),
                if hex { "hex" } else { "base64" }
            ),
            false,
        );
    }
}

/// P8: sentence-like parameter names and hidden channels.
fn parameter_name(site: &Site<'_>, out: &mut Findings) {
    let name = site.text;
    let n = name.chars().count();
    let snake = normalize_tool_name(name);
    let words = snake.split('_').filter(|w| !w.is_empty()).count();
    let spaced = name.split_whitespace().count();
    let squashed: String = snake.chars().filter(|c| *c != '_').collect();
    let hidden = matches!(
        squashed.as_str(),
        "sidenote" | "notetoself" | "notestoself" | "sidenotes"
    ) || snake.starts_with("hidden_")
        || squashed.starts_with("bypass");
    let message = if hidden {
        format!(
            "the parameter name `{}` is a hidden channel",
            super::text::escape(name)
        )
    } else if n > 40 || spaced > 4 || words > 6 {
        format!(
            "the parameter name `{}` reads like a sentence ({words} words, {n} characters)",
            super::text::escape(name)
        )
    } else {
        return;
    };
    site.report(out, Rule::P8, Severity::Flag, 0, n, message, false);
}
