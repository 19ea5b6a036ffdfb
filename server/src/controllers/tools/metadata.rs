//! Tool and version metadata: `GET /api/v1/tools/{name}` and
//! `GET /api/v1/tools/{name}/{version}`. Both answers are encoded once and
//! kept in the read cache (`crate::read_cache`) until a change invalidates them.

use actix_web::{get, web, HttpResponse};
use diesel::prelude::*;
use serde_json::Value;

use crate::app::AppState;
use crate::controllers::{json_body, to_json};
use crate::db::DbConnection;
use crate::error::{AppResult, ProblemBody};
use crate::models::version::{semver_desc, ManifestSummary, VersionContent, VersionSummary};
use crate::models::{owner, ToolRow, User, VersionRow};
use crate::schema::{users, versions};
use crate::views::{
    rfc3339, EncodablePublisher, EncodableTool, EncodableVersion, EncodableVersionSummary,
};

/// The tool summary: fields of its latest version, owners, downloads and every version.
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
    let view = state
        .db
        .lookup(move |conn| {
            let tool = ToolRow::require(conn, &lookup)?;
            let owners = owner::list(conn, tool.id)?;
            let versions = list_with_summaries(conn, tool.id)?;
            // Latest: the highest version neither yanked nor blocked, else the highest.
            let latest = versions
                .iter()
                .find(|(v, _, _)| !v.yanked && !v.blocked)
                .or_else(|| versions.first());
            let manifest = latest
                .map(|(_, _, summary)| ManifestSummary::parse(summary))
                .unwrap_or_default();
            let latest_row = latest.map(|(v, _, _)| v);
            Ok(EncodableTool {
                name: tool.name.clone(),
                call_name: manifest.call_name,
                title: manifest.title,
                description: manifest.description,
                keywords: manifest.keywords,
                license: manifest.license,
                homepage: manifest.homepage,
                repository: manifest.repository,
                format: latest_row.map(|v| v.format.clone()),
                execution: latest_row.map(|v| v.execution.clone()),
                latest_version: latest_row.map(|v| v.version.clone()),
                downloads: tool.downloads,
                created_at: rfc3339(&tool.created_at),
                updated_at: rfc3339(&tool.updated_at),
                owners: owners.iter().map(publisher).collect(),
                versions: versions
                    .into_iter()
                    .map(|(v, login, _)| EncodableVersionSummary {
                        version: v.version,
                        sha256: v.sha256,
                        size: v.size,
                        yanked: v.yanked,
                        blocked: v.blocked,
                        blocked_reason: v.blocked_reason,
                        execution: v.execution,
                        format: v.format,
                        published_at: rfc3339(&v.published_at),
                        publisher: login,
                        downloads: v.downloads,
                    })
                    .collect(),
            })
        })
        .await?;
    let body = to_json(&view)?;
    state.cache.put_tool(&name, body.clone(), epoch);
    Ok(json_body(body))
}

/// Every version of a tool with its publisher's login and its manifest
/// summary, newest first: what the tool summary needs, in one query.
fn list_with_summaries(
    conn: &mut DbConnection,
    tool_id: i64,
) -> AppResult<Vec<(VersionSummary, String, String)>> {
    let mut rows: Vec<(VersionSummary, String, String)> =
        crate::on_backend!(conn, |c| versions::table
            .inner_join(users::table)
            .filter(versions::tool_id.eq(tool_id))
            .select((VersionSummary::as_select(), users::login, versions::summary))
            .load(c))?;
    rows.sort_by(|a, b| semver_desc(&a.0.version, &b.0.version));
    Ok(rows)
}

/// An owner or publisher as shown in the API.
pub fn publisher(user: &User) -> EncodablePublisher {
    EncodablePublisher {
        login: user.login.clone(),
        tier: user.tier().to_string(),
    }
}

/// One version: canonical manifest, original definition, README, digest, publisher and tier.
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
            Ok(EncodableVersion {
                name: tool.name,
                version: v.version,
                sha256: v.sha256,
                size: v.size,
                format: v.format,
                execution: v.execution,
                yanked: v.yanked,
                blocked: v.blocked,
                blocked_reason: v.blocked_reason,
                published_at: rfc3339(&v.published_at),
                downloads: v.downloads,
                // The tier the version was published with.
                publisher: EncodablePublisher {
                    login: user.login,
                    tier: v.publisher_tier,
                },
                manifest: serde_json::from_str(&content.manifest).unwrap_or(Value::Null),
                definition_file: content.definition_file,
                definition: content.definition,
                readme: content.readme,
                log_index,
            })
        })
        .await?;
    let body = to_json(&view)?;
    state
        .cache
        .put_version(&name, &version, body.clone(), epoch);
    Ok(json_body(body))
}
