//! `GET /api/v1/resolve/{name}?req=`: the highest version matching a SemVer
//! requirement that is neither yanked, blocked nor quarantined.

use actix_web::{get, web};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::app::AppState;
use crate::controllers::{blocked_message, quarantined_message};
use crate::error::{bad_request, not_found, AppError, AppResult, ProblemBody};
use crate::models::version::list_for_tool;
use crate::models::{ToolRow, VersionRow};
use crate::views::Resolved;

#[derive(Debug, Deserialize, IntoParams)]
pub struct ResolveQuery {
    /// A SemVer requirement such as `^1.2` or `=1.0.0` (default `*`).
    pub req: Option<String>,
}

/// Resolve a requirement to one version. 404 (naming the versions that
/// exist) when nothing matches; 403 (`quarantined` or `blocked`) when only a
/// quarantined or blocked version matches.
#[utoipa::path(tag = "tools", params(("name" = String, Path), ResolveQuery),
    responses((status = 200, body = Resolved), (status = 400, body = ProblemBody), (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[get("/api/v1/resolve/{name}")]
pub async fn resolve(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<ResolveQuery>,
) -> AppResult<web::Json<Resolved>> {
    let name = path.into_inner();
    let req_text = query.req.clone().unwrap_or_else(|| "*".to_string());
    let req = semver::VersionReq::parse(&req_text).map_err(|e| {
        bad_request(format!(
            "req: `{req_text}` is not a SemVer requirement ({e})"
        ))
    })?;
    let resolved = state
        .db
        .lookup(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let versions = list_for_tool(conn, tool.id)?;
            let matching: Vec<_> = versions
                .iter()
                .filter(|(v, _)| semver::Version::parse(&v.version).is_ok_and(|sv| req.matches(&sv)))
                .collect();
            if let Some((best, _)) = matching.iter().find(|(v, _)| v.is_live()) {
                let v = VersionRow::require(conn, tool.id, &tool.name, &best.version)?;
                return Ok(Resolved {
                    download_url: format!("/api/v1/tools/{}/{}/download", tool.name, v.version),
                    name: tool.name,
                    version: v.version,
                    sha256: v.sha256,
                    size: v.size,
                    format: v.format,
                    execution: v.execution,
                });
            }
            if let Some((held, _)) = matching.iter().find(|(v, _)| v.quarantined && !v.yanked) {
                let reason = held.quarantine_reason.as_deref().unwrap_or_default();
                return Err(AppError::Quarantined(format!("{}: {}", tool.name, quarantined_message(&held.version, reason))));
            }
            if let Some((blocked, _)) = matching.iter().find(|(v, _)| v.blocked && !v.yanked) {
                let v = VersionRow::require(conn, tool.id, &tool.name, &blocked.version)?;
                return Err(AppError::Blocked(format!("{}: {}", tool.name, blocked_message(&v.version, v.blocked_reason.as_deref()))));
            }
            let existing: Vec<String> = versions
                .iter()
                .map(|(v, _)| {
                    let mut s = v.version.clone();
                    if v.yanked {
                        s.push_str(" (yanked)");
                    }
                    if v.blocked {
                        s.push_str(" (blocked)");
                    }
                    if v.quarantined {
                        s.push_str(" (quarantined)");
                    }
                    s
                })
                .collect();
            Err(not_found(format!(
                "no version of `{}` matches `{req_text}` (yanked, blocked and quarantined versions are skipped); versions: {}",
                tool.name,
                if existing.is_empty() { "none".to_string() } else { existing.join(", ") }
            )))
        })
        .await?;
    Ok(web::Json(resolved))
}
