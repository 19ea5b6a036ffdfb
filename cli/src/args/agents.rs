//! The arguments of the commands that wire toolreg into agents:
//! `toolreg mcp …` (serve the pins, proxy a third-party server, review and
//! accept its changes) and `toolreg link` / `unlink`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Serve exactly the installed pins of toolreg.lock, after the same
    /// offline checks as `toolreg verify`; stdout carries MCP messages only.
    Serve {
        /// The agent project (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Serve only these pins (registry or call names).
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        tools: Vec<String>,
        /// Streamable HTTP on this loopback address (port 0: any free port)
        /// instead of stdio.
        #[arg(long, value_parser = parse_loopback, value_name = "127.0.0.1:PORT")]
        http: Option<std::net::SocketAddr>,
        /// Also append the log lines to this file.
        #[arg(long, value_name = "FILE")]
        log_file: Option<PathBuf>,
    },
    /// Run a third-party MCP server (CMD after `--`, or --url) behind toolreg: only
    /// the tool definitions pinned in toolreg.lock's [[server]] NAME get
    /// through; stdout carries MCP messages only.
    Proxy {
        /// The pinned server's name in toolreg.lock.
        #[arg(long = "pin", value_name = "NAME")]
        name: String,
        /// Pin the tools not pinned yet (trust on first use).
        #[arg(long)]
        record: bool,
        /// End the session instead of withholding a tool.
        #[arg(long)]
        strict: bool,
        /// The agent project (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// The server's Streamable HTTP endpoint, instead of a command.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        url: Option<String>,
        /// The server command and its arguments.
        #[arg(last = true, required_unless_present = "url", value_name = "CMD")]
        command: Vec<String>,
    },
    /// Show the tools of a pinned server that the proxy withheld, and why.
    Review {
        /// The pinned server's name.
        name: String,
        /// The agent project (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Pin the withheld tools of a server (all, or the TOOLs named) after
    /// reading them with `toolreg mcp review`.
    Accept {
        /// The pinned server's name.
        name: String,
        /// The tools to pin (default: every one pending review).
        tools: Vec<String>,
        /// Don't ask (needed when there is no terminal).
        #[arg(long)]
        yes: bool,
        /// The agent project (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

/// The options of `toolreg link` and `toolreg unlink`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// The agent (claude-code, claude-desktop, cursor, vscode, windsurf, zed,
    /// codex, gemini, cline, goose, continue, kiro, copilot-cli).
    #[arg(value_parser = parse_client, required_unless_present = "list")]
    pub client: Option<crate::link::ClientId>,
    /// List each agent config found and whether this project's entry is in
    /// it and current.
    #[arg(long, conflicts_with_all = ["client", "dry_run"])]
    pub list: bool,
    /// The project's own config file, or the user's (default: project where
    /// the agent has one).
    #[arg(long, value_enum, value_name = "SCOPE")]
    pub scope: Option<crate::link::Scope>,
    /// The entry's name (default: toolreg).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The agent project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Put the agent's MCP server NAME behind `toolreg mcp proxy` (its
    /// command: after `--`, --url, or the entry NAME's own); with unlink,
    /// put the entry back as it was.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["list", "name"])]
    pub proxy: Option<String>,
    /// With --proxy: the server's Streamable HTTP endpoint.
    #[arg(
        long,
        value_name = "URL",
        requires = "proxy",
        conflicts_with = "command"
    )]
    pub url: Option<String>,
    /// With --proxy: the server's command and arguments.
    #[arg(last = true, value_name = "CMD", requires = "proxy")]
    pub command: Vec<String>,
}

fn parse_loopback(s: &str) -> Result<std::net::SocketAddr, String> {
    toolreg_mcp::parse_http_addr(s).map_err(|e| e.to_string())
}

fn parse_client(s: &str) -> Result<crate::link::ClientId, String> {
    s.parse()
}
