//! Bundle download: `GET /api/v1/tools/{name}/{version}/download`.

use actix_web::{get, web, HttpRequest, HttpResponse};

use crate::app::AppState;
use crate::controllers::serve_bundle;
use crate::error::{AppResult, ProblemBody};
use crate::models::{ToolRow, VersionRow};

/// The bundle bytes with `ETag`/`X-Checksum-Sha256` and immutable cache
/// headers; `If-None-Match` gives 304; a blocked version is 403. Yanked
/// versions still download (pins keep working).
#[utoipa::path(tag = "tools", params(("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, description = "the bundle", content_type = "application/gzip"),
              (status = 304, description = "not modified"),
              (status = 307, description = "redirect to a presigned storage URL (`--redirect-downloads`)"),
              (status = 403, description = "blocked", body = ProblemBody),
              (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}/download")]
pub async fn download(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (name, version) = path.into_inner();
    let (tool_id, v) = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            Ok((tool.id, v))
        })
        .await?;
    serve_bundle(&state, &req, tool_id, &v).await
}
