//! `toolreg update [NAME]`: move pins to the newest version their
//! requirement allows (skipping yanked and blocked versions, which the
//! registry's resolve does), rewriting toolreg.lock. Nothing is installed.
//! A flagged version is refused unless its findings are accepted
//! (`--accept-findings` or `[policy] accept_findings`).

use serde_json::json;

use super::Context;
use crate::error::{Error, Result};
use crate::lock::Lockfile;
use crate::output;
use crate::pinning::{self, Change};
use crate::project::Project;

pub fn run(ctx: &Context, name: Option<&str>, accept_findings: bool) -> Result<i32> {
    let mut project = Project::require(&ctx.cwd)?;
    let requirements = project.requirements()?;
    if let Some(n) = name {
        if !requirements.iter().any(|(k, _)| k == n) {
            return Err(Error::Usage(format!(
                "{n} is not in [tools] of {}",
                project.path().display()
            )));
        }
    }
    let mut lock = Lockfile::load(&ctx.cwd)?.unwrap_or_default();
    let client = ctx.client(Some(&project))?;
    let refresh: Vec<String> = name.map(|n| vec![n.to_string()]).unwrap_or_default();
    let changes = pinning::sync(
        &client,
        &requirements,
        &mut lock,
        project.policy()?.as_ref(),
        &pinning::Acceptance::of(&project, accept_findings)?,
        Some(&refresh),
    )?;
    let pins: Vec<_> = lock.tools().to_vec();
    crate::transparency::verify_pins(ctx.json, &client, &mut project, &mut lock, &pins)?;
    lock.save(&ctx.cwd)?;
    if ctx.json {
        let list: Vec<_> = changes
            .iter()
            .map(|c| match c {
                Change::Added(t) => json!({"name": t.name, "from": null, "to": t.version.to_string()}),
                Change::Updated { from, to } => {
                    json!({"name": to.name, "from": from.version.to_string(), "to": to.version.to_string()})
                }
                Change::Removed(t) => json!({"name": t.name, "from": t.version.to_string(), "to": null}),
            })
            .collect();
        output::json(&json!({ "changes": list }));
    } else if changes.is_empty() {
        crate::outln!("every pin is already the newest version its requirement allows");
    } else {
        for c in &changes {
            crate::outln!("{c}");
        }
        crate::outln!("run `toolreg install` to fetch the new versions");
    }
    Ok(0)
}
