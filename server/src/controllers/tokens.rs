//! `/api/v1/tokens`: create (the secret is shown once), list and revoke API tokens.

use actix_web::{delete, get, post, web, HttpRequest, HttpResponse};
use serde_json::json;

use crate::app::AppState;
use crate::auth::Auth;
use crate::db::now;
use crate::error::{bad_request, forbidden, not_found, AppResult, ProblemBody};
use crate::models::{NewAudit, Scope, Token};
use crate::rate_limit::Action;
use crate::views::{CreatedToken, EncodableToken, NewTokenRequest, TokenList};

/// Create a token for the authenticated user. A token can only create tokens
/// with scopes it has itself, and a token made by an agent token is an agent
/// token. Leaving `scopes` out gives the creating token's scopes except
/// `admin`, which a token only gets when asked for by name (never an agent
/// token). The new token records its parent: it expires no later than the
/// parent and is revoked with it.
#[utoipa::path(tag = "tokens", security(("bearer" = [])), request_body = NewTokenRequest,
    responses((status = 201, body = CreatedToken), (status = 400, body = ProblemBody), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody),
              (status = 429, description = "rate limited (see `Retry-After`)", body = ProblemBody)))]
#[post("/api/v1/tokens")]
pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    auth: Auth,
    body: web::Json<NewTokenRequest>,
) -> AppResult<HttpResponse> {
    auth.require_scope(Scope::Tokens)?;
    state
        .rate_limits
        .check(&state.db, &req, Action::TokenCreate, auth.token.id)
        .await?;
    let body = body.into_inner();
    let scopes = match &body.scopes {
        Some(names) => Scope::parse_list(names)?,
        None => auth
            .token
            .scopes()
            .into_iter()
            .filter(|s| *s != Scope::Admin)
            .collect(),
    };
    let held = auth.token.scopes();
    if let Some(missing) = scopes.iter().find(|s| !held.contains(s)) {
        return Err(forbidden(format!(
            "scopes: the token used lacks `{}`, so it cannot create a token with it",
            missing.as_str()
        )));
    }
    let expires_at = match &body.expires_at {
        None => None,
        Some(text) => {
            let t = chrono::DateTime::parse_from_rfc3339(text)
                .map_err(|e| {
                    bad_request(format!(
                        "expires_at: `{text}` is not an RFC 3339 time ({e})"
                    ))
                })?
                .naive_utc();
            if t <= now() {
                return Err(bad_request(format!("expires_at: `{text}` is in the past")));
            }
            Some(t)
        }
    };
    let agent = body.agent.unwrap_or(false);
    if auth.token.agent && !agent && body.agent.is_some() {
        return Err(forbidden(
            "agent: an agent token can only create agent tokens",
        ));
    }
    let agent = agent || auth.token.agent;
    if agent && scopes.contains(&Scope::Admin) {
        return Err(forbidden(
            "scopes: an agent token can never have the `admin` scope",
        ));
    }
    if scopes.contains(&Scope::Admin) && !auth.user.is_admin {
        return Err(forbidden(
            "scopes: only administrators can create a token with the `admin` scope",
        ));
    }
    let created = state
        .db
        .write(move |conn| {
            let created =
                Token::create_child(conn, &auth.token, &body.name, &scopes, agent, expires_at)?;
            let mut audit = NewAudit::new("token_create");
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.detail = json!({"id": created.token.id, "name": created.token.name,
                                   "scopes": created.token.scopes, "agent": agent,
                                   "parent": auth.token.id});
            audit.insert(conn)?;
            Ok(created)
        })
        .await?;
    Ok(HttpResponse::Created().json(CreatedToken::from(&created)))
}

/// The authenticated user's live tokens (never their secrets); needs the `tokens` scope.
#[utoipa::path(tag = "tokens", security(("bearer" = [])), responses((status = 200, body = TokenList), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody)))]
#[get("/api/v1/tokens")]
pub async fn list(state: web::Data<AppState>, auth: Auth) -> AppResult<web::Json<TokenList>> {
    auth.require_scope(Scope::Tokens)?;
    let user_id = auth.user.id;
    let tokens = state
        .db
        .read(move |conn| Token::list_for_user(conn, user_id))
        .await?;
    Ok(web::Json(TokenList {
        tokens: tokens.iter().map(EncodableToken::from).collect(),
    }))
}

/// Revoke one of the authenticated user's tokens, and every token created
/// below it. An agent token can revoke only agent tokens.
#[utoipa::path(tag = "tokens", security(("bearer" = [])), params(("id" = i64, Path, description = "token id")),
    responses((status = 204), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[delete("/api/v1/tokens/{id}")]
pub async fn revoke(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<i64>,
) -> AppResult<HttpResponse> {
    auth.require_scope(Scope::Tokens)?;
    let id = path.into_inner();
    state
        .db
        .write(move |conn| {
            let token = Token::find_for_user(conn, auth.user.id, id)?
                .ok_or_else(|| not_found(format!("you have no token with id {id}")))?;
            if auth.token.agent && !token.agent {
                return Err(forbidden(
                    "an agent token can revoke only agent tokens; use one of your own tokens",
                ));
            }
            let revoked = Token::revoke(conn, token.id)?;
            let mut audit = NewAudit::new("token_revoke");
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.detail = json!({"id": token.id, "name": token.name, "revoked": revoked});
            audit.insert(conn)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
