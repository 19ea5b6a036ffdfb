//! Running a tool by its execution kind, one module per kind: `http` and
//! `command` as Matimo defines them, `prompt` (the rendered template),
//! `function`/`script` through a configured runtime, and `schema` (a
//! declaration only). Each served tool gets a [`Plan`] when the server
//! starts, from its definition; a call then only fills in the arguments.
//!
//! A call never fails the server: whatever goes wrong becomes an `isError`
//! result whose text says what and why, with a short log-safe outcome
//! phrase beside it for the call log (never an argument value or secret).

pub mod command;
pub mod http;
mod output;
mod process;
pub mod prompt;
pub mod runtime;
pub mod template;

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};
use toolreg_core::export::McpProtocol;
use toolreg_core::{ExecutionKind, Tool};

pub use output::Output;
pub use runtime::{Launchers, Runtimes};
pub use template::EnvLookup;

/// Why a call produced no answer: the text the caller reads, and the
/// log-safe outcome phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What went wrong, as a sentence for the caller (may quote arguments).
    pub message: String,
    /// A short fixed phrase for the log (`error: timeout`), never a value.
    pub outcome: String,
}

impl Refusal {
    /// A refusal with its message and log phrase.
    pub fn new(message: impl Into<String>, outcome: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
            outcome: outcome.into(),
        }
    }

    /// An environment variable the tool reads is not set.
    pub fn missing_env(name: &str) -> Self {
        Refusal::new(
            format!("the environment variable {name} is not set; this tool reads it (set it in the environment `toolreg mcp serve` starts in); nothing was sent or run"),
            format!("error: environment variable {name} not set"),
        )
    }
}

/// The answer to one call, with its log phrase.
#[derive(Debug, Clone)]
pub struct Reply {
    /// What the client gets.
    pub result: CallToolResult,
    /// The call log's outcome phrase.
    pub outcome: String,
}

impl Reply {
    /// A successful call.
    pub fn ok(result: CallToolResult) -> Self {
        Reply {
            result,
            outcome: "ok".into(),
        }
    }

    /// A plain text success.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

impl From<Refusal> for Reply {
    fn from(r: Refusal) -> Self {
        Reply {
            result: CallToolResult::error(vec![ContentBlock::text(r.message)]),
            outcome: r.outcome,
        }
    }
}

/// What [`Plan::new`] needs besides the tool.
pub struct PlanContext<'a> {
    /// The installed tool's directory (a command's working directory, the
    /// code a runtime loads).
    pub dir: &'a Path,
    /// The code-running kinds (`function`, `script`) the project's
    /// `[policy] allow` lists explicitly.
    pub run_code: &'a [ExecutionKind],
    /// The interpreters `[runtime]` names.
    pub runtimes: &'a Runtimes,
    /// Where the runtime launcher scripts are written.
    pub launchers: &'a runtime::Launchers,
}

/// How one served tool runs.
#[derive(Debug)]
pub enum Plan {
    /// A Matimo `http` tool.
    Http(Box<http::HttpPlan>),
    /// A Matimo `command` tool.
    Command(command::CommandPlan),
    /// A prompt tool.
    Prompt(prompt::PromptPlan),
    /// A `function` or `script` tool with its runtime.
    Runtime(runtime::RuntimePlan),
    /// A declaration only (an MCP `Tool`).
    Schema,
    /// The tool can't run here, and why (a code-running kind the policy
    /// doesn't allow, a runtime that is not configured, a definition this
    /// server won't execute); every call answers with it.
    Unavailable(String),
}

/// The text a schema-only tool answers every call with.
pub const DEFINITION_ONLY: &str =
    "definition only: this tool has no execution; its server must provide it";

impl Plan {
    /// The plan for `tool`, from its execution kind and detail.
    pub fn new(tool: &Tool, cx: &PlanContext) -> Plan {
        let made = match tool.execution.kind {
            ExecutionKind::Http => http::HttpPlan::new(tool).map(|p| Plan::Http(Box::new(p))),
            ExecutionKind::Command => command::CommandPlan::new(tool, cx.dir).map(Plan::Command),
            ExecutionKind::Prompt => prompt::PromptPlan::new(tool).map(Plan::Prompt),
            ExecutionKind::Schema => Ok(Plan::Schema),
            ExecutionKind::Function | ExecutionKind::Script => {
                runtime::RuntimePlan::new(tool, cx).map(Plan::Runtime)
            }
        };
        made.unwrap_or_else(Plan::Unavailable)
    }

    /// Run one call. `args` were validated against the input schema.
    pub async fn run(&self, call: &Call<'_>) -> Reply {
        let result = match self {
            Plan::Http(p) => p.run(call).await,
            Plan::Command(p) => p.run(call).await,
            Plan::Prompt(p) => p.run(call),
            Plan::Runtime(p) => p.run(call).await,
            Plan::Schema => Err(Refusal::new(DEFINITION_ONLY, "error: definition only")),
            Plan::Unavailable(why) => Err(Refusal::new(why.clone(), "error: not runnable here")),
        };
        result.unwrap_or_else(Reply::from)
    }
}

/// One call: its arguments and what it is answered in.
pub struct Call<'a> {
    /// The arguments, validated against the input schema.
    pub args: &'a Map<String, Value>,
    /// The tool's declared parameter names.
    pub params: &'a [String],
    /// The protocol version the answer is shaped for.
    pub protocol: McpProtocol,
    /// How a JSON answer becomes structured content.
    pub output: &'a Output,
    /// Where environment placeholders are read.
    pub env: &'a Arc<EnvLookup>,
}

impl Call<'_> {
    /// The placeholder filler of this call.
    pub fn fill(&self) -> template::Fill<'_> {
        template::Fill {
            args: self.args,
            params: self.params,
            env: self.env.as_ref(),
        }
    }
}

/// The first `max` bytes of `text` (on a character boundary), with `…`
/// when cut: an excerpt of an upstream answer or a stderr for a message.
pub fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A timeout in a definition: `timeout_ms`, or Matimo's `timeout` (in
/// milliseconds), else `default_ms`.
pub fn timeout_of(detail: &Value, default_ms: u64) -> std::time::Duration {
    let ms = ["timeout_ms", "timeout"]
        .iter()
        .find_map(|k| detail.get(*k).and_then(Value::as_u64))
        .filter(|ms| *ms > 0)
        .unwrap_or(default_ms);
    std::time::Duration::from_millis(ms)
}
