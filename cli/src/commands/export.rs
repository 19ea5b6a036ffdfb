//! `toolreg export --format mcp|openai|anthropic|gemini|gemini-json-schema`:
//! the pinned, installed tools as one JSON array an agent (or a model API)
//! can load, read from each installed bundle's definition. `--protocol`
//! shapes MCP tools for an older protocol version (default: `[registry]
//! mcp_protocol` in toolreg.toml, else the newest), `--strict` asks for
//! OpenAI strict mode. What a format can't carry over is reported on stderr,
//! one `warning:` line per loss.

use serde_json::Value;
use toolreg_core::export::{convert, ExportFormat, ExportOptions, McpProtocol};

use super::{load_tool, read_tool_dir, Context};
use crate::args::ExportArg;
use crate::error::{Error, Result};
use crate::install;
use crate::lock::{self, Lockfile};
use crate::output;
use crate::project::Project;

pub fn run(
    ctx: &Context,
    format: ExportArg,
    protocol: Option<McpProtocol>,
    strict: bool,
) -> Result<i32> {
    let format = format.format();
    if protocol.is_some() && format != ExportFormat::Mcp {
        return Err(Error::Usage(format!(
            "--protocol applies to --format mcp, not --format {format}"
        )));
    }
    if strict && format != ExportFormat::Openai {
        return Err(Error::Usage(format!(
            "--strict applies to --format openai, not --format {format}"
        )));
    }
    let protocol = match protocol {
        Some(p) => p,
        None => match Project::load(&ctx.cwd)? {
            Some(project) => project.mcp_protocol()?.unwrap_or_default(),
            None => McpProtocol::default(),
        },
    };
    let options = ExportOptions { protocol, strict };
    let lock = Lockfile::load(&ctx.cwd)?.ok_or_else(|| Error::Lock {
        path: ctx.cwd.join(lock::FILE).display().to_string(),
        message: "missing: there is nothing pinned to export; run `toolreg add NAME` and `toolreg install`".into(),
    })?;
    let mut list = Vec::new();
    for tool in lock.tools() {
        if !install::is_installed(&ctx.cwd, tool) {
            return Err(Error::Installed(format!(
                "{} {} is pinned but not installed; run `toolreg install` first",
                tool.name, tool.version
            )));
        }
        let dir = install::tool_dir(&ctx.cwd, tool);
        let files = read_tool_dir(&dir)?;
        let loaded = load_tool(&dir.display().to_string(), &files)?;
        let converted = convert(&loaded.tool, format, options).map_err(|source| Error::Core {
            context: format!("{} {}", tool.name, tool.version),
            source,
        })?;
        for w in &converted.warnings {
            output::status(format!("warning: {} {}: {w}", tool.name, tool.version));
        }
        list.push(converted.value);
    }
    output::json(&Value::Array(list));
    Ok(0)
}
