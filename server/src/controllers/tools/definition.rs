//! Definition export: `GET /api/v1/tools/{name}/{version}/definition?format=`
//! (with `protocol=` for `mcp` and `strict=` for `openai`). What a
//! conversion dropped or changed is listed in the `X-Toolreg-Export-Warnings`
//! header, so the body stays the exported definition alone.

use actix_web::http::header::HeaderValue;
use actix_web::{get, web, HttpResponse};
use serde::Deserialize;
use toolreg_core::export::{export_with, warnings_header, ExportFormat, ExportOptions};
use utoipa::IntoParams;

use crate::app::AppState;
use crate::error::{bad_request, internal, AppResult, ProblemBody};
use crate::models::version::HasState;
use crate::models::version::VersionContent;
use crate::models::{ToolRow, VersionRow};

/// The response header carrying the loss report: a JSON array of
/// `{"pointer","keyword","message"}` (ASCII, non-ASCII `\u`-escaped); absent
/// when nothing was lost.
pub const WARNINGS_HEADER: &str = "X-Toolreg-Export-Warnings";

#[derive(Debug, Deserialize, IntoParams)]
pub struct DefinitionQuery {
    /// `mcp`, `openai`, `anthropic`, `gemini`, `gemini-json-schema`,
    /// `matimo` or `native` (the original document; the default).
    pub format: Option<String>,
    /// With `format=mcp`: the MCP protocol version to shape the tool for,
    /// `2025-06-18`, `2025-11-25` or `2026-07-28` (the default).
    pub protocol: Option<String>,
    /// With `format=openai`: `true` for OpenAI strict mode (422 with the
    /// reason when the parameters can't follow its rules).
    pub strict: Option<String>,
}

impl DefinitionQuery {
    fn parse(&self) -> AppResult<(ExportFormat, ExportOptions)> {
        let format: ExportFormat = self
            .format
            .as_deref()
            .unwrap_or("native")
            .parse()
            .map_err(|e: String| bad_request(format!("format: {e}")))?;
        let mut options = ExportOptions::default();
        if let Some(p) = &self.protocol {
            options.protocol = p
                .parse()
                .map_err(|e: String| bad_request(format!("protocol: {e}")))?;
            if format != ExportFormat::Mcp {
                return Err(bad_request(format!(
                    "protocol: applies to format=mcp only, not format={format}"
                )));
            }
        }
        if let Some(s) = &self.strict {
            options.strict = match s.as_str() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(bad_request(format!(
                        "strict: `{other}` is not one of true, false"
                    )))
                }
            };
            if options.strict && format != ExportFormat::Openai {
                return Err(bad_request(format!(
                    "strict: applies to format=openai only, not format={format}"
                )));
            }
        }
        Ok((format, options))
    }
}

/// The version's definition exported to another format; 400 for an unknown
/// `format`, `protocol` or `strict` value (naming the parameter and the
/// allowed values), 422 when the tool cannot be expressed in the format
/// (with the reason). The `X-Toolreg-Export-Warnings` header lists what the
/// conversion dropped or changed. 403 when the version is quarantined or
/// blocked (its contents are not served, in any format).
#[utoipa::path(tag = "tools", params(("name" = String, Path), ("version" = String, Path), DefinitionQuery),
    responses((status = 200, description = "the exported definition",
                 headers(("X-Toolreg-Export-Warnings" = String,
                          description = "JSON array of {pointer, keyword, message}: what the conversion dropped or changed; absent when nothing"))),
              (status = 400, body = ProblemBody), (status = 403, description = "version quarantined or blocked", body = ProblemBody), (status = 404, body = ProblemBody), (status = 422, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}/definition")]
pub async fn definition(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    query: web::Query<DefinitionQuery>,
) -> AppResult<HttpResponse> {
    let (format, options) = query.parse()?;
    let (name, version) = path.into_inner();
    let (v, content) = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            v.state().contents(&v.version)?;
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
    let exported = export_with(&tool, format, options)?;
    let mut res = HttpResponse::Ok();
    res.content_type(exported.content_type);
    if !exported.warnings.is_empty() {
        let value = HeaderValue::from_str(&warnings_header(&exported.warnings))
            .map_err(|e| internal(format!("export warnings header: {e}")))?;
        res.insert_header((WARNINGS_HEADER, value));
    }
    Ok(res.body(exported.body))
}
