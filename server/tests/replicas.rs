//! Replicas agree without talking to each other: two real
//! `toolreg-server` processes on one PostgreSQL database and one S3 bucket.
//! A publish on A is fetched, downloaded and found by search on B; a yank on
//! B makes resolve on A skip the version and A's (cached) tool and version
//! answers show it within a second; a demotion on A blocks the download on B
//! (whose cache held it) within a second; concurrent publishes of one name and version on both replicas give
//! exactly one 201 and one 409 and leave a consistent version behind, and
//! `verify` passes at the end. Skipped with `SKIPPED:` when PostgreSQL or S3
//! are unreachable, failed when `CI` is set.

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{registry_with, BundleBuilder};
use reqwest::blocking::Client;
use serde_json::Value;
use toolreg_test_support::{eventually, Services};

fn get_json(client: &Client, url: String) -> (u16, Value) {
    let res = client.get(&url).send().expect("GET");
    let status = res.status().as_u16();
    (status, res.json().unwrap_or(Value::Null))
}

#[test]
fn two_replicas_on_one_database_and_bucket_agree() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    let env = services.env();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (data_a, data_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let alice = registry_with(&data_a, &env).create_user("alice", "verified", false);
    let bob = registry_with(&data_a, &env).create_user("bob", "trusted", false);
    let admin = registry_with(&data_a, &env).create_user("root", "trusted", true);
    let a = registry_with(&data_a, &env).serve(&[]);
    let b = registry_with(&data_b, &env).serve(&[]);
    let client = Client::new();

    // Publish on A → metadata, download and search on B.
    let bundle = BundleBuilder::http("replicated-tool", "1.0.0").pack();
    let res = a.publish(&client, &alice, bundle.clone());
    assert_eq!(res.status(), 201, "{}", res.text().unwrap_or_default());
    let sha = toolreg_core::digest::sha256_hex(&bundle);
    let (status, version) = get_json(&client, b.api("/api/v1/tools/replicated-tool/1.0.0"));
    assert_eq!(
        status, 200,
        "metadata on B right after the publish on A: {version}"
    );
    assert_eq!(version["sha256"], sha.as_str());
    let res = client
        .get(b.api("/api/v1/tools/replicated-tool/1.0.0/download"))
        .send()
        .expect("download on B");
    assert_eq!(res.status(), 200);
    assert_eq!(
        toolreg_core::digest::sha256_hex(&res.bytes().expect("bytes")),
        sha,
        "B downloads A's bundle from the shared bucket"
    );
    let (_, took) = eventually(
        Duration::from_secs(2),
        "search on B finds the tool published on A",
        || {
            let (status, body) = get_json(&client, b.api("/api/v1/search?q=replicated"));
            (status == 200 && body["hits"][0]["name"] == "replicated-tool").then_some(())
        },
    );
    eprintln!("publish on A searchable on B after {took:?}");

    // Yank on B → resolve on A skips it.
    let newer = BundleBuilder::http("replicated-tool", "1.1.0").pack();
    assert_eq!(a.publish(&client, &alice, newer).status(), 201);
    // A's cached answers (filled here) must follow the yank made on B.
    let (_, summary) = get_json(&client, a.api("/api/v1/tools/replicated-tool"));
    assert_eq!(summary["latest_version"], "1.1.0", "{summary}");
    let (_, shown) = get_json(&client, a.api("/api/v1/tools/replicated-tool/1.1.0"));
    assert_eq!(shown["yanked"], false, "{shown}");
    let (_, resolved) = get_json(&client, a.api("/api/v1/resolve/replicated-tool?req=^1"));
    assert_eq!(resolved["version"], "1.1.0");
    let res = client
        .delete(b.api("/api/v1/tools/replicated-tool/1.1.0/yank"))
        .bearer_auth(&alice)
        .send()
        .expect("yank on B");
    assert_eq!(res.status(), 200, "{}", res.text().unwrap_or_default());
    let (status, resolved) = get_json(&client, a.api("/api/v1/resolve/replicated-tool?req=^1"));
    assert_eq!(status, 200);
    assert_eq!(
        resolved["version"], "1.0.0",
        "A resolves past the version yanked on B: {resolved}"
    );
    let (_, took) = eventually(
        Duration::from_secs(1),
        "A's tool and version answers show the yank made on B",
        || {
            let (_, summary) = get_json(&client, a.api("/api/v1/tools/replicated-tool"));
            let (_, shown) = get_json(&client, a.api("/api/v1/tools/replicated-tool/1.1.0"));
            (summary["latest_version"] == "1.0.0"
                && summary["versions"][0]["yanked"] == true
                && shown["yanked"] == true)
                .then_some(())
        },
    );
    eprintln!("yank on B shown by A's cached answers after {took:?}");

    // Demote on A → download on B refuses.
    let res = b.publish(
        &client,
        &bob,
        BundleBuilder::function("replicated-fn", "1.0.0").pack(),
    );
    assert_eq!(res.status(), 201, "{}", res.text().unwrap_or_default());
    let res = client
        .get(b.api("/api/v1/tools/replicated-fn/1.0.0/download"))
        .send()
        .expect("download");
    assert_eq!(res.status(), 200);
    let res = client
        .put(a.api("/api/v1/publishers/bob/tier"))
        .bearer_auth(&admin)
        .json(&serde_json::json!({"tier": "verified"}))
        .send()
        .expect("demote on A");
    assert_eq!(res.status(), 200, "{}", res.text().unwrap_or_default());
    // B cached the download target above; the block reaches it through the
    // change log (polled every 100 ms).
    let (body, took) = eventually(
        Duration::from_secs(1),
        "B refuses the download of a version blocked by a demotion on A",
        || {
            let res = client
                .get(b.api("/api/v1/tools/replicated-fn/1.0.0/download"))
                .send()
                .expect("download on B");
            (res.status() == 403).then(|| res.json::<Value>().expect("problem"))
        },
    );
    eprintln!("demotion on A blocks downloads on B after {took:?}");
    assert_eq!(
        body["type"], "https://toolreg.dev/problems/blocked",
        "{body:#}"
    );
    let (_, shown) = get_json(&client, b.api("/api/v1/tools/replicated-fn/1.0.0"));
    assert_eq!(shown["blocked"], true, "{shown}");

    // Concurrent publishes of one name and version on both replicas.
    for round in 0..8 {
        let name = format!("race-{round}");
        // Different bytes on each side, so the stored bundle shows who won.
        let on_a = BundleBuilder::http(&name, "1.0.0")
            .file("README.md", "published on A\n")
            .pack();
        let on_b = BundleBuilder::http(&name, "1.0.0")
            .file("README.md", "published on B\n")
            .pack();
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = [(a.url.clone(), on_a.clone()), (b.url.clone(), on_b.clone())]
            .into_iter()
            .map(|(url, bytes)| {
                let (barrier, token) = (barrier.clone(), alice.clone());
                std::thread::spawn(move || {
                    let client = Client::new();
                    barrier.wait();
                    let res = client
                        .post(format!("{url}/api/v1/tools"))
                        .bearer_auth(token)
                        .header("content-type", "application/gzip")
                        .body(bytes)
                        .send()
                        .expect("publish");
                    let status = res.status().as_u16();
                    (status, res.text().unwrap_or_default())
                })
            })
            .collect();
        let results: Vec<(u16, String)> = racers
            .into_iter()
            .map(|t| t.join().expect("racer"))
            .collect();
        let mut statuses: Vec<u16> = results.iter().map(|r| r.0).collect();
        statuses.sort();
        assert_eq!(
            statuses,
            vec![201, 409],
            "round {round}: exactly one 201 and one 409: {results:#?}"
        );
        let winner = if results[0].0 == 201 { &on_a } else { &on_b };
        let (_, tool) = get_json(&client, b.api(&format!("/api/v1/tools/{name}")));
        let versions = tool["versions"].as_array().expect("versions");
        assert_eq!(versions.len(), 1, "round {round}: one version: {tool}");
        assert_eq!(
            versions[0]["sha256"],
            toolreg_core::digest::sha256_hex(winner).as_str(),
            "round {round}: the winner's digest"
        );
        for replica in [&a, &b] {
            let bytes = client
                .get(replica.api(&format!("/api/v1/tools/{name}/1.0.0/download")))
                .send()
                .expect("download")
                .bytes()
                .expect("bytes");
            assert_eq!(
                bytes.as_ref(),
                winner.as_slice(),
                "round {round}: {} serves the winner's bundle",
                replica.url
            );
        }
    }

    // Nothing corrupt: every version's blob is present and matches its digest.
    drop((a, b));
    let out = registry_with(&data_a, &env).run(&["verify"]);
    assert!(
        out.status.success(),
        "verify after the replica tests:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
