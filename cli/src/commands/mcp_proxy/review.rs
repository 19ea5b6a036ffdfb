//! `toolreg mcp review NAME` shows the tools of a pinned server that the
//! proxy withheld, as it last listed them: what changed since the pin (in
//! `toolreg update`'s words) and the lint findings. `toolreg mcp accept
//! NAME [TOOL…]` pins them: their fingerprints replace the old ones and
//! their flag findings are accepted. That changes what the agent's model
//! reads, so it asks on a terminal and needs `--yes` elsewhere. A tool
//! hitting a block rule is never accepted.

use std::io::IsTerminal;
use std::path::Path;

use serde_json::{json, Value};
use toolreg_mcp::proxy::check::{self, Status, Verdict};

use super::store::{self, Store};
use super::{details, pins_of, report};
use crate::commands::Context;
use crate::error::{Error, Result};
use crate::lock::Lockfile;
use crate::output;

/// The verdicts on the pending tools of `name`, sorted by tool.
fn pending(root: &Path, name: &str) -> Result<(Lockfile, Store, Vec<Verdict>)> {
    store::check_name("NAME", name)?;
    let lock = Lockfile::load(root)?.unwrap_or_default();
    let server = lock.server(name).ok_or_else(|| {
        Error::Usage(format!(
            "toolreg.lock pins no server {name}; run `toolreg mcp proxy --pin {name} --record -- CMD…` first"
        ))
    })?;
    let store = Store::load(root, name);
    let pins = pins_of(Some(server), &store);
    let listed: Vec<Value> = store.pending.values().cloned().collect();
    let verdicts = check::check(&pins, &listed, false)
        .into_iter()
        .filter(|v| !v.status.passes())
        .collect();
    Ok((lock, store, verdicts))
}

/// `toolreg mcp review NAME`.
pub fn review(ctx: &Context, project: Option<&Path>, name: &str) -> Result<i32> {
    let root = ctx.path(project);
    let (lock, store, verdicts) = pending(&root, name)?;
    let pins = pins_of(lock.server(name), &store);
    if ctx.json {
        let tools: Vec<Value> = verdicts
            .iter()
            .map(|v| {
                json!({
                    "tool": v.name, "status": status(v.status), "listed": v.fingerprint,
                    "pinned": pins.tools.get(&v.name), "diff": v.diff, "findings": v.findings,
                })
            })
            .collect();
        output::json(&json!({"server": name, "pending": tools}));
        return Ok(0);
    }
    if verdicts.is_empty() {
        crate::outln!("nothing of {name} is pending review: every tool it last listed is pinned");
        return Ok(0);
    }
    for v in &verdicts {
        let text = report(name, &pins, v);
        crate::outln!("{}", text.trim_start_matches("toolreg mcp proxy: "));
    }
    crate::outln!("accept them with `toolreg mcp accept {name} [TOOL…]` once you have read them");
    Ok(0)
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Changed => "changed",
        Status::Unpinned => "not_pinned",
        Status::Blocked => "blocked",
        Status::Flagged => "flagged",
        Status::Invalid => "invalid",
    }
}

/// `toolreg mcp accept NAME [TOOL…] [--yes]`.
pub fn accept(
    ctx: &Context,
    project: Option<&Path>,
    name: &str,
    tools: &[String],
    yes: bool,
) -> Result<i32> {
    let root = ctx.path(project);
    let (mut lock, mut store, verdicts) = pending(&root, name)?;
    for t in tools {
        if !verdicts.iter().any(|v| &v.name == t) {
            return Err(Error::Usage(format!(
                "{t} is not pending review for {name} (see `toolreg mcp review {name}`)"
            )));
        }
    }
    let chosen: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| tools.is_empty() || tools.contains(&v.name))
        .collect();
    if let Some(v) = chosen.iter().find(|v| v.status == Status::Blocked) {
        return Err(Error::Usage(format!(
            "{} of {name} hits block rule(s) {}: it can't be accepted",
            v.name,
            check::rules(v.findings.iter().filter(|f| f.is_block()))
        )));
    }
    if chosen.is_empty() {
        crate::outln!("nothing of {name} is pending review");
        return Ok(0);
    }
    let lines: Vec<String> = chosen
        .iter()
        .map(|v| format!("{name} {} -> {}", v.name, v.fingerprint))
        .collect();
    if !yes {
        let asked = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        if !asked {
            return Err(Error::Usage(format!(
                "accepting {} changes what the agent's model reads, and there is no terminal to ask; read it with `toolreg mcp review {name}` and rerun with --yes; toolreg.lock is unchanged",
                lines.join(", ")
            )));
        }
        if !confirm(&chosen)? {
            return Err(Error::Usage(
                "not confirmed; toolreg.lock is unchanged".into(),
            ));
        }
    }
    let Some(mut server) = lock.server(name).cloned() else {
        return Ok(1);
    };
    for v in &chosen {
        server.tools.insert(v.name.clone(), v.fingerprint.clone());
        let mut flags: Vec<_> = v.findings.iter().map(|f| f.rule).collect();
        flags.sort();
        flags.dedup();
        if flags.is_empty() {
            server.accepted_findings.remove(&v.name);
        } else {
            server.accepted_findings.insert(v.name.clone(), flags);
        }
        store.pinned.insert(v.name.clone(), v.definition.clone());
        store.pending.remove(&v.name);
    }
    lock.upsert_server(server);
    lock.save(&root)?;
    store.save(&root, name)?;
    for l in &lines {
        crate::outln!("pinned {l}");
    }
    Ok(0)
}

/// Ask on the terminal (stderr, stdin), after showing what changes.
fn confirm(chosen: &[&Verdict]) -> Result<bool> {
    let listing: String = chosen
        .iter()
        .map(|v| {
            format!(
                "  {}\n{}",
                output::clean(&v.name),
                output::clean(&details(v))
            )
        })
        .collect();
    output::confirm_move(&listing)
}
