//! The agents `toolreg link` knows: where each keeps its MCP servers (per
//! project and per user, from each agent's own documentation; see
//! docs/agents.md for the sources), in which file format, under which key,
//! and the shape of the entry that launches `toolreg mcp serve`; and the
//! folder each reads Agent Skills from ([`Client::skills_folder`]), where
//! `toolreg install` places the project's pinned skills.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::Place;

/// An agent whose config `toolreg link` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientId {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    Vscode,
    Windsurf,
    Zed,
    Codex,
    Gemini,
    Cline,
    Goose,
    Continue,
    Kiro,
    CopilotCli,
}

impl ClientId {
    /// Every agent, in the order `link --list` shows them.
    pub const ALL: [ClientId; 13] = [
        ClientId::ClaudeCode,
        ClientId::ClaudeDesktop,
        ClientId::Cursor,
        ClientId::Vscode,
        ClientId::Windsurf,
        ClientId::Zed,
        ClientId::Codex,
        ClientId::Gemini,
        ClientId::Cline,
        ClientId::Goose,
        ClientId::Continue,
        ClientId::Kiro,
        ClientId::CopilotCli,
    ];

    /// The id on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientId::ClaudeCode => "claude-code",
            ClientId::ClaudeDesktop => "claude-desktop",
            ClientId::Cursor => "cursor",
            ClientId::Vscode => "vscode",
            ClientId::Windsurf => "windsurf",
            ClientId::Zed => "zed",
            ClientId::Codex => "codex",
            ClientId::Gemini => "gemini",
            ClientId::Cline => "cline",
            ClientId::Goose => "goose",
            ClientId::Continue => "continue",
            ClientId::Kiro => "kiro",
            ClientId::CopilotCli => "copilot-cli",
        }
    }
}

impl std::fmt::Display for ClientId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ClientId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClientId::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = ClientId::ALL.iter().map(|c| c.as_str()).collect();
                format!("unknown agent `{s}` (toolreg links {})", ids.join(", "))
            })
    }
}

/// Whose config file: the project's own, or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// A file in the project, shared with everyone who checks it out.
    Project,
    /// A file in the user's home, for every project.
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// A config file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// JSON, with comments and trailing commas accepted and kept (JSONC).
    Json,
    /// TOML.
    Toml,
    /// YAML.
    Yaml,
}

/// Where the home-relative files live (the user's home and config
/// directories, and the agents' own overrides such as `CODEX_HOME`).
#[derive(Debug, Clone)]
pub struct Dirs {
    pub home: PathBuf,
    /// The platform's config directory (`$XDG_CONFIG_HOME` or
    /// `~/.config` on Linux, `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows).
    pub config: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`, on every Unix (the agents that
    /// use it on macOS too: Zed, goose).
    pub xdg_config: PathBuf,
    pub codex_home: Option<PathBuf>,
    pub copilot_home: Option<PathBuf>,
}

impl Dirs {
    /// From the environment.
    pub fn from_env() -> Option<Dirs> {
        let home = dirs::home_dir()?;
        let env_dir = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Some(Dirs {
            config: dirs::config_dir().unwrap_or_else(|| home.join(".config")),
            xdg_config: env_dir("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            codex_home: env_dir("CODEX_HOME"),
            copilot_home: env_dir("COPILOT_HOME"),
            home,
        })
    }
}

/// One agent's entry in the table.
pub struct Client {
    pub id: ClientId,
    /// The agent's name for people.
    pub title: &'static str,
    pub dialect: Dialect,
    /// The documentation the paths and shape come from.
    pub docs: &'static str,
}

/// The table row of `id`.
pub fn client(id: ClientId) -> Client {
    let (title, dialect, docs) = match id {
        ClientId::ClaudeCode => ("Claude Code", Dialect::Json, "https://code.claude.com/docs/en/mcp"),
        ClientId::ClaudeDesktop => ("Claude Desktop", Dialect::Json, "https://modelcontextprotocol.io/docs/develop/connect-local-servers"),
        ClientId::Cursor => ("Cursor", Dialect::Json, "https://cursor.com/docs/context/mcp"),
        ClientId::Vscode => ("VS Code", Dialect::Json, "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration"),
        ClientId::Windsurf => ("Windsurf", Dialect::Json, "https://docs.windsurf.com/windsurf/cascade/mcp"),
        ClientId::Zed => ("Zed", Dialect::Json, "https://zed.dev/docs/ai/mcp"),
        ClientId::Codex => ("Codex", Dialect::Toml, "https://developers.openai.com/codex/mcp"),
        ClientId::Gemini => ("Gemini CLI", Dialect::Json, "https://geminicli.com/docs/tools/mcp-server"),
        ClientId::Cline => ("Cline", Dialect::Json, "https://docs.cline.bot/mcp/configuring-mcp-servers"),
        ClientId::Goose => ("goose", Dialect::Yaml, "https://block.github.io/goose/docs/guides/config-files"),
        ClientId::Continue => ("Continue", Dialect::Yaml, "https://docs.continue.dev/customize/deep-dives/mcp"),
        ClientId::Kiro => ("Kiro", Dialect::Json, "https://kiro.dev/docs/mcp/configuration"),
        ClientId::CopilotCli => ("GitHub Copilot CLI", Dialect::Json, "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers"),
    };
    Client {
        id,
        title,
        dialect,
        docs,
    }
}

impl Client {
    /// The scopes the agent has a config file for, the default first.
    pub fn scopes(&self) -> &'static [Scope] {
        match self.id {
            ClientId::ClaudeDesktop | ClientId::Windsurf | ClientId::Cline | ClientId::Goose => {
                &[Scope::User]
            }
            _ => &[Scope::Project, Scope::User],
        }
    }

    /// The config file of `scope` (`root` is the project), and where in it
    /// the entry `name` lives.
    pub fn file(
        &self,
        scope: Scope,
        root: &Path,
        dirs: &Dirs,
        name: &str,
    ) -> Option<(PathBuf, Place)> {
        let servers = |key: &'static str| Place::Map { path: vec![key] };
        let home = &dirs.home;
        let (path, place) = match (self.id, scope) {
            (ClientId::ClaudeCode, Scope::Project) => (root.join(".mcp.json"), servers("mcpServers")),
            (ClientId::ClaudeCode, Scope::User) => (home.join(".claude.json"), servers("mcpServers")),
            (ClientId::ClaudeDesktop, Scope::User) => (
                dirs.config.join("Claude").join("claude_desktop_config.json"),
                servers("mcpServers"),
            ),
            (ClientId::Cursor, Scope::Project) => (root.join(".cursor/mcp.json"), servers("mcpServers")),
            (ClientId::Cursor, Scope::User) => (home.join(".cursor/mcp.json"), servers("mcpServers")),
            (ClientId::Vscode, Scope::Project) => (root.join(".vscode/mcp.json"), servers("servers")),
            (ClientId::Vscode, Scope::User) => (dirs.config.join("Code/User/mcp.json"), servers("servers")),
            (ClientId::Windsurf, Scope::User) => (
                home.join(".codeium/windsurf/mcp_config.json"),
                servers("mcpServers"),
            ),
            (ClientId::Zed, Scope::Project) => (root.join(".zed/settings.json"), servers("context_servers")),
            (ClientId::Zed, Scope::User) => (
                if cfg!(windows) {
                    dirs.config.join("Zed/settings.json")
                } else {
                    dirs.xdg_config.join("zed/settings.json")
                },
                servers("context_servers"),
            ),
            (ClientId::Codex, Scope::Project) => (root.join(".codex/config.toml"), servers("mcp_servers")),
            (ClientId::Codex, Scope::User) => (
                dirs.codex_home.clone().unwrap_or_else(|| home.join(".codex")).join("config.toml"),
                servers("mcp_servers"),
            ),
            (ClientId::Gemini, Scope::Project) => (root.join(".gemini/settings.json"), servers("mcpServers")),
            (ClientId::Gemini, Scope::User) => (home.join(".gemini/settings.json"), servers("mcpServers")),
            (ClientId::Cline, Scope::User) => (
                dirs.config.join(
                    "Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
                ),
                servers("mcpServers"),
            ),
            (ClientId::Goose, Scope::User) => (
                if cfg!(windows) {
                    dirs.config.join("Block/goose/config/config.yaml")
                } else {
                    dirs.xdg_config.join("goose/config.yaml")
                },
                servers("extensions"),
            ),
            (ClientId::Continue, Scope::Project) => (
                root.join(".continue/mcpServers").join(format!("{name}.yaml")),
                Place::File,
            ),
            (ClientId::Continue, Scope::User) => (
                home.join(".continue/config.yaml"),
                Place::List { key: "mcpServers" },
            ),
            (ClientId::Kiro, Scope::Project) => (root.join(".kiro/settings/mcp.json"), servers("mcpServers")),
            (ClientId::Kiro, Scope::User) => (home.join(".kiro/settings/mcp.json"), servers("mcpServers")),
            (ClientId::CopilotCli, Scope::Project) => (root.join(".github/mcp.json"), servers("mcpServers")),
            (ClientId::CopilotCli, Scope::User) => (
                dirs.copilot_home.clone().unwrap_or_else(|| home.join(".copilot")).join("mcp-config.json"),
                servers("mcpServers"),
            ),
            _ => return None,
        };
        Some((path, place))
    }

    /// The folder the agent reads Agent Skills from for `scope` (each skill
    /// in `<folder>/<name>/`), from each agent's documentation (sources in
    /// docs/agents.md); `None` where the agent documents none (Claude
    /// Desktop takes skills as uploads in its settings; Continue documents
    /// no skills folder).
    pub fn skills_folder(&self, scope: Scope, root: &Path, dirs: &Dirs) -> Option<PathBuf> {
        let home = &dirs.home;
        let folder = match (self.id, scope) {
            (ClientId::ClaudeCode, Scope::Project) => root.join(".claude/skills"),
            (ClientId::ClaudeCode, Scope::User) => home.join(".claude/skills"),
            (ClientId::Cursor, Scope::Project) => root.join(".cursor/skills"),
            (ClientId::Cursor, Scope::User) => home.join(".cursor/skills"),
            (ClientId::Vscode | ClientId::CopilotCli, Scope::Project) => {
                root.join(".github/skills")
            }
            (ClientId::Vscode | ClientId::CopilotCli, Scope::User) => home.join(".copilot/skills"),
            (ClientId::Windsurf, Scope::Project) => root.join(".windsurf/skills"),
            (ClientId::Windsurf, Scope::User) => home.join(".codeium/windsurf/skills"),
            (ClientId::Zed | ClientId::Codex, Scope::Project) => root.join(".agents/skills"),
            (ClientId::Zed | ClientId::Codex, Scope::User) => home.join(".agents/skills"),
            (ClientId::Gemini, Scope::Project) => root.join(".gemini/skills"),
            (ClientId::Gemini, Scope::User) => home.join(".gemini/skills"),
            (ClientId::Cline, Scope::Project) => root.join(".cline/skills"),
            (ClientId::Cline, Scope::User) => home.join(".cline/skills"),
            (ClientId::Goose, Scope::Project) => root.join(".goose/skills"),
            (ClientId::Goose, Scope::User) => dirs.xdg_config.join("goose/skills"),
            (ClientId::Kiro, Scope::Project) => root.join(".kiro/skills"),
            (ClientId::Kiro, Scope::User) => home.join(".kiro/skills"),
            (ClientId::ClaudeDesktop | ClientId::Continue, _) => return None,
        };
        Some(folder)
    }

    /// Whether the agent's entry carries a per-tool allow list (written
    /// from the lock: the call names `toolreg mcp serve` serves).
    pub fn has_allow_list(&self) -> bool {
        matches!(
            self.id,
            ClientId::Codex | ClientId::Gemini | ClientId::CopilotCli
        )
    }

    /// The entry named `name` that launches `command args…`, in the
    /// agent's documented shape; `tools` is the allow list where it has one.
    pub fn entry(&self, name: &str, command: &str, args: &[String], tools: &[String]) -> Value {
        match self.id {
            ClientId::ClaudeCode | ClientId::Vscode => {
                json!({"type": "stdio", "command": command, "args": args})
            }
            ClientId::ClaudeDesktop | ClientId::Cursor | ClientId::Windsurf | ClientId::Zed => {
                json!({"command": command, "args": args})
            }
            ClientId::Codex => json!({"command": command, "args": args, "enabled_tools": tools}),
            ClientId::Gemini => json!({"command": command, "args": args, "includeTools": tools}),
            ClientId::Cline | ClientId::Kiro => {
                json!({"command": command, "args": args, "disabled": false})
            }
            ClientId::CopilotCli => {
                json!({"type": "stdio", "command": command, "args": args, "tools": tools})
            }
            ClientId::Goose => json!({
                "name": name,
                "type": "stdio",
                "cmd": command,
                "args": args,
                "enabled": true,
                "bundled": false,
                "description": "The project's pinned tools, served by toolreg",
                "timeout": 300,
            }),
            ClientId::Continue => json!({"name": name, "command": command, "args": args}),
        }
    }

    /// For [`Place::File`]: the whole file around `entry`.
    pub fn file_document(&self, name: &str, entry: &Value) -> Value {
        json!({"name": name, "version": "0.0.1", "schema": "v1", "mcpServers": [entry]})
    }
}
