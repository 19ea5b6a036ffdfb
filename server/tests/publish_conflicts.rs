//! Versions are immutable and names unique: republishing is 409 (also after
//! a yank, also when only build metadata differs), names collide on their
//! normalized form, and concurrent duplicate publishes give one 201.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn republishing_a_version_is_409(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let first = BundleBuilder::http("create-issue", "1.0.0").pack();
    let digest = toolreg_core::digest::sha256_hex(&first);
    app.publish_ok(&token, first.clone()).await;
    // Same bytes, then different bytes: both refused, the first stays.
    let body = problem(app.publish(&token, first).await, 409, "version-exists").await;
    assert!(
        body["detail"].as_str().unwrap().contains("1.0.0"),
        "{body:#}"
    );
    let changed = BundleBuilder::http("create-issue", "1.0.0")
        .file("README.md", "changed")
        .pack();
    problem(app.publish(&token, changed).await, 409, "version-exists").await;
    let (_, v) = json(app.get("/api/v1/tools/create-issue/1.0.0").await).await;
    assert_eq!(v["sha256"], digest);
    assert_eq!(app.count("versions").await, 1);
    assert_eq!(
        app.stored_objects().await.len(),
        1,
        "the refused different bytes were not stored"
    );
}

async fn republishing_after_a_yank_is_409(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/create-issue/1.0.0/yank"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body = problem(
        app.publish(
            &token,
            BundleBuilder::http("create-issue", "1.0.0")
                .file("README.md", "new")
                .pack(),
        )
        .await,
        409,
        "version-exists",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("yanked"),
        "{body:#}"
    );
}

async fn build_metadata_does_not_make_a_new_version(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(
        &token,
        BundleBuilder::http("create-issue", "1.0.0+build.1").pack(),
    )
    .await;
    problem(
        app.publish(
            &token,
            BundleBuilder::http("create-issue", "1.0.0+build.2").pack(),
        )
        .await,
        409,
        "version-exists",
    )
    .await;
    problem(
        app.publish(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
            .await,
        409,
        "version-exists",
    )
    .await;
}

async fn names_are_unique_on_their_normalized_form(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("web-search", "1.0.0").pack())
        .await;
    // An MCP tool whose call name is `web_search` gets the registry name `web-search`: taken.
    let tool = serde_json::json!({"name": "web_search", "description": "Search the web",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}});
    let mut files = toolreg_core::ToolFiles::new();
    files.insert("tool.json", serde_json::to_vec(&tool).unwrap());
    files.insert("toolreg.toml", "[tool]\nversion = \"1.0.0\"\n");
    let bundle = toolreg_core::bundle::pack(&files).unwrap();
    let body = problem(app.publish(&bob, bundle).await, 403, "forbidden").await;
    assert!(
        body["detail"].as_str().unwrap().contains("web-search"),
        "{body:#}"
    );
    // Spelling the name differently in toolreg.toml never gets a second tool.
    for name in ["web_search", "Web-Search"] {
        let res = app
            .publish(&bob, BundleBuilder::http(name, "1.0.0").pack())
            .await;
        let (status, body) = json(res).await;
        assert!(status == 403 || status == 422, "{name}: {status} {body:#}");
    }
    assert_eq!(app.count("tools").await, 1);
    let (_, tool) = json(app.get("/api/v1/tools/web-search").await).await;
    assert_eq!(tool["owners"].as_array().unwrap().len(), 1);
    assert_eq!(tool["owners"][0]["login"], "alice");
}

async fn concurrent_duplicate_publishes_give_one_201(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let bundle = BundleBuilder::http("race", "1.0.0").pack();
    let requests = (0..8).map(|_| app.publish(&token, bundle.clone()));
    let statuses: Vec<u16> = futures::future::join_all(requests)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 409).count(),
        7,
        "{statuses:?}"
    );
    assert_eq!(app.count("tools").await, 1);
    assert_eq!(app.count("versions").await, 1);
    assert_eq!(app.count("changes").await, 1);
}

async fn concurrent_new_tools_by_two_publishers(app: TestApp) {
    // Two publishers race for one new name with different versions: one owns it, the other is refused.
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    let a = app.publish(&alice, BundleBuilder::http("contested", "1.0.0").pack());
    let b = app.publish(&bob, BundleBuilder::http("contested", "2.0.0").pack());
    let (a, b) = futures::join!(a, b);
    let mut statuses = [a.status().as_u16(), b.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [201, 403]);
    assert_eq!(app.count("versions").await, 1);
    assert_eq!(app.count("tool_owners").await, 1);
}

async fn concurrent_distinct_publishes_all_succeed(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let requests = (0..8).map(|i| {
        app.publish(
            &token,
            BundleBuilder::http(&format!("tool-{i}"), "1.0.0").pack(),
        )
    });
    let statuses: Vec<u16> = futures::future::join_all(requests)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    assert_eq!(app.count("versions").await, 8);
    assert_eq!(app.count("changes").await, 8);
}

both_backends!(async TestApp::start =>
    republishing_a_version_is_409,
    republishing_after_a_yank_is_409,
    build_metadata_does_not_make_a_new_version,
    names_are_unique_on_their_normalized_form,
    concurrent_duplicate_publishes_give_one_201,
    concurrent_new_tools_by_two_publishers,
    concurrent_distinct_publishes_all_succeed,
);
