//! `GET /api/v1/resolve/{name}?req=`: the highest version matching a SemVer
//! requirement that is neither yanked, blocked nor quarantined.

use actix_web::{get, web};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::app::AppState;
use crate::error::{bad_request, not_found, AppResult, ProblemBody};
use crate::models::version::HasState;
use crate::models::version::{list_for_tool, VersionSummary};
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
            // The matching version whose state ranks highest decides: the
            // newest live one resolves; else a quarantined or blocked one
            // (not yanked) is a 403 naming why; else nothing matches.
            let mut decisive: Option<&VersionSummary> = None;
            for (v, _) in &versions {
                let matches = semver::Version::parse(&v.version).is_ok_and(|sv| req.matches(&sv));
                if matches
                    && decisive.is_none_or(|d| v.state().resolve_rank() > d.state().resolve_rank())
                {
                    decisive = Some(v);
                }
            }
            match decisive.and_then(|v| {
                v.state()
                    .resolve(&tool.name, &v.version)
                    .map(|answer| (v, answer))
            }) {
                Some((best, Ok(()))) => {
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
                Some((_, Err(refusal))) => return Err(refusal),
                None => {}
            }
            let existing: Vec<String> = versions
                .iter()
                .map(|(v, _)| {
                    let mut s = v.version.clone();
                    for label in v.state().labels() {
                        s.push_str(&format!(" ({label})"));
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
