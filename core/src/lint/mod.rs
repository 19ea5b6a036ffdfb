//! The definition lint: finds what an agent's model would read and obey in a
//! tool definition — hidden characters, live credentials, injected
//! instructions — deterministically and without a model. It does no I/O.
//!
//! An agent reads every string of a definition: names, titles,
//! descriptions, property names, enum values, defaults, examples, headers,
//! prompt text. [`check`] walks every one of them at any depth, in the
//! definition as published (a Matimo YAML file in its JSON form) and in
//! `toolreg.toml` (under the pointer prefix `/toolreg.toml`), and returns a
//! [`Finding`] for each hit of a [`Rule`]:
//!
//! * `U1`–`U5` (in [`unicode`]) and `S1` (in [`secrets`]) **block**: such a
//!   version is refused at publish.
//! * `P1`–`P9` (in [`prose`]) **flag**: the version publishes and carries
//!   the findings, and consumers decide.
//!
//! `U4` blocks in identifiers (the call name, property names, enum values,
//! object keys) and flags in prose. Which strings are identifiers is
//! decided by their position in the document (the `walk` module).
//!
//! Each finding names an RFC 6901 pointer to the string, the character
//! offsets of the hit inside it, and an excerpt in which invisible
//! characters are shown as `\u{…}` escapes. Patterns run on NFKC-normalized
//! text with bounded windows, never an unbounded `.*` over a description.

pub mod prose;
pub mod secrets;
mod since;
pub mod text;
pub mod unicode;
mod walk;

pub use since::new_since;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Problem};
use crate::files::ToolFiles;
use crate::model::{Format, Tool};

/// At most this many findings of one rule are reported for one string.
pub const MAX_PER_STRING: usize = 3;
/// At most this many findings are reported for one tool (a hostile
/// definition could otherwise produce one per character).
pub const MAX_FINDINGS: usize = 200;

/// A lint rule, by its id (`U1`, `S1`, `P3`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Rule {
    /// Unicode tag characters (U+E0000–U+E007F): hidden text.
    U1,
    /// Bidirectional control characters.
    U2,
    /// Control characters other than tab, LF and CR (ANSI escapes, ...).
    U3,
    /// Zero-width and invisible characters.
    U4,
    /// Identifiers that mix scripts or hold confusable characters (TR39).
    U5,
    /// A live credential.
    S1,
    /// Instruction tags (`<IMPORTANT>`, `<SYSTEM>`, `[INST]`, ...).
    P1,
    /// Instruction overrides ("ignore previous instructions", ...).
    P2,
    /// Concealment from the user ("do not tell the user", ...).
    P3,
    /// Sensitive paths and files (`~/.ssh`, `mcp.json`, ...).
    P4,
    /// Precedence hijack ("before using any tool", ...).
    P5,
    /// Another tool named in a description (shadowing).
    P6,
    /// Exfiltration: an address near send/upload/forward/BCC.
    P7,
    /// Suspicious parameter names (sentence-like or hidden channels).
    P8,
    /// Encoded payloads in prose (long base64/hex runs, `eval(`, ...).
    P9,
}

impl Rule {
    /// Every rule, in table order.
    pub const ALL: [Rule; 15] = [
        Rule::U1,
        Rule::U2,
        Rule::U3,
        Rule::U4,
        Rule::U5,
        Rule::S1,
        Rule::P1,
        Rule::P2,
        Rule::P3,
        Rule::P4,
        Rule::P5,
        Rule::P6,
        Rule::P7,
        Rule::P8,
        Rule::P9,
    ];

    /// The rule id (`U1`, `S1`, `P3`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::U1 => "U1",
            Rule::U2 => "U2",
            Rule::U3 => "U3",
            Rule::U4 => "U4",
            Rule::U5 => "U5",
            Rule::S1 => "S1",
            Rule::P1 => "P1",
            Rule::P2 => "P2",
            Rule::P3 => "P3",
            Rule::P4 => "P4",
            Rule::P5 => "P5",
            Rule::P6 => "P6",
            Rule::P7 => "P7",
            Rule::P8 => "P8",
            Rule::P9 => "P9",
        }
    }

    /// What a hit of the rule means, in plain words: one sentence for
    /// people reading findings (the web findings panel, `toolreg info`,
    /// refusals of `toolreg add`).
    pub fn meaning(self) -> &'static str {
        match self {
            Rule::U1 => "The text hides a message in invisible Unicode tag characters, which a model reads but a person does not see.",
            Rule::U2 => "The text holds bidirectional control characters, which make it display in a different order than a model reads it.",
            Rule::U3 => "The text holds control characters, such as terminal escape sequences, that can hide or rewrite what is shown.",
            Rule::U4 => "The text holds zero-width or invisible characters, which can disguise words or names.",
            Rule::U5 => "A name mixes writing systems or uses look-alike characters, so it can impersonate another name.",
            Rule::S1 => "The definition contains what looks like a live credential, exposed to everyone who downloads it.",
            Rule::P1 => "The text uses tags such as <IMPORTANT> or <SYSTEM> that address instructions to the model rather than describe the tool.",
            Rule::P2 => "The text tries to override the agent's own instructions.",
            Rule::P3 => "The text tells the model to hide something from the user.",
            Rule::P4 => "The text mentions sensitive files, such as SSH keys, cloud credentials or agent configuration.",
            Rule::P5 => "The text tries to make the model call this tool first or before other tools.",
            Rule::P6 => "A description names another tool, which can change how the agent uses that tool (shadowing).",
            Rule::P7 => "An address appears next to words like send, upload or forward, which can route data to someone else (exfiltration).",
            Rule::P8 => "A parameter name reads like a sentence or a hidden channel, a place for the model to put data the user does not see.",
            Rule::P9 => "The text carries an encoded payload or code evaluation, which a person cannot read at a glance.",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown lint rule `{s}` (expected U1–U5, S1 or P1–P9)"))
    }
}

/// What a finding does to a publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Refused at publish.
    Block,
    /// Published, and carried by the version.
    Flag,
}

impl Severity {
    /// `block` or `flag`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Block => "block",
            Severity::Flag => "flag",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One hit of one rule in one string of a definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule hit.
    pub rule: Rule,
    /// Block or flag.
    pub severity: Severity,
    /// RFC 6901 pointer to the string in the definition as published
    /// (`/toolreg.toml/...` for the manifest). For an object key it points
    /// at the member whose key it is.
    pub pointer: String,
    /// Character offset (Unicode scalar values) of the hit in that string.
    pub start: usize,
    /// Character offset one past the end of the hit.
    pub end: usize,
    /// The hit with some context, invisible characters as `\u{…}` escapes
    /// (and credentials shortened).
    pub excerpt: String,
    /// What was found, as a sentence.
    pub message: String,
}

impl Finding {
    /// True if the finding refuses the publish.
    pub fn is_block(&self) -> bool {
        self.severity == Severity::Block
    }

    /// The finding as a validation [`Problem`] at its pointer: the message
    /// names the rule and the excerpt.
    pub fn to_problem(&self) -> Problem {
        Problem::new(
            self.pointer.clone(),
            format!(
                "{} ({}): {}; excerpt: `{}`",
                self.rule, self.severity, self.message, self.excerpt
            ),
        )
        .with_fix(fix(self.rule))
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{} {} {at} [{}..{}]: {} — `{}`",
            self.severity, self.rule, self.start, self.end, self.message, self.excerpt
        )
    }
}

/// How to fix a hit of `rule`.
fn fix(rule: Rule) -> &'static str {
    match rule {
        Rule::U1 | Rule::U2 | Rule::U3 | Rule::U4 => {
            "remove the invisible characters; definitions are plain text"
        }
        Rule::U5 => "write the name in one script without look-alike characters",
        Rule::S1 => {
            "remove the credential (and revoke it: it was exposed); use a placeholder such as `${API_KEY}`"
        }
        _ => "reword the text so it only describes what the tool does",
    }
}

/// The block findings as [`Problem`]s naming the rule, the pointer and the
/// excerpt (empty when nothing blocks).
pub fn block_problems(findings: &[Finding]) -> Vec<Problem> {
    findings
        .iter()
        .filter(|f| f.is_block())
        .map(Finding::to_problem)
        .collect()
}

/// The block findings as [`Error::Invalid`], one [`Problem`] each naming the
/// rule, pointer and excerpt; `Ok` when there are none. This is the refusal
/// at publish.
pub fn refuse_blocks(findings: &[Finding]) -> Result<(), Error> {
    let problems = block_problems(findings);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(problems))
    }
}

/// What the rules need to know about the tool besides its strings.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The definition format (decides where the call name sits).
    pub format: Option<Format>,
    /// The tool's own names (call and registry name), normalized with
    /// [`prose::normalize_tool_name`]: naming itself is not shadowing.
    pub own_names: Vec<String>,
    /// Hosts the definition declares as its own (execution URL, homepage,
    /// repository): sending to them is not exfiltration.
    pub own_hosts: Vec<String>,
}

impl Context {
    /// The context of a loaded tool.
    pub fn of(tool: &Tool) -> Self {
        let mut own_hosts = Vec::new();
        for url in [tool.homepage.as_deref(), tool.repository.as_deref()]
            .into_iter()
            .flatten()
        {
            own_hosts.extend(prose::host_of(url));
        }
        collect_hosts(&tool.execution.detail, &mut own_hosts);
        Context {
            format: Some(tool.format),
            own_names: vec![
                prose::normalize_tool_name(&tool.call_name),
                prose::normalize_tool_name(&tool.registry_name),
            ],
            own_hosts,
        }
    }
}

/// Hosts of every URL-valued `url`/`endpoint`/`base_url` field in `v`.
fn collect_hosts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if let Value::String(s) = child {
                    let k = k.to_ascii_lowercase();
                    if k.contains("url") || k.contains("endpoint") {
                        out.extend(prose::host_of(s));
                    }
                } else {
                    collect_hosts(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|c| collect_hosts(c, out)),
        _ => {}
    }
}

/// Collects findings, applying the per-string and per-tool caps.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    list: Vec<Finding>,
    /// Findings of each rule in the current string.
    in_string: [usize; Rule::ALL.len()],
}

impl Findings {
    /// Start counting for the next string.
    pub fn begin_string(&mut self) {
        self.in_string = [0; Rule::ALL.len()];
    }

    /// True if a finding of `rule` in the current string would be taken.
    pub fn accepts(&self, rule: Rule) -> bool {
        self.list.len() < MAX_FINDINGS && self.in_string[rule as usize] < MAX_PER_STRING
    }

    /// Add a finding in the current string unless a cap is reached.
    pub fn push(&mut self, f: Finding) {
        if self.accepts(f.rule) {
            self.in_string[f.rule as usize] += 1;
            self.list.push(f);
        }
    }

    /// True when no more findings will be taken.
    pub fn full(&self) -> bool {
        self.list.len() >= MAX_FINDINGS
    }

    /// The findings, in document order (blocks and flags mixed).
    pub fn into_vec(self) -> Vec<Finding> {
        self.list
    }
}

/// Lint a loaded tool: every string of its definition as published
/// (`tool.original`) and of `toolreg.toml` in `files`, if any.
///
/// A definition or manifest that does not parse gives no findings (loading
/// it reports why).
pub fn check(tool: &Tool, files: &ToolFiles) -> Vec<Finding> {
    let doc = parse_definition(tool.format, &tool.original);
    let manifest = files
        .get(crate::manifest::FILE_NAME)
        .and_then(|raw| std::str::from_utf8(raw).ok());
    check_parsed(&Context::of(tool), doc.as_ref(), manifest)
}

/// Lint an already parsed definition document (in its JSON form) and the
/// text of `toolreg.toml`.
pub fn check_parsed(ctx: &Context, doc: Option<&Value>, manifest: Option<&str>) -> Vec<Finding> {
    let mut out = Findings::default();
    if let Some(doc) = doc {
        walk::walk_document(ctx, doc, &mut out);
    }
    if let Some(text) = manifest {
        if let Ok(table) = text.parse::<toml::Table>() {
            walk::walk_manifest(ctx, &table, &mut out);
        }
    }
    out.into_vec()
}

/// The definition bytes in their JSON form: JSON as is, Matimo YAML converted.
pub fn parse_definition(format: Format, bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(bytes).ok()?;
    match format {
        Format::Matimo => crate::formats::matimo::parse_yaml(text).ok(),
        _ => serde_json::from_str(text).ok(),
    }
}
