//! Tool summaries looked up in the database when the read cache misses
//! (`toolreg_server::db::lookup_batch`), on both backends: a burst of
//! concurrent `GET /api/v1/tools/{name}` — tools under several spellings of
//! their names, and names no tool has — gets each request its own tool's
//! summary or a 404 naming what it asked for. On PostgreSQL the lookups
//! that arrive together share queries (`/metrics` counts both); on SQLite
//! each lookup is its own query on the calling thread.

mod common;

use futures::future::join_all;
use serde_json::Value;
use toolreg_core::Tier;

use common::{json, BundleBuilder, TestApp};
use toolreg_test_support::{both_backends, Backend};

const TOOLS: usize = 16;

/// `toolreg_summary_lookups_total` and `toolreg_summary_lookup_queries_total`.
async fn lookup_counts(app: &TestApp) -> (u64, u64) {
    let text = app.get("/metrics").await.text().await.expect("metrics");
    let counter = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{name} in /metrics:\n{text}"))
    };
    (
        counter("toolreg_summary_lookups_total"),
        counter("toolreg_summary_lookup_queries_total"),
    )
}

/// GET every path at once; each answer's status and body.
async fn burst(app: &TestApp, paths: &[String]) -> Vec<(u16, Value)> {
    join_all(
        paths
            .iter()
            .map(|p| async move { json(app.get(p).await).await }),
    )
    .await
}

async fn each_request_gets_its_own_answer(app: TestApp) {
    let alice = app.user("alice", Tier::Verified).await;
    let mut names = Vec::new();
    for i in 0..TOOLS {
        let name = format!("lookup-tool-{i}");
        app.publish_ok(&alice, BundleBuilder::http(&name, "1.0.0").pack())
            .await;
        names.push(name);
    }

    // Every tool under four spellings (the summary is found by normalized
    // name), and as many names that no tool has, in one burst.
    let mut asked: Vec<(String, Option<&str>)> = Vec::new();
    for name in &names {
        for spelling in [
            name.clone(),
            name.to_uppercase(),
            name.replace('-', "_"),
            name.replacen("lookup", "Lookup", 1),
        ] {
            asked.push((spelling, Some(name)));
        }
        asked.push((format!("{name}-missing"), None));
    }
    let paths: Vec<String> = asked
        .iter()
        .map(|(n, _)| format!("/api/v1/tools/{n}"))
        .collect();
    let answers = burst(&app, &paths).await;
    for ((asked, tool), (status, body)) in asked.iter().zip(&answers) {
        match tool {
            Some(tool) => {
                assert_eq!(*status, 200, "GET {asked}: {body:#}");
                assert_eq!(body["name"], *tool, "GET {asked} answers its own tool");
                assert_eq!(body["latest_version"], "1.0.0", "GET {asked}: {body:#}");
            }
            None => {
                assert_eq!(*status, 404, "GET {asked}: {body:#}");
                let detail = body["detail"].as_str().unwrap_or_default();
                assert!(
                    detail.contains(asked.as_str()),
                    "the 404 names {asked}: {body:#}"
                );
            }
        }
    }

    // Misses are not cached, so a burst of unknown names is looked up anew
    // each time. On PostgreSQL lookups that wait while a query is out go
    // together in the next one; a burst of 64 at once is batched (tried a
    // few times, in case the requests happened to arrive one by one).
    let unknown: Vec<String> = (0..64)
        .map(|i| format!("/api/v1/tools/nobody-has-{i}"))
        .collect();
    let mut batched = false;
    for _ in 0..5 {
        let (lookups_before, queries_before) = lookup_counts(&app).await;
        let answers = burst(&app, &unknown).await;
        assert!(answers.iter().all(|(status, _)| *status == 404));
        let (lookups, queries) = lookup_counts(&app).await;
        assert_eq!(lookups - lookups_before, 64, "every miss is a lookup");
        match app.backend {
            Backend::Sqlite => {
                assert_eq!(queries - queries_before, 64, "SQLite: one query per lookup");
                batched = true;
                break;
            }
            Backend::Postgres => {
                assert!(queries - queries_before <= 64);
                if queries - queries_before < 64 {
                    batched = true;
                    break;
                }
            }
        }
    }
    assert!(
        batched,
        "PostgreSQL: 64 concurrent lookups never shared a query"
    );
}

both_backends!(async TestApp::start => each_request_gets_its_own_answer);
