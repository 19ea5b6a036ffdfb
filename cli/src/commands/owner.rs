//! `toolreg owner list|add|remove NAME [LOGIN]`: a tool's owners; `toolreg
//! owner invitations|accept NAME|decline NAME`: your invitations to own
//! tools. Adding an owner invites them; they are an owner once they accept.

use toolreg_api::{OwnerInvitation, Owners};

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
            let a = client.change_owners(&name, true, std::slice::from_ref(&login))?;
            if !ctx.json && !a.owners.iter().any(|o| o.login == login) {
                crate::outln!(
                    "invited {login} to own {name}; they become an owner when they run `toolreg owner accept {name}`"
                );
            }
            (name, a)
        }
        OwnerAction::Remove { name, login } => {
            let a = client.change_owners(&name, false, &[login])?;
            (name, a)
        }
        OwnerAction::Invitations => {
            let a = client.my_invitations()?;
            if ctx.json {
                output::json(&a);
            } else {
                print_invitations("your invitations", &a.invitations);
            }
            return Ok(0);
        }
        OwnerAction::Accept { name } => {
            let a = client.answer_invitation(&name, true)?;
            if !ctx.json {
                crate::outln!("you are now an owner of {name}");
            }
            (name, a)
        }
        OwnerAction::Decline { name } => {
            let a = client.answer_invitation(&name, false)?;
            if !ctx.json {
                crate::outln!("declined the invitation to own {name}");
            }
            (name, a)
        }
    };
    if ctx.json {
        output::json(&answer);
        return Ok(0);
    }
    print_owners(&name, &answer);
    Ok(0)
}

fn print_owners(name: &str, answer: &Owners) {
    let rows: Vec<Vec<String>> = answer
        .owners
        .iter()
        .map(|o| vec![o.login.clone(), o.tier.to_string()])
        .collect();
    crate::outln!("owners of {name}:");
    crate::out!("{}", output::table(&["LOGIN", "TIER"], &rows));
    if let Some(pending) = answer.invitations.as_deref().filter(|p| !p.is_empty()) {
        print_invitations(&format!("invitations to own {name}"), pending);
    }
}

fn print_invitations(title: &str, invitations: &[OwnerInvitation]) {
    if invitations.is_empty() {
        crate::outln!("{title}: none");
        return;
    }
    let rows: Vec<Vec<String>> = invitations
        .iter()
        .map(|i| {
            let expires = if i.expired {
                format!("expired {}", i.expires_at)
            } else {
                i.expires_at.clone()
            };
            vec![
                i.tool.clone(),
                i.invitee.clone(),
                i.inviter.clone(),
                expires,
            ]
        })
        .collect();
    crate::outln!("{title}:");
    crate::out!(
        "{}",
        output::table(&["TOOL", "INVITEE", "INVITED BY", "EXPIRES"], &rows)
    );
}
