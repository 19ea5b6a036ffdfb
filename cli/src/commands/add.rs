//! `toolreg add NAME[@REQ]`: resolve the tool (default requirement
//! `^LATEST`, like `cargo add`), admit it ([`crate::admission`], steps 1–5:
//! kind, not withheld, findings accepted, provenance, log), then write
//! `NAME = "REQ"` under `[tools]` of toolreg.toml (created if needed,
//! formatting kept) and the exact version, sha256, accepted findings and
//! builder into toolreg.lock. A version the registry's definition lint
//! flagged is refused unless `--accept-findings` or `[policy]
//! accept_findings` accepts every rule found on it.

use semver::VersionReq;
use serde_json::json;

use super::Context;
use crate::admission::Gate;
use crate::error::Result;
use crate::lock::Lockfile;
use crate::output;
use crate::project::Project;

pub fn run(
    ctx: &Context,
    name: &str,
    req: Option<&VersionReq>,
    accept_findings: bool,
) -> Result<i32> {
    let mut project = match Project::load(&ctx.cwd)? {
        Some(p) => p,
        None => Project::new_in(&ctx.cwd),
    };
    let client = ctx.client(Some(&project))?;
    let wanted = req.cloned().unwrap_or(VersionReq::STAR);
    let (resolved, resolved_version) = client.resolve(name, &wanted)?;
    // Keep an existing key spelled differently (`web_search` vs `web-search`).
    let key = project
        .requirements()?
        .into_iter()
        .map(|(k, _)| k)
        .find(|k| toolreg_core::name::normalize(k) == toolreg_core::name::normalize(&resolved.name))
        .unwrap_or_else(|| resolved.name.clone());
    let req_text = match req {
        Some(r) => r.to_string(),
        None => format!("^{resolved_version}"),
    };
    let mut lock = Lockfile::load(&ctx.cwd)?.unwrap_or_default();
    let mut gate = Gate::new(&client, &project, &lock, &ctx.cwd, accept_findings)?;
    let previous = lock.get(&key).cloned();
    let pinned = gate.admit_resolved(&key, resolved, resolved_version, previous.as_ref())?;
    gate.finish(ctx.json, &mut project, &mut lock)?;
    project.set_requirement(&key, &req_text);
    let old = lock.upsert(pinned.clone());
    project.save()?;
    lock.save(&ctx.cwd)?;
    if ctx.json {
        output::json(&json!({
            "name": key,
            "requirement": req_text,
            "version": pinned.version.to_string(),
            "sha256": pinned.sha256,
            "execution": pinned.execution,
            "registry": pinned.registry,
            "accepted_findings": pinned.accepted_findings,
            "provenance": pinned.provenance.as_ref().map(|b| json!({"issuer": b.issuer, "repository": b.repository, "workflow": b.workflow})),
            "previous": old.map(|o| o.version.to_string()),
        }));
    } else {
        match old {
            Some(o) if o.version != pinned.version => {
                crate::outln!(
                    "updated {key} {} -> {} (\"{req_text}\")",
                    o.version,
                    pinned.version
                )
            }
            _ => crate::outln!(
                "added {key} = \"{req_text}\" (locked {} {})",
                pinned.version,
                pinned.execution
            ),
        }
        crate::outln!("sha256 {}", pinned.sha256);
        if !pinned.accepted_findings.is_empty() {
            let rules: Vec<&str> = pinned
                .accepted_findings
                .iter()
                .map(|r| r.as_str())
                .collect();
            crate::outln!(
                "accepted the definition lint's findings {} (recorded in toolreg.lock)",
                rules.join(", ")
            );
        }
        crate::outln!("run `toolreg install` to fetch it");
    }
    Ok(0)
}
