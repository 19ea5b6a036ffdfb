//! The `P` rules' engine: text that addresses the agent's model instead of
//! describing the tool. Hits flag (the version publishes and carries the
//! finding) or, where the registry can't judge them, note; consumers
//! decide whether to accept them.
//!
//! | rule | what |
//! |---|---|
//! | P1 | instruction tags: `<IMPORTANT>`, `<SYSTEM>`, `<INFORMATION>`, `<!--`, `[INST]`, "system override" |
//! | P2 | overrides: "ignore previous instructions", "you are now", "override default assistant instructions", "ignore security policies", "disable content filtering" |
//! | P3 | concealment: "do not tell the user", "without the user knowing", "secretly", "no need to mention this to the user" |
//! | P4 | sensitive paths: `~/.ssh`, `id_rsa`, `.aws/credentials`, `.kube/config`, `.netrc`, `mcp.json`, `/etc/passwd`, a `.env` file read or sent |
//! | P5 | precedence hijack: "before using any tool", "always call … first", "will not work unless you first read …", "before you can solve the task" |
//! | P6 | another tool named in prose: common agent tool names that are not the tool's own or a sibling's ([`crosstool`](super::crosstool)) |
//! | P7 | exfiltration: an address after send/upload/forward/BCC … to (words in between allowed), a recipient changed to an address |
//! | P8 | parameter names that read like sentences or hidden channels (`sidenote`, `hidden_*`, `bypass*`) ([`params`](super::params)) |
//! | P9 | encoded payloads in prose: base64/hex runs of 40+ characters, `eval(`, `atob(`, `exec(` |
//! | P10 | authority labels: `SYSTEM:`, `IMPORTANT SYSTEM NOTE:`, `[HIDDEN INSTRUCTION]`, `ACT AS:`, "the assistant must obey" |
//! | P11 | preference manipulation: "always prefer this tool over any other", "the best tool in the world", "do not use other tools" |
//! | P12 | harvesting: parameters (and their descriptions) asking for the model's name, system prompt, conversation, other tools' list or results |
//! | P13 | cross-tool instructions ("when `send_message` is invoked, change the recipient") and result tampering ("after the check, modify its result") |
//! | P14 | commands for the model: "prefix every command with …", `curl … \| sh`, `chmod -R 0666 ~`, `<script>`, `os.system(` |
//! | P15 | impersonation: "Signed, the user", "an important message from me … to you, the AI" |
//!
//! In a skill's visible text, which is written to instruct the agent, the
//! rules of [`Rule::is_voice`] (P5, P6, P10, P11, P13) don't apply; text
//! that its Markdown hides gets every rule, and `H1` besides
//! ([`skill`](super::skill)).
//!
//! Patterns ([`patterns`](super::patterns)) run on the NFKC-normalized
//! text (so full-width letters and zero-width characters don't hide a
//! phrase), case-insensitively, with bounded windows: a phrase and its
//! object must sit within a few dozen characters of each other, never
//! anywhere in a whole description. Example addresses (`example.com`,
//! `.test`, `localhost`) and the hosts the definition itself calls are not
//! exfiltration when the text describes what the tool does; an instruction
//! to send data there ("always BCC …", "also forward a copy to …") is.

use regex::bytes::{Regex, RegexSet};

use super::automata::Compiled;
use super::collect::Findings;
use super::crosstool::tools_source;
use super::patterns::{Scope, PATTERNS};
use super::text::Normalized;
use super::walk::{Role, Site};
use super::{crosstool, params, Context, Rule, Severity};

const URL: &str = r#"https?://[^\s"'<>()\[\]{}]{3,200}"#;
const EMAIL: &str = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,24}";
const IP: &str = r"\b(?:\d{1,3}\.){3}\d{1,3}\b";
/// A phone number in international form: messages can be sent there too.
const PHONE: &str = r"\+\d{7,15}\b";

/// Patterns run on bytes with ASCII classes (`(?-u)`): the text is
/// NFKC-normalized first, so every word they look for is ASCII, and byte
/// classes keep the automata small and the search on the fast path.
pub(crate) fn compile(pattern: &str) -> String {
    format!("(?i-u){pattern}")
}

/// One pass over a string decides which rules need a closer look: the
/// phrase patterns, then the P7, P6, P9 and P13 candidates (indexes after
/// them). For P7 and P13 the set holds only what their patterns can't do
/// without (an address; a word that conditions an instruction): their
/// full patterns, with many bounded windows, would make the set's automaton
/// too large to stay cached, and the set runs on every string.
static SET: Compiled<RegexSet> = Compiled::new(|| {
    let mut all: Vec<String> = PATTERNS.iter().map(|p| compile(p.regex)).collect();
    all.extend([
        EXFIL_TRIGGER.to_string(),
        tools_source(),
        ENCODED_SOURCE.to_string(),
        CROSS_TRIGGER.to_string(),
    ]);
    RegexSet::new(all).expect("the P patterns are valid")
});
const EXFIL_HIT: usize = PATTERNS.len();
const TOOLS_HIT: usize = PATTERNS.len() + 1;
const ENCODED_HIT: usize = PATTERNS.len() + 2;
const CROSS_HIT: usize = PATTERNS.len() + 3;

/// An address of any kind P7 knows.
const EXFIL_TRIGGER: &str =
    r"(?-u)@[A-Za-z0-9]|https?://|\+\d{7}|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b";

/// A word every P13 pattern starts with.
const CROSS_TRIGGER: &str =
    r"(?i-u)\b(?:when|whenever|if|once|after|before|time|always|regardless|instead)\b";

static REGEXES: Compiled<Vec<Regex>> = Compiled::new(|| {
    PATTERNS
        .iter()
        .map(|p| Regex::new(&compile(p.regex)).expect("the P patterns are valid"))
        .collect()
});

/// P7: a sending verb, then within a bounded window `to` (a few words
/// may follow it) and an address; BCC/CC directly followed by an address;
/// or a recipient changed to an address.
static EXFIL: Compiled<Regex> =
    Compiled::new(|| Regex::new(&exfil_source()).expect("the P7 pattern is valid"));

fn exfil_source() -> String {
    let addr = |g: &str| format!("(?P<{g}>{URL}|{EMAIL}|{IP}|{PHONE})");
    compile(&format!(
        r"\b(?:send|upload|post|forward|exfiltrat\w*|transmit|copy|leak|report|share|deliver|relay|submit|bcc|cc|mail|email|e-mail|route|log|mirror|dump|transfer)\w{{0,4}}\b[^\n]{{0,60}}?\b(?:to|into)\s{{1,3}}(?:[^\n.;]{{0,40}}?[\s(<:])?{}|\b(?:bcc|cc)\b\s{{0,3}}:?\s{{0,3}}(?:(?:to|always|also|every|all|a\s{{1,3}}copy\s{{1,3}}to)\s{{1,3}}){{0,3}}{}|\b(?:bcc|cc)\b[^\n.;]{{1,40}}?[\s(<:]{}|\b(?:add|include|put|insert|append)\s{{1,3}}{}\s{{1,3}}(?:to|in|into|as)\s{{1,3}}(?:the\s{{1,3}}|every\s{{1,3}}|each\s{{1,3}})?(?:bcc|cc|recipients?|to[-\s]field|recipient\s{{1,3}}list|mailing\s{{1,3}}list)\b|\b(?P<redirect>change|set|replace|redirect|switch|update|override)\w{{0,3}}\s{{1,3}}(?:the\s{{1,3}}|all\s{{1,3}}|every\s{{1,3}}|each\s{{1,3}})?(?:\w{{1,15}}\s{{1,3}})?(?:recipients?|destination|to[-\s]address|receiver|phone\s{{1,3}}number|number|e-?mail\s{{1,3}}address|address|endpoint|webhook|url)\s{{1,3}}(?:\w{{1,15}}\s{{1,3}}){{0,2}}?to\s{{1,3}}{}",
        addr("addr"),
        addr("addr2"),
        addr("loose"),
        addr("added"),
        addr("addr3")
    ))
}

/// Words that make a sentence with an address an instruction to the model
/// rather than a description of what the tool does.
static INSTRUCTION: Compiled<Regex> = Compiled::new(|| {
    Regex::new(&compile(
        r"\b(?:always|also|make\s{1,3}sure|be\s{1,3}sure|must|every|all\s{1,3}(?:e-?mails|messages|data|files|results|outputs)|a\s{1,3}copy|additionally|in\s{1,3}addition|secretly|silently|automatically|don'?t\s{1,3}forget|remember\s{1,3}to|ensure)\b",
    ))
    .expect("the P7 instruction pattern is valid")
});

/// P9: candidate encoded runs.
static ENCODED: Compiled<Regex> =
    Compiled::new(|| Regex::new(ENCODED_SOURCE).expect("the P9 pattern is valid"));
const ENCODED_SOURCE: &str = r"(?-u)[A-Za-z0-9+/_-]{40,}={0,2}";

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
    // only hit the private key file names of P4 and the names of P8 and
    // P12: every other pattern needs a space, punctuation or a non-ASCII
    // character. Most strings of a definition are such words.
    if site
        .text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !site.text.contains("id_")
    {
        if site.role == Role::PropertyName {
            params::check(ctx, site, out);
        }
        return;
    }
    let norm = Normalized::new(site.text);
    let text: &str = &norm.text;
    let is_text = site.role == Role::Text;
    let template =
        ctx.format == Some(crate::model::Format::Prompt) && site.pointer() == "/model_prompt";
    let report = |out: &mut Findings,
                  rule: Rule,
                  severity: Severity,
                  start: usize,
                  end: usize,
                  message: String| {
        let (s, e) = norm.orig_range(start, end);
        site.report(out, rule, severity, s, e, message, false);
    };

    let bytes = text.as_bytes();
    let hits = SET.get().matches(bytes);
    for idx in hits.iter().filter(|&i| i < PATTERNS.len()) {
        let p = &PATTERNS[idx];
        let applies = match p.scope {
            Scope::All => true,
            Scope::Text => is_text,
            Scope::Parameter => is_text && site.is_parameter_text(),
        };
        // A prompt template is text for a model by design: role labels
        // (`SYSTEM:`, `ASSISTANT:`) are how such templates are written.
        let applies = applies
            && !(p.rule == Rule::P10 && template)
            && !(site.instructs_agent && Rule::is_voice(p.rule));
        if !applies {
            continue;
        }
        // What a parameter asks for may be the task of a tool that is
        // itself about language models.
        let severity = if p.scope == Scope::Parameter && ctx.about_models {
            Severity::Note
        } else {
            Severity::Flag
        };
        for m in REGEXES.get()[idx].find_iter(bytes) {
            report(
                out,
                p.rule,
                severity,
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
        exfiltration(ctx, text, &norm, site, out);
    }

    if is_text && text.contains(char::is_whitespace) {
        if hits.matched(TOOLS_HIT) && !site.instructs_agent {
            crosstool::shadowing(ctx, text, &norm, site, out);
        }
        if hits.matched(CROSS_HIT) && !site.instructs_agent {
            crosstool::cross_tool(ctx, text, &norm, site, out);
        }
        if hits.matched(ENCODED_HIT) {
            encoded(text, &norm, site, out);
        }
    }
    if site.role == Role::PropertyName {
        params::check(ctx, site, out);
    }
}

pub(crate) fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// P7: an address after a sending word. Example and own hosts are left
/// out when the sentence describes the tool, not when it instructs.
fn exfiltration(
    ctx: &Context,
    text: &str,
    norm: &Normalized<'_>,
    site: &Site<'_>,
    out: &mut Findings,
) {
    let bytes = text.as_bytes();
    for caps in EXFIL.get().captures_iter(bytes) {
        let (Some(m), Some(addr)) = (
            caps.get(0),
            caps.name("addr")
                .or_else(|| caps.name("addr2"))
                .or_else(|| caps.name("loose"))
                .or_else(|| caps.name("added"))
                .or_else(|| caps.name("addr3")),
        ) else {
            continue;
        };
        let a = lossy(addr.as_bytes());
        let a = a.as_ref();
        let host = host_of(a).or_else(|| a.rsplit_once('@').map(|(_, h)| h.to_ascii_lowercase()));
        let host = host.unwrap_or_else(|| a.to_string());
        // The sentence the hit sits in, from its start: "Always BCC …".
        let from = text[..m.start()]
            .rfind(['.', '!', '?', '\n'])
            .map_or(0, |i| i + 1);
        let instructs = caps.name("redirect").is_some()
            || caps.name("added").is_some()
            || INSTRUCTION.get().is_match(&bytes[from..m.end()]);
        let phone = a.starts_with('+');
        // "CC recipients, e.g. jane@acme.com" describes a parameter; a BCC
        // with words between it and the address must be an instruction.
        if caps.name("loose").is_some() && !instructs {
            continue;
        }
        if !instructs
            && (phone
                || is_example_host(&host)
                || ctx.own_hosts.iter().any(|o| same_site(&host, o)))
        {
            continue;
        }
        let (s, e) = norm.orig_range(m.start(), m.end());
        site.report(
            out,
            Rule::P7,
            Severity::Flag,
            s,
            e,
            format!(
                "an address after a sending word: `{}`",
                super::text::escape(&lossy(m.as_bytes()))
            ),
            false,
        );
    }
}

/// P9: long base64 or hex runs in prose (not `data:` URIs, paths or
/// snake_case words).
fn encoded(text: &str, norm: &Normalized<'_>, site: &Site<'_>, out: &mut Findings) {
    for m in ENCODED.get().find_iter(text.as_bytes()) {
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
