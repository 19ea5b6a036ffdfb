//! Two real `toolreg-server` processes on one PostgreSQL database, each with
//! its own search index: a publish or yank on one is visible in search on the
//! other within 2 s (each replica tails the shared change log).
//! Skipped with a message when PostgreSQL is unreachable, unless `CI` is set.

mod common;

use std::time::{Duration, Instant};

use common::{registry_with, BundleBuilder};
use serde_json::Value;
use toolreg_test_support::{ServerProcess, Services};

async fn search(client: &reqwest::Client, replica: &ServerProcess, q: &str) -> Value {
    let res = client
        .get(format!("{}/api/v1/search?q={q}", replica.url))
        .send()
        .await
        .expect("search");
    assert_eq!(res.status(), 200);
    res.json().await.expect("search JSON")
}

/// Polls replica `r` until `ok` holds; panics after `within`; returns the time taken.
async fn eventually(
    client: &reqwest::Client,
    r: &ServerProcess,
    q: &str,
    within: Duration,
    ok: impl Fn(&Value) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        let body = search(client, r, q).await;
        if ok(&body) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "search?q={q} on {} still {body} after {within:?}",
            r.url
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_web::test]
async fn a_publish_on_one_replica_is_searchable_on_the_other() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let storage = tmp.path().join("objects");
    let (data_a, data_b) = (tmp.path().join("a"), tmp.path().join("b"));

    // The services are made and the processes started with blocking clients:
    // not on the test's executor.
    let (dir_a, dir_b) = (data_a.clone(), data_b.clone());
    let started = actix_web::web::block(move || {
        let services = Services::postgres_only()?;
        let mut env = services.env();
        env.push((
            "TOOLREG_STORAGE".into(),
            format!("file://{}", storage.display()),
        ));
        let token = registry_with(&dir_a, &env).create_user("alice", "verified", false);
        let a = registry_with(&dir_a, &env).serve(&[]);
        let b = registry_with(&dir_b, &env).serve(&[]);
        Some((services, token, a, b))
    })
    .await
    .expect("start the replicas");
    let Some((services, token, a, b)) = started else {
        return;
    };
    let client = reqwest::Client::new();

    let bundle = BundleBuilder::http("replica-probe", "1.0.0").pack();
    let res = client
        .post(format!("{}/api/v1/tools", a.url))
        .bearer_auth(&token)
        .header("content-type", "application/gzip")
        .body(bundle)
        .send()
        .await
        .expect("publish on A");
    assert_eq!(
        res.status(),
        201,
        "{}",
        res.text().await.unwrap_or_default()
    );
    let on_b = eventually(&client, &b, "replica", Duration::from_secs(2), |v| {
        v["hits"][0]["name"] == "replica-probe"
    })
    .await;
    let on_a = eventually(&client, &a, "replica", Duration::from_secs(1), |v| {
        v["total"] == 1
    })
    .await;
    eprintln!("publish on A: searchable on B after {on_b:?} (on A: {on_a:?} later)");

    let res = client
        .delete(format!("{}/api/v1/tools/replica-probe/1.0.0/yank", a.url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("yank on A");
    assert_eq!(res.status(), 200);
    let gone = eventually(&client, &b, "replica", Duration::from_secs(2), |v| {
        v["total"] == 0
    })
    .await;
    eprintln!("yank on A: gone from B after {gone:?}");

    // Each replica has its own index directory.
    assert!(data_a.join("index/meta.json").is_file());
    assert!(data_b.join("index/meta.json").is_file());
    drop((a, b));
    drop(services);
}
