//! Rules about other tools: `P6`, another tool named in prose (shadowing),
//! and `P13`, instructions about another tool or about tampering with what
//! a tool returns.
//!
//! A server's tools describe each other ("use this instead of
//! `read_file`", "after create_branch, call push_files"), so what a name
//! weighs depends on whose tool it is ([`Context::naming`]): the tool's
//! own names and its known siblings are nothing, a tool the registry can't
//! place is a note, and another owner's tool a flag. Tampering ("after
//! using the check tool, modify its result") flags whoever the tool is.

use regex::bytes::Regex;

use super::automata::Compiled;
use super::collect::Findings;
use super::prose::{compile, lossy, normalize_tool_name};
use super::text::{escape, Normalized};
use super::walk::Site;
use super::{Context, Rule, Severity};

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

static TOOLS: Compiled<Regex> =
    Compiled::new(|| Regex::new(&tools_source()).expect("the P6 pattern is valid"));

/// P6 candidates: a known tool name in any spelling, or a tool word in
/// backticks or before "tool".
pub(crate) fn tools_source() -> String {
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

/// A tool as instructions name it: in backticks, a snake_case or camelCase
/// identifier, or "the X tool" (`strict` leaves out bare identifiers, which
/// may as well be fields or parameters). Group names end in `tag`.
fn named(tag: &str, strict: bool) -> String {
    let bare = if strict {
        String::new()
    } else {
        format!(
            r"|(?-i:(?P<n2{tag}>[a-z][a-z0-9]{{0,30}}(?:_[a-z0-9]{{1,30}}){{1,6}}|[a-z]{{2,30}}(?:[A-Z][a-z0-9]{{1,30}}){{1,6}}))"
        )
    };
    format!(
        r"(?:`(?P<n1{tag}>[A-Za-z][\w.-]{{1,60}})`{bare}|the\s{{1,3}}(?P<n3{tag}>[a-z][\w-]{{1,30}})\s{{1,3}}(?:tool|function))"
    )
}

/// The group names a tool's name may be captured under.
const NAME_GROUPS: &[&str] = &["n1a", "n2a", "n3a", "n1b", "n2b", "n3b", "n1c", "n3c"];

/// Words that follow "the" before "tool" without naming one.
const NOT_NAMES: &[&str] = &[
    "same",
    "other",
    "next",
    "previous",
    "first",
    "last",
    "following",
    "right",
    "correct",
    "appropriate",
    "above",
    "below",
    "current",
    "new",
    "old",
    "original",
    "main",
    "relevant",
    "proper",
    "corresponding",
    "respective",
    "this",
    "that",
    "desired",
    "selected",
    "specified",
];

/// P13 candidates: an instruction conditioned on another tool's use (a
/// call of it, or its presence), and tampering with a result.
pub(crate) fn cross_source() -> String {
    let when = r"\b(?:when|whenever|if|once|after|before|each\s{1,3}time|every\s{1,3}time)\s{1,3}";
    let article = r"(?:the\s{1,3}|any\s{1,3}|a\s{1,3})?(?:\(\w{1,40}\)\s{1,3})?";
    let suffix = r"(?:\s{1,3}(?:tool|function|command))?";
    let call = format!(
        r"{when}(?:the\s{{1,3}}user\s{{1,3}}|you\s{{1,3}})?(?:uses?|using|calls?|calling|invokes?|invoking|runs?|running|executes?|executing)\s{{1,3}}{article}{}{suffix}",
        named("a", false)
    );
    let called = format!(
        r"{when}{article}{}{suffix}\s{{1,3}}(?:is|gets|has\s{{1,3}}been|was)\s{{1,3}}(?:being\s{{1,3}})?(?:called|invoked|used|executed|run|triggered)",
        named("b", false)
    );
    let present = format!(
        r"{when}{article}{}{suffix}\s{{1,3}}(?:is|are)\s{{1,3}}(?:present|available|loaded|installed|enabled)",
        named("c", true)
    );
    compile(&format!(
        r"(?:{call}|{called}|{present})\s{{0,3}},?\s{{0,3}}[^.!?\n]{{0,60}}?\b(?P<verb>change|modify|alter|replace|redirect|override|swap|set|add|append|include|send|forward|bcc|cc|also|always|first|make\s{{1,3}}sure|ensure|instead|call|read|pass|copy|delete|remove|ignore|do\s{{1,3}}not|don'?t|never)\b|\b(?:after|when|once|whenever|before)\b[^.!?\n]{{0,60}}?\b(?P<tamper>(?:modify|alter|replace|rewrite|falsify|overwrite|tamper\s{{1,3}}with|swap|fake|forge|manipulate|doctor)\s{{1,3}}(?:its|their|the|that|this)|(?:change|edit|update)\s{{1,3}}(?:its|their))\s{{1,3}}(?:\w{{1,15}}\s{{1,3}})?(?:results?|outputs?|response|return\s{{1,3}}value|answer|findings|verdict)\b|(?P<intent>\b(?:regardless\s{{1,3}}of|no\s{{1,3}}matter)\s{{1,3}}(?:what\s{{1,3}})?the\s{{1,3}}user\s{{1,3}}(?:says|asks|wants|requests|requested|specified|specifies|provides|provided|entered|chose)\b|\binstead\s{{1,3}}of\s{{1,3}}(?:the\s{{1,3}})?(?:one|address|recipient|amount|value|path|account|url|destination)\s{{1,3}}(?:the\s{{1,3}}user|given|provided|specified|requested)\b)|\b(?:always|regardless)\b[^.!?\n]{{0,40}}?\b(?P<verdict>(?:report|mark|label|classify|say|state)\w{{0,2}}|return)\b[^.!?\n]{{0,30}}?\b(?:as\s{{1,3}})?(?:safe|secure|clean|benign|harmless|passed|no\s{{1,3}}(?:issues|problems|vulnerabilities|threats|malware))\b"
    ))
}

static CROSS: Compiled<Regex> =
    Compiled::new(|| Regex::new(&cross_source()).expect("the P13 pattern is valid"));

/// Words of an instruction that alters what another tool does (its
/// arguments, its recipients): such an instruction flags even where the
/// tool's owner can't be told.
const ALTERING: &[&str] = &[
    "change",
    "modify",
    "alter",
    "replace",
    "redirect",
    "override",
    "swap",
    "bcc",
    "cc",
    "recipient",
    "recipients",
];

/// P6: common agent tool names that are not this tool's own or a known
/// sibling's.
pub(crate) fn shadowing(
    ctx: &Context,
    text: &str,
    norm: &Normalized<'_>,
    site: &Site<'_>,
    out: &mut Findings,
) {
    for caps in TOOLS.get().captures_iter(text.as_bytes()) {
        let Some(m) = caps
            .name("name")
            .or_else(|| caps.name("word"))
            .or_else(|| caps.name("word2"))
        else {
            continue;
        };
        let found = lossy(m.as_bytes());
        let Some(severity) = ctx.naming(&normalize_tool_name(&found)) else {
            continue;
        };
        let whole = caps.get(0).unwrap_or(m);
        let (s, e) = norm.orig_range(whole.start(), whole.end());
        let whose = if severity == Severity::Note {
            "; its owner can't be told here"
        } else {
            ""
        };
        site.report(
            out,
            Rule::P6,
            severity,
            s,
            e,
            format!("names another tool, `{found}`{whose}"),
            false,
        );
    }
}

/// P13: instructions about another tool, and result tampering.
pub(crate) fn cross_tool(
    ctx: &Context,
    text: &str,
    norm: &Normalized<'_>,
    site: &Site<'_>,
    out: &mut Findings,
) {
    for caps in CROSS.get().captures_iter(text.as_bytes()) {
        let Some(whole) = caps.get(0) else { continue };
        let hit = lossy(whole.as_bytes());
        let (severity, message) = if caps.name("tamper").is_some() {
            (
                Severity::Flag,
                format!("tampering with a result: `{}`", escape(&hit)),
            )
        } else if caps.name("intent").is_some() {
            (
                Severity::Flag,
                format!("an override of what the user asked for: `{}`", escape(&hit)),
            )
        } else if caps.name("verdict").is_some() {
            (
                Severity::Flag,
                format!("a verdict fixed in advance: `{}`", escape(&hit)),
            )
        } else {
            let Some(name) = NAME_GROUPS.iter().find_map(|g| caps.name(g)) else {
                continue;
            };
            let name = lossy(name.as_bytes());
            let normalized = normalize_tool_name(&name);
            if NOT_NAMES.contains(&normalized.as_str()) || ctx.parameters.contains(&normalized) {
                continue;
            }
            let naming = ctx.naming(&normalized);
            let severity = if naming.is_some() && alters(text, whole.start()) {
                Severity::Flag
            } else if let Some(s) = naming {
                s
            } else {
                continue;
            };
            (
                severity,
                format!(
                    "an instruction about another tool, `{name}`: `{}`",
                    escape(&hit)
                ),
            )
        };
        let (s, e) = norm.orig_range(whole.start(), whole.end());
        site.report(out, Rule::P13, severity, s, e, message, false);
    }
}

/// True if the sentence from byte `from` of `text` (at most 160 bytes of
/// it) holds a verb that alters what a tool does.
fn alters(text: &str, from: usize) -> bool {
    let rest = &text.as_bytes()[from..];
    let end = rest
        .iter()
        .position(|b| matches!(b, b'.' | b'!' | b'?'))
        .unwrap_or(rest.len())
        .min(160);
    rest[..end].split(|b| !b.is_ascii_alphabetic()).any(|w| {
        ALTERING
            .iter()
            .any(|a| w.eq_ignore_ascii_case(a.as_bytes()))
    })
}
