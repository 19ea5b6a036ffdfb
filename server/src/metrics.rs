//! Prometheus metrics: request counts and latency by route pattern and
//! status, publishes and downloads; the middleware that records requests.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;

use crate::app::AppState;

/// Upper bounds (seconds) of the latency histogram buckets.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The server's metrics registry.
#[derive(Default)]
pub struct Metrics {
    /// (method, route, status) → count
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// (method, route) → latency histogram
    latency: Mutex<BTreeMap<(String, String), Histogram>>,
    publishes: AtomicU64,
    publish_failures: AtomicU64,
    downloads: AtomicU64,
}

impl Metrics {
    pub fn record_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests
                .entry((method.to_string(), route.to_string(), status))
                .or_default() += 1;
        }
        if let Ok(mut latency) = self.latency.lock() {
            let h = latency
                .entry((method.to_string(), route.to_string()))
                .or_default();
            for (i, bound) in BUCKETS.iter().enumerate() {
                if seconds <= *bound {
                    h.counts[i] += 1;
                }
            }
            h.count += 1;
            h.sum += seconds;
        }
    }

    pub fn publish_succeeded(&self) {
        self.publishes.fetch_add(1, Ordering::Relaxed);
    }

    pub fn publish_failed(&self) {
        self.publish_failures.fetch_add(1, Ordering::Relaxed);
    }

    pub fn download(&self) {
        self.downloads.fetch_add(1, Ordering::Relaxed);
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP toolreg_http_requests_total HTTP requests by method, route pattern and status.\n");
        out.push_str("# TYPE toolreg_http_requests_total counter\n");
        if let Ok(requests) = self.requests.lock() {
            for ((method, route, status), n) in requests.iter() {
                let _ = writeln!(
                    out,
                    "toolreg_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                    escape(route)
                );
            }
        }
        out.push_str("# HELP toolreg_http_request_duration_seconds HTTP request latency by method and route pattern.\n");
        out.push_str("# TYPE toolreg_http_request_duration_seconds histogram\n");
        if let Ok(latency) = self.latency.lock() {
            for ((method, route), h) in latency.iter() {
                let labels = format!("method=\"{method}\",route=\"{}\"", escape(route));
                for (i, bound) in BUCKETS.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "toolreg_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {}",
                        h.counts[i]
                    );
                }
                let _ = writeln!(
                    out,
                    "toolreg_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                    h.count
                );
                let _ = writeln!(
                    out,
                    "toolreg_http_request_duration_seconds_sum{{{labels}}} {}",
                    h.sum
                );
                let _ = writeln!(
                    out,
                    "toolreg_http_request_duration_seconds_count{{{labels}}} {}",
                    h.count
                );
            }
        }
        let counters = [
            (
                "toolreg_publishes_total",
                "Versions published.",
                &self.publishes,
            ),
            (
                "toolreg_publish_failures_total",
                "Publish requests refused or failed.",
                &self.publish_failures,
            ),
            (
                "toolreg_downloads_total",
                "Bundle downloads served (304s excluded).",
                &self.downloads,
            ),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                value.load(Ordering::Relaxed)
            );
        }
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Middleware: time every request, count it by route pattern and status, log it.
pub async fn track(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, actix_web::Error> {
    let start = Instant::now();
    let method = req.method().to_string();
    let path = req.path().to_string();
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let result = next.call(req).await;
    let seconds = start.elapsed().as_secs_f64();
    let (status, route) = match &result {
        Ok(res) => (
            res.status().as_u16(),
            res.request()
                .match_pattern()
                .unwrap_or_else(|| "unmatched".to_string()),
        ),
        Err(e) => (
            e.as_response_error().status_code().as_u16(),
            "unmatched".to_string(),
        ),
    };
    if let Some(state) = state {
        state
            .metrics
            .record_request(&method, &route, status, seconds);
    }
    tracing::info!(%method, %path, %route, status, ms = seconds * 1000.0, "request");
    result
}
