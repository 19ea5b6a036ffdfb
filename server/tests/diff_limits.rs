//! Diffs of hostile sizes, on a real server, both backends: two versions
//! whose descriptions are as large and as different as a definition may be
//! (a minimal word diff of them costs minutes of CPU) are compared by the
//! diff API and the web diff page — several at once, anonymously — within
//! a fixed budget, while `/healthz` keeps answering. The diffs stay
//! correct, only coarser: line by line past the word limit, larger runs
//! when the time budget runs out, and the page says so.

mod common;

use std::time::{Duration, Instant};

use common::{json, BundleBuilder, TestApp};
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

/// A description of `words` short tokens, each `prefix` and a number
/// below `vocabulary`: two descriptions with different prefixes share no
/// word, the worst case for a minimal diff (its cost grows with the
/// product of the lengths).
fn description(prefix: char, words: usize, vocabulary: usize) -> String {
    (0..words)
        .map(|i| format!("{prefix}{}", i % vocabulary))
        .collect::<Vec<_>>()
        .join(" ")
}

fn bundle(name: &str, version: &str, description: &str) -> Vec<u8> {
    let tool = json!({
        "name": name.replace('-', "_"),
        "description": description,
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    });
    BundleBuilder::corpus("mcp/github-create_issue", name, version)
        .file("tool.json", serde_json::to_vec(&tool).expect("JSON"))
        .pack()
}

/// Run `work` while `/healthz` is asked every 50 ms: each answer must be
/// a 200 within two seconds.
async fn health_while<F: std::future::Future>(app: &TestApp, work: F) -> F::Output {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let url = format!("{}/healthz", app.url);
    let probe = async {
        loop {
            let started = Instant::now();
            let status = client.get(&url).send().await.map(|r| r.status().as_u16());
            let took = started.elapsed();
            assert_eq!(status.ok(), Some(200), "healthz failed while diffing");
            assert!(
                took < Duration::from_secs(2),
                "healthz took {took:?} while diffing"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::pin!(work);
    tokio::select! {
        out = &mut work => out,
        () = probe => unreachable!("the probe only ends by failing"),
    }
}

async fn maximum_size_definitions_diff_within_budget_while_healthz_answers(app: TestApp) {
    let alice = app.user("alice", Tier::Trusted).await;
    // ~700 KB each, well past the word limit: compared line by line.
    let (big_old, big_new) = (
        description('a', 140_000, 997),
        description('b', 140_000, 991),
    );
    // Just under the word limit: compared word by word until the time
    // budget runs out.
    let (mid_old, mid_new) = (description('a', 19_000, 997), description('b', 19_000, 991));
    for (name, old, new) in [
        ("big-text", &big_old, &big_new),
        ("mid-text", &mid_old, &mid_new),
    ] {
        app.publish_ok(&alice, bundle(name, "1.0.0", old)).await;
        app.publish_ok(&alice, bundle(name, "1.1.0", new)).await;
    }

    let started = Instant::now();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let paths = [
        "/api/v1/tools/big-text/diff?from=1.0.0&to=1.1.0",
        "/tools/big-text/diff/1.0.0...1.1.0",
        "/tools/big-text/diff/1.0.0...1.1.0",
        "/api/v1/tools/mid-text/diff?from=1.0.0&to=1.1.0",
        "/tools/mid-text/diff/1.0.0...1.1.0",
        "/tools/mid-text/diff/1.0.0...1.1.0",
    ];
    let requests = futures::future::join_all(paths.iter().map(|p| {
        let client = client.clone();
        let url = format!("{}{p}", app.url);
        async move {
            let r = client.get(&url).send().await.expect("diff answered");
            (r.status().as_u16(), r.text().await.expect("body"))
        }
    }));
    let answers = health_while(&app, requests).await;
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(60),
        "six diffs of maximum-size definitions took {elapsed:?}"
    );
    for ((status, body), path) in answers.iter().zip(paths) {
        assert_eq!(*status, 200, "{path}: {}", &body[..body.len().min(500)]);
    }

    // The API's diff is still the whole change, with both texts.
    let (status, body) = json(app.get(paths[0]).await).await;
    assert_eq!(status, 200);
    let change = &body["changes"][0];
    assert_eq!(change["pointer"], "/description");
    assert_eq!(change["old"], Value::from(big_old.as_str()));
    assert_eq!(change["new"], Value::from(big_new.as_str()));
    // The page says how it compared: line by line for texts past the word
    // bound, or — when even that ran past the time bound, as on a loaded
    // machine — with larger runs marked.
    assert!(
        answers[1].1.contains("compared line by line")
            || answers[1].1.contains("larger runs are marked"),
        "big page"
    );
    assert!(
        answers[4].1.contains("larger runs are marked") || answers[4].1.contains("<del>"),
        "mid page"
    );
}

both_backends!(async TestApp::start => maximum_size_definitions_diff_within_budget_while_healthz_answers);
