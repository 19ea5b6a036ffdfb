//! The admission steps that need no registry: what `verify` checks, what
//! `export` checks before it hands tools out, and what an MCP server
//! checks before it serves them ([`admit_project`]).
//!
//! Steps 1–4 hold each pin to the project's `[policy]`, to toolreg.lock and
//! to the record of what the registry said last ([`super::record`]); steps
//! 6–8 compare the installed files with the lock ([`crate::install::check`]).
//! Step 5 (log inclusion) was checked when the pin was written and is not
//! repeated.

use std::path::{Path, PathBuf};

use toolreg_core::Tool;

use super::policy::Policy;
use super::record::{Record, Standing};
use super::{findings, provenance};
use crate::error::{Error, Result};
use crate::install::{self, Drift, State};
use crate::lock::{self, LockedTool, Lockfile};
use crate::project::Project;

/// A pin that passed every offline step: what an agent may be handed.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The pin, as toolreg.lock records it.
    pub pin: LockedTool,
    /// Its installed directory, `.toolreg/tools/NAME/VERSION`.
    pub dir: PathBuf,
    /// The definition, loaded from the installed files.
    pub tool: Box<Tool>,
    /// Its definition fingerprint (the lock's).
    pub definition: String,
    /// What the registry said about it last, if it was ever asked.
    pub standing: Option<Standing>,
}

/// Every offline step for one pin.
#[derive(Debug)]
pub struct PinCheck {
    pub pin: LockedTool,
    /// Steps 6–8: the installed files.
    pub state: State,
    /// Steps 1–4 refused, in order.
    pub refused: Vec<Error>,
    /// What the registry said about it last.
    pub standing: Option<Standing>,
}

/// Steps 1–4 for `pin` against the policy, the lock and `record`: every
/// refusal, in order.
pub fn refusals(pin: &LockedTool, policy: &Policy, record: &Record) -> Vec<Error> {
    let version = pin.version.to_string();
    let mut out = Vec::new();
    if let Err(e) = policy.check_kind(&pin.name, &version, pin.execution) {
        out.push(e);
    }
    if let Some(standing) = record.get(pin) {
        if let Some(w) = &standing.withheld {
            out.push(w.refusal(pin, Some(&standing.checked_at)));
        }
        if let Err(e) = findings::recorded(pin, &standing.findings, policy, &standing.checked_at) {
            out.push(e);
        }
    }
    if let Err(e) = provenance::required(pin, pin.provenance.as_ref(), policy, true) {
        out.push(e);
    }
    out
}

/// Steps 2–4 without the registry, for a pin whose registry could not be
/// asked: the first refusal.
pub fn registry_steps(pin: &LockedTool, policy: &Policy, record: &Record) -> Result<()> {
    match refusals(pin, policy, record).into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every offline step for every pin of `lock`, in lock order.
pub fn check(
    root: &Path,
    policy: &Policy,
    lock: &Lockfile,
    record: &Record,
) -> Result<Vec<PinCheck>> {
    lock.tools()
        .iter()
        .map(|pin| {
            Ok(PinCheck {
                pin: pin.clone(),
                state: install::check(root, pin)?,
                refused: refusals(pin, policy, record),
                standing: record.get(pin).cloned(),
            })
        })
        .collect()
}

/// The pins of `checks`, when every one passed: steps 1–4 for every pin
/// (the first refusal is the error), then steps 6–8 for every pin (one
/// error naming every pin not installed or drifted, and each file).
/// `action` says what is refused (`export`, `serve`).
pub fn admit(mut checks: Vec<PinCheck>, action: &str) -> Result<Vec<Admitted>> {
    if let Some(i) = checks.iter().position(|c| !c.refused.is_empty()) {
        return Err(checks.swap_remove(i).refused.remove(0));
    }
    refuse_drift(
        &checks
            .iter()
            .map(|c| (c.pin.clone(), c.state.clone()))
            .collect::<Vec<_>>(),
        action,
    )?;
    Ok(checks
        .into_iter()
        .filter_map(|c| match c.state {
            State::Intact { tool, definition } => Some(Admitted {
                dir: install::tool_dir(Path::new(""), &c.pin),
                definition: c.pin.definition.clone().unwrap_or(definition),
                pin: c.pin,
                tool,
                standing: c.standing,
            }),
            _ => None,
        })
        .collect())
}

/// The offline entry point: the project at `root` (its toolreg.toml, if
/// any, for `[policy]`; its toolreg.lock; the record of what the registry
/// said), every offline step for every pin, and the admitted pins with
/// their directories (under `root`) and definitions. Never contacts a
/// registry. `action` names what is refused in errors (`serve`).
pub fn admit_project(root: &Path, action: &str) -> Result<Vec<Admitted>> {
    let policy = match Project::load(root)? {
        Some(p) => p.policy().clone(),
        None => Policy::default(),
    };
    let lock = Lockfile::load(root)?.ok_or_else(|| Error::Lock {
        path: root.join(lock::FILE).display().to_string(),
        message: format!(
            "missing: there is nothing pinned to {action}; run `toolreg add NAME` and `toolreg install`"
        ),
    })?;
    let record = Record::load(root)?;
    let mut admitted = admit(check(root, &policy, &lock, &record)?, action)?;
    for a in &mut admitted {
        a.dir = root.join(&a.dir);
    }
    Ok(admitted)
}

/// Fail unless every pin is installed and intact, naming every pin that is
/// not and every file that changed; `action` says what is refused.
pub fn refuse_drift(states: &[(LockedTool, State)], action: &str) -> Result<()> {
    if let Some((t, _)) = states
        .iter()
        .find(|(_, s)| matches!(s, State::NotInstalled))
    {
        return Err(Error::Installed(format!(
            "{} {} is pinned but not installed; run `toolreg install` first",
            t.name, t.version
        )));
    }
    let mut details = Vec::new();
    let mut drifted = 0;
    for (t, state) in states {
        if let State::Drifted(drift) = state {
            drifted += 1;
            details.extend(drift_lines(t, drift));
        }
    }
    if drifted == 0 {
        return Ok(());
    }
    Err(Error::Drift {
        summary: format!(
            "refusing to {action}: {drifted} installed tool(s) no longer match toolreg.lock; run `toolreg install` to repair them"
        ),
        details,
    })
}

/// One line per drift of a pin: the file (by its path in the project) and what happened to it.
fn drift_lines(t: &LockedTool, drift: &[Drift]) -> Vec<String> {
    let dir = install::tool_dir(Path::new(""), t);
    drift
        .iter()
        .map(|d| match d.path() {
            Some(p) => format!(
                "{} {}: {} {}",
                t.name,
                t.version,
                d.kind(),
                dir.join(p).display()
            ),
            None => format!("{} {}: {d}", t.name, t.version),
        })
        .collect()
}
