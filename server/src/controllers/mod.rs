//! HTTP handlers, grouped by the noun they act on.

pub mod audit;
pub mod blobs;
pub mod health;
pub mod log;
pub mod me;
pub mod metrics;
pub mod oidc;
pub mod publishers;
pub mod reports;
pub mod resolve;
pub mod search;
pub mod skills;
pub mod tokens;
pub mod tools;
pub mod trusted_publishers;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use bytes::Bytes;
use futures::TryStreamExt;
use sha2::{Digest, Sha256};

use crate::app::AppState;
use crate::error::{internal, AppError, AppResult};
use crate::read_cache::{DownloadTarget, MAX_CACHED_BUNDLE};
pub use toolreg_api::{Page, PageQuery};

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

/// A `200` with a JSON body serialized earlier (cached answers).
pub fn json_body(body: Bytes) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(mime::APPLICATION_JSON)
        .body(body)
}

/// Answer a bundle download: 403 if quarantined or blocked, 304 on a matching
/// `If-None-Match`, else the bytes with the digest headers — small bundles
/// from the read cache (filled once, only with bytes that hash to their
/// digest), larger ones streamed from storage — or, with
/// `--redirect-downloads`, a 307 to a short-lived presigned S3 URL carrying
/// the same digest headers. Counts the download.
pub async fn serve_bundle(
    state: &AppState,
    req: &HttpRequest,
    target: &DownloadTarget,
) -> AppResult<HttpResponse> {
    target.state.contents(&target.version)?;
    let sha256 = target.sha256.as_str();
    let etag = format!("\"{sha256}\"");
    if not_modified(req, sha256) {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .insert_header((header::CACHE_CONTROL, IMMUTABLE))
            .finish());
    }
    if let Some(lifetime) = state.redirect_downloads {
        if let Some(url) = state.blobs.presigned_bundle_url(sha256, lifetime).await? {
            count_download(state, target);
            return Ok(HttpResponse::TemporaryRedirect()
                .insert_header((header::LOCATION, url.to_string()))
                .insert_header((header::ETAG, etag))
                .insert_header(("X-Checksum-Sha256", sha256))
                // The URL expires: a client may reuse it briefly, never for long.
                .insert_header((header::CACHE_CONTROL, "private, max-age=60"))
                .finish());
        }
    }
    let missing = || {
        internal(format!(
            "the blob of version {} (sha256 {sha256}) is missing from storage",
            target.version
        ))
    };
    let small = usize::try_from(target.size).is_ok_and(|n| n <= MAX_CACHED_BUNDLE);
    if small {
        let bytes = match state.cache.bundle(sha256) {
            Some(bytes) => bytes,
            None => {
                let bytes = state
                    .blobs
                    .read_small_bundle(sha256)
                    .await?
                    .ok_or_else(missing)?;
                if hex::encode(Sha256::digest(&bytes)) == sha256 {
                    state.cache.put_bundle(sha256, bytes.clone());
                } else {
                    tracing::warn!(sha256, version = %target.version, "stored bundle does not hash to its digest; not cached (run `toolreg-server verify`)");
                }
                bytes
            }
        };
        count_download(state, target);
        return Ok(bundle_headers(HttpResponse::Ok(), &etag, sha256).body(bytes));
    }
    let stream = state.blobs.get_bundle(sha256).await?.ok_or_else(missing)?;
    count_download(state, target);
    let size = u64::try_from(target.size).unwrap_or_default();
    Ok(bundle_headers(HttpResponse::Ok(), &etag, sha256)
        .no_chunking(size)
        .streaming(stream.map_err(AppError::Storage)))
}

fn bundle_headers(mut res: HttpResponseBuilder, etag: &str, sha256: &str) -> HttpResponseBuilder {
    res.content_type("application/gzip")
        .insert_header((header::ETAG, etag))
        .insert_header(("X-Checksum-Sha256", sha256))
        .insert_header((header::CACHE_CONTROL, IMMUTABLE));
    res
}

fn count_download(state: &AppState, target: &DownloadTarget) {
    state.downloads.count(target.tool_id, target.version_id);
    state.metrics.download();
}

/// A checked page of a paginated list, or a 400 naming the parameter.
pub fn page(query: &PageQuery, default_per_page: i64, max_per_page: i64) -> AppResult<Page> {
    query
        .parse(default_per_page, max_per_page)
        .map_err(|e| crate::error::bad_request(e.to_string()))
}
