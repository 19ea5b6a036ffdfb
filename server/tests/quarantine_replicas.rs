//! Replicas agree on a quarantine through the change log: two real
//! `toolreg-server` processes on one PostgreSQL database and one S3 bucket.
//! A quarantine on A makes B (whose read cache holds the open answers)
//! refuse the download, resolve and definition with 403 `quarantined`, mark
//! the version and drop the tool from its search within 2 s; a lift on B
//! restores all of it on A within 2 s. Skipped with `SKIPPED:` when the
//! services are unreachable, failed when they are required.

mod common;

use std::time::Duration;

use common::{registry_with, BundleBuilder};
use reqwest::blocking::Client;
use serde_json::{json, Value};
use toolreg_test_support::{eventually, ServerProcess, Services};

fn get(client: &Client, replica: &ServerProcess, path: &str) -> (u16, Value) {
    let res = client.get(replica.api(path)).send().expect("GET");
    let status = res.status().as_u16();
    (status, res.json().unwrap_or(Value::Null))
}

/// Every read a quarantine changes, as `replica` answers it now: true when
/// all of them show the version quarantined (`held`) or all show it open.
fn agrees(client: &Client, replica: &ServerProcess, held: bool) -> bool {
    let refused = |path: &str| {
        let (status, body) = get(client, replica, path);
        status == 403 && body["type"] == "https://toolreg.dev/problems/quarantined"
    };
    let served = |path: &str| get(client, replica, path).0 == 200;
    let paths = [
        "/api/v1/tools/held-tool/1.0.0/download",
        "/api/v1/tools/held-tool/1.0.0/definition?format=mcp",
        "/api/v1/resolve/held-tool?req=^1",
    ];
    let reads = if held {
        paths.iter().all(|p| refused(p))
    } else {
        paths.iter().all(|p| served(p))
    };
    let (_, version) = get(client, replica, "/api/v1/tools/held-tool/1.0.0");
    let (_, tool) = get(client, replica, "/api/v1/tools/held-tool");
    let (_, search) = get(client, replica, "/api/v1/search?q=held");
    reads
        && version["quarantined"] == held
        && tool["versions"][0]["quarantined"] == held
        && search["total"] == if held { 0 } else { 1 }
}

#[test]
fn a_quarantine_on_one_replica_holds_on_the_other_within_two_seconds() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    let env = services.env();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (data_a, data_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let alice = registry_with(&data_a, &env).create_user("alice", "verified", false);
    let admin = registry_with(&data_a, &env).create_user("root", "trusted", true);
    let a = registry_with(&data_a, &env).serve(&[]);
    let b = registry_with(&data_b, &env).serve(&[]);
    let client = Client::new();

    let res = a.publish(
        &client,
        &alice,
        BundleBuilder::http("held-tool", "1.0.0").pack(),
    );
    assert_eq!(res.status(), 201, "{}", res.text().unwrap_or_default());
    // B answers (and caches) the open version first.
    eventually(Duration::from_secs(2), "B serves the open version", || {
        agrees(&client, &b, false).then_some(())
    });

    let why = "hides instructions in Unicode tag characters";
    let res = client
        .put(a.api("/api/v1/tools/held-tool/1.0.0/quarantine"))
        .bearer_auth(&admin)
        .json(&json!({ "reason": why }))
        .send()
        .expect("quarantine on A");
    assert_eq!(res.status(), 200, "{}", res.text().unwrap_or_default());
    let (_, took) = eventually(
        Duration::from_secs(2),
        "B holds the version quarantined on A",
        || agrees(&client, &b, true).then_some(()),
    );
    eprintln!("quarantine on A held by B after {took:?}");
    let (_, body) = get(&client, &b, "/api/v1/tools/held-tool/1.0.0/download");
    assert!(
        body["detail"].as_str().unwrap_or_default().contains(why),
        "{body:#}"
    );

    let res = client
        .delete(b.api("/api/v1/tools/held-tool/1.0.0/quarantine"))
        .bearer_auth(&admin)
        .send()
        .expect("lift on B");
    assert_eq!(res.status(), 200, "{}", res.text().unwrap_or_default());
    let (_, took) = eventually(
        Duration::from_secs(2),
        "A serves the version again after the lift on B",
        || agrees(&client, &a, false).then_some(()),
    );
    eprintln!("lift on B served by A after {took:?}");
}
