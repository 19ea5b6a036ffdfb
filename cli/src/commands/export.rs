//! `toolreg export --format mcp|openai`: the pinned, installed tools as one
//! JSON array an agent can load (call name, description, parameter schema),
//! read from each installed bundle's definition.

use serde_json::Value;

use super::{load_tool, read_tool_dir, Context};
use crate::args::ExportArg;
use crate::error::{Error, Result};
use crate::install;
use crate::lock::{self, Lockfile};
use crate::output;

pub fn run(ctx: &Context, format: ExportArg) -> Result<i32> {
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
        list.push(match format {
            ExportArg::Mcp => toolreg_core::export::to_mcp(&loaded.tool),
            ExportArg::Openai => toolreg_core::export::to_openai(&loaded.tool),
        });
    }
    output::json(&Value::Array(list));
    Ok(0)
}
