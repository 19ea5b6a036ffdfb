//! `GET /metrics`: Prometheus text exposition.

use actix_web::{get, web, HttpResponse};

use crate::app::AppState;

/// Prometheus metrics: requests by route and status, latency, publishes, downloads.
#[utoipa::path(tag = "ops", responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
#[get("/metrics")]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(
            state
                .metrics
                .render(state.db.group_commit_counts(), &state.summaries.counts),
        )
}
