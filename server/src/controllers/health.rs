//! Liveness (`/healthz`), the OpenAPI document and the fallback 404.

use actix_web::{get, web, HttpResponse};

use crate::app::AppState;
use crate::error::{not_found, AppError};
use crate::models::change::LoggedChange;
use crate::views::{ChangesFollowed, Health};

/// Liveness: answers 200 when the database and the blob store answer, 503
/// otherwise; also says how far this process follows the change log.
#[utoipa::path(tag = "ops", responses((status = 200, body = Health), (status = 503, body = Health)))]
#[get("/healthz")]
pub async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    // Read before the head, so `applied == latest` proves the cache
    // reflects every change committed before this request.
    let applied = state.cache.followed();
    let (database, latest) = match state.db.read(LoggedChange::latest_seq).await {
        Ok(latest) => ("ok".to_string(), Some(latest)),
        Err(e) => (format!("error: {e}"), None),
    };
    let storage = match state.blobs.ping().await {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("error: {e}"),
    };
    let healthy = database == "ok" && storage == "ok";
    let body = Health {
        status: if healthy { "ok" } else { "unavailable" }.to_string(),
        database,
        storage,
        changes: ChangesFollowed { latest, applied },
    };
    if healthy {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

/// The OpenAPI 3 document of this API.
#[utoipa::path(tag = "ops", responses((status = 200, description = "OpenAPI 3 JSON", content_type = "application/json")))]
#[get("/api/openapi.json")]
pub async fn openapi_json(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(state.openapi_json.clone())
}

/// Any path no route matches.
pub async fn fallback(req: actix_web::HttpRequest) -> Result<HttpResponse, AppError> {
    Err(not_found(format!(
        "nothing at {} {}",
        req.method(),
        req.path()
    )))
}
