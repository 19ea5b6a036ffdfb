//! Definition export: `GET /api/v1/tools/{name}/{version}/definition?format=`.

use actix_web::{get, web, HttpResponse};
use serde::Deserialize;
use toolreg_core::export::{export, ExportFormat};
use utoipa::IntoParams;

use crate::app::AppState;
use crate::controllers::contents_servable;
use crate::error::{bad_request, internal, AppResult, ProblemBody};
use crate::models::version::VersionContent;
use crate::models::{ToolRow, VersionRow};

#[derive(Debug, Deserialize, IntoParams)]
pub struct DefinitionQuery {
    /// `mcp`, `openai`, `matimo` or `native` (the original document; the default).
    pub format: Option<String>,
}

/// The version's definition exported to another format; 422 when the tool
/// cannot be expressed in it; 403 when the version is blocked (its contents
/// are not served, in any format).
#[utoipa::path(tag = "tools", params(("name" = String, Path), ("version" = String, Path), DefinitionQuery),
    responses((status = 200, description = "the exported definition"),
              (status = 400, body = ProblemBody), (status = 403, description = "version blocked", body = ProblemBody), (status = 404, body = ProblemBody), (status = 422, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}/definition")]
pub async fn definition(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    query: web::Query<DefinitionQuery>,
) -> AppResult<HttpResponse> {
    let format: ExportFormat = query
        .format
        .as_deref()
        .unwrap_or("native")
        .parse()
        .map_err(|e: String| bad_request(format!("format: {e}")))?;
    let (name, version) = path.into_inner();
    let (v, content) = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            contents_servable(&v.version, v.blocked, v.blocked_reason.as_deref())?;
            let content = VersionContent::of(conn, v.id)?;
            Ok((v, content))
        })
        .await?;
    let mut tool: toolreg_core::Tool = serde_json::from_str(&content.manifest).map_err(|e| {
        internal(format!(
            "stored manifest of version {} is unreadable: {e}",
            v.version
        ))
    })?;
    tool.original = content.definition.into_bytes();
    let exported = export(&tool, format)?;
    Ok(HttpResponse::Ok()
        .content_type(exported.content_type)
        .body(exported.body))
}
