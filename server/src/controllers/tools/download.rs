//! Bundle download: `GET /api/v1/tools/{name}/{version}/download`.

use std::sync::Arc;

use actix_web::{get, web, HttpRequest, HttpResponse};
use diesel::Connection;

use crate::app::AppState;
use crate::controllers::serve_bundle;
use crate::error::{AppError, AppResult, ProblemBody};
use crate::models::version::VersionTarget;
use crate::models::{ToolRow, VersionRow};
use crate::read_cache::DownloadTarget;

/// The bundle bytes with `ETag`/`X-Checksum-Sha256` and immutable cache
/// headers; `If-None-Match` gives 304; a quarantined or blocked version is
/// 403. Yanked
/// versions still download (pins keep working).
#[utoipa::path(tag = "tools", params(("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, description = "the bundle", content_type = "application/gzip"),
              (status = 304, description = "not modified"),
              (status = 307, description = "redirect to a presigned storage URL (`--redirect-downloads`)"),
              (status = 403, description = "quarantined or blocked", body = ProblemBody),
              (status = 404, body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}/download")]
pub async fn download(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (name, version) = path.into_inner();
    let target = match state.cache.download(&name, &version) {
        Some(target) => target,
        None => {
            let epoch = state.cache.epoch();
            let lookup = name.clone();
            let target = state
                .db
                .lookup_one(move |conn| {
                    if let Some(v) = VersionTarget::find(conn, &lookup, &version)? {
                        return Ok(Arc::new(DownloadTarget::from(v)));
                    }
                    // Not found: the 404 says whether the tool or the
                    // version is missing (and serves a version published
                    // since the first read).
                    conn.transaction::<_, AppError, _>(|conn| {
                        let tool = ToolRow::require(conn, &lookup)?;
                        let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
                        Ok(Arc::new(DownloadTarget::of(&v)))
                    })
                })
                .await?;
            state.cache.put_download(&name, target.clone(), epoch);
            target
        }
    };
    serve_bundle(&state, &req, &target).await
}
