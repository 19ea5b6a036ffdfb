//! `toolreg owner list|add|remove NAME [LOGIN]`: a tool's owners.

use super::Context;
use crate::args::OwnerAction;
use crate::error::Result;
use crate::output;

pub fn run(ctx: &Context, action: OwnerAction) -> Result<i32> {
    let client = ctx.client_here()?;
    let (name, answer) = match action {
        OwnerAction::List { name } => {
            let a = client.owners(&name)?;
            (name, a)
        }
        OwnerAction::Add { name, login } => {
            let a = client.change_owners(&name, true, &[login])?;
            (name, a)
        }
        OwnerAction::Remove { name, login } => {
            let a = client.change_owners(&name, false, &[login])?;
            (name, a)
        }
    };
    if ctx.json {
        output::json(&answer);
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = answer
        .owners
        .iter()
        .map(|o| vec![o.login.clone(), o.tier.to_string()])
        .collect();
    crate::outln!("owners of {name}:");
    crate::out!("{}", output::table(&["LOGIN", "TIER"], &rows));
    Ok(0)
}
