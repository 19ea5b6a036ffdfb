//! The web index's static assets (`static/` at the repository root),
//! embedded in the binary and served at content-hashed URLs
//! (`/static/app.<hash8>.css`) with an ETag and an immutable, year-long
//! cache lifetime, so a new build never serves a stale stylesheet.

use std::sync::LazyLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use toolreg_core::digest::sha256_hex;

/// One embedded asset.
#[derive(Debug)]
pub struct Asset {
    /// Name in `static/`, e.g. `app.css`.
    pub name: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
    /// Full sha256 of the bytes (the ETag).
    pub sha256: String,
    /// `/static/app.1a2b3c4d.css`.
    pub url: String,
}

fn asset(name: &'static str, content_type: &'static str, bytes: &'static [u8]) -> Asset {
    let sha256 = sha256_hex(bytes);
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let url = format!("/static/{stem}.{}.{ext}", &sha256[..8]);
    Asset {
        name,
        content_type,
        bytes,
        sha256,
        url,
    }
}

/// Every asset, built once.
pub static ASSETS: LazyLock<Assets> = LazyLock::new(|| Assets {
    css: asset(
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../../static/app.css"),
    ),
    js: asset(
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../static/app.js"),
    ),
    icon: asset(
        "icon.svg",
        "image/svg+xml",
        include_bytes!("../../../static/icon.svg"),
    ),
});

/// The embedded assets by role.
#[derive(Debug)]
pub struct Assets {
    pub css: Asset,
    pub js: Asset,
    pub icon: Asset,
}

impl Assets {
    fn by_url(&self, path: &str) -> Option<&Asset> {
        [&self.css, &self.js, &self.icon]
            .into_iter()
            .find(|a| a.url == path)
    }
}

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `GET /static/{file}`: an asset by its hashed name; anything else is 404.
pub async fn serve(req: HttpRequest, file: web::Path<String>) -> HttpResponse {
    let path = format!("/static/{}", file.into_inner());
    let Some(asset) = ASSETS.by_url(&path) else {
        return HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(
                "No such asset. Asset URLs carry a content hash; reload the page that linked here.",
            );
    };
    let etag = format!("\"{}\"", asset.sha256);
    let matches = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut res = if matches {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    res.insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, IMMUTABLE))
        .insert_header((
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ));
    if matches {
        res.finish()
    } else {
        res.content_type(asset.content_type).body(asset.bytes)
    }
}
