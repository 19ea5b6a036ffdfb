//! `GET /api/v1/me`: who the token belongs to; `/api/v1/me/invitations`:
//! their invitations to own tools, to accept or decline.

use actix_web::{delete, get, put, web};
use serde_json::json;

use crate::app::AppState;
use crate::auth::Auth;
use crate::encode::rfc3339;
use crate::error::{not_found, AppError, AppResult, ProblemBody};
use crate::models::state_change::{self, StateChange};
use crate::models::{invitation, owner, NewAudit, Scope, ToolRow, User};
use crate::views::{EncodablePublisher, Me, OwnerInvitations, Owners};

/// The authenticated user: login, tier and admin flag.
#[utoipa::path(tag = "auth", security(("bearer" = [])), responses((status = 200, body = Me), (status = 401, body = ProblemBody)))]
#[get("/api/v1/me")]
pub async fn me(auth: Auth) -> AppResult<web::Json<Me>> {
    Ok(web::Json(Me {
        login: auth.user.login.clone(),
        tier: auth.user.tier,
        admin: auth.user.is_admin,
    }))
}

/// The authenticated user's invitations to own tools, expired ones included.
#[utoipa::path(tag = "owners", security(("bearer" = [])),
    responses((status = 200, body = OwnerInvitations), (status = 401, body = ProblemBody)))]
#[get("/api/v1/me/invitations")]
pub async fn my_invitations(
    state: web::Data<AppState>,
    auth: Auth,
) -> AppResult<web::Json<OwnerInvitations>> {
    let invitations = state
        .db
        .read(move |conn| invitation::for_invitee(conn, auth.user.id))
        .await?;
    Ok(web::Json(OwnerInvitations { invitations }))
}

/// Accept an invitation to own a tool (scope `owners`): 404 without one,
/// 410 `invitation-expired` once it has expired.
#[utoipa::path(tag = "owners", security(("bearer" = [])), params(("name" = String, Path)),
    responses((status = 200, body = Owners), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody),
              (status = 404, body = ProblemBody), (status = 410, body = ProblemBody)))]
#[put("/api/v1/me/invitations/{name}")]
pub async fn accept_invitation(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
) -> AppResult<web::Json<Owners>> {
    answer(&state, auth, path.into_inner(), true).await
}

/// Decline an invitation to own a tool (scope `owners`); an expired one can
/// be declined too. 404 without one.
#[utoipa::path(tag = "owners", security(("bearer" = [])), params(("name" = String, Path)),
    responses((status = 200, body = Owners), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody),
              (status = 404, body = ProblemBody)))]
#[delete("/api/v1/me/invitations/{name}")]
pub async fn decline_invitation(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<String>,
) -> AppResult<web::Json<Owners>> {
    answer(&state, auth, path.into_inner(), false).await
}

async fn answer(
    state: &AppState,
    auth: Auth,
    name: String,
    accepting: bool,
) -> AppResult<web::Json<Owners>> {
    auth.require_scope(Scope::Owners)?;
    let (owners, after) = state
        .db
        .write(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let open = invitation::find(conn, tool.id, auth.user.id)?.ok_or_else(|| {
                not_found(format!(
                    "you have no invitation to own `{}`; an owner can invite you with `toolreg owner add {} {}`",
                    tool.name, tool.name, auth.user.login
                ))
            })?;
            if accepting && open.is_expired() {
                return Err(AppError::InvitationExpired(format!(
                    "your invitation to own `{}` expired at {}; ask an owner to invite you again",
                    tool.name,
                    rfc3339(&open.expires_at)
                )));
            }
            invitation::delete(conn, tool.id, auth.user.id)?;
            let action = if accepting {
                owner::add(conn, tool.id, auth.user.id)?;
                "owner_add"
            } else {
                "owner_invite_decline"
            };
            let inviter = User::find(conn, open.inviter_id)?;
            let mut audit = NewAudit::new(action);
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.tool = Some(&tool.name);
            audit.detail = json!({"login": auth.user.login, "invited_by": inviter.login});
            let change = StateChange::new().tool(tool.id, &tool.name).audit(audit);
            let owners = owner::list(conn, tool.id)?;
            let after = state_change::record(conn, change)?;
            Ok((owners, after))
        })
        .await?;
    after.apply(&state.cache);
    Ok(web::Json(Owners {
        owners: owners.iter().map(EncodablePublisher::from).collect(),
        invitations: None,
    }))
}
