//! Owners of a tool: `GET/PUT/DELETE /api/v1/tools/{name}/owners`.

use actix_web::{delete, get, put, web};
use serde_json::json;

use crate::app::AppState;
use crate::auth::Auth;
use crate::db::DbConnection;
use crate::error::{bad_request, forbidden, AppResult, ProblemBody};
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::{owner, NewAudit, Scope, ToolRow, User};
use crate::views::{EncodablePublisher, Owners, OwnersChange};

/// The tool's owners (public).
#[utoipa::path(tag = "owners", params(("name" = String, Path)),
    responses((status = 200, body = Owners), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/owners")]
pub async fn list(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<web::Json<Owners>> {
    let name = path.into_inner();
    let owners = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            owner::list(conn, tool.id)
        })
        .await?;
    Ok(web::Json(Owners {
        owners: owners.iter().map(EncodablePublisher::from).collect(),
    }))
}

/// Add owners (owners only, scope `owners`); an unknown login is 404.
#[utoipa::path(tag = "owners", security(("bearer" = [])), params(("name" = String, Path)), request_body = OwnersChange,
    responses((status = 200, body = Owners), (status = 400, body = ProblemBody), (status = 401, body = ProblemBody),
              (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[put("/api/v1/tools/{name}/owners")]
pub async fn add(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
    body: web::Json<OwnersChange>,
) -> AppResult<web::Json<Owners>> {
    change(&state, auth, path.into_inner(), body.into_inner(), true).await
}

/// Remove owners (owners only, scope `owners`); removing the last owner is 400.
#[utoipa::path(tag = "owners", security(("bearer" = [])), params(("name" = String, Path)), request_body = OwnersChange,
    responses((status = 200, body = Owners), (status = 400, body = ProblemBody), (status = 401, body = ProblemBody),
              (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[delete("/api/v1/tools/{name}/owners")]
pub async fn remove(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
    body: web::Json<OwnersChange>,
) -> AppResult<web::Json<Owners>> {
    change(&state, auth, path.into_inner(), body.into_inner(), false).await
}

async fn change(
    state: &AppState,
    auth: Auth,
    name: String,
    body: OwnersChange,
    adding: bool,
) -> AppResult<web::Json<Owners>> {
    auth.require_scope(Scope::Owners)?;
    if body.logins.is_empty() {
        return Err(bad_request("logins: name at least one login"));
    }
    let tool = name.clone();
    let (owners, after) = state
        .db
        .write(move |conn| apply(conn, &auth, &tool, &body.logins, adding))
        .await?;
    after.apply(&state.cache);
    Ok(web::Json(Owners {
        owners: owners.iter().map(EncodablePublisher::from).collect(),
    }))
}

fn apply(
    conn: &mut DbConnection,
    auth: &Auth,
    name: &str,
    logins: &[String],
    adding: bool,
) -> AppResult<(Vec<User>, AfterCommit)> {
    let tool = ToolRow::require(conn, name)?;
    if !owner::is_owner(conn, tool.id, auth.user.id)? {
        return Err(forbidden(format!(
            "only owners of `{}` can change its owners",
            tool.name
        )));
    }
    let mut users = Vec::with_capacity(logins.len());
    for login in logins {
        users.push(User::require_by_login(conn, login)?);
    }
    let mut change = StateChange::new().tool(tool.id, &tool.name);
    for user in &users {
        let changed = if adding {
            owner::add(conn, tool.id, user.id)?
        } else {
            owner::remove(conn, tool.id, user.id)?
        };
        if changed {
            let mut audit = NewAudit::new(if adding { "owner_add" } else { "owner_remove" });
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.tool = Some(&tool.name);
            audit.detail = json!({"login": user.login});
            change = change.audit(audit);
        }
    }
    let owners = owner::list(conn, tool.id)?;
    if owners.is_empty() {
        // The transaction rolls back: the tool keeps its owners.
        return Err(bad_request(format!(
            "`{}` must keep at least one owner; add another owner first",
            tool.name
        )));
    }
    let after = state_change::record(conn, change)?;
    Ok((owners, after))
}
