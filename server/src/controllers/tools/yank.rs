//! Yank and unyank: `DELETE /api/v1/tools/{name}/{version}/yank`,
//! `PUT /api/v1/tools/{name}/{version}/unyank`. A yanked version stays
//! downloadable but is skipped by resolve; it is never replaced.

use actix_web::{delete, put, web};
use serde_json::json;

use crate::app::AppState;
use crate::auth::Auth;
use crate::db::DbConnection;
use crate::error::{forbidden, AppResult, ProblemBody};
use crate::models::change::ChangeLogKind;
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::{owner, NewAudit, Scope, ToolRow, VersionRow};
use crate::views::YankState;

/// Yank a version (owners only, scope `yank`).
#[utoipa::path(tag = "tools", security(("bearer" = [])), params(("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = YankState), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[delete("/api/v1/tools/{name}/{version}/yank")]
pub async fn yank(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
) -> AppResult<web::Json<YankState>> {
    set_yanked(&state, auth, path.into_inner(), true).await
}

/// Undo a yank (owners only, scope `yank`).
#[utoipa::path(tag = "tools", security(("bearer" = [])), params(("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, body = YankState), (status = 401, body = ProblemBody), (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[put("/api/v1/tools/{name}/{version}/unyank")]
pub async fn unyank(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
) -> AppResult<web::Json<YankState>> {
    set_yanked(&state, auth, path.into_inner(), false).await
}

async fn set_yanked(
    state: &AppState,
    auth: Auth,
    (name, version): (String, String),
    yanked: bool,
) -> AppResult<web::Json<YankState>> {
    auth.require_scope(Scope::Yank)?;
    let (view, after) = state
        .db
        .write(move |conn| apply(conn, &auth, &name, &version, yanked))
        .await?;
    after.apply(&state.cache);
    Ok(web::Json(view))
}

fn apply(
    conn: &mut DbConnection,
    auth: &Auth,
    name: &str,
    version: &str,
    yanked: bool,
) -> AppResult<(YankState, AfterCommit)> {
    let tool = ToolRow::require(conn, name)?;
    let v = VersionRow::require(conn, tool.id, &tool.name, version)?;
    if !owner::is_owner(conn, tool.id, auth.user.id)? {
        return Err(forbidden(format!(
            "only owners of `{}` can yank or unyank its versions",
            tool.name
        )));
    }
    let mut after = AfterCommit::nothing();
    if v.yanked != yanked {
        VersionRow::set_yanked(conn, v.id, yanked)?;
        let kind = if yanked {
            ChangeLogKind::Yank
        } else {
            ChangeLogKind::Unyank
        };
        let mut audit = NewAudit::new(kind.as_str());
        audit.actor = Some(&auth.user.login);
        audit.token_id = Some(auth.token.id);
        audit.tool = Some(&tool.name);
        audit.version = Some(&v.version);
        audit.detail = json!({});
        after = state_change::record(
            conn,
            StateChange::new()
                .audit(audit)
                .version(tool.id, &tool.name, &v.version, kind),
        )?;
    }
    Ok((
        YankState {
            name: tool.name,
            version: v.version,
            yanked,
        },
        after,
    ))
}
