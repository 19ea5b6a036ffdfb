//! `toolreg export --format mcp|openai|anthropic|gemini|gemini-json-schema`:
//! the pinned, installed tools as one JSON array an agent (or a model API)
//! can load, read from each installed bundle's definition. Every pin is
//! admitted first as `toolreg verify` checks it ([`crate::admission`]): a
//! kind the policy does not allow, a version the registry withholds (asked
//! now, unless `--offline`; as it said last when it can't be reached), a
//! finding not accepted, a missing builder `require_provenance` wants, or a
//! pin whose files were edited, added or removed since install is refused,
//! naming it.
//! `--protocol` shapes MCP tools for an older protocol version (default:
//! `[registry] mcp_protocol` in toolreg.toml, else the newest), `--strict`
//! asks for OpenAI strict mode. What a format can't carry over is reported
//! on stderr, one `warning:` line per loss.

use serde_json::Value;
use toolreg_core::export::{convert, ExportFormat, ExportOptions, McpProtocol};

use super::verify::{policy_and_record, require_lock};
use super::Context;
use crate::admission::offline;
use crate::args::ExportArg;
use crate::error::{Error, Result};
use crate::output;
use crate::project::Project;

pub fn run(
    ctx: &Context,
    format: ExportArg,
    protocol: Option<McpProtocol>,
    strict: bool,
    offline_only: bool,
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
    let lock = require_lock(ctx, "export")?;
    let (policy, record, warning) = policy_and_record(ctx, &lock, offline_only)?;
    let admitted = offline::admit(offline::check(&ctx.cwd, &policy, &lock, &record)?, "export")?;
    let mut list = Vec::new();
    for a in &admitted {
        let pin = &a.pin;
        if a.tool.format == toolreg_core::Format::Skill {
            output::status(format!(
                "skipping {} {}: an Agent Skill is no tool definition; `toolreg link AGENT` puts it in the agent's skills folder",
                pin.name, pin.version
            ));
            continue;
        }
        let converted = convert(&a.tool, format, options).map_err(|source| Error::Core {
            context: format!("{} {}", pin.name, pin.version),
            source,
        })?;
        for w in &converted.warnings {
            output::status(format!("warning: {} {}: {w}", pin.name, pin.version));
        }
        list.push(converted.value);
    }
    output::json(&Value::Array(list));
    if let Some(w) = warning {
        output::status(w);
    }
    Ok(0)
}
