//! `toolreg trusted-publisher list|add|remove NAME ...`: the CI workflows
//! whose OpenID Connect ID tokens the registry exchanges for a token that
//! publishes new versions of the tool (owners only; `toolreg publish` in
//! such a workflow needs no stored token).

use serde_json::json;
use toolreg_api::{EncodableTrustedPublisher, NewTrustedPublisherRequest};

use super::Context;
use crate::args::TrustedPublisherAction;
use crate::error::{Error, Result};
use crate::output;

pub fn run(ctx: &Context, action: TrustedPublisherAction) -> Result<i32> {
    let client = ctx.client_here()?;
    match action {
        TrustedPublisherAction::List { name } => {
            let answer = client.trusted_publishers(&name)?;
            if ctx.json {
                output::json(&answer);
            } else if answer.trusted_publishers.is_empty() {
                crate::outln!(
                    "{name} has no trusted publishers: add one with `toolreg trusted-publisher add {name} --repository ORG/REPO --workflow FILE`"
                );
            } else {
                let rows: Vec<Vec<String>> = answer
                    .trusted_publishers
                    .iter()
                    .map(|t| {
                        vec![
                            t.id.to_string(),
                            t.repository.clone(),
                            t.workflow.clone(),
                            t.environment.clone().unwrap_or_else(|| "-".into()),
                            t.issuer.clone(),
                            t.created_by.clone(),
                        ]
                    })
                    .collect();
                crate::outln!("trusted publishers of {name}:");
                crate::out!(
                    "{}",
                    output::table(
                        &[
                            "ID",
                            "REPOSITORY",
                            "WORKFLOW",
                            "ENVIRONMENT",
                            "ISSUER",
                            "ADDED BY"
                        ],
                        &rows
                    )
                );
            }
        }
        TrustedPublisherAction::Add {
            name,
            issuer,
            github: _,
            gitlab,
            repository,
            workflow,
            environment,
            repository_id,
            owner_id,
        } => {
            let issuer = TrustedPublisherAction::issuer(issuer.as_deref(), gitlab);
            if url::Url::parse(&issuer).is_err() {
                return Err(Error::Usage(format!("--issuer `{issuer}` is not a URL")));
            }
            let added = client.add_trusted_publisher(
                &name,
                &NewTrustedPublisherRequest {
                    issuer,
                    repository,
                    workflow,
                    environment: environment.filter(|e| !e.trim().is_empty()),
                    repository_id,
                    owner_id,
                },
            )?;
            if ctx.json {
                output::json(&added);
            } else {
                crate::outln!(
                    "added trusted publisher {} to {name}: {}",
                    added.id,
                    describe(&added)
                );
                crate::outln!(
                    "`toolreg publish` in that workflow now publishes new versions of {name} without a stored token"
                );
            }
        }
        TrustedPublisherAction::Remove { name, id } => {
            client.remove_trusted_publisher(&name, id)?;
            if ctx.json {
                output::json(&json!({ "name": name, "removed": id }));
            } else {
                crate::outln!(
                    "removed trusted publisher {id} from {name}: tokens it issued no longer publish"
                );
            }
        }
    }
    Ok(0)
}

/// `acme/tools, workflow release.yml, environment release (issuer)`.
fn describe(t: &EncodableTrustedPublisher) -> String {
    let mut out = t.repository.clone();
    match (&t.repository_id, &t.owner_id) {
        (Some(repo), Some(owner)) => out.push_str(&format!(" (ID {repo}, owner ID {owner})")),
        (Some(repo), None) => out.push_str(&format!(" (ID {repo})")),
        (None, Some(owner)) => out.push_str(&format!(" (owner ID {owner})")),
        (None, None) => {}
    }
    out.push_str(&format!(", workflow {}", t.workflow));
    if let Some(env) = &t.environment {
        out.push_str(&format!(", environment {env}"));
    }
    out.push_str(&format!(" ({})", t.issuer));
    out
}
