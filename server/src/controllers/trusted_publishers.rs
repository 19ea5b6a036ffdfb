//! A tool's trusted publishers, set by its owners:
//! `GET/POST /api/v1/tools/{name}/trusted-publishers` and
//! `DELETE /api/v1/tools/{name}/trusted-publishers/{id}`. Each needs an
//! owner's token with the `owners` scope; adding and removing are recorded in
//! the audit log (`trusted_publisher_add`, `trusted_publisher_remove`).
//! Agent tokens cannot add or remove them: a trusted publisher hands out
//! tokens, and an agent token must not mint more power than it holds.

use actix_web::{delete, get, post, web, HttpResponse};
use serde_json::json;

use crate::app::AppState;
use crate::auth::Auth;
use crate::db::DbConnection;
use crate::error::{forbidden, not_found, AppResult, ProblemBody};
use crate::models::trusted_publisher::{NewTrustedPublisher, TrustedPublisher};
use crate::models::{owner, NewAudit, Scope, ToolRow};
use crate::views::{EncodableTrustedPublisher, NewTrustedPublisherRequest, TrustedPublisherList};

/// The tool's trusted publishers (owners only, scope `owners`).
#[utoipa::path(tag = "trusted publishing", security(("bearer" = [])), params(("name" = String, Path)),
    responses((status = 200, body = TrustedPublisherList), (status = 401, body = ProblemBody),
              (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/trusted-publishers")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
) -> AppResult<web::Json<TrustedPublisherList>> {
    auth.require_scope(Scope::Owners)?;
    let name = path.into_inner();
    let list = state
        .db
        .read(move |conn| {
            let tool = owned_tool(conn, &auth, &name)?;
            TrustedPublisher::list(conn, tool.id)?
                .iter()
                .map(|t| t.encode(conn))
                .collect::<AppResult<Vec<_>>>()
        })
        .await?;
    Ok(web::Json(TrustedPublisherList {
        trusted_publishers: list,
    }))
}

/// Add a trusted publisher (owners only, scope `owners`): ID tokens of
/// `issuer` for `repository` and `workflow` (and `environment`, when given)
/// may then be exchanged for a token that publishes new versions of the tool.
#[utoipa::path(tag = "trusted publishing", security(("bearer" = [])), params(("name" = String, Path)),
    request_body = NewTrustedPublisherRequest,
    responses((status = 201, body = EncodableTrustedPublisher), (status = 400, body = ProblemBody),
              (status = 401, body = ProblemBody), (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[post("/api/v1/tools/{name}/trusted-publishers")]
pub async fn add(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
    body: web::Json<NewTrustedPublisherRequest>,
) -> AppResult<HttpResponse> {
    auth.require_scope(Scope::Owners)?;
    refuse_agent(&auth, "add trusted publishers")?;
    let body = body.into_inner();
    let new = NewTrustedPublisher {
        issuer: body.issuer,
        repository: body.repository,
        workflow: body.workflow,
        environment: body.environment,
        repository_id: body.repository_id,
        owner_id: body.owner_id,
    }
    .check(state.oidc.issuers())?;
    let name = path.into_inner();
    let added = state
        .db
        .write(move |conn| {
            let tool = owned_tool(conn, &auth, &name)?;
            let added = TrustedPublisher::add(conn, tool.id, &new, auth.user.id, auth.token.agent)?;
            let mut audit = NewAudit::new("trusted_publisher_add");
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.tool = Some(&tool.name);
            audit.detail = json!({"id": added.id, "issuer": added.issuer,
                                   "repository": added.repository, "workflow": added.workflow,
                                   "environment": added.environment});
            audit.insert(conn)?;
            added.encode(conn)
        })
        .await?;
    Ok(HttpResponse::Created().json(added))
}

/// Remove a trusted publisher (owners only, scope `owners`). Tokens already
/// exchanged through it stop publishing at once: publish checks the match
/// again.
#[utoipa::path(tag = "trusted publishing", security(("bearer" = [])),
    params(("name" = String, Path), ("id" = i64, Path)),
    responses((status = 204, description = "removed"), (status = 401, body = ProblemBody),
              (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[delete("/api/v1/tools/{name}/trusted-publishers/{id}")]
pub async fn remove(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, i64)>,
) -> AppResult<HttpResponse> {
    auth.require_scope(Scope::Owners)?;
    refuse_agent(&auth, "remove trusted publishers")?;
    let (name, id) = path.into_inner();
    state
        .db
        .write(move |conn| {
            let tool = owned_tool(conn, &auth, &name)?;
            let Some(found) = TrustedPublisher::find(conn, tool.id, id)? else {
                return Err(not_found(format!(
                    "`{}` has no trusted publisher {id}",
                    tool.name
                )));
            };
            TrustedPublisher::remove(conn, found.id)?;
            let mut audit = NewAudit::new("trusted_publisher_remove");
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.tool = Some(&tool.name);
            audit.detail = json!({"id": found.id, "issuer": found.issuer,
                                   "repository": found.repository, "workflow": found.workflow,
                                   "environment": found.environment});
            audit.insert(conn)
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// 403 for an agent token, which cannot `what`.
fn refuse_agent(auth: &Auth, what: &str) -> AppResult<()> {
    if auth.token.agent {
        return Err(forbidden(format!(
            "an agent token cannot {what}; use your own (not agent) token with the `owners` scope"
        )));
    }
    Ok(())
}

/// The tool `name`, if the request's user owns it; else 404 or 403.
fn owned_tool(conn: &mut DbConnection, auth: &Auth, name: &str) -> AppResult<ToolRow> {
    let tool = ToolRow::require(conn, name)?;
    if !owner::is_owner(conn, tool.id, auth.user.id)? {
        return Err(forbidden(format!(
            "only owners of `{}` can see or change its trusted publishers",
            tool.name
        )));
    }
    Ok(tool)
}
