//! Quarantine: `PUT /api/v1/tools/{name}/{version}/quarantine {"reason"}`
//! and `DELETE .../quarantine` (admins only). The state change, its audit
//! and change-log rows and the tool summary's refresh are
//! [`crate::models::quarantine::set`], one transaction; the cached answers
//! it made stale are dropped after the commit.

use actix_web::{delete, put, web};

use crate::app::AppState;
use crate::auth::Auth;
use crate::controllers::reports::parse_reason;
use crate::encode::rfc3339;
use crate::error::{AppResult, ProblemBody};
use crate::models::quarantine as model;
use crate::models::tier::Actor;
use crate::models::{ToolRow, VersionRow};
use crate::views::{QuarantineState, ReasonRequest};

/// Quarantine a version: download, resolve and definition answer 403
/// `quarantined` with the reason, and it leaves search and the web index,
/// until the quarantine is lifted. Closes the version's open reports.
#[utoipa::path(tag = "reports", security(("bearer" = [])), params(("name" = String, Path), ("version" = String, Path)),
    request_body = ReasonRequest,
    responses((status = 200, body = QuarantineState),
              (status = 400, description = "no reason, an empty one or one over 2000 characters", body = ProblemBody),
              (status = 401, body = ProblemBody),
              (status = 403, description = "not an admin, an agent token, or no `admin` scope", body = ProblemBody),
              (status = 404, body = ProblemBody)))]
#[put("/api/v1/tools/{name}/{version}/quarantine")]
pub async fn quarantine_version(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> AppResult<web::Json<QuarantineState>> {
    auth.require_admin("quarantine versions")?;
    let reason = parse_reason(&body)?;
    set(&state, auth, path.into_inner(), Some(reason)).await
}

/// Lift a version's quarantine: everything it withheld is served again.
#[utoipa::path(tag = "reports", security(("bearer" = [])), params(("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = QuarantineState),
              (status = 401, body = ProblemBody),
              (status = 403, description = "not an admin, an agent token, or no `admin` scope", body = ProblemBody),
              (status = 404, body = ProblemBody)))]
#[delete("/api/v1/tools/{name}/{version}/quarantine")]
pub async fn lift_quarantine(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
) -> AppResult<web::Json<QuarantineState>> {
    auth.require_admin("lift quarantines")?;
    set(&state, auth, path.into_inner(), None).await
}

async fn set(
    state: &AppState,
    auth: Auth,
    (name, version): (String, String),
    reason: Option<String>,
) -> AppResult<web::Json<QuarantineState>> {
    let (done, after) = state
        .db
        .write(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            let actor = Actor {
                login: Some(&auth.user.login),
                token_id: Some(auth.token.id),
                via: "api",
            };
            model::set(conn, &tool, &v, reason.as_deref(), &actor)
        })
        .await?;
    after.apply(&state.cache);
    Ok(web::Json(QuarantineState {
        name: done.name,
        version: done.version,
        quarantined: done.quarantined,
        quarantine_reason: done.reason,
        quarantined_at: done.quarantined_at.as_ref().map(rfc3339),
    }))
}
