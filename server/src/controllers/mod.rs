//! HTTP handlers, grouped by the noun they act on.

pub mod audit;
pub mod blobs;
pub mod health;
pub mod log;
pub mod me;
pub mod metrics;
pub mod publishers;
pub mod resolve;
pub mod tokens;
pub mod tools;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use futures::TryStreamExt;

use crate::app::AppState;
use crate::error::{internal, AppError, AppResult};
use crate::models::VersionRow;

/// Cache header of immutable bundle bytes.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// True if the request's `If-None-Match` names `sha256` (or is `*`).
fn not_modified(req: &HttpRequest, sha256: &str) -> bool {
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/").trim_matches('"'))
        .any(|tag| tag == sha256 || tag == "*")
}

/// Answer a bundle download: 403 if blocked, 304 on a matching
/// `If-None-Match`, else the bytes streamed from storage with the digest
/// headers — or, with `--redirect-downloads`, a 307 to a short-lived
/// presigned S3 URL carrying the same digest headers. Counts the download.
pub async fn serve_bundle(
    state: &AppState,
    req: &HttpRequest,
    tool_id: i64,
    v: &VersionRow,
) -> AppResult<HttpResponse> {
    if v.blocked {
        return Err(AppError::Blocked(blocked_message(v)));
    }
    let etag = format!("\"{}\"", v.sha256);
    if not_modified(req, &v.sha256) {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .insert_header((header::CACHE_CONTROL, IMMUTABLE))
            .finish());
    }
    if let Some(lifetime) = state.redirect_downloads {
        if let Some(url) = state
            .blobs
            .presigned_bundle_url(&v.sha256, lifetime)
            .await?
        {
            state.downloads.count(tool_id, v.id);
            state.metrics.download();
            return Ok(HttpResponse::TemporaryRedirect()
                .insert_header((header::LOCATION, url.to_string()))
                .insert_header((header::ETAG, etag))
                .insert_header(("X-Checksum-Sha256", v.sha256.clone()))
                // The URL expires: a client may reuse it briefly, never for long.
                .insert_header((header::CACHE_CONTROL, "private, max-age=60"))
                .finish());
        }
    }
    let stream = state.blobs.get_bundle(&v.sha256).await?.ok_or_else(|| {
        internal(format!(
            "the blob of version {} (sha256 {}) is missing from storage",
            v.version, v.sha256
        ))
    })?;
    state.downloads.count(tool_id, v.id);
    state.metrics.download();
    let size = u64::try_from(v.size).unwrap_or_default();
    Ok(HttpResponse::Ok()
        .content_type("application/gzip")
        .insert_header((header::ETAG, etag))
        .insert_header(("X-Checksum-Sha256", v.sha256.clone()))
        .insert_header((header::CACHE_CONTROL, IMMUTABLE))
        .no_chunking(size)
        .streaming(stream.map_err(AppError::Storage)))
}

/// The explanation a blocked version answers with.
pub fn blocked_message(v: &VersionRow) -> String {
    match &v.blocked_reason {
        Some(reason) => format!("version {} is blocked: {reason}", v.version),
        None => format!("version {} is blocked", v.version),
    }
}
