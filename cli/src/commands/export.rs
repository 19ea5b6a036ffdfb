//! `toolreg export --format mcp|openai`: the pinned, installed tools as one
//! JSON array an agent can load (call name, description, parameter schema),
//! read from each installed bundle's definition. Every pin is checked first
//! as `toolreg verify` checks it: a pin whose files were edited, added or
//! removed since install is refused, naming each file.

use serde_json::Value;

use super::verify::{check_all, refuse_drift, require_lock};
use super::Context;
use crate::args::ExportArg;
use crate::error::Result;
use crate::install::State;
use crate::output;

pub fn run(ctx: &Context, format: ExportArg) -> Result<i32> {
    let lock = require_lock(ctx, "export")?;
    let states = check_all(&ctx.cwd, &lock)?;
    refuse_drift(&states, "export")?;
    let list: Vec<Value> = states
        .iter()
        .filter_map(|(_, state)| match state {
            State::Intact { tool, .. } => Some(match format {
                ExportArg::Mcp => toolreg_core::export::to_mcp(tool),
                ExportArg::Openai => toolreg_core::export::to_openai(tool),
            }),
            _ => None,
        })
        .collect();
    output::json(&Value::Array(list));
    Ok(0)
}
