//! Version diffs: `GET /api/v1/tools/{name}/diff?from=A&to=B` — what changed
//! between two versions in the definition an agent's model reads (their MCP
//! exports, compared by `toolreg_core::diff` with a severity per change),
//! and the lint findings the newer one carries that the older did not. A
//! rug pull (a description that gains an instruction, a parameter that
//! appears) shows here as a high or medium change.

use actix_web::{get, web};
use serde::Deserialize;
use toolreg_core::lint::{self, Finding};
use toolreg_core::Tool;
use utoipa::IntoParams;

use crate::app::AppState;
use crate::db::DbConnection;
use crate::error::{bad_request, internal, AppResult, ProblemBody};
use crate::models::version::HasState;
use crate::models::version::VersionContent;
use crate::models::{ToolRow, VersionRow};
use crate::views::VersionDiff;

#[derive(Debug, Deserialize, IntoParams)]
pub struct DiffQuery {
    /// The version compared from (exact SemVer), usually the older one.
    pub from: Option<String>,
    /// The version compared to (exact SemVer), usually the newer one.
    pub to: Option<String>,
}

/// An exact SemVer version from the query parameter `field`: 400 naming
/// the parameter when it is missing or not a version.
fn version_param(field: &str, value: Option<&str>) -> AppResult<String> {
    let value = value.ok_or_else(|| {
        bad_request(format!(
            "{field}: missing; give both versions, e.g. ?from=1.0.0&to=1.1.0"
        ))
    })?;
    semver::Version::parse(value)
        .map_err(|e| bad_request(format!("{field}: `{value}` is not a SemVer version ({e})")))?;
    Ok(value.to_string())
}

/// What changed from version `from` to version `to`: each change at a JSON
/// Pointer into the MCP export with `kind` (added, removed, changed), the
/// old and new values and a severity (high: a parameter added or an input
/// type widened to accept anything; medium: a description or title changed,
/// a parameter removed, a type or enum changed; low: the rest), plus the
/// lint findings of `to` that `from` did not have (`lint::new_since`). 400
/// when `from` or `to` is missing or not a version, 404 naming the unknown
/// tool or version, 403 when either version's contents are withheld
/// (blocked or quarantined).
#[utoipa::path(tag = "tools", params(("name" = String, Path), DiffQuery),
    responses((status = 200, body = VersionDiff), (status = 400, body = ProblemBody),
              (status = 403, description = "a version is blocked or quarantined", body = ProblemBody),
              (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/diff")]
pub async fn diff(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<DiffQuery>,
) -> AppResult<web::Json<VersionDiff>> {
    let from = version_param("from", query.from.as_deref())?;
    let to = version_param("to", query.to.as_deref())?;
    let name = path.into_inner();
    let ((old, old_findings), (new, new_findings)) = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let old = definition(conn, &tool, &from)?;
            let new = definition(conn, &tool, &to)?;
            Ok((old, new))
        })
        .await?;
    // Comparing is CPU work on texts anyone can publish (up to the
    // definition size limit each): on the blocking pool, not a worker.
    let answer = web::block(move || {
        let diff = toolreg_core::diff::between_tools(&old, &new);
        let new_findings: Vec<Finding> = lint::new_since(&old_findings, &new_findings)
            .into_iter()
            .cloned()
            .collect();
        VersionDiff {
            from: diff.from,
            to: diff.to,
            changes: diff.changes,
            new_findings,
        }
    })
    .await?;
    Ok(web::Json(answer))
}

/// The canonical tool and the lint findings of `version` of `tool`: 404 when
/// there is no such version, 403 when its contents are withheld.
fn definition(
    conn: &mut DbConnection,
    tool: &ToolRow,
    version: &str,
) -> AppResult<(Tool, Vec<Finding>)> {
    let v = VersionRow::require(conn, tool.id, &tool.name, version)?;
    v.state().contents(&v.version)?;
    let content = VersionContent::of(conn, v.id)?;
    let mut parsed: Tool = serde_json::from_str(&content.manifest).map_err(|e| {
        internal(format!(
            "stored manifest of {} {} is unreadable: {e}",
            tool.name, v.version
        ))
    })?;
    parsed.original = content.definition.into_bytes();
    let findings: Vec<Finding> = serde_json::from_str(&content.findings).map_err(|e| {
        internal(format!(
            "stored lint findings of {} {} are not JSON: {e}",
            tool.name, v.version
        ))
    })?;
    Ok((parsed, findings))
}
