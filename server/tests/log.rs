//! The transparency log through the real HTTP API on both backends: every
//! publish appends one record with a dense index, the signed checkpoint
//! verifies with the served key, inclusion and consistency proofs verify,
//! bad proof requests are 400/404, concurrent publishes never share or skip
//! an index, and `toolreg-server verify` catches a missing or altered record.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{json, problem, BundleBuilder, TestApp};
use diesel::prelude::*;
use serde_json::Value;
use toolreg_core::tlog::{self, Checkpoint, Hash, Verifier};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn verifier(app: &TestApp) -> Verifier {
    let res = app.get("/api/v1/log/key").await;
    assert_eq!(res.status(), 200);
    Verifier::parse(&res.text().await.unwrap()).expect("the served key parses")
}

async fn checkpoint(app: &TestApp, v: &Verifier) -> Checkpoint {
    let res = app.get("/api/v1/log/checkpoint").await;
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let note = res.text().await.unwrap();
    Checkpoint::open(&note, v)
        .unwrap_or_else(|e| panic!("checkpoint {note:?} does not verify: {e}"))
}

/// The checkpoint once it covers `size` records (a new one is signed at
/// least once a second).
async fn checkpoint_of_size(app: &TestApp, v: &Verifier, size: u64) -> Checkpoint {
    let started = std::time::Instant::now();
    loop {
        let cp = checkpoint(app, v).await;
        if cp.size == size {
            return cp;
        }
        assert!(cp.size < size, "checkpoint size {} beyond {size}", cp.size);
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "no checkpoint of size {size} within 1.5 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array()
        .expect("proof array")
        .iter()
        .map(|h| Hash::from_base64(h.as_str().unwrap(), "proof hash").unwrap())
        .collect()
}

async fn publish(app: &TestApp, token: &str, name: &str, version: &str) -> (Value, String) {
    let bundle = BundleBuilder::http(name, version).pack();
    let sha = toolreg_core::digest::sha256_hex(&bundle);
    (app.publish_ok(token, bundle).await, sha)
}

async fn publishes_are_logged_and_proven(app: TestApp) {
    let token = app.user("alice", Tier::Verified).await;
    let v = verifier(&app).await;
    assert_eq!(
        checkpoint(&app, &v).await.size,
        0,
        "a new registry has an empty log"
    );

    let mut published = Vec::new();
    for (i, (name, version)) in [
        ("log-one", "1.0.0"),
        ("log-two", "0.1.0"),
        ("log-one", "1.1.0+build.7"),
    ]
    .iter()
    .enumerate()
    {
        let (body, sha) = publish(&app, &token, name, version).await;
        assert_eq!(body["log_index"], i as i64, "publish answer: {body:#}");
        published.push((name.to_string(), version.to_string(), sha));
    }
    let (_, meta) = json(app.get("/api/v1/tools/log-two/0.1.0").await).await;
    assert_eq!(meta["log_index"], 1, "version metadata carries log_index");

    let cp3 = checkpoint_of_size(&app, &v, 3).await;
    for (i, (name, version, sha)) in published.iter().enumerate() {
        let (status, proof) = json(
            app.get(&format!("/api/v1/log/proof/{name}/{version}"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{proof:#}");
        assert_eq!(proof["index"], i as u64);
        assert_eq!(proof["size"], 3);
        let record = tlog::record(name, version, sha);
        assert_eq!(proof["record"], record.as_str());
        tlog::verify_inclusion(
            i as u64,
            3,
            &tlog::leaf_hash(record.as_bytes()),
            &hashes(&proof["proof"]),
            &cp3.root,
        )
        .expect("inclusion proof verifies against the signed checkpoint");
        // Another digest in the record doesn't verify with that proof.
        let forged = tlog::record(name, version, &"0".repeat(64));
        assert!(tlog::verify_inclusion(
            i as u64,
            3,
            &tlog::leaf_hash(forged.as_bytes()),
            &hashes(&proof["proof"]),
            &cp3.root
        )
        .is_err());
    }
    // Names are matched in normalized form, like every other route.
    let (status, proof) = json(app.get("/api/v1/log/proof/LOG_ONE/1.0.0").await).await;
    assert_eq!(status, 200);
    assert_eq!(proof["index"], 0);

    // Grow the log; the old checkpoint is consistent with the new one.
    for version in ["2.0.0", "2.0.1", "2.1.0", "3.0.0"] {
        publish(&app, &token, "log-three", version).await;
    }
    let cp7 = checkpoint_of_size(&app, &v, 7).await;
    let (status, c) = json(app.get("/api/v1/log/consistency?from=3&to=7").await).await;
    assert_eq!(status, 200, "{c:#}");
    tlog::verify_consistency(3, 7, &hashes(&c["proof"]), &cp3.root, &cp7.root)
        .expect("consistency verifies");
    // `to` defaults to the latest checkpoint.
    let (_, c_default) = json(app.get("/api/v1/log/consistency?from=3").await).await;
    assert_eq!(c_default, c);
    // An old proof size still works: inclusion of record 1 in the tree of size 3.
    let (_, old) = json(app.get("/api/v1/log/proof/log-two/0.1.0?size=3").await).await;
    assert_eq!(old["size"], 3);
    let leaf = tlog::leaf_hash(old["record"].as_str().unwrap().as_bytes());
    tlog::verify_inclusion(1, 3, &leaf, &hashes(&old["proof"]), &cp3.root).unwrap();

    // The routes are in the OpenAPI document like every other.
    let openapi = app.get("/api/openapi.json").await.text().await.unwrap();
    for path in [
        "/api/v1/log/checkpoint",
        "/api/v1/log/key",
        "/api/v1/log/proof/{name}/{version}",
        "/api/v1/log/consistency",
    ] {
        assert!(
            openapi.contains(path),
            "{path} missing from the OpenAPI document"
        );
    }

    // The stored-hash root equals a recomputation from the records.
    let ok = app.binary(&["verify"]);
    assert!(
        ok.status.success(),
        "verify: {}{}",
        String::from_utf8_lossy(&ok.stdout),
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stderr).contains("7 records"));
}

async fn bad_proof_requests_are_refused(app: TestApp) {
    let token = app.user("alice", Tier::Verified).await;
    publish(&app, &token, "log-bad", "1.0.0").await;
    publish(&app, &token, "log-bad", "1.1.0").await;
    let cases = [
        (
            "/api/v1/log/proof/log-bad/1.0.0?size=3",
            400,
            "bad-request",
            "the log has 2 records",
        ),
        (
            "/api/v1/log/proof/log-bad/1.1.0?size=1",
            400,
            "bad-request",
            "index 1",
        ),
        (
            "/api/v1/log/proof/log-bad/1.0.0?size=abc",
            400,
            "bad-request",
            "size",
        ),
        ("/api/v1/log/proof/log-bad/9.9.9", 404, "not-found", "9.9.9"),
        (
            "/api/v1/log/proof/no-such-tool/1.0.0",
            404,
            "not-found",
            "no-such-tool",
        ),
        (
            "/api/v1/log/consistency?from=2&to=1",
            400,
            "bad-request",
            "must not be larger",
        ),
        (
            "/api/v1/log/consistency?from=1&to=5",
            400,
            "bad-request",
            "the log has 2 records",
        ),
        ("/api/v1/log/consistency?to=1", 400, "bad-request", "from"),
        (
            "/api/v1/log/consistency?from=-1&to=1",
            400,
            "bad-request",
            "from",
        ),
    ];
    for (path, status, slug, needle) in cases {
        let body = problem(app.get(path).await, status, slug).await;
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(needle),
            "{path}: detail {detail:?} should mention {needle:?}"
        );
    }
    // Equal sizes and from=0 are valid, empty proofs.
    for path in [
        "/api/v1/log/consistency?from=2&to=2",
        "/api/v1/log/consistency?from=0&to=2",
    ] {
        let (status, body) = json(app.get(path).await).await;
        assert_eq!(
            (status, body["proof"].as_array().map(Vec::len)),
            (200, Some(0)),
            "{path}"
        );
    }
}

async fn concurrent_publishes_get_dense_indexes(app: TestApp) {
    let token = app.user("alice", Tier::Verified).await;
    let mut tasks = Vec::new();
    for i in 0..12 {
        let bundle =
            BundleBuilder::http(&format!("log-race-{}", i % 3), &format!("1.0.{i}")).pack();
        let (client, url, token) = (app.client.clone(), app.api("/api/v1/tools"), token.clone());
        tasks.push(tokio::spawn(async move {
            let res = client
                .post(url)
                .bearer_auth(token)
                .header("content-type", "application/gzip")
                .body(bundle)
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 201);
            res.json::<Value>().await.unwrap()["log_index"]
                .as_i64()
                .unwrap()
        }));
    }
    let mut indexes = BTreeSet::new();
    for t in tasks {
        assert!(indexes.insert(t.await.unwrap()), "an index was given twice");
    }
    assert_eq!(
        indexes,
        (0..12).collect::<BTreeSet<i64>>(),
        "indexes are exactly 0..12"
    );
    assert_eq!(app.count("log_entries").await, app.count("versions").await);
    let v = verifier(&app).await;
    let cp = checkpoint_of_size(&app, &v, 12).await;
    for i in 0..12 {
        let (_, proof) = json(
            app.get(&format!("/api/v1/log/proof/log-race-{}/1.0.{i}", i % 3))
                .await,
        )
        .await;
        let leaf = tlog::leaf_hash(proof["record"].as_str().unwrap().as_bytes());
        tlog::verify_inclusion(
            proof["index"].as_u64().unwrap(),
            12,
            &leaf,
            &hashes(&proof["proof"]),
            &cp.root,
        )
        .unwrap();
    }
    let out = app.binary(&["verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

async fn sql(app: &TestApp, statement: &'static str) {
    app.state
        .db
        .write(move |conn| Ok(diesel::sql_query(statement).execute(conn)?))
        .await
        .expect(statement);
}

async fn verify_catches_missing_and_altered_records(app: TestApp) {
    let token = app.user("alice", Tier::Verified).await;
    for version in ["1.0.0", "1.0.1", "1.0.2"] {
        publish(&app, &token, "log-verify", version).await;
    }
    assert!(app.binary(&["verify"]).status.success());

    // The record of 1.0.2 (the last one) disappears behind the server's back.
    sql(&app, "DELETE FROM log_entries WHERE idx = 2").await;
    let out = app.binary(&["verify"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "verify passed with a missing record");
    assert!(
        stdout.contains("log-verify@1.0.2") && stdout.contains("no log record"),
        "{stdout}"
    );

    // A record whose text was rewritten no longer matches its version, its leaf hash or the root.
    sql(&app, "UPDATE log_entries SET record = 'toolreg log-verify 1.0.1 sha256:0000000000000000000000000000000000000000000000000000000000000000\n' WHERE idx = 1").await;
    let out = app.binary(&["verify"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        stdout.contains("log record 1 does not hash to its stored leaf hash"),
        "{stdout}"
    );
    assert!(stdout.contains("log-verify@1.0.1"), "{stdout}");
}

both_backends!(async TestApp::start =>
    publishes_are_logged_and_proven,
    bad_proof_requests_are_refused,
    concurrent_publishes_get_dense_indexes,
    verify_catches_missing_and_altered_records,
);

/// A failed publish (version exists) leaves no log record behind.
#[actix_web::test]
async fn refused_publishes_leave_no_record() {
    let Some(app) = TestApp::start(common::Backend::Sqlite).await else {
        return;
    };
    let token = app.user("alice", Tier::Verified).await;
    publish(&app, &token, "log-once", "1.0.0").await;
    let again = app
        .publish(&token, BundleBuilder::http("log-once", "1.0.0").pack())
        .await;
    assert_eq!(again.status(), 409);
    let other = app.user("mallory", Tier::Verified).await;
    let foreign = app
        .publish(&other, BundleBuilder::http("log-once", "2.0.0").pack())
        .await;
    assert_eq!(foreign.status(), 403);
    assert_eq!(app.count("log_entries").await, 1);
    let (body, _) = publish(&app, &token, "log-once", "1.0.1").await;
    assert_eq!(body["log_index"], 1);
}
