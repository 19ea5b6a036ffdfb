//! `toolreg install [--locked]`: bring toolreg.lock in step with
//! toolreg.toml (never with `--locked`, which instead fails if the lock is
//! missing or out of date), then admit, download, verify and unpack every
//! pinned bundle, in the order of [`crate::admission`]:
//!
//! * every pin, installed or not, is held to what the registry says about
//!   its version now: its kind, not quarantined or blocked (the registry's
//!   reason is the error), its lint findings accepted by the lock, the
//!   builder the lock records and `[policy] require_provenance`. What it
//!   says is recorded in `.toolreg/state.json`. When the registry can't be
//!   reached, installed pins are held to that record instead (with a
//!   warning), so an intact install still works offline;
//! * a pin not installed (or drifted: it is repaired) is downloaded, its
//!   attestation and log record checked, its sha256 compared with the lock
//!   before anything is unpacked, its definition fingerprint with the lock's
//!   (or, the first time, with the one the registry recorded at publish).
//!
//! Without `--locked`, what the project's `[policy] accept_findings`
//! accepts, the definition fingerprint and the verified builder are
//! recorded in the lock where it has none yet; with `--locked` a finding the
//! lock does not accept is refused.
//!
//! Last, the skills folder of every agent `toolreg link` linked gets a copy
//! of each installed skill ([`crate::skills::sync`]).

use serde_json::json;

use super::Context;
use crate::admission::online::PinNews;
use crate::admission::Gate;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::install::{self, Outcome};
use crate::lock::{self, LockedTool, Lockfile};
use crate::output;
use crate::pinning;
use crate::project::Project;

pub fn run(ctx: &Context, locked: bool) -> Result<i32> {
    let mut project = Project::require(&ctx.cwd)?;
    let requirements = project.requirements()?;
    let existing = Lockfile::load(&ctx.cwd)?;
    let client = ctx.client(Some(&project))?;
    let mut lock = if locked {
        for_locked(ctx, &requirements, existing)?
    } else {
        existing.unwrap_or_default()
    };
    let mut gate = Gate::new(&client, &project, &lock, &ctx.cwd, false)?;
    if !locked {
        let had_lock = ctx.cwd.join(lock::FILE).exists();
        let changes = pinning::sync(&mut gate, &requirements, &mut lock, None)?;
        if !ctx.json {
            for c in &changes {
                output::status(c.to_string());
            }
        }
        if !changes.is_empty() || !had_lock {
            lock.save(&ctx.cwd)?;
        }
    }
    // What the registry said is worth keeping even when a pin is refused.
    let result = install_pins(ctx, &project, &mut gate, &lock, locked);
    let saved = gate.save_record(&ctx.cwd, &lock);
    let (installed, fresh, news) = result?;
    saved?;

    // Findings the policy accepts, fingerprints and builders are recorded
    // where the lock has none yet.
    let mut recorded = false;
    if !locked {
        for (name, news, fingerprint) in news {
            let Some(mut t) = lock.get(&name).cloned() else {
                continue;
            };
            if let Some(rules) = news.accept {
                if !ctx.json {
                    let ids: Vec<&str> = rules.iter().map(|r| r.as_str()).collect();
                    output::status(format!(
                        "accepting findings {} of {} {} ([policy] accept_findings)",
                        ids.join(", "),
                        t.name,
                        t.version
                    ));
                }
                t.accepted_findings = rules;
            }
            if news.provenance.is_some() {
                t.provenance = news.provenance;
            }
            if t.definition.is_none() {
                t.definition = fingerprint;
            }
            recorded |= lock.get(&name) != Some(&t);
            lock.upsert(t);
        }
    }
    let logged = gate.finish(ctx.json, &mut project, &mut lock)?;
    if (logged.new_checkpoint.is_some() || recorded) && !locked {
        lock.save(&ctx.cwd)?;
    }
    // Linked agents' skills folders follow the installed skills.
    let skills = crate::skills::sync(&ctx.cwd, &lock)?;
    if ctx.json {
        output::json(&json!({ "tools": installed, "skills": skills }));
    } else if fresh == 0 {
        crate::outln!(
            "all {} pinned tool(s) are already installed",
            lock.tools().len()
        );
    } else {
        crate::outln!(
            "installed {fresh} tool(s), {} already in place, in {}",
            lock.tools().len() - fresh,
            install::TOOLS_DIR
        );
    }
    if !ctx.json {
        for c in &skills {
            output::status(c.line(&ctx.cwd));
        }
    }
    Ok(0)
}

/// The lock `--locked` installs: it must exist and match toolreg.toml.
fn for_locked(
    ctx: &Context,
    requirements: &[(String, semver::VersionReq)],
    existing: Option<Lockfile>,
) -> Result<Lockfile> {
    let lock = existing.ok_or_else(|| Error::Lock {
        path: ctx.cwd.join(lock::FILE).display().to_string(),
        message: "missing, and --locked never creates it; run `toolreg install` without --locked"
            .into(),
    })?;
    let reasons = pinning::out_of_date(requirements, &lock);
    if !reasons.is_empty() {
        return Err(Error::LockOutOfDate { reasons });
    }
    Ok(lock)
}

/// What installing the pins did: the `--json` entries, how many were
/// (re)installed, and per pin what to record in the lock: what admission
/// learnt, and the definition fingerprint (checked against the registry's).
type Done = (
    Vec<serde_json::Value>,
    usize,
    Vec<(String, PinNews, Option<String>)>,
);

/// Admit and install every pin of `lock`.
fn install_pins(
    ctx: &Context,
    project: &Project,
    gate: &mut Gate<'_>,
    lock: &Lockfile,
    locked: bool,
) -> Result<Done> {
    let token_for = |registry: &str| {
        ctx.settings(Some(project))
            .ok()
            .filter(|s| s.registry == registry)
            .and_then(|s| s.token)
    };
    let mut installed = Vec::new();
    let mut fresh = 0;
    let mut news = Vec::new();
    for tool in lock.tools() {
        // Steps 1–4, against what the registry says now.
        let in_place = install::is_installed(&ctx.cwd, tool);
        let learnt = gate.check_pin(tool, locked, in_place)?;
        // A fingerprint about to be recorded for the first time must be the
        // one the registry recorded at publish: checked on the downloaded
        // bundle before anything is unpacked, or (already installed) on the
        // files in place before it is recorded.
        let mut fingerprint_checked = false;
        let done = install::install(&ctx.cwd, tool, || {
            let registry = Client::new(&tool.registry, token_for(&tool.registry))?;
            let download = registry.download(&tool.name, &tool.version.to_string())?;
            // Steps 4–5 for the bytes, before the install checks 6–8.
            gate.check_download(tool, &download.bytes)?;
            if tool.definition.is_none() && !locked {
                let what = format!("{} {}", tool.name, tool.version);
                let actual = install::bundle_fingerprint(&what, &download.bytes)?;
                registry_fingerprint(tool, &learnt, &actual, "nothing was installed")?;
                fingerprint_checked = true;
            }
            Ok(download)
        })?;
        match done.outcome {
            Outcome::Installed => {
                fresh += 1;
                if !ctx.json {
                    output::status(format!(
                        "installed {} {} ({})",
                        tool.name, tool.version, tool.execution
                    ));
                }
            }
            Outcome::Repaired => {
                fresh += 1;
                if !ctx.json {
                    output::status(format!(
                        "repaired {} {}: the installed files had drifted from toolreg.lock",
                        tool.name, tool.version
                    ));
                    for d in &done.repaired {
                        output::status(format!("    {d}"));
                    }
                }
            }
            Outcome::AlreadyInstalled => {}
        }
        // Recorded only once checked against the registry's (not when the
        // registry could not be asked).
        let mut fingerprint = None;
        if tool.definition.is_none() && !locked && learnt.asked {
            if !fingerprint_checked {
                registry_fingerprint(
                    tool,
                    &learnt,
                    &done.definition,
                    "it was not recorded in toolreg.lock",
                )?;
            }
            fingerprint = Some(done.definition.clone());
        }
        installed.push(json!({
            "name": tool.name,
            "version": tool.version.to_string(),
            "sha256": tool.sha256,
            "execution": tool.execution,
            "path": install::tool_dir(&ctx.cwd, tool).display().to_string(),
            "installed": done.outcome != Outcome::AlreadyInstalled,
            "repaired": done.outcome == Outcome::Repaired,
            "definition": done.definition,
        }));
        news.push((tool.name.clone(), learnt, fingerprint));
    }
    Ok((installed, fresh, news))
}

/// Step 7 when a fingerprint is first recorded: the pin's bundle must define
/// the fingerprint the registry recorded for the version
/// (`definition_sha256`); a registry that records none (a version published
/// before fingerprints were stored, an older server, or one not reached) is
/// not an error.
fn registry_fingerprint(
    tool: &LockedTool,
    learnt: &PinNews,
    installed: &str,
    outcome: &str,
) -> Result<()> {
    match &learnt.definition_sha256 {
        Some(recorded) if recorded != installed => Err(Error::Installed(format!(
            "{} {}: the registry records the definition fingerprint {recorded}, but its bundle defines {installed}; {outcome}",
            tool.name, tool.version
        ))),
        _ => Ok(()),
    }
}
