//! Tool and version metadata: `GET /api/v1/tools/{name}` and
//! `GET /api/v1/tools/{name}/{version}`. Both answers are encoded once and
//! kept in the read cache (`crate::read_cache`) until a change invalidates
//! them; a tool summary the cache does not hold is read as stored
//! (`crate::models::tool_summary`), on PostgreSQL together with the other
//! lookups that arrive meanwhile (`crate::db::lookup_batch`).

use actix_web::{get, web, HttpResponse};
use bytes::Bytes;

use crate::app::AppState;
use crate::controllers::{self, json_body, Page, PageQuery};
use crate::encode::to_json;
use crate::error::{AppResult, ProblemBody};
use crate::models::version::{self, VersionContent};
use crate::models::{tool, tool_summary, ToolRow, VersionRow};
use crate::views::{EncodableTool, EncodableVersion, VersionPage, TOOL_VERSIONS_LISTED};

/// The tool summary: fields of its latest version, owners, downloads and its newest versions.
#[utoipa::path(tag = "tools", params(("name" = String, Path, description = "registry name (matched in normalized form)")),
    responses((status = 200, body = EncodableTool), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}")]
pub async fn show_tool(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let name = path.into_inner();
    if let Some(body) = state.cache.tool(&name) {
        return Ok(json_body(body));
    }
    let epoch = state.cache.epoch();
    let body = match state.summaries.load(tool::normalize(&name)).await? {
        Some(body) => body,
        // No such tool (the 404 names it), or one from before summaries
        // were stored, not filled yet.
        None => {
            let lookup = name.clone();
            state
                .db
                .lookup(move |conn| {
                    let tool = ToolRow::require(conn, &lookup)?;
                    tool_summary::encode(conn, &tool)
                })
                .await?
        }
    };
    let body = Bytes::from(body);
    state.cache.put_tool(&name, body.clone(), epoch);
    Ok(json_body(body))
}

/// Every version of a tool, newest first by SemVer, a page at a time (the
/// tool summary lists only the newest ones).
#[utoipa::path(tag = "tools", params(("name" = String, Path, description = "registry name (matched in normalized form)"), PageQuery),
    responses((status = 200, body = VersionPage), (status = 400, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/versions")]
pub async fn list_versions(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<PageQuery>,
) -> AppResult<HttpResponse> {
    let name = path.into_inner();
    // Pages past the last are empty rather than an error, as on other
    // registries.
    let Page { page, per_page } =
        controllers::page(&query, TOOL_VERSIONS_LISTED, TOOL_VERSIONS_LISTED)?;
    let page_body = state
        .db
        .lookup(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let rows = version::newest(conn, tool.id, (page - 1) * per_page, per_page)?;
            Ok(VersionPage {
                total: VersionRow::count(conn, tool.id)?,
                name: tool.name,
                versions: rows
                    .into_iter()
                    .map(|(v, login, _)| tool_summary::encode_version(v, login))
                    .collect(),
                page,
                per_page,
            })
        })
        .await?;
    Ok(json_body(to_json(&page_body)?))
}

/// One version: canonical manifest, original definition, README, digest,
/// publisher and tier. While the version is blocked or quarantined, `manifest`
/// and `definition` are null and the findings' excerpts are empty (and
/// `readme` is null too while quarantined).
#[utoipa::path(tag = "tools", params(("name" = String, Path), ("version" = String, Path, description = "exact SemVer version")),
    responses((status = 200, body = EncodableVersion), (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}")]
pub async fn show_version(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (name, version) = path.into_inner();
    if let Some(body) = state.cache.version(&name, &version) {
        return Ok(json_body(body));
    }
    let epoch = state.cache.epoch();
    let lookup = (name.clone(), version.clone());
    let view = state
        .db
        .lookup(move |conn| {
            let tool = ToolRow::require(conn, &lookup.0)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &lookup.1)?;
            let content = VersionContent::of(conn, v.id)?;
            version::encode(conn, &tool.name, &v, &content)
        })
        .await?;
    let body = to_json(&view)?;
    state
        .cache
        .put_version(&name, &version, body.clone(), epoch);
    Ok(json_body(body))
}
