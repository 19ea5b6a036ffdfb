//! `toolreg outdated [--json]`: the pins that have newer versions, like
//! `cargo outdated` — per pin the pinned version, the newest its requirement
//! allows (what `toolreg update` would move to), the newest overall, and the
//! highest severity of the change in the definition from the pinned version
//! to those (from the registry's diff), with the lint findings that would
//! be new. Yanked and blocked versions are not offered, nor pre-releases
//! unless the pin is one. A pin whose version its owners deprecated is
//! listed too, newest or not, with its successor in the DEPRECATED column.
//! Nothing is written; the exit code is 0.

use semver::{Version, VersionReq};
use serde_json::json;
use toolreg_api::{EncodableDeprecation, VersionDiff};
use toolreg_core::diff::ChangeSeverity;

use super::Context;
use crate::client::Client;
use crate::error::Result;
use crate::lock::{LockedTool, Lockfile};
use crate::output;
use crate::project::Project;

/// One pin with a newer version.
struct Outdated {
    name: String,
    requirement: String,
    pinned: Version,
    /// The newest version the requirement allows, when newer than the pin.
    compatible: Option<Version>,
    /// The newest version, when newer than the pin.
    latest: Option<Version>,
    /// The highest severity of the changes to `compatible` and `latest`.
    highest: Option<ChangeSeverity>,
    new_findings: usize,
    /// Why the change could not be read from the registry.
    unknown: Option<String>,
    /// The pinned version's deprecation by its owners.
    deprecated: Option<EncodableDeprecation>,
}

/// The DEPRECATED column: `-`, `yes`, or `yes: use SUCCESSOR`.
fn deprecated_cell(d: Option<&EncodableDeprecation>) -> String {
    match d {
        None => "-".to_string(),
        Some(EncodableDeprecation {
            successor: Some(s), ..
        }) => format!("yes: use {}", output::clean(s)),
        Some(_) => "yes".to_string(),
    }
}

pub fn run(ctx: &Context) -> Result<i32> {
    let project = Project::require(&ctx.cwd)?;
    let requirements = project.requirements()?;
    let lock = Lockfile::load(&ctx.cwd)?.unwrap_or_default();
    let client = ctx.client(Some(&project))?;
    let mut rows = Vec::new();
    for (name, req) in &requirements {
        let Some(pin) = lock.get(name) else {
            continue;
        };
        if let Some(row) = check(&client, pin, req)? {
            rows.push(row);
        }
    }
    if ctx.json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "requirement": r.requirement,
                    "pinned": r.pinned.to_string(),
                    "compatible": r.compatible.as_ref().map(ToString::to_string),
                    "latest": r.latest.as_ref().map(ToString::to_string),
                    "highest": r.highest,
                    "new_findings": r.new_findings,
                    "error": r.unknown,
                    "deprecated": r.deprecated,
                })
            })
            .collect();
        output::json(&json!({ "outdated": list }));
        return Ok(0);
    }
    if rows.is_empty() {
        crate::outln!("every pin is the newest version of its tool, and none is deprecated");
        return Ok(0);
    }
    let dash = |v: &Option<Version>| v.as_ref().map_or("-".to_string(), ToString::to_string);
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut change = match (&r.unknown, r.highest) {
                (Some(_), _) => "?".to_string(),
                (None, Some(s)) => s.to_string(),
                (None, None) => "none".to_string(),
            };
            if r.new_findings > 0 {
                change.push_str(&format!(" +{} finding(s)", r.new_findings));
            }
            vec![
                r.name.clone(),
                r.requirement.clone(),
                r.pinned.to_string(),
                dash(&r.compatible),
                dash(&r.latest),
                change,
                deprecated_cell(r.deprecated.as_ref()),
            ]
        })
        .collect();
    crate::out!(
        "{}",
        output::table(
            &[
                "NAME",
                "REQUIREMENT",
                "PINNED",
                "COMPATIBLE",
                "LATEST",
                "CHANGE",
                "DEPRECATED"
            ],
            &table
        )
    );
    for r in &rows {
        if let Some(d) = &r.deprecated {
            output::status(format!(
                "{} {} is deprecated by its owners: {}",
                r.name,
                r.pinned,
                output::clean(&d.message)
            ));
        }
        if let Some(why) = &r.unknown {
            output::status(format!("{}: the change is unknown: {why}", r.name));
        }
    }
    Ok(0)
}

/// The pin's newer versions and the change to them, and its deprecation
/// (`None` when it is the newest and not deprecated).
fn check(client: &Client, pin: &LockedTool, req: &VersionReq) -> Result<Option<Outdated>> {
    let tool = client.tool(&pin.name)?;
    let pinned = pin.version.to_string();
    let deprecated = match tool.versions.iter().find(|v| v.version == pinned) {
        Some(v) => v.deprecated.clone(),
        // Older than the versions the summary lists: ask for it.
        None => client.version(&pin.name, &pinned)?.deprecated,
    };
    let offered: Vec<Version> = tool
        .versions
        .iter()
        .filter(|v| !v.yanked && !v.blocked)
        .filter_map(|v| Version::parse(&v.version).ok())
        .filter(|v| v.pre.is_empty() || !pin.version.pre.is_empty())
        .collect();
    let newest = |ok: &dyn Fn(&Version) -> bool| {
        offered
            .iter()
            .filter(|v| ok(v) && **v > pin.version)
            .max()
            .cloned()
    };
    let compatible = newest(&|v| req.matches(v));
    let latest = newest(&|_| true);
    if compatible.is_none() && latest.is_none() && deprecated.is_none() {
        return Ok(None);
    }
    let mut targets: Vec<&Version> = compatible.iter().chain(latest.iter()).collect();
    targets.dedup();
    let mut diffs: Vec<VersionDiff> = Vec::new();
    let mut unknown = None;
    for to in targets {
        match client.diff(&pin.name, &pin.version.to_string(), &to.to_string()) {
            Ok(d) => diffs.push(d),
            Err(e) => unknown = Some(e.to_string()),
        }
    }
    Ok(Some(Outdated {
        name: pin.name.clone(),
        requirement: req.to_string(),
        pinned: pin.version.clone(),
        highest: diffs.iter().filter_map(VersionDiff::highest).max(),
        new_findings: diffs
            .iter()
            .map(|d| d.new_findings.len())
            .max()
            .unwrap_or(0),
        compatible,
        latest,
        unknown,
        deprecated,
    }))
}
