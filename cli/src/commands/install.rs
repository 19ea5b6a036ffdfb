//! `toolreg install [--locked]`: bring toolreg.lock in step with
//! toolreg.toml (never with `--locked`, which instead fails if the lock is
//! missing or out of date), then download, verify and unpack every pinned
//! bundle. Pins are checked against the project's policy; blocked versions
//! are refused with the registry's reason. An installed pin whose files
//! drifted from the lock is reinstalled (repaired), and the definition
//! fingerprint of each installed pin is recorded in the lock where it has
//! none yet (never with `--locked`).

use serde_json::json;

use super::Context;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::install::{self, Outcome};
use crate::lock::{self, Lockfile};
use crate::output;
use crate::pinning;
use crate::project::Project;

pub fn run(ctx: &Context, locked: bool) -> Result<i32> {
    let mut project = Project::require(&ctx.cwd)?;
    let requirements = project.requirements()?;
    let policy = project.policy()?;
    let existing = Lockfile::load(&ctx.cwd)?;
    let mut lock = if locked {
        let lock = existing.ok_or_else(|| Error::Lock {
            path: ctx.cwd.join(lock::FILE).display().to_string(),
            message:
                "missing, and --locked never creates it; run `toolreg install` without --locked"
                    .into(),
        })?;
        let reasons = pinning::out_of_date(&requirements, &lock);
        if !reasons.is_empty() {
            return Err(Error::LockOutOfDate { reasons });
        }
        lock
    } else {
        let had_lock = existing.is_some();
        let mut lock = existing.unwrap_or_default();
        let client = ctx.client(Some(&project))?;
        let changes = pinning::sync(&client, &requirements, &mut lock, policy.as_ref(), None)?;
        check_new_pins(&client, &project, &lock, &changes)?;
        for c in &changes {
            if !ctx.json {
                output::status(c.to_string());
            }
        }
        if !changes.is_empty() || !had_lock {
            lock.save(&ctx.cwd)?;
        }
        lock
    };

    // The transparency log must vouch for every bundle fetched, before it is unpacked.
    let client = ctx.client(Some(&project))?;
    let mut log = crate::transparency::Session::new(&client, &project, &lock)?;

    let mut installed = Vec::new();
    let mut fresh = 0;
    let mut fingerprints = Vec::new();
    for tool in lock.tools() {
        if let Some(policy) = &policy {
            policy.check(&tool.name, &tool.version.to_string(), tool.execution)?;
        }
        let token = ctx
            .settings(Some(&project))
            .ok()
            .filter(|s| s.registry == tool.registry)
            .and_then(|s| s.token);
        // Pins already installed are not downloaded again: when the policy
        // requires provenance, check theirs here.
        if log.requires_provenance(&tool.name) {
            log.check_provenance(&client, tool)?;
        }
        let done = install::install(&ctx.cwd, tool, || {
            let download = Client::new(&tool.registry, token)?
                .download(&tool.name, &tool.version.to_string())?;
            log.verify_download(&client, tool, &download.bytes)?;
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
        if tool.definition.is_none() {
            fingerprints.push((tool.name.clone(), done.definition.clone()));
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
    }
    // Pins locked before their first install get their fingerprint now.
    let mut recorded = false;
    if !locked {
        for (name, definition) in fingerprints {
            if let Some(mut t) = lock.get(&name).cloned() {
                t.definition = Some(definition);
                lock.upsert(t);
                recorded = true;
            }
        }
    }
    let logged = log.finish(ctx.json, &mut project, &mut lock)?;
    if (logged.new_checkpoint.is_some() || recorded) && !locked {
        lock.save(&ctx.cwd)?;
    }
    if ctx.json {
        output::json(&json!({ "tools": installed }));
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
    Ok(0)
}

/// The provenance of every pin `sync` added or moved, checked before the
/// lock is written: an attestation that does not verify, or a version
/// without provenance the policy requires, leaves the lock as it was.
fn check_new_pins(
    client: &Client,
    project: &Project,
    lock: &Lockfile,
    changes: &[pinning::Change],
) -> Result<()> {
    let mut session = crate::transparency::Session::new(client, project, lock)?;
    for change in changes {
        if let pinning::Change::Added(pin) | pinning::Change::Updated { to: pin, .. } = change {
            session.check_provenance(client, pin)?;
        }
    }
    Ok(())
}
