//! `toolreg report NAME@VERSION --reason TEXT`: tell the registry's
//! administrators a version looks harmful; and, for administrators,
//! `toolreg quarantine NAME@VERSION --reason TEXT` and
//! `toolreg quarantine --lift NAME@VERSION`.

use semver::Version;

use super::Context;
use crate::error::Result;
use crate::output;

pub fn report(ctx: &Context, name: &str, version: &Version, reason: &str) -> Result<i32> {
    let client = ctx.client_here()?;
    let answer = client.report(name, &version.to_string(), reason)?;
    if ctx.json {
        output::json(&answer);
    } else {
        crate::outln!(
            "reported {} {} to the registry's administrators (report {})",
            answer.name,
            answer.version,
            answer.id
        );
    }
    Ok(0)
}

/// Quarantine with `reason`, or lift the quarantine when it is `None`.
pub fn run(ctx: &Context, name: &str, version: &Version, reason: Option<&str>) -> Result<i32> {
    let client = ctx.client_here()?;
    let answer = client.quarantine(name, &version.to_string(), reason)?;
    if ctx.json {
        output::json(&answer);
    } else if answer.quarantined {
        crate::outln!(
            "quarantined {} {}: its download, resolve and definition are refused until the quarantine is lifted",
            answer.name,
            answer.version
        );
    } else {
        crate::outln!(
            "{} {} is not quarantined: it is served again",
            answer.name,
            answer.version
        );
    }
    Ok(0)
}
