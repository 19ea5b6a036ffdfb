//! Command-line arguments (clap derive). Values that can be checked here
//! are, so that a malformed `NAME@REQ` or URL is a usage error (exit 2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use semver::{Version, VersionReq};

mod agents;
pub use agents::{LinkArgs, McpAction};

/// Publish, search, pin and install AI-agent tools.
#[derive(Debug, Parser)]
#[command(name = "toolreg", version, about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    /// Print results (and errors) as JSON for scripts.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args, Clone, Default)]
pub struct Global {
    /// Registry URL (default: the project's [registry] url, then the one
    /// stored by `toolreg login`, then http://127.0.0.1:8080).
    #[arg(long, env = "TOOLREG_REGISTRY", global = true, value_name = "URL")]
    pub registry: Option<String>,
    /// API token (default: the one stored by `toolreg login` for the registry).
    #[arg(
        long,
        env = "TOOLREG_TOKEN",
        global = true,
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Store a token for a registry (read from --token or stdin), checked with the registry.
    Login,
    /// Scaffold a valid tool directory of a format.
    Init {
        /// Directory to create the tool in (default: the current directory).
        path: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = FormatArg::Matimo)]
        format: FormatArg,
        /// Registry name of the new tool (default: from the directory name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Validate a tool directory or a single definition file; every problem at once.
    Validate {
        /// Tool directory or definition file (default: the current directory).
        path: Option<PathBuf>,
    },
    /// Pack a tool directory into a deterministic bundle and print its sha256.
    Pack {
        /// Tool directory (default: the current directory).
        path: Option<PathBuf>,
        /// Where to write the bundle (default: NAME-VERSION.tgz in the current directory).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Validate, pack and upload a tool directory.
    Publish {
        /// Tool directory (default: the current directory).
        path: Option<PathBuf>,
        /// Validate and pack, but do not upload.
        #[arg(long)]
        dry_run: bool,
    },
    /// Search the registry.
    Search {
        /// Words to search for.
        query: Vec<String>,
        #[arg(long)]
        license: Option<String>,
        #[arg(long)]
        keyword: Option<String>,
        #[arg(long, value_parser = parse_kind)]
        execution: Option<toolreg_core::ExecutionKind>,
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        #[arg(long, value_parser = parse_tier)]
        tier: Option<toolreg_core::Tier>,
        #[arg(long, value_enum)]
        sort: Option<SortArg>,
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        page: u32,
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100))]
        per_page: u32,
    },
    /// Show a tool (every version) or one version.
    Info {
        /// NAME or NAME@VERSION.
        #[arg(value_parser = parse_name_version_opt, value_name = "NAME[@VERSION]")]
        spec: (String, Option<Version>),
    },
    /// Pin a tool: write NAME = "REQ" into toolreg.toml and the exact version into toolreg.lock.
    Add {
        /// NAME or NAME@REQ (default requirement: ^LATEST).
        #[arg(value_parser = parse_name_req, value_name = "NAME[@REQ]")]
        spec: (String, Option<VersionReq>),
        /// Pin the version even if the registry's definition lint flagged it,
        /// accepting every rule found on it (recorded in toolreg.lock).
        #[arg(long)]
        accept_findings: bool,
    },
    /// Download, verify and unpack every pinned tool into .toolreg/tools/.
    Install {
        /// Never change toolreg.lock; fail if it is missing or out of date.
        #[arg(long)]
        locked: bool,
    },
    /// Move pins to the newest versions their requirements allow, showing what
    /// changed in each moved pin's definition. A medium or high change, or a
    /// new lint finding, needs a yes (asked on a terminal; elsewhere `--yes`).
    Update {
        /// Only this tool.
        name: Option<String>,
        /// Accept the definition lint findings of the versions pinned now,
        /// every rule found on them (recorded in toolreg.lock).
        #[arg(long)]
        accept_findings: bool,
        /// Accept every change without asking.
        #[arg(long)]
        yes: bool,
        /// Print every change in full, with its old and new value.
        #[arg(long)]
        diff: bool,
    },
    /// List pins with newer versions (within the requirement, and overall) and
    /// the highest severity of the change in their definitions.
    Outdated,
    /// Check that every installed pin matches toolreg.lock (each file and the
    /// definition fingerprint), or compare a live MCP tools/list answer with the pins.
    Verify {
        /// An MCP tools/list result (`{"tools": [...]}`, a JSON-RPC response, or an
        /// array of tools) to compare with the pins by call name; `-` reads stdin.
        #[arg(long, value_name = "FILE|-")]
        against: Option<PathBuf>,
        /// Don't ask the registry whether a pinned version was quarantined or
        /// flagged since; use what it said last (`.toolreg/state.json`).
        #[arg(long)]
        offline: bool,
    },
    /// Print the installed tools as one JSON tool list for an agent; what a
    /// format can't carry over is reported on stderr.
    Export {
        #[arg(long, value_enum, default_value_t = ExportArg::Mcp)]
        format: ExportArg,
        /// MCP protocol version to shape `--format mcp` for (default:
        /// `[registry] mcp_protocol` in toolreg.toml, else the newest).
        #[arg(long, value_parser = parse_protocol, value_name = "VERSION")]
        protocol: Option<toolreg_core::export::McpProtocol>,
        /// OpenAI strict mode (`--format openai`): fails, naming the reason,
        /// for a tool whose parameters can't follow the strict rules.
        #[arg(long)]
        strict: bool,
        /// Don't ask the registry whether a pinned version was quarantined or
        /// flagged since; use what it said last (`.toolreg/state.json`).
        #[arg(long)]
        offline: bool,
    },
    /// Split an MCP tools/list result into one tool directory per tool.
    Import {
        /// The tools/list JSON (a result object, a JSON-RPC response or an array of tools).
        file: PathBuf,
        /// Directory to create the tool directories in (default: the current directory).
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
    },
    /// Yank a version (it stays downloadable for existing pins) or undo it.
    Yank {
        /// NAME@VERSION.
        #[arg(value_parser = parse_name_version, value_name = "NAME@VERSION")]
        spec: (String, Version),
        #[arg(long)]
        undo: bool,
    },
    /// Deprecate a tool, or its versions matching a requirement, with a
    /// message and a successor (they still install: it is advice), or undo it.
    Deprecate {
        /// NAME, or NAME@REQ for the versions matching REQ (e.g. `calc@<2.0.0`).
        #[arg(value_parser = parse_name_req, value_name = "NAME[@REQ]")]
        spec: (String, Option<VersionReq>),
        /// Why, in 1 to 500 characters (shown wherever the version is chosen).
        #[arg(
            long,
            value_name = "TEXT",
            required_unless_present = "undo",
            conflicts_with = "undo"
        )]
        message: Option<String>,
        /// An existing tool to use instead.
        #[arg(long, value_name = "NAME", conflicts_with = "undo")]
        successor: Option<String>,
        /// Lift the deprecation (of the versions matching REQ, or of every one).
        #[arg(long)]
        undo: bool,
    },
    /// Report a version to the registry's administrators (e.g. a poisoned
    /// description); rate-limited.
    Report {
        /// NAME@VERSION.
        #[arg(value_parser = parse_name_version, value_name = "NAME@VERSION")]
        spec: (String, Version),
        /// Why, in 1 to 2000 characters.
        #[arg(long, value_name = "TEXT")]
        reason: String,
    },
    /// Quarantine a version (administrators): its download, resolve and
    /// definition answer 403 with the reason until `--lift`.
    Quarantine {
        /// NAME@VERSION.
        #[arg(value_parser = parse_name_version, value_name = "NAME@VERSION")]
        spec: (String, Version),
        /// Why, in 1 to 2000 characters (shown to everyone who asks for it).
        #[arg(
            long,
            value_name = "TEXT",
            required_unless_present = "lift",
            conflicts_with = "lift"
        )]
        reason: Option<String>,
        /// Lift the version's quarantine instead.
        #[arg(long)]
        lift: bool,
    },
    /// List a tool's owners, invite or remove them; answer your invitations.
    Owner {
        #[command(subcommand)]
        action: OwnerAction,
    },
    /// List, add or remove the CI workflows that may publish a tool without
    /// a stored token (trusted publishing; owners only).
    TrustedPublisher {
        #[command(subcommand)]
        action: TrustedPublisherAction,
    },
    /// Serve the project's pinned tools to an agent over MCP.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Write the entry that launches `toolreg mcp serve` for this project
    /// into an agent's MCP config (or list the agents found, with --list).
    Link(LinkArgs),
    /// Remove toolreg's entry from an agent's MCP config.
    Unlink(LinkArgs),
}

/// GitHub Actions' OpenID Connect issuer.
pub const GITHUB_ISSUER: &str = "https://token.actions.githubusercontent.com";
/// GitLab.com's OpenID Connect issuer.
pub const GITLAB_ISSUER: &str = "https://gitlab.com";

#[derive(Debug, Subcommand)]
pub enum TrustedPublisherAction {
    /// List the trusted publishers of NAME.
    List { name: String },
    /// Let a CI workflow publish new versions of NAME.
    Add {
        name: String,
        /// The CI platform's OpenID Connect issuer (default: GitHub Actions').
        #[arg(long, value_name = "URL", conflicts_with_all = ["github", "gitlab"])]
        issuer: Option<String>,
        /// Shorthand for `--issuer https://token.actions.githubusercontent.com`.
        #[arg(long, conflicts_with = "gitlab")]
        github: bool,
        /// Shorthand for `--issuer https://gitlab.com`.
        #[arg(long)]
        gitlab: bool,
        /// `org/repo` (GitHub) or `group/project` (GitLab).
        #[arg(long, value_name = "ORG/REPO")]
        repository: String,
        /// The workflow file (`release.yml`) or GitLab CI configuration path (`.gitlab-ci.yml`).
        #[arg(long, value_name = "FILE")]
        workflow: String,
        /// Only jobs running in this deployment environment.
        #[arg(long, value_name = "ENV")]
        environment: Option<String>,
        /// The repository's immutable ID at the provider (GitHub
        /// `repository_id`, GitLab `project_id`). Without it, the first
        /// publish records it; from then on a repository of the same name
        /// but another ID (recreated, or its name taken) is refused.
        #[arg(long, value_name = "ID")]
        repository_id: Option<String>,
        /// The repository owner's immutable ID (GitHub
        /// `repository_owner_id`, GitLab `namespace_id`).
        #[arg(long, value_name = "ID")]
        owner_id: Option<String>,
    },
    /// Remove trusted publisher ID (see `list`) from NAME.
    Remove { name: String, id: i64 },
}

impl TrustedPublisherAction {
    /// The issuer `add` names: `--issuer`, `--gitlab`, else GitHub's.
    pub fn issuer(issuer: Option<&str>, gitlab: bool) -> String {
        match (issuer, gitlab) {
            (Some(url), _) => url.trim().trim_end_matches('/').to_string(),
            (None, true) => GITLAB_ISSUER.to_string(),
            (None, false) => GITHUB_ISSUER.to_string(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum OwnerAction {
    /// List the owners of NAME.
    List { name: String },
    /// Invite LOGIN to own NAME (they become an owner when they accept).
    Add { name: String, login: String },
    /// Remove LOGIN from the owners of NAME, or withdraw their invitation.
    Remove { name: String, login: String },
    /// List your invitations to own tools.
    Invitations,
    /// Accept your invitation to own NAME.
    Accept { name: String },
    /// Decline your invitation to own NAME.
    Decline { name: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Matimo,
    Shinkai,
    Mcp,
    Prompt,
    /// An Agent Skill: a directory with SKILL.md.
    Skill,
}

impl FormatArg {
    pub fn as_str(self) -> &'static str {
        match self {
            FormatArg::Matimo => "matimo",
            FormatArg::Shinkai => "shinkai",
            FormatArg::Mcp => "mcp",
            FormatArg::Prompt => "prompt",
            FormatArg::Skill => "skill",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportArg {
    /// MCP `Tool` objects.
    Mcp,
    /// OpenAI function-calling tools.
    Openai,
    /// Anthropic Messages API tools.
    Anthropic,
    /// Gemini function declarations with Gemini `Schema` parameters.
    Gemini,
    /// Gemini function declarations with `parameters_json_schema` (lossless).
    GeminiJsonSchema,
}

impl ExportArg {
    pub fn format(self) -> toolreg_core::export::ExportFormat {
        use toolreg_core::export::ExportFormat;
        match self {
            ExportArg::Mcp => ExportFormat::Mcp,
            ExportArg::Openai => ExportFormat::Openai,
            ExportArg::Anthropic => ExportFormat::Anthropic,
            ExportArg::Gemini => ExportFormat::Gemini,
            ExportArg::GeminiJsonSchema => ExportFormat::GeminiJsonSchema,
        }
    }
}

fn parse_protocol(s: &str) -> Result<toolreg_core::export::McpProtocol, String> {
    s.parse()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    Relevance,
    Downloads,
    Recent,
}

impl SortArg {
    pub fn as_str(self) -> &'static str {
        match self {
            SortArg::Relevance => "relevance",
            SortArg::Downloads => "downloads",
            SortArg::Recent => "recent",
        }
    }
}

fn parse_kind(s: &str) -> Result<toolreg_core::ExecutionKind, String> {
    s.parse()
}

fn parse_tier(s: &str) -> Result<toolreg_core::Tier, String> {
    s.parse()
}

fn check_name(name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("the tool name is empty".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "`{name}` is not a tool name (letters, digits, `-` and `_` only)"
        ));
    }
    Ok(name.to_string())
}

/// `NAME` or `NAME@REQ`.
pub fn parse_name_req(s: &str) -> Result<(String, Option<VersionReq>), String> {
    match s.split_once('@') {
        None => Ok((check_name(s)?, None)),
        Some((name, req)) => {
            let req = VersionReq::parse(req).map_err(|e| {
                format!("`{req}` is not a SemVer requirement (like ^1.2 or =1.0.0): {e}")
            })?;
            Ok((check_name(name)?, Some(req)))
        }
    }
}

/// `NAME@VERSION` (an exact version).
pub fn parse_name_version(s: &str) -> Result<(String, Version), String> {
    let (name, version) = s
        .split_once('@')
        .ok_or_else(|| format!("`{s}` must be NAME@VERSION, like calculator@1.0.0"))?;
    let version =
        Version::parse(version).map_err(|e| format!("`{version}` is not a SemVer version: {e}"))?;
    Ok((check_name(name)?, version))
}

/// `NAME` or `NAME@VERSION`.
pub fn parse_name_version_opt(s: &str) -> Result<(String, Option<Version>), String> {
    if s.contains('@') {
        parse_name_version(s).map(|(n, v)| (n, Some(v)))
    } else {
        Ok((check_name(s)?, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn specs_parse_and_bad_ones_explain() {
        assert_eq!(
            parse_name_req("web-search").unwrap(),
            ("web-search".into(), None)
        );
        assert_eq!(
            parse_name_req("web-search@^1.2")
                .unwrap()
                .1
                .unwrap()
                .to_string(),
            "^1.2"
        );
        assert!(parse_name_req("x@not-a-req")
            .unwrap_err()
            .contains("not a SemVer requirement"));
        assert!(parse_name_req("bad name")
            .unwrap_err()
            .contains("not a tool name"));
        assert!(parse_name_version("calc")
            .unwrap_err()
            .contains("NAME@VERSION"));
        assert!(parse_name_version("calc@1.0")
            .unwrap_err()
            .contains("not a SemVer version"));
        assert_eq!(
            parse_name_version_opt("calc@1.0.0")
                .unwrap()
                .1
                .unwrap()
                .to_string(),
            "1.0.0"
        );
    }
}
