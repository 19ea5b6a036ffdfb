//! `toolreg publish [PATH] [--dry-run]`: validate locally (every problem
//! with its path, and the definition lint's findings), pack
//! deterministically, upload with a progress bar (hidden when stderr is not
//! a terminal), and print name, version, sha256. A block finding (hidden
//! characters, a live credential) stops the publish before anything is
//! uploaded, dry run or not.
//!
//! With no token configured, in CI, it publishes through trusted publishing
//! ([`crate::oidc`]): the job's ID token is exchanged for a short-lived
//! token that publishes the tools whose trusted publishers match the job,
//! and the version records the run as its provenance.

use std::io::IsTerminal;
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use super::{pack, validate, Context};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::output;

pub fn run(ctx: &Context, path: Option<&Path>, dry_run: bool) -> Result<i32> {
    let dir = ctx.path(path);
    let packed = pack::pack(&dir)?;
    let t = &packed.loaded.tool;
    let (name, version) = (t.registry_name.clone(), t.version.to_string());
    if !ctx.json {
        for w in &packed.loaded.warnings {
            output::status(format!("warning: {w}"));
        }
        validate::print_flags(&packed.loaded);
    }
    let blocks = toolreg_core::lint::block_problems(&packed.loaded.findings);
    if !blocks.is_empty() {
        return Err(Error::Invalid {
            what: dir.display().to_string(),
            problems: blocks,
        });
    }
    if dry_run {
        if ctx.json {
            output::json(&json!({
                "dry_run": true, "name": name, "version": version,
                "sha256": packed.sha256, "size": packed.bytes.len(),
                "format": t.format, "execution": t.execution.kind,
                "findings": packed.loaded.findings,
            }));
        } else {
            crate::outln!(
                "{name} {version} is valid and packs to {} bytes",
                packed.bytes.len()
            );
            crate::outln!("sha256 {}", packed.sha256);
            crate::outln!("dry run: nothing was uploaded");
        }
        return Ok(0);
    }
    let mut client = ctx.client_here()?;
    if !client.has_token() {
        client = trusted_publishing(client, &name)?;
    }
    let len = packed.bytes.len() as u64;
    let target = if std::io::stderr().is_terminal() && !ctx.json {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    if let Ok(style) =
        ProgressStyle::with_template("uploading {msg} [{bar:30}] {bytes}/{total_bytes}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("{name} {version}"));
    let reader = bar.wrap_read(std::io::Cursor::new(packed.bytes.clone()));
    let result = client.publish(reader, len);
    bar.finish_and_clear();
    let published = result?;
    if ctx.json {
        output::json(&published);
    } else {
        // The registry re-validates; skip warnings already shown from the local check.
        let local = &packed.loaded.warnings;
        for w in &published.warnings {
            if !local
                .iter()
                .any(|l| l.path == w.path && l.message == w.message)
            {
                output::status(format!("warning: {w}"));
            }
        }
        crate::outln!(
            "published {} {} to {}",
            published.name,
            published.version,
            client.registry()
        );
        crate::outln!("sha256 {}", published.sha256);
        if published.sha256 != packed.sha256 {
            output::status(format!(
                "warning: the registry reports sha256 {} but the local bundle is {}",
                published.sha256, packed.sha256
            ));
        }
    }
    Ok(0)
}

/// A client holding the token the registry gives for the CI job's ID
/// token to publish `tool`, or [`Error::NoToken`] outside CI. Says on
/// stderr which repository's run publishes which tools (never the tokens).
fn trusted_publishing(client: Client, tool: &str) -> Result<Client> {
    let Some(id) = crate::oidc::id_token(client.registry())? else {
        return Err(Error::NoToken {
            registry: client.registry().to_string(),
        });
    };
    let exchanged = client.oidc_exchange(&id.token, &[tool])?;
    let from = match crate::oidc::describe(&id.token) {
        Some((issuer, repository)) => format!("{repository} ({issuer})"),
        None => "the CI job".to_string(),
    };
    output::status(format!(
        "trusted publishing: the ID token from {} identifies {from}, which may publish {} until {}",
        id.source,
        exchanged.tools.join(", "),
        exchanged.expires_at
    ));
    Ok(client.with_token(exchanged.token))
}
