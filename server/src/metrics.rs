//! Prometheus metrics: request counts and latency by route pattern and
//! status, publishes and downloads; the middleware that records requests.
//!
//! Labels never come from the client as they are: a method outside the
//! standard set and a path that matched no route are both recorded as
//! `OTHER`, and the number of (method, route) series is capped
//! ([`MAX_SERIES`]; requests beyond it count under `OTHER`/`OTHER`), so
//! requests with made-up methods or paths can't grow `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
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

/// Most (method, route) series kept; later new pairs count under
/// [`OTHER`]/[`OTHER`]. The API has a few dozen route patterns and each
/// answers a handful of methods, so this is far above real use.
pub const MAX_SERIES: usize = 512;

/// The label for an unknown method, an unmatched route, or a pair beyond
/// [`MAX_SERIES`].
pub const OTHER: &str = "OTHER";

/// The methods recorded under their own name.
const KNOWN_METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
];

/// The method's label: its name if standard, else [`OTHER`].
pub fn method_label(method: &str) -> &'static str {
    KNOWN_METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or(OTHER)
}

/// One (method, route) series: counts by status and a latency histogram,
/// all atomics, so recording a request takes no lock once the series exists.
#[derive(Default)]
struct Series {
    /// (status, count); a route answers a handful of distinct statuses.
    statuses: RwLock<Vec<(u16, AtomicU64)>>,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    /// Sum of latencies in nanoseconds.
    sum_ns: AtomicU64,
}

impl Series {
    fn record(&self, status: u16, seconds: f64) {
        let counted = read(&self.statuses)
            .iter()
            .find(|(s, _)| *s == status)
            .map(|(_, n)| n.fetch_add(1, Ordering::Relaxed))
            .is_some();
        if !counted {
            let mut statuses = write(&self.statuses);
            match statuses.iter().find(|(s, _)| *s == status) {
                Some((_, n)) => {
                    n.fetch_add(1, Ordering::Relaxed);
                }
                None => statuses.push((status, AtomicU64::new(1))),
            }
        }
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ns
            .fetch_add((seconds * 1e9) as u64, Ordering::Relaxed);
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

/// The server's metrics registry.
#[derive(Default)]
pub struct Metrics {
    /// method → route pattern → its series. Series are only ever added (at
    /// most [`MAX_SERIES`] + 1), so the hot path is a shared read lock and
    /// atomic increments.
    series: RwLock<BTreeMap<&'static str, BTreeMap<String, Arc<Series>>>>,
    publishes: AtomicU64,
    publish_failures: AtomicU64,
    downloads: AtomicU64,
}

impl Metrics {
    /// Count one request. `method` is the raw HTTP method and `route` the
    /// matched route pattern (`None` when no route matched); both are folded
    /// into [`OTHER`] as the module doc says.
    pub fn record_request(&self, method: &str, route: Option<&str>, status: u16, seconds: f64) {
        let method = method_label(method);
        let route = route.unwrap_or(OTHER);
        let found = read(&self.series)
            .get(method)
            .and_then(|routes| routes.get(route))
            .cloned();
        let series = match found {
            Some(series) => series,
            None => {
                let mut all = write(&self.series);
                let exists = all.get(method).is_some_and(|r| r.contains_key(route));
                let count: usize = all.values().map(BTreeMap::len).sum();
                let (method, route) = if exists || count < MAX_SERIES {
                    (method, route)
                } else {
                    (OTHER, OTHER)
                };
                all.entry(method)
                    .or_default()
                    .entry(route.to_string())
                    .or_default()
                    .clone()
            }
        };
        series.record(status, seconds);
    }

    /// How many (method, route) series exist.
    pub fn series_count(&self) -> usize {
        read(&self.series).values().map(BTreeMap::len).sum()
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

    /// The metrics in the Prometheus text exposition format, with
    /// `grouped`, what the database's group commit has done
    /// ([`crate::db::Db::group_commit_counts`]), and `summaries`, the
    /// summary lookups that missed the read cache
    /// ([`crate::db::lookup_batch`]).
    pub fn render(
        &self,
        grouped: &crate::db::GroupCommitCounts,
        summaries: &crate::db::lookup_batch::LookupCounts,
    ) -> String {
        let mut out = String::new();
        out.push_str("# HELP toolreg_http_requests_total HTTP requests by method, route pattern and status.\n");
        out.push_str("# TYPE toolreg_http_requests_total counter\n");
        let series = read(&self.series);
        let all = || {
            series.iter().flat_map(|(method, routes)| {
                routes.iter().map(move |(route, s)| (method, route, s))
            })
        };
        for (method, route, series) in all() {
            let mut statuses: Vec<(u16, u64)> = read(&series.statuses)
                .iter()
                .map(|(s, n)| (*s, n.load(Ordering::Relaxed)))
                .collect();
            statuses.sort_unstable();
            for (status, n) in statuses {
                let _ = writeln!(
                    out,
                    "toolreg_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                    escape(route)
                );
            }
        }
        out.push_str("# HELP toolreg_http_request_duration_seconds HTTP request latency by method and route pattern.\n");
        out.push_str("# TYPE toolreg_http_request_duration_seconds histogram\n");
        for (method, route, h) in all() {
            let labels = format!("method=\"{method}\",route=\"{}\"", escape(route));
            for (i, bound) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "toolreg_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {}",
                    h.buckets[i].load(Ordering::Relaxed)
                );
            }
            let count = h.count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "toolreg_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "toolreg_http_request_duration_seconds_sum{{{labels}}} {}",
                h.sum_ns.load(Ordering::Relaxed) as f64 / 1e9
            );
            let _ = writeln!(
                out,
                "toolreg_http_request_duration_seconds_count{{{labels}}} {count}"
            );
        }
        drop(series);
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
            (
                "toolreg_group_commit_batches_total",
                "Transactions run for grouped publishes.",
                &grouped.batches,
            ),
            (
                "toolreg_group_commit_writes_total",
                "Publish transactions answered from a grouped transaction.",
                &grouped.writes,
            ),
            (
                "toolreg_group_commit_moved_total",
                "Grouped publishes rolled back to their savepoint and run again in a later batch.",
                &grouped.moved,
            ),
            (
                "toolreg_summary_lookups_total",
                "Tool summaries read from the database (read-cache misses).",
                &summaries.lookups,
            ),
            (
                "toolreg_summary_lookup_queries_total",
                "Queries that read them (on PostgreSQL, lookups that arrive together share one).",
                &summaries.queries,
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
    // Cheap copies: a standard method is a constant, a URI shares its bytes.
    let method = req.method().clone();
    let uri = req.uri().clone();
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let result = next.call(req).await;
    let took = start.elapsed();
    let seconds = took.as_secs_f64();
    let (status, route) = match &result {
        Ok(res) => (res.status().as_u16(), res.request().match_pattern()),
        Err(e) => (e.as_response_error().status_code().as_u16(), None),
    };
    if let Some(state) = state {
        state
            .metrics
            .record_request(method.as_str(), route.as_deref(), status, seconds);
    }
    let route = route.as_deref().unwrap_or(OTHER);
    crate::access_log::request(method.as_str(), uri.path(), route, status, took);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_methods_and_routes_are_other() {
        let m = Metrics::default();
        m.record_request("GET", Some("/api/v1/tools/{name}"), 200, 0.001);
        for i in 0..100 {
            m.record_request(&format!("X{i}"), Some("/api/v1/tools/{name}"), 405, 0.001);
            m.record_request("GET", None, 404, 0.001);
        }
        m.record_request("get", None, 404, 0.001);
        assert_eq!(m.series_count(), 4);
        let text = m.render(
            &crate::db::GroupCommitCounts::default(),
            &crate::db::lookup_batch::LookupCounts::default(),
        );
        assert!(text.contains(
            r#"toolreg_http_requests_total{method="OTHER",route="/api/v1/tools/{name}",status="405"} 100"#
        ), "{text}");
        assert!(
            text.contains(
                r#"toolreg_http_requests_total{method="GET",route="OTHER",status="404"} 100"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"method="OTHER",route="OTHER",status="404"} 1"#),
            "{text}"
        );
        assert!(!text.contains("X1"), "{text}");
    }

    #[test]
    fn series_are_capped() {
        let m = Metrics::default();
        for i in 0..MAX_SERIES + 100 {
            m.record_request("GET", Some(&format!("/route/{i}")), 200, 0.001);
        }
        assert_eq!(m.series_count(), MAX_SERIES + 1);
        // Existing series keep counting under their own labels.
        m.record_request("GET", Some("/route/0"), 200, 0.001);
        let text = m.render(
            &crate::db::GroupCommitCounts::default(),
            &crate::db::lookup_batch::LookupCounts::default(),
        );
        assert!(
            text.contains(r#"route="/route/0",status="200"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(r#"method="OTHER",route="OTHER",status="200"} 100"#),
            "{text}"
        );
    }
}
