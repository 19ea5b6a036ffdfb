//! Crash safety of publish: the real `toolreg-server` binary takes
//! publishes from 8 concurrent clients and is killed with SIGKILL mid-way.
//! After a restart on the same data, every publish that was answered 201 is
//! there and downloads with its digest, every visible version is complete,
//! and `toolreg-server verify` passes. Run on SQLite + local files and on
//! PostgreSQL + local files, where publishes share their transactions
//! (group commit) and must still be answered only after the commit.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Backend, BundleBuilder, Registry, Services, BIN};
use serde_json::Value;

const CLIENTS: usize = 8;
const PER_CLIENT: usize = 60;
/// Kill the server once this many publishes have been acknowledged.
const KILL_AFTER: usize = 60;

/// The binary on `data` (and the database of `services`, if it has one)
/// with no publish rate limit.
fn registry(data: &Path, services: &Services) -> Registry {
    Registry::new(BIN, data)
        .with_services(services)
        .with_env([("TOOLREG_RATE_LIMIT_PUBLISH", "0")])
}

/// The services of `backend`, with the bundles in local files either way
/// (only the database's side of a crash differs).
fn services(backend: Backend) -> Option<Services> {
    match backend {
        Backend::Sqlite => Services::for_backend(backend),
        Backend::Postgres => Services::postgres_only(),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    toolreg_core::digest::sha256_hex(bytes)
}

toolreg_test_support::both_backends!(services => every_acknowledged_publish_survives_kill_9);

fn every_acknowledged_publish_survives_kill_9(services: Services) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let registry = registry(&data, &services);
    let token = registry.create_user("crash", "trusted", false);

    // Every bundle is built up front so the clients only do HTTP.
    let bundles: Vec<Vec<(String, String, Vec<u8>)>> = (0..CLIENTS)
        .map(|c| {
            (0..PER_CLIENT)
                .map(|i| {
                    // Half the publishes are new tools, half new versions of one tool per client.
                    let (name, version) = if i % 2 == 0 {
                        (format!("crash-c{c}-n{i}"), "1.0.0".to_string())
                    } else {
                        (format!("crash-c{c}"), format!("1.0.{i}"))
                    };
                    let bytes = BundleBuilder::http(&name, &version).pack();
                    (name, version, bytes)
                })
                .collect()
        })
        .collect();

    let mut first = registry.serve(&[]);
    let url = first.url.clone();
    let acknowledged: Arc<Mutex<Vec<(String, String, String)>>> = Arc::default();
    let ok_count = Arc::new(AtomicUsize::new(0));
    let unexpected: Arc<Mutex<Vec<String>>> = Arc::default();

    let clients: Vec<_> = bundles
        .into_iter()
        .map(|mine| {
            let (url, token) = (url.clone(), token.clone());
            let (acknowledged, ok_count, unexpected) =
                (acknowledged.clone(), ok_count.clone(), unexpected.clone());
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(30))
                    .build()
                    .expect("client");
                for (name, version, bytes) in mine {
                    let res = client
                        .post(format!("{url}/api/v1/tools"))
                        .bearer_auth(&token)
                        .header("content-type", "application/gzip")
                        .body(bytes)
                        .send();
                    let res = match res {
                        Ok(res) => res,
                        // The server is gone: this client is done.
                        Err(_) => return,
                    };
                    let status = res.status().as_u16();
                    match res.json::<Value>() {
                        Ok(body) if status == 201 => {
                            let sha = body["sha256"].as_str().unwrap_or_default().to_string();
                            acknowledged.lock().unwrap().push((name, version, sha));
                            ok_count.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(body) => unexpected
                            .lock()
                            .unwrap()
                            .push(format!("{name}@{version}: {status} {body}")),
                        // The connection died while reading the answer: not acknowledged.
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();

    let started = Instant::now();
    while ok_count.load(Ordering::SeqCst) < KILL_AFTER {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "publishes too slow: {} in 120 s",
            ok_count.load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    first.kill(); // SIGKILL on Unix
    let killed_at = ok_count.load(Ordering::SeqCst);
    for c in clients {
        c.join().expect("client thread");
    }
    let unexpected = unexpected.lock().unwrap().clone();
    assert!(
        unexpected.is_empty(),
        "publishes answered other than 201: {unexpected:#?}"
    );
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() < CLIENTS * PER_CLIENT,
        "the kill came after every publish; it must come mid-way"
    );
    eprintln!(
        "killed after {killed_at} acknowledged publishes ({} in total)",
        acknowledged.len()
    );

    // Restart on the same data directory.
    let mut server = registry.serve(&[]);
    let url = server.url.clone();
    let client = reqwest::blocking::Client::new();

    // Every acknowledged publish is there and downloads with its digest.
    for (name, version, sha) in &acknowledged {
        let res = client
            .get(format!("{url}/api/v1/tools/{name}/{version}"))
            .send()
            .expect("GET version");
        assert_eq!(
            res.status(),
            200,
            "{name}@{version} was acknowledged with 201 but is gone after kill -9"
        );
        let res = client
            .get(format!("{url}/api/v1/tools/{name}/{version}/download"))
            .send()
            .expect("download");
        assert_eq!(res.status(), 200, "{name}@{version} download");
        let header = res
            .headers()
            .get("x-checksum-sha256")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let bytes = res.bytes().expect("bundle bytes");
        assert_eq!(
            &sha256_hex(&bytes),
            sha,
            "{name}@{version}: downloaded bytes differ from the acknowledged digest"
        );
        assert_eq!(&header, sha, "{name}@{version}: X-Checksum-Sha256");
    }

    // No partial version: every visible version of every tool the clients
    // touched (acknowledged or not) has its complete metadata and bundle.
    let names: BTreeSet<String> = (0..CLIENTS)
        .flat_map(|c| {
            (0..PER_CLIENT).map(move |i| {
                if i % 2 == 0 {
                    format!("crash-c{c}-n{i}")
                } else {
                    format!("crash-c{c}")
                }
            })
        })
        .collect();
    let mut visible: BTreeMap<String, usize> = BTreeMap::new();
    for name in &names {
        let res = client
            .get(format!("{url}/api/v1/tools/{name}"))
            .send()
            .expect("GET tool");
        match res.status().as_u16() {
            404 => continue,
            200 => {}
            other => panic!("GET /api/v1/tools/{name} answered {other} after the restart"),
        }
        let tool: Value = res.json().expect("tool JSON");
        let versions = tool["versions"].as_array().expect("versions array");
        assert!(
            !versions.is_empty(),
            "{name} is visible without any version: {tool}"
        );
        for v in versions {
            let version = v["version"].as_str().expect("version");
            let sha = v["sha256"].as_str().expect("sha256");
            let res = client
                .get(format!("{url}/api/v1/tools/{name}/{version}/download"))
                .send()
                .expect("download");
            assert_eq!(
                res.status(),
                200,
                "{name}@{version} is visible but does not download"
            );
            let bytes = res.bytes().expect("bundle bytes");
            assert_eq!(
                sha256_hex(&bytes),
                sha,
                "{name}@{version}: visible with a bundle that does not match its digest"
            );
            *visible.entry(name.clone()).or_default() += 1;
        }
    }
    let visible_total: usize = visible.values().sum();
    assert!(
        visible_total >= acknowledged.len(),
        "fewer versions visible ({visible_total}) than acknowledged"
    );
    eprintln!(
        "{visible_total} versions visible after the restart, {} acknowledged",
        acknowledged.len()
    );

    // A publish that was lost with the crash can be retried; one that is
    // visible is immutable (409).
    let retry = (0..PER_CLIENT)
        .step_by(2)
        .map(|i| format!("crash-c0-n{i}"))
        .find(|n| !visible.contains_key(n))
        .expect("client 0 had unpublished tools when the server died");
    let res = client
        .post(format!("{url}/api/v1/tools"))
        .bearer_auth(&token)
        .header("content-type", "application/gzip")
        .body(BundleBuilder::http(&retry, "1.0.0").pack())
        .send()
        .expect("retry publish");
    assert_eq!(
        res.status(),
        201,
        "retrying the lost publish of {retry}: {}",
        res.text().unwrap_or_default()
    );
    let (name, version, _) = &acknowledged[0];
    let res = client
        .post(format!("{url}/api/v1/tools"))
        .bearer_auth(&token)
        .header("content-type", "application/gzip")
        .body(BundleBuilder::http(name, version).pack())
        .send()
        .expect("republish");
    assert_eq!(
        res.status(),
        409,
        "republishing {name}@{version} after the restart"
    );

    // Stop the server before `verify` reads the same data.
    server.kill();
    let out = registry.run(&["verify"]);
    assert!(
        out.status.success(),
        "verify failed after kill -9:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
