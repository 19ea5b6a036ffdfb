//! `toolreg deprecate NAME[@REQ] --message TEXT [--successor OTHER]` and
//! `toolreg deprecate NAME[@REQ] --undo`: an owner's advice that a tool's
//! versions (every one, or those matching REQ) should no longer be chosen.
//! Deprecated versions still install and resolve; `info`, `outdated`,
//! `add` and `update` show the message and the successor, and a project
//! with `[policy] deny_deprecated = true` refuses them.

use semver::VersionReq;

use super::Context;
use crate::error::Result;
use crate::output;

/// Deprecate with `message` (and `successor`), or lift the deprecation when
/// `message` is `None` (`--undo`).
pub fn run(
    ctx: &Context,
    name: &str,
    req: Option<&VersionReq>,
    message: Option<&str>,
    successor: Option<&str>,
) -> Result<i32> {
    let client = ctx.client_here()?;
    let req = req.map(ToString::to_string);
    let answer = client.deprecate(name, req.as_deref(), message, successor)?;
    if ctx.json {
        output::json(&answer);
        return Ok(0);
    }
    let which = match &req {
        Some(r) => format!("the versions of {} matching {r}", answer.name),
        None => format!("every version of {}", answer.name),
    };
    let listed = answer.versions.join(", ");
    match &answer.deprecated {
        Some(d) => {
            crate::outln!("deprecated {which} ({listed}; {} changed)", answer.changed);
            if let Some(s) = &d.successor {
                crate::outln!("successor: {s}");
            }
            crate::outln!(
                "they still install and resolve; `toolreg deprecate {} --undo` lifts it",
                answer.name
            );
        }
        None => crate::outln!(
            "lifted the deprecation of {which} ({listed}; {} changed)",
            answer.changed
        ),
    }
    Ok(0)
}
