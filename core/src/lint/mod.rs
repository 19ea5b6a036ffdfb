//! The definition lint: finds what an agent's model would read and obey in a
//! tool definition — hidden characters, live credentials, injected
//! instructions — deterministically and without a model. It does no I/O.
//!
//! An agent reads every string of a definition: names, titles,
//! descriptions, property names, enum values, defaults, examples, headers,
//! prompt text. [`check`] walks every one of them at any depth, in the
//! definition as published (a Matimo YAML file in its JSON form) and in
//! `toolreg.toml` (under the pointer prefix `/toolreg.toml`), reads every
//! other text file of the tool directory for live credentials ([`files`]),
//! and returns a [`Finding`] for each hit of a [`Rule`]. A finding has one
//! of three severities:
//!
//! * **block**: `U1`–`U5` (in [`unicode`]), `S1` (in [`secrets`]), a strong
//!   combination (`C1`) and too many findings (`X1`). Such a version is
//!   refused at publish, and quarantined by a rescan.
//! * **flag**: `P1`–`P15` (in [`prose`]), and `H1` for an Agent Skill:
//!   instructions in text its Markdown hides (in [`skill`], over
//!   [`markdown`]). The version publishes and carries the findings;
//!   consumers decide whether to accept them.
//! * **note**: what is only a warning sign where the registry can't tell
//!   more — a description naming another tool when the tool's siblings are
//!   unknown (see [`Context::siblings`]). Shown, never refused, and no
//!   consumer has to accept it.
//!
//! Every string is read whatever was found before it: block rules are
//! evaluated over all of a definition, and only what is kept is capped
//! ([`MAX_FINDINGS`], then one `X1` finding saying how many more there
//! are). Signs of different kinds ([`Sign`]) add up: two kinds give a `C1`
//! flag, three or more a `C1` block ([`grade`]).
//!
//! `U4` blocks in identifiers (the call name, property names, enum values,
//! object keys) and flags in prose. Which strings are identifiers is
//! decided by their position in the document (the `walk` module).
//!
//! An Agent Skill is read whole ([`skill`]): its frontmatter as a
//! definition, its Markdown body and its other text files by file and
//! line, what Markdown hides included.
//!
//! Each finding names an RFC 6901 pointer to the string (for a raw text
//! file or a skill's body, `/<file>:<line>`), the character offsets of the hit inside it, and
//! an excerpt in which invisible characters are shown as `\u{…}` escapes.
//! Patterns run on NFKC-normalized text with bounded windows, never an
//! unbounded `.*` over a description.

mod automata;
mod collect;
mod crosstool;
pub mod files;
pub mod grade;
pub mod markdown;
mod params;
mod patterns;
pub mod prose;
mod rule;
pub mod secrets;
mod since;
pub mod skill;
pub mod text;
pub mod unicode;
pub(crate) mod walk;

pub use automata::release_unused;

pub use rule::{Rule, Sign};

pub use since::new_since;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Problem};
use crate::files::ToolFiles;
use crate::model::{Format, Tool};

/// At most this many findings of one rule are reported for one string.
pub const MAX_PER_STRING: usize = 3;
/// At most this many findings are kept for one tool (a hostile definition
/// could otherwise produce one per character). Every string is still read:
/// blocks are kept first, and one `X1` block finding says how many more
/// there were. A definition with more findings than this is refused:
/// no ordinary tool comes near it, and one that does would bury what
/// matters under the rest.
pub const MAX_FINDINGS: usize = 200;

/// What a finding does to a publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Refused at publish.
    Block,
    /// Published, and carried by the version; consumers decide.
    Flag,
    /// Shown with the version, but neither refused nor counted as flagged:
    /// a sign the registry can't judge without context it lacks.
    Note,
}

impl Severity {
    /// `block`, `flag` or `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Block => "block",
            Severity::Flag => "flag",
            Severity::Note => "note",
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
    /// Block, flag or note.
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

    /// True for a note: shown, but not a flag a consumer has to accept.
    pub fn is_note(&self) -> bool {
        self.severity == Severity::Note
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
        .with_fix(self.rule.fix())
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
    /// The tool's siblings as the registry knows them — the same owners'
    /// other tools — normalized; `None` where they can't be known (a
    /// definition linted on its own, as `toolreg validate` does).
    ///
    /// A description naming a sibling is ordinary (a server's tools
    /// describe each other). Naming another tool is a flag when the
    /// siblings are known, and a note when they are not, or when the
    /// named tool is only declared a sibling by `toolreg.toml`
    /// (`[tool] siblings`, which `toolreg import` writes for the tools of
    /// one `tools/list`): the publisher says so, the registry can't check.
    pub siblings: Option<Vec<String>>,
    /// Siblings declared by the tool's `toolreg.toml`, normalized.
    pub declared_siblings: Vec<String>,
    /// The tool's own parameter names, normalized: a description naming
    /// one is not naming another tool.
    pub parameters: Vec<String>,
    /// The tool is itself about language models (its name, title or
    /// description speaks of a model, a prompt, a chat): passing on a
    /// system prompt or a conversation may be its task.
    pub about_models: bool,
    /// For an Agent Skill, the line of `SKILL.md` its Markdown body starts
    /// on (findings in the body name `/SKILL.md:<line>`); `None` reads it
    /// as line 1.
    pub body_line: Option<usize>,
}

impl Context {
    /// The context of a loaded tool (siblings unknown).
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
            siblings: None,
            declared_siblings: Vec::new(),
            parameters: parameter_names(tool.parameters.get("properties")),
            about_models: about_models(tool),
            body_line: tool
                .extensions
                .get("skill")
                .and_then(|s| s.get("body_line"))
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok()),
        }
    }

    /// The context of an MCP `Tool` object as a server lists it (what
    /// `toolreg mcp proxy` lints): its call name and parameters, and no own
    /// hosts (nothing in a listed tool declares where it runs, and a URL
    /// field the server adds must not make a host its own); `siblings`, the
    /// other tools of the same `tools/list`, are known: one server's tools
    /// describe each other.
    pub fn of_mcp<'a>(tool: &Value, siblings: impl IntoIterator<Item = &'a str>) -> Self {
        let mut ctx = Context::of_mcp_list(siblings);
        ctx.set_mcp_tool(tool);
        ctx
    }

    /// The context shared by the tools of one `tools/list` (`names`: all
    /// their call names), before [`Context::set_mcp_tool`] names the one
    /// linted: a list of thousands of tools is linted with one context,
    /// not one copy of the list per tool.
    pub fn of_mcp_list<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut ctx = Context {
            format: Some(Format::Mcp),
            ..Context::default()
        };
        ctx.know_siblings(names);
        ctx
    }

    /// Make this the context of the listed MCP `Tool` object `tool` (its
    /// own name among the siblings is naming itself, not another tool).
    pub fn set_mcp_tool(&mut self, tool: &Value) {
        let text = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or_default();
        self.own_names = vec![prose::normalize_tool_name(text("name"))];
        self.parameters = parameter_names(tool.pointer("/inputSchema/properties"));
        self.about_models = speaks_of_models(
            text("name"),
            tool.get("title").and_then(Value::as_str),
            text("description"),
        );
    }

    /// Know the tool's siblings: call or registry names of the same
    /// owners' other tools (any spelling: `send-email`, `send_email`,
    /// `sendEmail`).
    pub fn know_siblings<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        let mut list: Vec<String> = names
            .into_iter()
            .map(prose::normalize_tool_name)
            .filter(|n| !n.is_empty())
            .collect();
        list.sort();
        list.dedup();
        self.siblings = Some(list);
    }

    /// How naming the tool `name` (normalized) counts: `None` when it is
    /// the tool itself or a known sibling, a note where that can't be
    /// told, a flag for a tool the owners don't have.
    pub(crate) fn naming(&self, name: &str) -> Option<Severity> {
        if self
            .own_names
            .iter()
            .any(|own| own == name || own.contains(name))
        {
            return None;
        }
        match &self.siblings {
            Some(known) if known.binary_search_by(|k| k.as_str().cmp(name)).is_ok() => None,
            _ if self.declared_siblings.iter().any(|d| d == name) => Some(Severity::Note),
            Some(_) => Some(Severity::Flag),
            None => Some(Severity::Note),
        }
    }
}

/// The comparable names of a JSON Schema's `properties` (a tool's
/// parameters), or none.
fn parameter_names(properties: Option<&Value>) -> Vec<String> {
    properties
        .and_then(Value::as_object)
        .map(|props| {
            props
                .keys()
                .map(|k| prose::normalize_tool_name(k))
                .collect()
        })
        .unwrap_or_default()
}

/// True if the tool's call name, title or description speaks of language
/// models.
fn about_models(tool: &Tool) -> bool {
    speaks_of_models(&tool.call_name, tool.title.as_deref(), &tool.description)
}

/// True if a call name, title or the first sentence of a description
/// speaks of language models.
fn speaks_of_models(call_name: &str, title: Option<&str>, description: &str) -> bool {
    const WORDS: &[&str] = &[
        "llm",
        "llms",
        "model",
        "models",
        "gpt",
        "openai",
        "anthropic",
        "claude",
        "gemini",
        "ollama",
        "chat",
        "chatbot",
        "completion",
        "completions",
        "prompt",
        "prompts",
        "assistant",
        "assistants",
        "conversation",
        "conversations",
        "ai",
        "agent",
        "agents",
    ];
    let words = |s: &str| {
        prose::normalize_tool_name(s)
            .split('_')
            .any(|w| WORDS.contains(&w))
    };
    let first = description.split(['.', '\n']).next().unwrap_or_default();
    words(call_name) || title.is_some_and(words) || words(first)
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

/// Lint a loaded tool: every string of its definition as published
/// (`tool.original`, parsed again) and of `toolreg.toml` in `files`, and
/// every other text file of `files` for live credentials.
///
/// A definition or manifest that does not parse gives no findings (loading
/// it reports why).
pub fn check(tool: &Tool, files: &ToolFiles) -> Vec<Finding> {
    let doc = parse_definition(tool.format, &tool.original);
    check_directory(&Context::of(tool), doc.as_ref(), files)
}

/// Lint a loaded tool as [`check`] does, knowing its siblings: the names
/// of the same owners' other tools ([`Context::know_siblings`]). The
/// registry does this at publish and rescan for a definition whose
/// findings [name other tools](names_other_tools).
pub fn check_knowing_siblings<'a>(
    tool: &Tool,
    files: &ToolFiles,
    siblings: impl IntoIterator<Item = &'a str>,
) -> Vec<Finding> {
    let mut ctx = Context::of(tool);
    ctx.know_siblings(siblings);
    let doc = parse_definition(tool.format, &tool.original);
    check_directory(&ctx, doc.as_ref(), files)
}

/// Lint an already parsed definition document (in its JSON form), the
/// `toolreg.toml` of `files`, and every other text file of `files` raw for
/// live credentials: what [`crate::load`] runs.
pub fn check_directory(ctx: &Context, doc: Option<&Value>, files: &ToolFiles) -> Vec<Finding> {
    let manifest = files
        .get(crate::manifest::FILE_NAME)
        .and_then(|raw| std::str::from_utf8(raw).ok());
    run(ctx, doc, manifest, Some(files))
}

/// Lint an already parsed definition document (in its JSON form) and the
/// text of `toolreg.toml`, without other files.
pub fn check_parsed(ctx: &Context, doc: Option<&Value>, manifest: Option<&str>) -> Vec<Finding> {
    run(ctx, doc, manifest, None)
}

fn run(
    ctx: &Context,
    doc: Option<&Value>,
    manifest: Option<&str>,
    files: Option<&ToolFiles>,
) -> Vec<Finding> {
    let table = manifest.and_then(|text| text.parse::<toml::Table>().ok());
    let declared = table.as_ref().map(declared_siblings).unwrap_or_default();
    let with_declared;
    let ctx = if declared.is_empty() {
        ctx
    } else {
        let mut c = ctx.clone();
        c.declared_siblings = declared;
        with_declared = c;
        &with_declared
    };
    let mut out = collect::Findings::default();
    let is_skill = ctx.format == Some(Format::Skill);
    match doc {
        // A skill's frontmatter is walked like a definition; its body and
        // its other text files are read as Markdown and text.
        Some(doc) if is_skill => {
            let (front, body) = skill::split_document(doc);
            walk::walk_document(ctx, &front, &mut out);
            if let Some(body) = body {
                skill::check_body(ctx, body, ctx.body_line.unwrap_or(1), &mut out);
            }
        }
        Some(doc) => walk::walk_document(ctx, doc, &mut out),
        None => {}
    }
    if let Some(table) = &table {
        walk::walk_manifest(ctx, table, &mut out);
    }
    if let Some(files) = files {
        if is_skill {
            skill::check_files(ctx, files, &mut out);
        }
        files::check(doc, files, &mut out);
    }
    out.finish()
}

/// The `[tool] siblings` of a `toolreg.toml`, normalized.
fn declared_siblings(table: &toml::Table) -> Vec<String> {
    table
        .get("tool")
        .and_then(|t| t.get(crate::manifest::SIBLINGS_KEY))
        .and_then(toml::Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(toml::Value::as_str)
                .map(prose::normalize_tool_name)
                .collect()
        })
        .unwrap_or_default()
}

/// True if `findings` name other tools, so the registry should tell the
/// lint the tool's siblings ([`Context::know_siblings`]) and lint again:
/// what such a finding weighs depends on them.
pub fn names_other_tools(findings: &[Finding]) -> bool {
    findings
        .iter()
        .any(|f| matches!(f.rule, Rule::P6 | Rule::P13) && f.is_note())
}

/// The definition bytes in their JSON form: JSON as is, Matimo YAML
/// converted, a skill's frontmatter with its Markdown body under `body`.
pub fn parse_definition(format: Format, bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(bytes).ok()?;
    match format {
        Format::Matimo => crate::formats::matimo::parse_yaml(text).ok(),
        Format::Skill => crate::formats::skill::document_value(text),
        _ => serde_json::from_str(text).ok(),
    }
}
