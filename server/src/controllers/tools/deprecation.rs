//! Deprecation: `PUT /api/v1/tools/{name}/deprecation {"message",
//! "successor"?, "req"?}` and `DELETE /api/v1/tools/{name}/deprecation
//! [?req=…]` (owners only, token scope `yank`). The rules — the message's
//! limits and lint, the successor, the requirement, the rows, audit and
//! change log — are [`crate::models::deprecation`]; this parses, authorises
//! and drops the cached answers after the commit.

use actix_web::{delete, put, web};
use serde::Deserialize;
use toolreg_api::EncodableDeprecation;

use crate::app::AppState;
use crate::auth::Auth;
use crate::db::DbConnection;
use crate::error::{forbidden, AppResult, ProblemBody};
use crate::models::deprecation::{self as model, Request};
use crate::models::state_change::AfterCommit;
use crate::models::tier::Actor;
use crate::models::{owner, Scope, ToolRow};
use crate::views::{DeprecationChange, DeprecationRequest};

/// Deprecate a tool's versions — every one, or those matching `req` — with
/// a message and an optional successor (owners only, scope `yank`). They
/// are still downloaded and resolved: a deprecation is advice.
#[utoipa::path(tag = "tools", security(("bearer" = [])), params(("name" = String, Path)),
    request_body = DeprecationRequest,
    responses((status = 200, body = DeprecationChange),
              (status = 400, description = "no message, one over 500 characters, a bad `req`, or an unknown field", body = ProblemBody),
              (status = 401, body = ProblemBody),
              (status = 403, description = "not an owner, or no `yank` scope", body = ProblemBody),
              (status = 404, body = ProblemBody),
              (status = 422, description = "the lint refuses the message (`invalid-definition`), the successor is unknown or the tool itself, or `req` matches no version", body = ProblemBody)))]
#[put("/api/v1/tools/{name}/deprecation")]
pub async fn deprecate(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
    body: web::Bytes,
) -> AppResult<web::Json<DeprecationChange>> {
    auth.require_scope(Scope::Yank)?;
    let request = model::parse_request(&body)?;
    let name = path.into_inner();
    // The lint is CPU work: off the async workers.
    let (request, name) =
        web::block(move || model::check_message(&name, &request.message).map(|()| (request, name)))
            .await
            .map_err(|e| crate::error::internal(format!("the lint task failed: {e}")))??;
    let (answer, after) = state
        .db
        .write(move |conn| apply(conn, &auth, &name, &request))
        .await?;
    after.apply(&state.cache);
    Ok(web::Json(answer))
}

/// `?req=` of the lifting.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct LiftQuery {
    /// Lift the deprecation of the versions matching this SemVer
    /// requirement only (default: every version).
    pub req: Option<String>,
}

/// Lift the deprecation of a tool's versions — every one, or those
/// matching `req` (owners only, scope `yank`).
#[utoipa::path(tag = "tools", security(("bearer" = [])), params(("name" = String, Path), LiftQuery),
    responses((status = 200, body = DeprecationChange),
              (status = 400, description = "a bad `req`", body = ProblemBody),
              (status = 401, body = ProblemBody),
              (status = 403, description = "not an owner, or no `yank` scope", body = ProblemBody),
              (status = 404, body = ProblemBody),
              (status = 422, description = "`req` matches no version", body = ProblemBody)))]
#[delete("/api/v1/tools/{name}/deprecation")]
pub async fn undeprecate(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
    query: web::Query<LiftQuery>,
) -> AppResult<web::Json<DeprecationChange>> {
    auth.require_scope(Scope::Yank)?;
    let req = query
        .into_inner()
        .req
        .map(|r| model::parse_req(&r))
        .transpose()?;
    let name = path.into_inner();
    let (answer, after) = state
        .db
        .write(move |conn| lift(conn, &auth, &name, req.as_ref()))
        .await?;
    after.apply(&state.cache);
    Ok(web::Json(answer))
}

/// The tool, once its owner is checked.
fn owned(conn: &mut DbConnection, auth: &Auth, name: &str) -> AppResult<ToolRow> {
    let tool = ToolRow::require(conn, name)?;
    if !owner::is_owner(conn, tool.id, auth.user.id)? {
        return Err(forbidden(format!(
            "only owners of `{}` can deprecate its versions or lift their deprecation",
            tool.name
        )));
    }
    Ok(tool)
}

fn actor(auth: &Auth) -> Actor<'_> {
    Actor {
        login: Some(&auth.user.login),
        token_id: Some(auth.token.id),
        via: "api",
    }
}

fn apply(
    conn: &mut DbConnection,
    auth: &Auth,
    name: &str,
    request: &Request,
) -> AppResult<(DeprecationChange, AfterCommit)> {
    let tool = owned(conn, auth, name)?;
    let successor = request
        .successor
        .as_deref()
        .map(|s| model::resolve_successor(conn, &tool, s))
        .transpose()?;
    let deprecation = EncodableDeprecation {
        message: request.message.clone(),
        successor,
        req: request.req.as_ref().map(ToString::to_string),
    };
    model::set(
        conn,
        &tool,
        Some(&deprecation),
        request.req.as_ref(),
        &actor(auth),
    )
}

fn lift(
    conn: &mut DbConnection,
    auth: &Auth,
    name: &str,
    req: Option<&semver::VersionReq>,
) -> AppResult<(DeprecationChange, AfterCommit)> {
    let tool = owned(conn, auth, name)?;
    model::set(conn, &tool, None, req, &actor(auth))
}
