//! A bundle by digest: `GET /api/v1/blobs/sha256/{hex}`.

use actix_web::{get, web, HttpRequest, HttpResponse};

use crate::app::AppState;
use crate::controllers::serve_bundle;
use crate::error::{bad_request, not_found, AppResult, ProblemBody};
use crate::models::VersionRow;
use crate::read_cache::DownloadTarget;

/// The bundle whose SHA-256 is `hex`, if a published version has it.
#[utoipa::path(tag = "tools", params(("hex" = String, Path, description = "lowercase hex SHA-256")),
    responses((status = 200, description = "the bundle", content_type = "application/gzip"),
              (status = 304, description = "not modified"),
              (status = 307, description = "redirect to a presigned storage URL (`--redirect-downloads`)"),
              (status = 400, body = ProblemBody), (status = 403, body = ProblemBody), (status = 404, body = ProblemBody)))]
#[get("/api/v1/blobs/sha256/{hex}")]
pub async fn blob(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let hex = path.into_inner();
    if !toolreg_core::digest::is_sha256_hex(&hex) {
        return Err(bad_request(format!(
            "`{hex}` is not a SHA-256 digest (64 lowercase hex digits)"
        )));
    }
    let lookup = hex.clone();
    let v = state
        .db
        .lookup_one(move |conn| VersionRow::by_digest(conn, &lookup))
        .await?
        .ok_or_else(|| not_found(format!("no published version has the digest sha256:{hex}")))?;
    serve_bundle(&state, &req, &DownloadTarget::of(&v)).await
}
