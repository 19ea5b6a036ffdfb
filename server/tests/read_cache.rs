//! The read cache (`toolreg_server::read_cache`) through the HTTP API, on
//! both backends: once the tool summary, a version and its download have
//! been answered (and so cached), every change made through the server shows
//! in the very next answer — publish, yank, unyank, owners added and
//! removed, a demotion that blocks and a promotion that unblocks. Bundle
//! bytes are kept only when they hash to their digest.

mod common;

use common::{json, BundleBuilder, TestApp};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn get_json(app: &TestApp, path: &str) -> Value {
    let (status, body) = json(app.get(path).await).await;
    assert_eq!(status, 200, "GET {path}: {body:#}");
    body
}

/// Answers the three cached routes once, so the next answers could come
/// from the cache.
async fn fill(app: &TestApp, name: &str, version: &str) {
    get_json(app, &format!("/api/v1/tools/{name}")).await;
    get_json(app, &format!("/api/v1/tools/{name}/{version}")).await;
    let res = app
        .get(&format!("/api/v1/tools/{name}/{version}/download"))
        .await;
    assert_eq!(res.status(), 200);
}

fn logins(tool: &Value) -> Vec<&str> {
    tool["owners"]
        .as_array()
        .expect("owners")
        .iter()
        .map(|o| o["login"].as_str().expect("login"))
        .collect()
}

async fn answers_follow_every_change_on_this_server(app: TestApp) {
    let alice = app.user("alice", Tier::Trusted).await;
    let bob = app.user("bob", Tier::Verified).await;
    let admin = app.user_with("root", Tier::Trusted, true).await;
    app.publish_ok(&alice, BundleBuilder::function("calc", "1.0.0").pack())
        .await;
    fill(&app, "calc", "1.0.0").await;
    // Other spellings of the name and version hit the same entries.
    fill(&app, "Calc", "1.0.0+build.7").await;

    // A new version: the summary's latest and version list.
    app.publish_ok(&alice, BundleBuilder::function("calc", "1.1.0").pack())
        .await;
    let tool = get_json(&app, "/api/v1/tools/calc").await;
    assert_eq!(tool["latest_version"], "1.1.0", "{tool:#}");
    assert_eq!(tool["versions"].as_array().map(Vec::len), Some(2));
    fill(&app, "calc", "1.1.0").await;

    // Yank and unyank.
    let res = app
        .client
        .delete(app.api("/api/v1/tools/calc/1.1.0/yank"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("yank");
    assert_eq!(res.status(), 200);
    let tool = get_json(&app, "/api/v1/tools/calc").await;
    assert_eq!(tool["latest_version"], "1.0.0", "{tool:#}");
    assert_eq!(tool["versions"][0]["yanked"], true, "{tool:#}");
    assert_eq!(
        get_json(&app, "/api/v1/tools/CALC/1.1.0").await["yanked"],
        true
    );
    let res = app
        .client
        .put(app.api("/api/v1/tools/calc/1.1.0/unyank"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("unyank");
    assert_eq!(res.status(), 200);
    assert_eq!(
        get_json(&app, "/api/v1/tools/calc").await["latest_version"],
        "1.1.0"
    );
    assert_eq!(
        get_json(&app, "/api/v1/tools/calc/1.1.0").await["yanked"],
        false
    );

    // Owners invited (no change yet), accepting, removed.
    for (method, path, token, expected) in [
        (
            reqwest::Method::PUT,
            "/api/v1/tools/calc/owners",
            &alice,
            vec!["alice"],
        ),
        (
            reqwest::Method::PUT,
            "/api/v1/me/invitations/calc",
            &bob,
            vec!["alice", "bob"],
        ),
        (
            reqwest::Method::DELETE,
            "/api/v1/tools/calc/owners",
            &alice,
            vec!["alice"],
        ),
    ] {
        let res = app
            .client
            .request(method, app.api(path))
            .bearer_auth(token)
            .json(&json!({"logins": ["bob"]}))
            .send()
            .await
            .expect("owners");
        assert_eq!(res.status(), 200);
        let tool = get_json(&app, "/api/v1/tools/calc").await;
        assert_eq!(logins(&tool), expected, "{tool:#}");
    }

    // A demotion blocks, a promotion unblocks: download, version, summary.
    for (tier, blocked) in [("verified", true), ("trusted", false)] {
        let res = app
            .client
            .put(app.api("/api/v1/publishers/alice/tier"))
            .bearer_auth(&admin)
            .json(&json!({ "tier": tier }))
            .send()
            .await
            .expect("set tier");
        assert_eq!(res.status(), 200);
        let status = app
            .get("/api/v1/tools/calc/1.0.0/download")
            .await
            .status()
            .as_u16();
        assert_eq!(status, if blocked { 403 } else { 200 }, "alice {tier}");
        let v = get_json(&app, "/api/v1/tools/calc/1.0.0").await;
        assert_eq!(v["blocked"], blocked, "{v:#}");
        let tool = get_json(&app, "/api/v1/tools/calc").await;
        assert_eq!(tool["versions"][1]["blocked"], blocked, "{tool:#}");
        assert_eq!(tool["owners"][0]["tier"], tier, "{tool:#}");
    }
}

async fn bundle_bytes_are_kept_only_when_they_match_their_digest(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bundle = BundleBuilder::http("calc", "1.0.0").pack();
    let published = app.publish_ok(&alice, bundle.clone()).await;
    let sha = published["sha256"].as_str().expect("sha256").to_string();
    let download = || async {
        let res = app.get("/api/v1/tools/calc/1.0.0/download").await;
        assert_eq!(res.status(), 200);
        res.bytes().await.expect("bytes").to_vec()
    };

    // Storage swapped the bytes behind the registry's back: they are served
    // as stored (clients check the digest) but never kept.
    let swapped = b"not the published bundle".to_vec();
    app.state
        .blobs
        .put_bundle(&sha, swapped.clone().into())
        .await
        .expect("swap the blob");
    assert_eq!(download().await, swapped);
    app.state
        .blobs
        .put_bundle(&sha, bundle.clone().into())
        .await
        .expect("restore the blob");
    assert_eq!(download().await, bundle, "the swapped bytes were not kept");

    // Good bytes are kept: served even when storage loses them.
    let path = toolreg_server::blobs::bundle_path(&sha);
    app.state
        .blobs
        .delete(&path)
        .await
        .expect("delete the blob");
    let served = download().await;
    assert_eq!(hex::encode(Sha256::digest(&served)), sha);
    let res = app.get(&format!("/api/v1/blobs/sha256/{sha}")).await;
    assert_eq!(res.status(), 200, "by digest, from the cache too");
}

both_backends!(async TestApp::start =>
    answers_follow_every_change_on_this_server,
    bundle_bytes_are_kept_only_when_they_match_their_digest
);
