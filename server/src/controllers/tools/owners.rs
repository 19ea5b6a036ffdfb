//! Owners of a tool: `GET/PUT/DELETE /api/v1/tools/{name}/owners` and the
//! owners' view of pending invitations. Adding an owner invites them; they
//! accept or decline under `/api/v1/me/invitations` (`controllers::me`).

use actix_web::{delete, get, put, web};
use serde_json::json;

use crate::app::AppState;
use crate::auth::Auth;
use crate::db::DbConnection;
use crate::error::{bad_request, forbidden, AppResult, ProblemBody};
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::{invitation, owner, NewAudit, Scope, ToolRow, User};
use crate::views::{EncodablePublisher, OwnerInvitations, Owners, OwnersChange};

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
        invitations: None,
    }))
}

/// The tool's pending invitations, expired ones included (owners only).
#[utoipa::path(tag = "owners", security(("bearer" = [])), params(("name" = String, Path)),
    responses((status = 200, body = OwnerInvitations), (status = 401, body = ProblemBody),
              (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/owners/invitations")]
pub async fn pending_invitations(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
) -> AppResult<web::Json<OwnerInvitations>> {
    let name = path.into_inner();
    let invitations = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            require_owner(conn, &auth, &tool)?;
            invitation::for_tool(conn, tool.id)
        })
        .await?;
    Ok(web::Json(OwnerInvitations { invitations }))
}

/// Invite owners (owners only, scope `owners`): each login gets an
/// invitation valid for 30 days, and becomes an owner when they accept it.
/// An unknown login is 404; a login that already owns the tool is left as is.
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

/// Remove owners, or withdraw their pending invitations (owners only, scope
/// `owners`); removing the last owner is 400.
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
    Ok(web::Json(owners))
}

fn require_owner(conn: &mut DbConnection, auth: &Auth, tool: &ToolRow) -> AppResult<()> {
    if owner::is_owner(conn, tool.id, auth.user.id)? {
        Ok(())
    } else {
        Err(forbidden(format!(
            "only owners of `{}` can change its owners or see its invitations",
            tool.name
        )))
    }
}

fn apply(
    conn: &mut DbConnection,
    auth: &Auth,
    name: &str,
    logins: &[String],
    adding: bool,
) -> AppResult<(Owners, AfterCommit)> {
    let tool = ToolRow::require(conn, name)?;
    require_owner(conn, auth, &tool)?;
    let mut users = Vec::with_capacity(logins.len());
    for login in logins {
        users.push(User::require_by_login(conn, login)?);
    }
    let mut change = StateChange::new().tool(tool.id, &tool.name);
    for user in &users {
        let action = if adding {
            if owner::is_owner(conn, tool.id, user.id)? {
                None
            } else {
                invitation::invite(conn, tool.id, user.id, auth.user.id)?;
                Some("owner_invite")
            }
        } else if owner::remove(conn, tool.id, user.id)? {
            invitation::delete(conn, tool.id, user.id)?;
            Some("owner_remove")
        } else if invitation::delete(conn, tool.id, user.id)? {
            Some("owner_invite_withdraw")
        } else {
            None
        };
        if let Some(action) = action {
            let mut audit = NewAudit::new(action);
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
    let answer = Owners {
        owners: owners.iter().map(EncodablePublisher::from).collect(),
        invitations: Some(invitation::for_tool(conn, tool.id)?),
    };
    let after = state_change::record(conn, change)?;
    Ok((answer, after))
}
