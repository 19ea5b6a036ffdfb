//! `toolreg login [--registry URL] [--token T]`: store a token for a
//! registry in the user's credentials file (mode 0600). The token comes
//! from `--token`/`TOOLREG_TOKEN` or stdin; it is checked with
//! `GET /api/v1/me` when the registry answers, and refused if it answers 401.

use std::io::{BufRead, IsTerminal};

use serde_json::json;

use super::Context;
use crate::client::Client;
use crate::config::Credentials;
use crate::error::{Error, Result};
use crate::output;
use crate::project::Project;

pub fn run(ctx: &Context) -> Result<i32> {
    let project = Project::load(&ctx.cwd)?;
    let settings = ctx.settings(project.as_ref())?;
    let token = match ctx
        .global
        .token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(t) => t.to_string(),
        None => {
            if std::io::stdin().is_terminal() {
                output::status(format!(
                    "paste the API token for {} and press Enter:",
                    settings.registry
                ));
            }
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .map_err(|e| Error::Usage(format!("could not read the token from stdin: {e}")))?;
            let t = line.trim().to_string();
            if t.is_empty() {
                return Err(Error::Usage(
                    "no token given: pass --token or pipe it on stdin".into(),
                ));
            }
            t
        }
    };
    let client = Client::new(&settings.registry, Some(token.clone()))?;
    let who = match client.me() {
        Ok(me) => Some(me),
        Err(Error::Api(api)) if api.status == 404 => None,
        Err(Error::Network { url, reason }) => {
            output::status(format!(
                "warning: could not check the token ({url}: {reason}); storing it anyway"
            ));
            None
        }
        Err(e) => return Err(e),
    };
    let mut creds = Credentials::load()?;
    creds.set_token(&settings.registry, &token);
    creds.save()?;
    if ctx.json {
        output::json(&json!({
            "registry": settings.registry,
            "login": who.as_ref().map(|m| m.login.clone()),
            "tier": who.as_ref().map(|m| m.tier),
            "credentials": creds.path().display().to_string(),
        }));
    } else {
        match &who {
            Some(me) => crate::outln!(
                "logged in to {} as {} (tier {})",
                settings.registry,
                me.login,
                me.tier
            ),
            None => crate::outln!("token stored for {}", settings.registry),
        }
        crate::outln!("token saved in {}", creds.path().display());
    }
    Ok(0)
}
