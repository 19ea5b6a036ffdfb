//! `POST /api/v1/oidc/exchange`: a CI job trades its OpenID Connect ID
//! token for a short-lived registry token (trusted publishing).
//!
//! The ID token is verified by [`toolreg_trustpub::IdTokenVerifier::verify`] (401
//! naming what failed), then matched against the trusted publishers that
//! owners set for their tools ([`TrustedPublisher::accepts`]: same issuer,
//! repository and workflow, and the same environment where one was set; 403
//! when none matches). In one
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
use crate::models::trusted_publisher::{CiJob, TrustedPublisher};
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
    let token = body.into_inner().token;
    if token.trim().is_empty() {
        return Err(bad_request("token: give the CI job's ID token"));
    }
    if token.len() > 16 * 1024 {
        return Err(bad_request("token: at most 16 KiB"));
    }
    let identity = state.oidc.verify(&token).await?;
    let issued = state.db.write(move |conn| issue(conn, &identity)).await?;
    Ok(HttpResponse::Created().json(issued))
}

/// Match `identity`, record its `jti`, and issue the token.
fn issue(conn: &mut DbConnection, identity: &Identity) -> AppResult<OidcExchanged> {
    let matched: Vec<(TrustedPublisher, String)> =
        TrustedPublisher::for_repository(conn, &identity.issuer, &identity.repository)?
            .into_iter()
            .filter(|(t, _)| t.accepts(&CiJob::of_identity(identity)))
            .collect();
    let Some((first, _)) = matched.first() else {
        return Err(forbidden(format!(
            "no trusted publisher for repository `{}` and workflow `{}`{} (issuer {}): an owner of the tool adds one with `toolreg trusted-publisher add`",
            identity.repository,
            identity.workflow,
            identity
                .environment
                .as_deref()
                .map(|e| format!(" in environment `{e}`"))
                .unwrap_or_default(),
            identity.issuer
        )));
    };
    // The token belongs to the owner who set up the first match; it can
    // publish only the matched tools that owner set up (publish checks that
    // its user owns the tool, like any token).
    let owner = first.created_by;
    let tools: Vec<(i64, String)> = matched
        .iter()
        .filter(|(t, _)| t.created_by == owner)
        .map(|(t, name)| (t.tool_id, name.clone()))
        .collect();

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
        &provenance_json,
        &tool_ids,
    )?;
    let names: Vec<String> = tools.into_iter().map(|(_, name)| name).collect();
    let mut audit = NewAudit::new("token_create");
    audit.token_id = Some(issued.token.id);
    audit.detail = json!({"id": issued.token.id, "trusted_publishing": provenance,
                           "tools": names, "expires_at": rfc3339(&expires_at)});
    audit.insert(conn)?;
    Ok(OidcExchanged {
        token: issued.secret,
        expires_at: rfc3339(&expires_at),
        tools: names,
    })
}
