//! Tool and version metadata: `GET /api/v1/tools/{name}` and
//! `GET /api/v1/tools/{name}/{version}`. Both answers are encoded once and
//! kept in the read cache (`crate::read_cache`) until a change invalidates
//! them; a tool summary the cache does not hold is read as stored
//! (`crate::models::tool_summary`).

use actix_web::{get, web, HttpResponse};
use bytes::Bytes;
use serde_json::Value;

use crate::app::AppState;
use crate::controllers::tools::publish::MAX_README;
use crate::controllers::{json_body, PageQuery};
use crate::encode::{rfc3339, to_json};
use crate::error::{internal, AppResult, ProblemBody};
use crate::models::version::{self, VersionContent};
use crate::models::{tool_summary, ToolRow, User, VersionRow};
use crate::views::{
    EncodablePublisher, EncodableTool, EncodableVersion, VersionPage, TOOL_VERSIONS_LISTED,
};

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
    let lookup = name.clone();
    let body = state
        .db
        .lookup(move |conn| match tool_summary::stored(conn, &lookup)? {
            Some(body) => Ok(body),
            // A tool from before summaries were stored, not filled yet.
            None => {
                let tool = ToolRow::require(conn, &lookup)?;
                tool_summary::encode(conn, &tool)
            }
        })
        .await?;
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
    let (page, per_page) = query.parse(TOOL_VERSIONS_LISTED, TOOL_VERSIONS_LISTED)?;
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
                    .map(|(v, login)| tool_summary::encode_version(v, login))
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
            let user = User::find(conn, v.publisher_id)?;
            let log_index = crate::transparency::store::index_of(conn, v.id)?;
            let provenance = VersionRow::provenance(conn, v.id)?
                .map(|p| serde_json::from_str(&p))
                .transpose()
                .map_err(|e| {
                    internal(format!(
                        "stored provenance of version {} does not parse: {e}",
                        v.id
                    ))
                })?;
            let findings = serde_json::from_str(&content.findings).map_err(|e| {
                internal(format!(
                    "stored lint findings of version {} are not JSON: {e}",
                    v.id
                ))
            })?;
            // What the version's state withholds: its contents (the
            // manifest, the definition and the finding excerpts quoting
            // them) and, under a quarantine, its README.
            let state = v.state();
            let contents = state.contents_served();
            let texts = state.texts_shown();
            Ok(EncodableVersion {
                name: tool.name,
                version: v.version,
                sha256: v.sha256,
                definition_sha256: v.definition_sha256,
                size: v.size,
                format: v.format,
                execution: v.execution,
                yanked: v.yanked,
                blocked: v.blocked,
                blocked_reason: v.blocked_reason,
                quarantined: v.quarantined,
                quarantine_reason: v.quarantine_reason,
                published_at: rfc3339(&v.published_at),
                downloads: v.downloads,
                // The tier the version was published with.
                publisher: EncodablePublisher {
                    login: user.login,
                    tier: v.publisher_tier,
                },
                manifest: if contents {
                    serde_json::from_str(&content.manifest).unwrap_or(Value::Null)
                } else {
                    Value::Null
                },
                definition_file: content.definition_file,
                definition: contents.then_some(content.definition),
                // Bounded like a publish's README; a larger one from before
                // the limit is left out.
                readme: content.readme.filter(|r| texts && r.len() <= MAX_README),
                log_index,
                findings: state.findings(findings),
                provenance,
            })
        })
        .await?;
    let body = to_json(&view)?;
    state
        .cache
        .put_version(&name, &version, body.clone(), epoch);
    Ok(json_body(body))
}
