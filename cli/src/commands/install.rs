//! `toolreg install [--locked]`: bring toolreg.lock in step with
//! toolreg.toml (never with `--locked`, which instead fails if the lock is
//! missing or out of date), then download, verify and unpack every pinned
//! bundle. Pins are checked against the project's policy; blocked versions
//! are refused with the registry's reason. An installed pin whose files
//! drifted from the lock is reinstalled (repaired), and the definition
//! fingerprint of each installed pin is recorded in the lock where it has
//! none yet (never with `--locked`), after checking it is the one the
//! registry recorded for the version.
//!
//! Every pin fetched is held to the definition lint findings the registry
//! holds for its version (asked after the download, before anything is
//! unpacked; an intact installed pin needs no registry): each rule found
//! must be accepted in toolreg.lock. Without `--locked`, rules the
//! project's `[policy] accept_findings` accepts are recorded; otherwise
//! (and always with `--locked`) the pin is refused, naming the version, the
//! rules and how to accept them.

use serde_json::json;

use super::Context;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::install::{self, Outcome};
use crate::lock::{self, Lockfile};
use crate::output;
use crate::pinning::{self, Change};
use crate::project::Project;

pub fn run(ctx: &Context, locked: bool) -> Result<i32> {
    let mut project = Project::require(&ctx.cwd)?;
    let requirements = project.requirements()?;
    let policy = project.policy()?;
    let acceptance = pinning::Acceptance::of(&project, false)?;
    let existing = Lockfile::load(&ctx.cwd)?;
    // Pins resolved by this run had their findings checked then.
    let mut checked: Vec<String> = Vec::new();
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
        let changes = pinning::sync(
            &client,
            &requirements,
            &mut lock,
            policy.as_ref(),
            &acceptance,
            None,
        )?;
        check_new_pins(&client, &project, &lock, &changes)?;
        for c in &changes {
            match c {
                Change::Added(t) | Change::Updated { to: t, .. } => checked.push(t.name.clone()),
                Change::Removed(_) => {}
            }
            if !ctx.json {
                output::status(c.to_string());
            }
        }
        if !changes.is_empty() || !had_lock {
            lock.save(&ctx.cwd)?;
        }
        lock
    };

    let client = ctx.client(Some(&project))?;
    let token_for = |registry: &str| {
        ctx.settings(Some(&project))
            .ok()
            .filter(|s| s.registry == registry)
            .and_then(|s| s.token)
    };

    // The transparency log must vouch for every bundle fetched, before it is unpacked.
    let mut log = crate::transparency::Session::new(&client, &project, &lock)?;

    let mut installed = Vec::new();
    let mut fresh = 0;
    let mut fingerprints = Vec::new();
    let mut accepted = Vec::new();
    for tool in lock.tools() {
        if let Some(policy) = &policy {
            policy.check(&tool.name, &tool.version.to_string(), tool.execution)?;
        }
        // A fingerprint about to be recorded for the first time must be the
        // one the registry recorded at publish: checked on the downloaded
        // bundle before anything is unpacked, or (already installed) on the
        // files in place before it is recorded.
        let mut fingerprint_checked = false;
        // Pins already installed are not downloaded again: when the policy
        // requires provenance, check theirs here.
        if log.requires_provenance(&tool.name) {
            log.check_provenance(&client, tool)?;
        }
        let done = install::install(&ctx.cwd, tool, || {
            let registry = Client::new(&tool.registry, token_for(&tool.registry))?;
            let version = tool.version.to_string();
            let download = registry.download(&tool.name, &version)?;
            log.verify_download(&client, tool, &download.bytes)?;
            // Pins resolved by this run had their findings checked then.
            if !checked.contains(&tool.name) {
                let findings = pinning::registry_findings(&registry, &tool.name, &version)?;
                if let Some(rules) = pinning::check_pin(tool, &findings, &acceptance, locked)? {
                    accepted.push((tool.name.clone(), rules));
                }
            }
            if tool.definition.is_none() && !locked {
                let what = format!("{} {}", tool.name, tool.version);
                let actual = install::bundle_fingerprint(&what, &download.bytes)?;
                check_registry_fingerprint(tool, &actual, "nothing was installed")?;
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
        if tool.definition.is_none() {
            fingerprints.push((
                tool.name.clone(),
                done.definition.clone(),
                fingerprint_checked,
            ));
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
    // Pins locked before their first install get their fingerprint now, and
    // findings the project's policy accepts are recorded.
    let mut recorded = false;
    if !locked {
        for (name, rules) in accepted {
            if let Some(mut t) = lock.get(&name).cloned() {
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
                lock.upsert(t);
                recorded = true;
            }
        }
        for (name, definition, checked) in fingerprints {
            if let Some(mut t) = lock.get(&name).cloned() {
                if !checked {
                    check_registry_fingerprint(
                        &t,
                        &definition,
                        "it was not recorded in toolreg.lock",
                    )?;
                }
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

/// Compare the definition fingerprint of a pin's bundle with the one the
/// registry recorded for the version (`definition_sha256`); a registry that
/// records none (a version published before fingerprints were stored, or an
/// older server) is not an error.
fn check_registry_fingerprint(
    tool: &crate::lock::LockedTool,
    installed: &str,
    outcome: &str,
) -> Result<()> {
    let version = tool.version.to_string();
    let registry = Client::new(&tool.registry, None)?;
    let Some(recorded) = registry.version(&tool.name, &version)?.definition_sha256 else {
        return Ok(());
    };
    if recorded != installed {
        return Err(Error::Installed(format!(
            "{} {version}: the registry records the definition fingerprint {recorded}, but its bundle defines {installed}; {outcome}",
            tool.name
        )));
    }
    Ok(())
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
