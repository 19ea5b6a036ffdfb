//! The answers of trusted publishing compared with the committed snapshots
//! in `server/tests/snapshots/`, on both backends, against a real local
//! OpenID Connect issuer: a trusted publisher as added and listed, the ID
//! token exchange, a version published through it (with its provenance) and
//! the version's signed attestation. Values that differ from run to run —
//! timestamps, digests, the token secret, the issuer's loopback URL, the
//! attestation's signature — are checked for their form and then redacted.

mod common;

use common::{json as read_json, BundleBuilder, Ci};
use insta::assert_json_snapshot;
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

/// `body` with the run-to-run values replaced after checking their form.
fn redacted(mut body: Value, issuer: &str) -> Value {
    fn walk(value: &mut Value, issuer: &str) {
        match value {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    match (key.as_str(), value.as_str()) {
                        ("created_at" | "published_at" | "expires_at", Some(t)) => {
                            assert!(
                                chrono::DateTime::parse_from_rfc3339(t).is_ok(),
                                "{key}: {t}"
                            );
                            *value = Value::from("[timestamp]");
                        }
                        ("sha256", Some(t)) => {
                            assert!(t.len() == 64, "{key}: {t}");
                            *value = Value::from("[sha256]");
                        }
                        ("token", Some(t)) => {
                            assert!(t.starts_with("trg_"), "{key}: {t}");
                            *value = Value::from("[token]");
                        }
                        ("note", Some(t)) => {
                            assert!(t.starts_with("toolreg attestation v1\n"), "{key}: {t}");
                            *value = Value::from("[signed note]");
                        }
                        ("issuer", Some(t)) => {
                            assert_eq!(t, issuer);
                            *value = Value::from("[issuer]");
                        }
                        _ => walk(value, issuer),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, issuer)),
            _ => {}
        }
    }
    walk(&mut body, issuer);
    body
}

async fn request(
    ci: &Ci,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Value {
    let mut req = ci.app.client.request(method.clone(), ci.app.api(path));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    let (status, answer) = read_json(req.send().await.expect("request")).await;
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {answer:#}"
    );
    answer
}

async fn trusted_publishing_bodies(ci: Ci) {
    use reqwest::Method;
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    let path = "/api/v1/tools/ci-tool/trusted-publishers";
    let added = request(
        &ci,
        Method::POST,
        path,
        Some(&alice),
        Some(
            json!({"issuer": ci.issuer.url, "repository": "acme/tools", "workflow": "release.yml"}),
        ),
    )
    .await;
    assert_json_snapshot!("trusted_publisher", redacted(added, &ci.issuer.url));
    let listed = request(&ci, Method::GET, path, Some(&alice), None).await;
    assert_json_snapshot!("trusted_publishers", redacted(listed, &ci.issuer.url));

    let claims = ci.issuer.github_claims("acme/tools", "release.yml");
    let exchanged = request(
        &ci,
        Method::POST,
        "/api/v1/oidc/exchange",
        None,
        Some(json!({"token": ci.issuer.mint(&claims)})),
    )
    .await;
    let token = exchanged["token"].as_str().expect("token").to_string();
    assert_json_snapshot!("exchanged", redacted(exchanged, &ci.issuer.url));
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;
    let version = request(&ci, Method::GET, "/api/v1/tools/ci-tool/1.1.0", None, None).await;
    assert_json_snapshot!("version_with_provenance", redacted(version, &ci.issuer.url));
    let attestation = request(
        &ci,
        Method::GET,
        "/api/v1/tools/ci-tool/1.1.0/attestation",
        None,
        None,
    )
    .await;
    assert_json_snapshot!("attestation", redacted(attestation, &ci.issuer.url));
}

both_backends!(async Ci::start => trusted_publishing_bodies);
