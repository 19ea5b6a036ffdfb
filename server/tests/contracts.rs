//! The response bodies clients are written against — the publish answer,
//! a tool, a version, a search hit and problem+json answers — compared with
//! the committed snapshots in `server/tests/snapshots/`, on both backends,
//! so an added, removed or renamed field is seen in review. Values that
//! differ from run to run (timestamps, digests, ids) are checked for their
//! form and then redacted. Under `CI` a snapshot that differs or is missing
//! fails the test; locally `cargo insta review` accepts a change.

mod common;

use std::time::{Duration, Instant};

use common::{json, problem, BundleBuilder, TestApp};
use insta::assert_json_snapshot;
use serde_json::Value;
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

/// `body` with the values that differ from run to run replaced by a
/// placeholder after checking their form: timestamps (RFC 3339) and
/// SHA-256 digests (64 lowercase hex digits), wherever they occur.
fn redacted(mut body: Value) -> Value {
    fn walk(value: &mut Value, path: &str) {
        match value {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    let here = format!("{path}.{key}");
                    match (key.as_str(), value.as_str()) {
                        ("created_at" | "updated_at" | "published_at", Some(text)) => {
                            assert!(
                                chrono::DateTime::parse_from_rfc3339(text).is_ok(),
                                "{here}: `{text}` is not an RFC 3339 timestamp"
                            );
                            *value = Value::from("[timestamp]");
                        }
                        ("sha256", Some(text)) => {
                            assert!(
                                text.len() == 64
                                    && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                                "{here}: `{text}` is not a hex SHA-256"
                            );
                            *value = Value::from("[sha256]");
                        }
                        _ => walk(value, &here),
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item, &format!("{path}[{i}]"));
                }
            }
            _ => {}
        }
    }
    walk(&mut body, "");
    body
}

/// A Matimo http tool with the optional metadata a tool page shows.
fn contract_tool(version: &str) -> Vec<u8> {
    BundleBuilder::http("contract-tool", version)
        .toml_line("license = \"MIT\"")
        .toml_line("keywords = [\"github\", \"issues\"]")
        .toml_line("homepage = \"https://example.com/contract-tool\"")
        .pack()
}

async fn get_json(app: &TestApp, path: &str) -> Value {
    let (status, body) = json(app.get(path).await).await;
    assert_eq!(status, 200, "GET {path}: {body:#}");
    body
}

/// The search answer for `q` once the index has the tool.
async fn search_once_indexed(app: &TestApp, q: &str) -> Value {
    let started = Instant::now();
    loop {
        let body = get_json(app, &format!("/api/v1/search?q={q}")).await;
        if body["total"] == 1 {
            return body;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "search?q={q} never found the tool: {body:#}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn success_bodies(app: TestApp) {
    let token = app.user("alice", Tier::Verified).await;
    let published = app.publish_ok(&token, contract_tool("1.0.0")).await;
    let tool = get_json(&app, "/api/v1/tools/contract-tool").await;
    let version = get_json(&app, "/api/v1/tools/contract-tool/1.0.0").await;
    let search = search_once_indexed(&app, "contract").await;
    assert_json_snapshot!("publish_answer", redacted(published));
    assert_json_snapshot!("tool", redacted(tool));
    assert_json_snapshot!("version", redacted(version));
    assert_json_snapshot!("search_answer", redacted(search));
}

async fn problem_bodies(app: TestApp) {
    let token = app.user("bob", Tier::Untrusted).await;
    let not_found = problem(
        app.get("/api/v1/tools/no-such-tool").await,
        404,
        "not-found",
    )
    .await;
    let invalid = problem(
        app.publish(
            &token,
            BundleBuilder::http("broken-tool", "1.0.0")
                .file("definition.yaml", "name: broken-tool\nversion: '1.0.0'\n")
                .pack(),
        )
        .await,
        422,
        "invalid-definition",
    )
    .await;
    let forbidden = problem(
        app.publish(&token, BundleBuilder::function("calc", "1.0.0").pack())
            .await,
        403,
        "tier-forbidden",
    )
    .await;
    let unauthorized = problem(
        app.client
            .post(app.api("/api/v1/tools"))
            .body(contract_tool("1.0.0"))
            .send()
            .await
            .expect("POST /api/v1/tools"),
        401,
        "unauthorized",
    )
    .await;
    assert_json_snapshot!("problem_not_found", redacted(not_found));
    assert_json_snapshot!("problem_invalid_definition", redacted(invalid));
    assert_json_snapshot!("problem_tier_forbidden", redacted(forbidden));
    assert_json_snapshot!("problem_unauthorized", redacted(unauthorized));
}

both_backends!(async TestApp::with_search => success_bodies, problem_bodies);
