//! The CLI's one error type. Every variant renders as one clear first line
//! (what failed and why) plus optional detail lines, and maps to an exit
//! code: 1 for failures, 2 for usage mistakes.

use std::fmt;

use toolreg_api::EncodableProblem;
use toolreg_core::Problem;

/// An error answer from the registry: the problem+json fields that matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// What the CLI was doing, e.g. "publishing" or "resolving calculator ^1".
    pub action: String,
    pub url: String,
    pub status: u16,
    /// The problem `type` slug (`version-exists`, `blocked`, ...).
    pub kind: Option<String>,
    pub title: Option<String>,
    pub detail: String,
    /// The problem+json `errors` list (every problem of an invalid definition).
    pub errors: Vec<EncodableProblem>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} ({}{})",
            self.action,
            self.detail,
            self.status,
            title_suffix(&self.title)
        )
    }
}

/// Everything that can make a `toolreg` command fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line was understood by clap but its values make no sense.
    #[error("{0}")]
    Usage(String),

    /// Reading or writing a local file failed.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// A tool definition is invalid: every problem, with its field path.
    #[error("{what} is not a valid tool definition ({})", count(.problems.len()))]
    Invalid {
        what: String,
        problems: Vec<Problem>,
    },

    /// The core library refused something (a bundle, an export, a directory).
    #[error("{context}: {source}")]
    Core {
        context: String,
        #[source]
        source: toolreg_core::Error,
    },

    /// The registry could not be reached.
    #[error("could not reach the registry at {url}: {reason}")]
    Network { url: String, reason: String },

    /// The registry answered with an error (problem+json or otherwise).
    #[error("{0}")]
    Api(Box<ApiError>),

    /// A successful answer whose body is not what docs/api.md promises.
    #[error("the registry at {url} sent an answer toolreg cannot read: {reason}")]
    BadAnswer { url: String, reason: String },

    /// The user config (credentials file) is unreadable or unwritable.
    #[error("{0}")]
    Config(String),

    /// A command that needs a token has none.
    #[error(
        "no token for {registry}: run `toolreg login --registry {registry}` or set TOOLREG_TOKEN"
    )]
    NoToken { registry: String },

    /// The agent project's toolreg.toml is missing or malformed.
    #[error("{path}: {message}")]
    Project { path: String, message: String },

    /// toolreg.lock cannot be read.
    #[error("{path} is corrupt: {message}")]
    Lock { path: String, message: String },

    /// toolreg.lock does not match toolreg.toml (install --locked).
    #[error("toolreg.lock is out of date with toolreg.toml ({}); run `toolreg install` without --locked to update it", count_things(.reasons.len(), "difference"))]
    LockOutOfDate { reasons: Vec<String> },

    /// A downloaded bundle does not hash to the pinned digest.
    #[error("sha256 mismatch for {name} {version}: toolreg.lock pins {expected}, but the bundle downloaded from {url} hashes to {actual}; nothing was installed")]
    DigestMismatch {
        name: String,
        version: String,
        expected: String,
        actual: String,
        url: String,
    },

    /// The registry blocks a version (its publisher's tier no longer allows its kind).
    #[error("{name} {version} is blocked by the registry: {reason}")]
    Blocked {
        name: String,
        version: String,
        reason: String,
    },

    /// The registry's administrators quarantined a version: `detail` is the
    /// registry's explanation, with the reason.
    #[error("{name}: {detail}")]
    Quarantined {
        name: String,
        detail: String,
        url: String,
    },

    /// The project's `[policy] deny_deprecated` refuses a version its owners
    /// deprecated.
    #[error("{name} {version} is deprecated by its owners: {message}{}; this project's policy refuses deprecated versions ({location}: deny_deprecated = true)", successor_hint(.successor))]
    Deprecated {
        name: String,
        version: String,
        message: String,
        successor: Option<String>,
        location: String,
    },

    /// The project's `[policy] allow` forbids a tool's execution kind.
    #[error("{name} {version} is a `{kind}` tool, which this project's policy does not allow ({location}: {line})")]
    Policy {
        name: String,
        version: String,
        kind: String,
        location: String,
        line: String,
    },

    /// A version carries definition lint findings the project has not
    /// accepted (by `--accept-findings`, `[policy] accept_findings` or, for
    /// `install --locked`, toolreg.lock). `details` shows each finding.
    #[error("{name} {version} is flagged by the registry's definition lint ({}), which this project has not accepted; {hint}", .rules.join(", "))]
    Findings {
        name: String,
        version: String,
        /// The rule ids not accepted.
        rules: Vec<String>,
        /// How to accept them.
        hint: String,
        details: Vec<String>,
    },

    /// An installed bundle does not match what the lock says.
    #[error("{0}")]
    Installed(String),

    /// Installed tools (or a live tool list) differ from what toolreg.lock
    /// pins: `summary` says how many and what to do, `details` name each
    /// edited, added or removed file or changed tool.
    #[error("{summary}")]
    Drift {
        summary: String,
        details: Vec<String>,
    },

    /// The registry's transparency log does not vouch for a pin: a record is
    /// missing, a signature is bad, the log forked or rolled back, or the
    /// digest is not the logged one.
    /// `update` would move pins to versions whose definitions changed
    /// (medium or high) or gained lint findings, and nobody confirmed.
    #[error("{}", unconfirmed_message(.pins, *.asked))]
    Unconfirmed {
        /// `NAME FROM -> TO (why)` per pin that needs a yes.
        pins: Vec<String>,
        /// True when the user was asked on a terminal and did not say yes.
        asked: bool,
        /// The `--json` form of every moved pin and its changes.
        changes: serde_json::Value,
    },

    #[error("transparency log check failed for {registry}: {message}")]
    Log { registry: String, message: String },

    /// Trusted publishing could not get a CI job's ID token (the CI
    /// platform refused, or the job lacks the permission to ask).
    #[error("trusted publishing: {0}")]
    Oidc(String),

    /// A version's signed attestation does not verify or does not say what
    /// the registry serves; nothing was pinned or installed.
    #[error("attestation check failed for {name} {version}: {message}")]
    Attestation {
        name: String,
        version: String,
        message: String,
    },

    /// An agent's config file can't be read or edited safely; nothing was
    /// written. `path` may end in `:LINE:COLUMN`.
    #[error("{path}: {message}")]
    AgentConfig { path: String, message: String },

    /// The MCP server could not start or stopped abnormally (two pins under
    /// one call name, a listen address off loopback, a transport failure).
    #[error(transparent)]
    Mcp(#[from] toolreg_mcp::Error),

    /// The project requires provenance and the version has none.
    #[error("{name} {version} has no verified provenance, which this project's policy requires ({location}: {line})")]
    NoProvenance {
        name: String,
        version: String,
        location: String,
        line: String,
    },

    /// The project requires provenance, and (checked without the registry)
    /// toolreg.lock records none for the pin.
    #[error("toolreg.lock records no provenance for {name} {version}, which this project's policy requires ({location}: {line})")]
    NoRecordedProvenance {
        name: String,
        version: String,
        location: String,
        line: String,
    },

    /// The version was built from a repository the project's
    /// `require_provenance` does not list.
    #[error("{name} {version} was built by {builder}, a repository this project's policy does not accept ({location}: {line})")]
    ProvenanceRefused {
        name: String,
        version: String,
        builder: String,
        location: String,
        line: String,
    },
}

fn unconfirmed_message(pins: &[String], asked: bool) -> String {
    let names: Vec<&str> = pins
        .iter()
        .map(|p| p.split(" (").next().unwrap_or(p))
        .collect();
    if asked {
        format!(
            "update not confirmed; nothing was written (toolreg.toml and toolreg.lock are unchanged): {}",
            names.join(", ")
        )
    } else {
        format!(
            "{} would move to a definition with medium or high changes or new lint findings, and there is no terminal to ask: {}; nothing was written (toolreg.toml and toolreg.lock are unchanged); review the changes (`toolreg update --diff`) and rerun with --yes to accept them",
            count_things(pins.len(), "pin"),
            names.join(", ")
        )
    }
}

fn count(n: usize) -> String {
    count_things(n, "problem")
}

fn count_things(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn successor_hint(successor: &Option<String>) -> String {
    match successor {
        Some(s) => format!(" (its successor is {s})"),
        None => String::new(),
    }
}

fn title_suffix(title: &Option<String>) -> String {
    match title {
        Some(t) if !t.is_empty() => format!(" {t}"),
        _ => String::new(),
    }
}

impl Error {
    /// Process exit code: 2 for usage mistakes, 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }

    /// Lines printed (indented) after the first line.
    pub fn details(&self) -> Vec<String> {
        match self {
            Error::Invalid { problems, .. } => problems.iter().map(ToString::to_string).collect(),
            Error::Core { source, .. } => {
                source.problems().iter().map(ToString::to_string).collect()
            }
            Error::Api(api) => {
                let mut lines: Vec<String> = api.errors.iter().map(ToString::to_string).collect();
                lines.push(format!("url: {}", api.url));
                lines
            }
            Error::LockOutOfDate { reasons } => reasons.clone(),
            Error::Quarantined { name, url, .. } => vec![
                format!("toolreg pins, installs and hands out no quarantined version: pin another (`toolreg update {name}` moves an existing pin), or wait until the quarantine is lifted"),
                format!("url: {url}"),
            ],
            Error::Drift { details, .. } => details.clone(),
            Error::Findings { details, .. } => details.clone(),
            Error::Unconfirmed { pins, .. } => pins.clone(),
            Error::Attestation { .. } => vec!["nothing was pinned or installed".to_string()],
            Error::Deprecated { name, successor, .. } => vec![match successor {
                Some(s) => format!("nothing was pinned or installed: `toolreg add {s}` pins its successor, or `toolreg update {name}` moves to a version that is not deprecated"),
                None => format!("nothing was pinned or installed: `toolreg update {name}` moves to a version that is not deprecated, if there is one"),
            }],
            Error::NoProvenance { .. } => vec![
                "it was not published from CI through trusted publishing; nothing was pinned or installed".to_string(),
            ],
            Error::NoRecordedProvenance { name, .. } => vec![format!(
                "run `toolreg install` with the registry reachable to check and record it, or `toolreg update {name}` to pin a version built in CI"
            )],
            Error::ProvenanceRefused { .. } => vec![
                "list its repository under `require_provenance.repositories`, or pin a version built by one listed there; nothing was pinned or installed".to_string(),
            ],
            _ => Vec::new(),
        }
    }

    /// The error as JSON, for `--json`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "error": self.to_string(),
            "details": self.details(),
        });
        if let Error::Api(api) = self {
            v["status"] = serde_json::json!(api.status);
            v["type"] = serde_json::json!(api.kind);
        }
        if let Error::Findings { rules, .. } = self {
            v["rules"] = serde_json::json!(rules);
        }
        if let Error::Deprecated { successor, .. } = self {
            v["successor"] = serde_json::json!(successor);
        }
        if let Error::Invalid { problems, .. } = self {
            v["problems"] = serde_json::json!(problems);
        }
        if let Error::Unconfirmed { changes, .. } = self {
            v["changes"] = changes.clone();
            v["written"] = serde_json::json!(false);
        }
        v
    }

    pub fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
