//! Authentication: `Authorization: Bearer <token>` → the user and token,
//! with scope checks and the publisher's effective tier. A token from
//! trusted publishing is accepted by publish only.

use std::future::Future;
use std::pin::Pin;

use actix_web::{web, FromRequest, HttpRequest};
use toolreg_core::Tier;

use crate::app::AppState;
use crate::db::now;
use crate::error::{forbidden, internal, unauthorized, AppError, AppResult};
use crate::models::{tier, Scope, Token, User};

/// An authenticated request: the user and the token they used.
#[derive(Debug, Clone)]
pub struct Auth {
    pub user: User,
    pub token: Token,
}

impl Auth {
    /// 403 unless the token carries `scope`.
    pub fn require_scope(&self, scope: Scope) -> AppResult<()> {
        if self.token.has_scope(scope) {
            Ok(())
        } else {
            Err(forbidden(format!(
                "the token `{}` lacks the `{}` scope; create a token with that scope",
                self.token.name,
                scope.as_str()
            )))
        }
    }

    /// 403 unless this is an administrator's own (not agent) token with the
    /// `admin` scope; `what` says what was refused.
    pub fn require_admin(&self, what: &str) -> AppResult<()> {
        if !self.user.is_admin {
            return Err(forbidden(format!("only administrators can {what}")));
        }
        if self.token.agent {
            return Err(forbidden(format!(
                "an agent token cannot {what}; use an admin's own token with the `admin` scope"
            )));
        }
        self.require_scope(Scope::Admin)
    }

    /// The tier this request publishes with ([`tier::effective_tier`]).
    pub fn effective_tier(&self) -> Tier {
        tier::effective_tier(self.user.tier, self.token.agent)
    }

    pub fn login(&self) -> &str {
        &self.user.login
    }
}

/// The token secret from the `Authorization` header, if any.
fn bearer(req: &HttpRequest) -> AppResult<Option<String>> {
    let Some(value) = req.headers().get(actix_web::http::header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| unauthorized("the Authorization header is not valid text"))?;
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(unauthorized(
            "the Authorization header must be `Bearer <token>`",
        ));
    }
    Ok(Some(token.trim().to_string()))
}

/// Look up the token and its user; record its use at most once a minute.
/// The lookup is two indexed reads (the secret's SHA-256 is cheap), so it
/// runs where small reads are cheapest ([`crate::db::Db::lookup`]).
pub async fn authenticate(state: &AppState, secret: String) -> AppResult<Auth> {
    let found = state
        .db
        .lookup(move |conn| {
            Ok(Token::find_live(conn, &secret)?.map(|(token, user)| Auth { user, token }))
        })
        .await?;
    let auth = found.ok_or_else(|| {
        unauthorized("the token is not valid: it is unknown, expired or revoked; log in again with a new token")
    })?;
    let stale = auth
        .token
        .last_used_at
        .is_none_or(|t| now() - t > chrono::TimeDelta::seconds(60));
    if stale {
        let id = auth.token.id;
        // Recording use is best effort: a failure must not fail the request.
        if let Err(e) = state.db.write(move |conn| Token::touch(conn, id)).await {
            tracing::warn!(error = %e, "could not record token use");
        }
    }
    Ok(auth)
}

/// The authentication of a publish: like [`Auth`], and the one place that
/// also accepts a token from trusted publishing.
#[derive(Debug, Clone)]
pub struct PublishAuth(pub Auth);

/// Read the bearer token of `req` and authenticate it.
fn from_bearer(req: &HttpRequest) -> Pin<Box<dyn Future<Output = AppResult<Auth>>>> {
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let secret = bearer(req);
    Box::pin(async move {
        let state = state.ok_or_else(|| internal("application state missing"))?;
        let secret = secret?.ok_or_else(|| {
            unauthorized(
                "this needs a token: send `Authorization: Bearer <token>` (see `toolreg login`)",
            )
        })?;
        authenticate(&state, secret).await
    })
}

impl FromRequest for PublishAuth {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let auth = from_bearer(req);
        Box::pin(async move { auth.await.map(PublishAuth) })
    }
}

impl FromRequest for Auth {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let auth = from_bearer(req);
        Box::pin(async move {
            let auth = auth.await?;
            // A token from trusted publishing stands for a CI run, not for
            // its owner: it publishes (through [`PublishAuth`]) and does
            // nothing else in their name (no reports, no account reads).
            if auth.token.provenance.is_some() {
                return Err(forbidden(
                    "a token from trusted publishing only publishes new versions of its tools (`POST /api/v1/tools`); use your own token for anything else",
                ));
            }
            Ok(auth)
        })
    }
}
