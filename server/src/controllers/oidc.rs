//! `POST /api/v1/oidc/exchange`: a CI job trades its OpenID Connect ID
//! token for a short-lived registry token (trusted publishing).
//!
//! The ID token is verified by [`toolreg_trustpub::IdTokenVerifier::verify`] (401
//! naming what failed), then matched against the trusted publishers that
//! owners set for their tools ([`TrustedPublisher::judge`]: same issuer,
//! repository and workflow, the same environment where one was set, and the
//! repository's bound IDs once known; 403 when none matches, or none for a
//! tool the job names in `tools`, saying so when the name matched but the
//! IDs did not). Each matched trusted publisher records the IDs it was not
//! yet bound to, and a renamed repository's new name. The
//! token belongs to one owner and never carries more than the token that
//! set up its trusted publishers ([`choose`]). In one
//! transaction the token's `jti` is recorded — so it is exchanged once, on
//! any replica — and a token is issued that publishes new versions of the
//! matched tools only, expires within [`TOKEN_LIFETIME`] (never after the ID
//! token itself plus that), and carries the run's provenance, which each
//! version it publishes records.

use actix_web::{post, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Duration};
use diesel::prelude::*;
use serde_json::json;

use crate::app::AppState;
use crate::db::{now, DbConnection};
use crate::encode::rfc3339;
use crate::error::{bad_request, forbidden, unauthorized, AppError, AppResult, ProblemBody};
use crate::models::token::ExchangedRun;
use crate::models::trusted_publisher::{CiJob, Match, TrustedPublisher};
use crate::models::{NewAudit, Token};
use crate::rate_limit::Action;
use crate::schema::oidc_exchanges;
use crate::views::{OidcExchangeRequest, OidcExchanged, Provenance};
use toolreg_trustpub::Identity;

/// How long an exchanged token lives.
pub const TOKEN_LIFETIME: Duration = Duration::minutes(15);

/// Trade a CI job's ID token for a token that publishes new versions of
/// the tools whose trusted publishers match it.
#[utoipa::path(tag = "trusted publishing", request_body = OidcExchangeRequest,
    responses((status = 201, body = OidcExchanged), (status = 400, body = ProblemBody),
              (status = 401, description = "unknown issuer, bad signature, wrong audience, expired or replayed", body = ProblemBody),
              (status = 403, description = "no trusted publisher matches, or trusted publishing is off", body = ProblemBody),
              (status = 429, description = "rate limited (see `Retry-After`)", body = ProblemBody)))]
#[post("/api/v1/oidc/exchange")]
pub async fn exchange(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<OidcExchangeRequest>,
) -> AppResult<HttpResponse> {
    state
        .rate_limits
        .check_ip(&state.db, &req, Action::OidcExchange)
        .await?;
    let body = body.into_inner();
    let token = body.token;
    if token.trim().is_empty() {
        return Err(bad_request("token: give the CI job's ID token"));
    }
    if token.len() > 16 * 1024 {
        return Err(bad_request("token: at most 16 KiB"));
    }
    let wanted = check_tools(body.tools)?;
    let identity = state.oidc.verify(&token).await?;
    let issued = state
        .db
        .write(move |conn| issue(conn, &identity, wanted.as_deref()))
        .await?;
    Ok(HttpResponse::Created().json(issued))
}

/// Most tool names one exchange may ask for.
const MAX_TOOLS: usize = 20;

/// Match `identity` (for the tools `wanted`, when given), record its `jti`,
/// and issue the token.
fn issue(
    conn: &mut DbConnection,
    identity: &Identity,
    wanted: Option<&[String]>,
) -> AppResult<OidcExchanged> {
    let job = CiJob::of_identity(identity);
    let mut matched: Vec<(TrustedPublisher, String)> = Vec::new();
    let mut recreated: Vec<(String, String)> = Vec::new();
    for (publisher, tool) in TrustedPublisher::for_repository(conn, identity)? {
        match publisher.judge(&job) {
            Match::Accepts { .. } => matched.push((publisher, tool)),
            Match::Recreated(why) => recreated.push((tool, why)),
            Match::Other => {}
        }
    }
    let refused_ids = |tools: &[&str]| {
        recreated
            .iter()
            .find(|(tool, _)| tools.is_empty() || tools.contains(&tool.as_str()))
            .map(|(tool, why)| recreated_problem(tool, why, identity))
    };
    if matched.is_empty() {
        return Err(refused_ids(&[]).unwrap_or_else(|| {
            forbidden(format!(
                "no trusted publisher for {}: an owner of the tool adds one with `toolreg trusted-publisher add`",
                job_text(identity)
            ))
        }));
    }
    if let Some(names) = wanted {
        let unmatched: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| !matched.iter().any(|(_, tool)| tool == n))
            .collect();
        if let Some(problem) = refused_ids(&unmatched) {
            return Err(problem);
        }
    }
    let grant = choose(&matched, wanted, identity)?;
    for (publisher, tool) in &matched {
        if grant.tools.iter().any(|(_, name)| name == tool) {
            bind(conn, publisher, tool, identity)?;
        }
    }
    let tools = grant.tools;
    let owner = grant.owner;
    let id_token_expiry = DateTime::from_timestamp(identity.expires_at, 0)
        .map(|t| t.naive_utc())
        .unwrap_or_else(now);
    // An ID token past its expiry (and the leeway) no longer verifies, so
    // its row is no longer needed to refuse a replay: drop such rows here,
    // which keeps the table to the tokens still live.
    let stale = now() - Duration::seconds(toolreg_trustpub::LEEWAY_SECS as i64 + 60);
    diesel::delete(oidc_exchanges::table.filter(oidc_exchanges::expires_at.lt(stale)))
        .execute(conn)?;
    let recorded = diesel::insert_into(oidc_exchanges::table)
        .values((
            oidc_exchanges::issuer.eq(&identity.issuer),
            oidc_exchanges::jti.eq(&identity.jti),
            oidc_exchanges::expires_at.eq(id_token_expiry),
        ))
        .execute(conn);
    match recorded {
        Ok(_) => {}
        Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        )) => {
            return Err(unauthorized(
                "replayed: this ID token was already exchanged (each is exchanged once)",
            ))
        }
        Err(e) => return Err(AppError::from(e)),
    }
    let provenance = Provenance {
        issuer: identity.issuer.clone(),
        repository: identity.repository.clone(),
        repository_id: identity.repository_id.clone(),
        owner_id: identity.owner_id.clone(),
        workflow: identity.workflow.clone(),
        git_ref: identity.git_ref.clone(),
        sha: identity.sha.clone(),
        run_id: identity.run_id.clone(),
    };
    let provenance_json = serde_json::to_string(&provenance)
        .map_err(|e| crate::error::internal(format!("cannot encode provenance: {e}")))?;
    let expires_at = now() + TOKEN_LIFETIME;
    let tool_ids: Vec<i64> = tools.iter().map(|(id, _)| *id).collect();
    let issued = Token::create_exchanged(
        conn,
        owner,
        &format!(
            "trusted publishing: {} {} run {}",
            identity.repository, identity.workflow, identity.run_id
        ),
        expires_at,
        ExchangedRun {
            provenance: &provenance_json,
            tool_ids: &tool_ids,
            agent: grant.agent,
            environment: identity.environment.as_deref(),
        },
    )?;
    let names: Vec<String> = tools.into_iter().map(|(_, name)| name).collect();
    let mut audit = NewAudit::new("token_create");
    audit.token_id = Some(issued.token.id);
    audit.detail = json!({"id": issued.token.id, "trusted_publishing": provenance,
                           "tools": names, "agent": grant.agent,
                           "expires_at": rfc3339(&expires_at)});
    audit.insert(conn)?;
    Ok(OidcExchanged {
        token: issued.secret,
        expires_at: rfc3339(&expires_at),
        tools: names,
    })
}

/// Record on `publisher` (of `tool`) the IDs and name the verified job
/// shows, auditing a change.
fn bind(
    conn: &mut DbConnection,
    publisher: &TrustedPublisher,
    tool: &str,
    identity: &Identity,
) -> AppResult<()> {
    let ids_new = (publisher.repository_id.is_none() && identity.repository_id.is_some())
        || (publisher.owner_id.is_none() && identity.owner_id.is_some());
    let renamed = publisher.repository != identity.repository;
    if !ids_new && !renamed {
        return Ok(());
    }
    publisher.bind(conn, identity)?;
    let mut audit = NewAudit::new("trusted_publisher_bind");
    audit.tool = Some(tool);
    audit.detail = json!({
        "id": publisher.id,
        "repository": identity.repository,
        "previous_repository": renamed.then_some(&publisher.repository),
        "repository_id": publisher.repository_id.as_ref().or(identity.repository_id.as_ref()),
        "owner_id": publisher.owner_id.as_ref().or(identity.owner_id.as_ref()),
    });
    audit.insert(conn)?;
    Ok(())
}

/// 403 for a job whose repository has the trusted publisher's name but not
/// its bound IDs: why, and how the owner re-confirms a repository that is
/// really theirs.
fn recreated_problem(tool: &str, why: &str, identity: &Identity) -> AppError {
    forbidden(format!(
        "trusted publisher of `{tool}` refused {}: {why}. If the repository is yours, an owner of `{tool}` re-confirms it: `toolreg trusted-publisher remove {tool} ID`, then `toolreg trusted-publisher add {tool} --repository {} --workflow {} --repository-id {}`",
        job_text(identity),
        identity.repository,
        identity.workflow,
        identity.repository_id.as_deref().unwrap_or("ID"),
    ))
}

/// The repository, workflow, environment and issuer of a job, for errors.
fn job_text(identity: &Identity) -> String {
    format!(
        "repository `{}` and workflow `{}`{} (issuer {})",
        identity.repository,
        identity.workflow,
        identity
            .environment
            .as_deref()
            .map(|e| format!(" in environment `{e}`"))
            .unwrap_or_default(),
        identity.issuer
    )
}

/// 400 naming `tools` when the list is empty, too long or names a tool twice.
fn check_tools(tools: Option<Vec<String>>) -> AppResult<Option<Vec<String>>> {
    let Some(tools) = tools else { return Ok(None) };
    if tools.is_empty() {
        return Err(bad_request(
            "tools: name at least one tool, or leave `tools` out",
        ));
    }
    if tools.len() > MAX_TOOLS {
        return Err(bad_request(format!(
            "tools: at most {MAX_TOOLS} tools (got {})",
            tools.len()
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for name in &tools {
        if name.trim().is_empty() || name.len() > 200 {
            return Err(bad_request("tools: each tool name has 1-200 bytes"));
        }
        if !seen.insert(name.as_str()) {
            return Err(bad_request(format!("tools: `{name}` is named twice")));
        }
    }
    Ok(Some(tools))
}

/// What an exchange issues: whose token it is, the tools it publishes, and
/// whether it is an agent token.
struct Grant {
    owner: i64,
    tools: Vec<(i64, String)>,
    agent: bool,
}

/// Who the token belongs to and what it may publish. A token belongs to one
/// user, so it covers the tools one owner's trusted publishers match; the
/// job names the tools it publishes (`wanted`), so a trusted publisher that
/// someone set up on another tool for the same repository never decides
/// the token. The token carries no more than the token that set the
/// trusted publishers up: where that was an agent token, so is this one
/// (a user's own row is preferred when both match).
fn choose(
    matched: &[(TrustedPublisher, String)],
    wanted: Option<&[String]>,
    identity: &Identity,
) -> AppResult<Grant> {
    let chosen: Vec<&(TrustedPublisher, String)> = match wanted {
        None => matched.iter().collect(),
        Some(names) => {
            let missing: Vec<&str> = names
                .iter()
                .filter(|n| !matched.iter().any(|(_, tool)| tool == *n))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(forbidden(format!(
                    "no trusted publisher of `{}` matches {}: an owner of the tool adds one with `toolreg trusted-publisher add`",
                    missing.join("`, `"),
                    job_text(identity)
                )));
            }
            matched
                .iter()
                .filter(|(_, tool)| names.contains(tool))
                .collect()
        }
    };
    // The owners whose trusted publishers cover every chosen tool.
    let mut owners: Vec<i64> = chosen.iter().map(|(t, _)| t.created_by).collect();
    owners.dedup();
    let tool_names: std::collections::BTreeSet<&str> =
        chosen.iter().map(|(_, n)| n.as_str()).collect();
    let owner = owners.into_iter().find(|o| {
        tool_names.iter().all(|n| {
            chosen
                .iter()
                .any(|(t, tool)| t.created_by == *o && tool == n)
        })
    });
    let Some(owner) = owner else {
        return Err(forbidden(format!(
            "the trusted publishers matching {} belong to different owners (tools `{}`): name the tool the job publishes in `tools` (`toolreg publish` does), or exchange once per tool",
            job_text(identity),
            tool_names.into_iter().collect::<Vec<_>>().join("`, `")
        )));
    };
    let mut tools = Vec::new();
    let mut agent = false;
    for name in tool_names {
        let rows: Vec<&TrustedPublisher> = chosen
            .iter()
            .filter(|(t, tool)| t.created_by == owner && tool == name)
            .map(|(t, _)| t)
            .collect();
        agent |= rows.iter().all(|t| t.creator_agent);
        if let Some(first) = rows.first() {
            tools.push((first.tool_id, name.to_string()));
        }
    }
    Ok(Grant {
        owner,
        tools,
        agent,
    })
}
