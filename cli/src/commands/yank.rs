//! `toolreg yank NAME@VERSION [--undo]`: mark a version yanked (new pins
//! skip it; existing pins still install it) or undo that.

use semver::Version;

use super::Context;
use crate::error::Result;
use crate::output;

pub fn run(ctx: &Context, name: &str, version: &Version, undo: bool) -> Result<i32> {
    let client = ctx.client_here()?;
    let answer = client.yank(name, &version.to_string(), undo)?;
    if ctx.json {
        output::json(&answer);
    } else {
        let shown = &answer.name;
        if undo {
            crate::outln!("{shown} {version} is no longer yanked");
        } else {
            crate::outln!(
                "yanked {shown} {version}: new pins skip it, existing pins still install it"
            );
        }
    }
    Ok(0)
}
