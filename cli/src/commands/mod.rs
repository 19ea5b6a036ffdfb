//! One module per `toolreg` command, and [`run`], which dispatches to them.
//! Each command returns the process exit code on success paths that are
//! not plain success (e.g. `validate` of an invalid tool exits 1).

pub mod add;
pub mod deprecate;
pub mod export;
pub mod import;
pub mod info;
pub mod init;
pub mod install;
pub mod login;
pub mod mcp;
pub mod mcp_proxy;
pub mod outdated;
pub mod owner;
pub mod pack;
pub mod publish;
pub mod quarantine;
pub mod search;
pub mod trusted_publisher;
pub mod update;
pub mod validate;
pub mod verify;
pub mod yank;

use std::path::{Path, PathBuf};

use crate::args::{Cli, Command, Global, McpAction};
use crate::client::Client;
use crate::config::{self, Credentials, Settings};
use crate::error::{Error, Result};
use crate::project::Project;

/// What every command gets: global flags, `--json`, and the working directory.
#[derive(Debug, Clone)]
pub struct Context {
    pub global: Global,
    pub json: bool,
    pub cwd: PathBuf,
}

impl Context {
    /// Registry and token after precedence (flags/env > project > stored).
    pub fn settings(&self, project: Option<&Project>) -> Result<Settings> {
        let project_registry = match project {
            Some(p) => p.registry_url()?,
            None => None,
        };
        let stored = Credentials::load()?;
        config::settings(
            self.global.registry.as_deref(),
            self.global.token.as_deref(),
            project_registry.as_deref(),
            &stored,
        )
    }

    /// A client for the registry the settings name.
    pub fn client(&self, project: Option<&Project>) -> Result<Client> {
        let s = self.settings(project)?;
        Client::new(&s.registry, s.token)
    }

    /// A client for the registry, using the project in the working directory if any.
    pub fn client_here(&self) -> Result<Client> {
        let project = Project::load(&self.cwd)?;
        self.client(project.as_ref())
    }

    /// `path` relative to the working directory (default: the working directory).
    pub fn path(&self, path: Option<&Path>) -> PathBuf {
        match path {
            Some(p) if p.is_absolute() => p.to_path_buf(),
            Some(p) => self.cwd.join(p),
            None => self.cwd.clone(),
        }
    }
}

/// Run a parsed command line; `Ok(code)` is the exit code.
pub fn run(cli: Cli) -> Result<i32> {
    let cwd =
        std::env::current_dir().map_err(|e| Error::io("could not read", Path::new("."), e))?;
    let ctx = Context {
        global: cli.global,
        json: cli.json,
        cwd,
    };
    match cli.command {
        Command::Login => login::run(&ctx),
        Command::Init { path, format, name } => {
            init::run(&ctx, path.as_deref(), format, name.as_deref())
        }
        Command::Validate { path } => validate::run(&ctx, path.as_deref()),
        Command::Pack { path, output } => pack::run(&ctx, path.as_deref(), output.as_deref()),
        Command::Publish { path, dry_run } => publish::run(&ctx, path.as_deref(), dry_run),
        Command::Search {
            query,
            license,
            keyword,
            execution,
            format,
            tier,
            sort,
            page,
            per_page,
        } => {
            let filters = search::Filters {
                license,
                keyword,
                execution,
                format,
                tier,
                sort,
                page,
                per_page,
            };
            search::run(&ctx, &query.join(" "), &filters)
        }
        Command::Info { spec } => info::run(&ctx, &spec.0, spec.1.as_ref()),
        Command::Add {
            spec,
            accept_findings,
        } => add::run(&ctx, &spec.0, spec.1.as_ref(), accept_findings),
        Command::Install { locked } => install::run(&ctx, locked),
        Command::Update {
            name,
            accept_findings,
            yes,
            diff,
        } => update::run(&ctx, name.as_deref(), accept_findings, yes, diff),
        Command::Outdated => outdated::run(&ctx),
        Command::Export {
            format,
            protocol,
            strict,
            offline,
        } => export::run(&ctx, format, protocol, strict, offline),
        Command::Verify { against, offline } => verify::run(&ctx, against.as_deref(), offline),
        Command::Import { file, output } => import::run(&ctx, &file, output.as_deref()),
        Command::Yank { spec, undo } => yank::run(&ctx, &spec.0, &spec.1, undo),
        Command::Deprecate {
            spec,
            message,
            successor,
            undo: _,
        } => deprecate::run(
            &ctx,
            &spec.0,
            spec.1.as_ref(),
            message.as_deref(),
            successor.as_deref(),
        ),
        Command::Owner { action } => owner::run(&ctx, action),
        Command::TrustedPublisher { action } => trusted_publisher::run(&ctx, action),
        Command::Report { spec, reason } => quarantine::report(&ctx, &spec.0, &spec.1, &reason),
        Command::Quarantine { spec, reason, .. } => {
            quarantine::run(&ctx, &spec.0, &spec.1, reason.as_deref())
        }
        Command::Mcp {
            action:
                McpAction::Serve {
                    project,
                    tools,
                    http,
                    log_file,
                },
        } => mcp::serve(&ctx, project.as_deref(), &tools, http, log_file.as_deref()),
        Command::Mcp {
            action:
                McpAction::Proxy {
                    name,
                    record,
                    strict,
                    project,
                    url,
                    command,
                },
        } => {
            let launch = match url {
                Some(url) => crate::lock::Launch::Url(url),
                None => crate::lock::Launch::Command(command),
            };
            mcp_proxy::run(&ctx, project.as_deref(), &name, record, strict, launch)
        }
        Command::Mcp {
            action: McpAction::Review { name, project },
        } => mcp_proxy::review::review(&ctx, project.as_deref(), &name),
        Command::Mcp {
            action:
                McpAction::Accept {
                    name,
                    tools,
                    yes,
                    project,
                },
        } => mcp_proxy::review::accept(&ctx, project.as_deref(), &name, &tools, yes),
        Command::Link(args) => crate::link::run(&ctx, &args, crate::link::Action::Link),
        Command::Unlink(args) => crate::link::run(&ctx, &args, crate::link::Action::Unlink),
    }
}

/// Read a tool directory, turning core errors into CLI errors that name it.
/// File names that a registry would refuse in a bundle (ones another file
/// system writes as a different file) are refused here already.
pub fn read_tool_dir(dir: &Path) -> Result<toolreg_core::ToolFiles> {
    if !dir.exists() {
        return Err(Error::Usage(format!("{} does not exist", dir.display())));
    }
    let context = || format!("cannot read the tool directory {}", dir.display());
    let files = toolreg_core::ToolFiles::read_dir(dir).map_err(|source| Error::Core {
        context: context(),
        source,
    })?;
    toolreg_core::bundle::names::check(files.paths()).map_err(|source| Error::Core {
        context: context(),
        source,
    })?;
    Ok(files)
}

/// Load (parse + validate) a tool, with every problem on failure.
pub fn load_tool(what: &str, files: &toolreg_core::ToolFiles) -> Result<toolreg_core::Loaded> {
    toolreg_core::load(files).map_err(|e| match e {
        toolreg_core::Error::Invalid(problems) => Error::Invalid {
            what: what.to_string(),
            problems,
        },
        source => Error::Core {
            context: format!("cannot load {what}"),
            source,
        },
    })
}
