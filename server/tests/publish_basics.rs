//! Publishing: a version becomes visible with its digest, format, execution
//! kind and tier; the change log and audit log record it; the tier policy
//! decides who may publish what.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

/// `body` reads into the shared wire type `T` (what the CLI reads it
/// into) and encodes back to the same fields and values.
fn assert_reads_as<T: serde::de::DeserializeOwned + serde::Serialize>(body: &serde_json::Value) {
    let typed: T = serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body:#}"));
    assert_eq!(&serde_json::to_value(&typed).expect("encode"), body);
}

async fn publish_then_metadata_shows_it(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let bundle = BundleBuilder::http("create-issue", "1.0.0")
        .file("README.md", "# Create issue\n")
        .pack();
    let digest = toolreg_core::digest::sha256_hex(&bundle);
    let body = app.publish_ok(&token, bundle.clone()).await;
    assert_eq!(body["name"], "create-issue");
    assert_eq!(body["version"], "1.0.0");
    assert_eq!(body["sha256"], digest);
    assert_eq!(body["size"], bundle.len());
    assert_eq!(body["format"], "matimo");
    assert_eq!(body["execution"], "http");
    assert_eq!(body["tier"], "untrusted");
    assert_eq!(body["publisher"], "alice");
    assert!(body["warnings"].is_array());
    assert_reads_as::<toolreg_api::PublishedVersion>(&body);

    let (status, tool) = json(app.get("/api/v1/tools/create-issue").await).await;
    assert_eq!(status, 200, "{tool:#}");
    assert_eq!(tool["name"], "create-issue");
    assert_eq!(tool["latest_version"], "1.0.0");
    assert_eq!(tool["execution"], "http");
    assert_eq!(tool["owners"][0]["login"], "alice");
    assert_eq!(tool["versions"][0]["sha256"], digest);
    assert_eq!(tool["versions"][0]["yanked"], false);
    assert_eq!(tool["versions"][0]["blocked"], false);
    assert!(
        tool["description"].as_str().is_some_and(|d| !d.is_empty()),
        "{tool:#}"
    );

    let (status, version) = json(app.get("/api/v1/tools/create-issue/1.0.0").await).await;
    assert_eq!(status, 200, "{version:#}");
    assert_eq!(version["sha256"], digest);
    assert_eq!(version["publisher"]["login"], "alice");
    assert_eq!(version["publisher"]["tier"], "untrusted");
    assert_eq!(version["definition_file"], "definition.yaml");
    let original = std::fs::read_to_string(
        common::corpus_dir("matimo/github-create-issue").join("definition.yaml"),
    )
    .unwrap();
    assert_eq!(
        version["definition"], original,
        "the original definition byte for byte"
    );
    assert_eq!(version["readme"], "# Create issue\n");
    assert_eq!(version["manifest"]["registry_name"], "create-issue");
    assert_eq!(version["manifest"]["execution"]["kind"], "http");
    assert_reads_as::<toolreg_api::EncodableVersion>(&version);

    // The blob is stored content-addressed, and the logs recorded the publish.
    assert_eq!(
        app.stored_objects().await,
        vec![format!("bundles/sha256/{digest}")]
    );
    assert_eq!(app.count("changes").await, 1);
    assert_eq!(app.count("audit_log").await, 1);
}

async fn lookups_match_the_normalized_name(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("web-search", "1.0.0").pack())
        .await;
    for path in [
        "/api/v1/tools/Web_Search",
        "/api/v1/tools/WEB-SEARCH",
        "/api/v1/tools/web_search/1.0.0",
    ] {
        let (status, body) = json(app.get(path).await).await;
        assert_eq!(status, 200, "{path}: {body:#}");
        assert_eq!(
            body["name"], "web-search",
            "answers carry the canonical name"
        );
    }
}

async fn second_version_by_owner(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.10.0").pack())
        .await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.2.0").pack())
        .await;
    let (_, tool) = json(app.get("/api/v1/tools/create-issue").await).await;
    let versions: Vec<&str> = tool["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(
        versions,
        ["1.10.0", "1.2.0", "1.0.0"],
        "sorted by SemVer, newest first"
    );
    assert_eq!(tool["latest_version"], "1.10.0");
    assert_eq!(app.count("changes").await, 3);
}

async fn other_publishers_cannot_publish_to_a_tool(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    let before = app.stored_objects().await;
    let body = problem(
        app.publish(&bob, BundleBuilder::http("create-issue", "2.0.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("not an owner"),
        "{body:#}"
    );
    assert_eq!(app.count("versions").await, 1);
    assert_eq!(
        app.stored_objects().await,
        before,
        "nothing stored for a refused publish"
    );
}

async fn tier_policy_refuses_code_from_untrusted_publishers(app: TestApp) {
    let token = app.user("mallory", Tier::Untrusted).await;
    let bundle = BundleBuilder::corpus("matimo/calculator", "calculator", "1.0.0")
        .file("calculator.ts", "export default () => 1;\n")
        .pack();
    let body = problem(app.publish(&token, bundle).await, 403, "tier-forbidden").await;
    assert_eq!(body["execution"], "function");
    assert_eq!(body["required_tier"], "trusted");
    assert_eq!(body["publisher_tier"], "untrusted");
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("function") && detail.contains("trusted") && detail.contains("untrusted"),
        "{detail}"
    );
    assert_eq!(app.count("tools").await, 0);
    assert!(app.stored_objects().await.is_empty());

    // A verified publisher may publish a command tool, not a function tool.
    let verified = app.user("vera", Tier::Verified).await;
    let command = BundleBuilder::corpus("matimo/valid-tool", "echo-tool", "1.0.0").pack();
    let body = app.publish_ok(&verified, command).await;
    assert_eq!(body["execution"], "command");
    assert_eq!(body["tier"], "verified");
    let command = BundleBuilder::corpus("matimo/valid-tool", "echo-tool-2", "1.0.0").pack();
    let body = problem(app.publish(&token, command).await, 403, "tier-forbidden").await;
    assert_eq!(body["required_tier"], "verified");

    // A trusted publisher may publish the function tool.
    let trusted = app.user("trudy", Tier::Trusted).await;
    let bundle = BundleBuilder::corpus("matimo/calculator", "calculator", "1.0.0")
        .file("calculator.ts", "export default () => 1;\n")
        .pack();
    let body = app.publish_ok(&trusted, bundle).await;
    assert_eq!(body["execution"], "function");
    assert_eq!(body["tier"], "trusted");
}

async fn every_format_publishes(app: TestApp) {
    let token = app.user("trudy", Tier::Trusted).await;
    for (rel, name, format, kind) in [
        ("mcp/github-get_me", "get-me", "mcp", "schema"),
        (
            "matimo/hubspot-get-contact",
            "hubspot-get-contact",
            "matimo",
            "http",
        ),
    ] {
        let body = app
            .publish_ok(&token, BundleBuilder::corpus(rel, name, "0.1.0").pack())
            .await;
        assert_eq!(body["format"], format, "{rel}");
        assert_eq!(body["execution"], kind, "{rel}");
    }
    if toolreg_test_support::corpus().is_some() {
        let body = app
            .publish_ok(
                &token,
                BundleBuilder::corpus("prompt/summarize-text", "summarize-text", "1.0.0").pack(),
            )
            .await;
        assert_eq!(body["format"], "prompt");
        assert_eq!(body["execution"], "prompt");
    }
}

both_backends!(async TestApp::start =>
    publish_then_metadata_shows_it,
    lookups_match_the_normalized_name,
    second_version_by_owner,
    other_publishers_cannot_publish_to_a_tool,
    tier_policy_refuses_code_from_untrusted_publishers,
    every_format_publishes,
);
