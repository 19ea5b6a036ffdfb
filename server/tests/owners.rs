//! Owners: anyone can list them; owners add and remove owners (scope
//! `owners`); the last owner can't be removed; unknown logins are 404.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use serde_json::json;
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn change(
    app: &TestApp,
    token: &str,
    method: reqwest::Method,
    logins: &[&str],
) -> reqwest::Response {
    app.client
        .request(method, app.api("/api/v1/tools/calc/owners"))
        .bearer_auth(token)
        .json(&json!({"logins": logins}))
        .send()
        .await
        .unwrap()
}

fn logins(body: &serde_json::Value) -> Vec<String> {
    body["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["login"].as_str().unwrap().to_string())
        .collect()
}

async fn owners_add_and_remove_owners(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Verified).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let (status, body) = json(app.get("/api/v1/tools/calc/owners").await).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"owners": [{"login": "alice", "tier": "untrusted"}]})
    );

    let (status, body) = json(change(&app, &alice, reqwest::Method::PUT, &["bob"]).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(logins(&body), ["alice", "bob"]);
    assert_eq!(body["owners"][1]["tier"], "verified");

    // Bob is an owner now: he can publish a new version, and remove alice.
    app.publish_ok(&bob, BundleBuilder::http("calc", "1.1.0").pack())
        .await;
    let (status, body) = json(change(&app, &bob, reqwest::Method::DELETE, &["alice"]).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(logins(&body), ["bob"]);
    // ...and alice no longer can publish.
    problem(
        app.publish(&alice, BundleBuilder::http("calc", "1.2.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;

    let actions = app
        .state
        .db
        .read(|conn| {
            use diesel::prelude::*;
            use toolreg_server::schema::audit_log;
            Ok(audit_log::table
                .order(audit_log::id.asc())
                .select(audit_log::action)
                .load::<String>(conn)?)
        })
        .await
        .unwrap();
    assert_eq!(actions, ["publish", "owner_add", "publish", "owner_remove"]);
}

async fn the_last_owner_cannot_be_removed(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let body = problem(
        change(&app, &alice, reqwest::Method::DELETE, &["alice"]).await,
        400,
        "bad-request",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("at least one owner"),
        "{body:#}"
    );
    let (_, body) = json(app.get("/api/v1/tools/calc/owners").await).await;
    assert_eq!(logins(&body), ["alice"]);
}

async fn unknown_login_is_404(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let body = problem(
        change(&app, &alice, reqwest::Method::PUT, &["nobody"]).await,
        404,
        "not-found",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("nobody"),
        "{body:#}"
    );
    assert_eq!(app.count("tool_owners").await, 1);
}

async fn only_owners_change_owners(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let mallory = app.user("mallory", Tier::Trusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    problem(
        change(&app, &mallory, reqwest::Method::PUT, &["mallory"]).await,
        403,
        "forbidden",
    )
    .await;
    problem(
        change(&app, &mallory, reqwest::Method::DELETE, &["alice"]).await,
        403,
        "forbidden",
    )
    .await;
    let res = app
        .client
        .put(app.api("/api/v1/tools/calc/owners"))
        .json(&json!({"logins": ["x"]}))
        .send()
        .await
        .unwrap();
    problem(res, 401, "unauthorized").await;
    assert_eq!(app.count("tool_owners").await, 1);
}

async fn malformed_bodies_are_400(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    problem(
        change(&app, &alice, reqwest::Method::PUT, &[]).await,
        400,
        "bad-request",
    )
    .await;
    let res = app
        .client
        .put(app.api("/api/v1/tools/calc/owners"))
        .bearer_auth(&alice)
        .header("content-type", "application/json")
        .body("{\"logins\": 5}")
        .send()
        .await
        .unwrap();
    problem(res, 400, "bad-request").await;
    problem(app.get("/api/v1/tools/nope/owners").await, 404, "not-found").await;
}

both_backends!(async TestApp::start =>
    owners_add_and_remove_owners,
    the_last_owner_cannot_be_removed,
    unknown_login_is_404,
    only_owners_change_owners,
    malformed_bodies_are_400,
);
