//! What a token may do beyond its scopes' names: child tokens never outlive
//! their parent (expiry clamped, revocation cascades), administration needs
//! the `admin` scope (never in the default set, never on an agent token),
//! listing tokens needs `tokens`, and an agent token revokes only agent tokens.

mod common;

use common::{json, problem, TestApp};
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn create(app: &TestApp, token: &str, body: Value) -> reqwest::Response {
    app.client
        .post(app.api("/api/v1/tokens"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Create a token with `token`; returns (id, secret, answer).
async fn create_ok(app: &TestApp, token: &str, body: Value) -> (i64, String, Value) {
    let (status, body) = json(create(app, token, body).await).await;
    assert_eq!(status, 201, "{body:#}");
    (
        body["id"].as_i64().unwrap(),
        body["token"].as_str().unwrap().to_string(),
        body,
    )
}

async fn revoke(app: &TestApp, token: &str, id: i64) -> reqwest::Response {
    app.client
        .delete(app.api(&format!("/api/v1/tokens/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

async fn set_tier(app: &TestApp, token: &str, login: &str, tier: &str) -> reqwest::Response {
    app.client
        .put(app.api(&format!("/api/v1/publishers/{login}/tier")))
        .bearer_auth(token)
        .json(&json!({ "tier": tier }))
        .send()
        .await
        .unwrap()
}

fn time(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time")).expect("RFC 3339")
}

async fn a_child_never_outlives_its_parent(app: TestApp) {
    let own = app.user("alice", Tier::Verified).await;
    let soon = (chrono::Utc::now() + chrono::TimeDelta::seconds(3)).to_rfc3339();
    let (_, agent, parent) = create_ok(
        &app,
        &own,
        json!({"name": "agent", "agent": true, "expires_at": soon}),
    )
    .await;
    // No expiry asked for, or a later one: both get the parent's.
    let (_, child, body) = create_ok(&app, &agent, json!({"name": "child"})).await;
    assert!(
        body["expires_at"].is_string(),
        "a child of an expiring token must expire too: {body:#}"
    );
    assert!(time(&body["expires_at"]) <= time(&parent["expires_at"]));
    let later = (chrono::Utc::now() + chrono::TimeDelta::days(30)).to_rfc3339();
    let (_, _, body) = create_ok(&app, &agent, json!({"name": "later", "expires_at": later})).await;
    assert!(time(&body["expires_at"]) <= time(&parent["expires_at"]));
    // A grandchild inherits the clamp through its parent.
    let (_, grandchild, _) = create_ok(&app, &child, json!({"name": "grandchild"})).await;
    assert_eq!(app.get_authed("/api/v1/me", &child).await.status(), 200);
    actix_web::rt::time::sleep(std::time::Duration::from_millis(3500)).await;
    for t in [&agent, &child, &grandchild] {
        problem(app.get_authed("/api/v1/me", t).await, 401, "unauthorized").await;
    }
    // The owner's own token is untouched.
    assert_eq!(app.get_authed("/api/v1/me", &own).await.status(), 200);
}

async fn revoking_a_parent_revokes_its_children(app: TestApp) {
    let own = app.user("alice", Tier::Verified).await;
    let (parent_id, parent, _) = create_ok(&app, &own, json!({"name": "parent"})).await;
    let (_, child, _) = create_ok(&app, &parent, json!({"name": "child"})).await;
    let (_, grandchild, _) = create_ok(&app, &child, json!({"name": "grandchild"})).await;
    let (_, sibling, _) = create_ok(&app, &own, json!({"name": "sibling"})).await;
    assert_eq!(
        app.get_authed("/api/v1/me", &grandchild).await.status(),
        200
    );
    assert_eq!(revoke(&app, &own, parent_id).await.status(), 204);
    for t in [&parent, &child, &grandchild] {
        problem(app.get_authed("/api/v1/me", t).await, 401, "unauthorized").await;
    }
    assert_eq!(app.get_authed("/api/v1/me", &sibling).await.status(), 200);
    let (_, list) = json(app.get_authed("/api/v1/tokens", &own).await).await;
    let names: Vec<&str> = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sibling", "test"], "{list:#}");
}

async fn administration_needs_the_admin_scope(app: TestApp) {
    let root = app.admin("root", Tier::Trusted).await;
    app.user("bob", Tier::Untrusted).await;
    // The harness's admin token holds `admin`, so tiers and audit work.
    assert_eq!(set_tier(&app, &root, "bob", "verified").await.status(), 200);
    assert_eq!(app.get_authed("/api/v1/audit", &root).await.status(), 200);

    // A token made without naming scopes gets the default set: no `admin`.
    let (_, plain, body) = create_ok(&app, &root, json!({"name": "plain"})).await;
    assert_eq!(
        body["scopes"],
        json!(["publish-new", "publish-update", "yank", "owners", "tokens"])
    );
    let (_, yank_only, _) =
        create_ok(&app, &root, json!({"name": "yank", "scopes": ["yank"]})).await;
    for t in [&plain, &yank_only] {
        let body = problem(set_tier(&app, t, "bob", "trusted").await, 403, "forbidden").await;
        assert!(
            body["detail"].as_str().unwrap().contains("`admin`"),
            "{body:#}"
        );
        problem(app.get_authed("/api/v1/audit", t).await, 403, "forbidden").await;
    }
    // Asked for by name, from a token that has it: granted.
    let (_, named, body) =
        create_ok(&app, &root, json!({"name": "ops", "scopes": ["admin"]})).await;
    assert_eq!(body["scopes"], json!(["admin"]));
    assert_eq!(set_tier(&app, &named, "bob", "trusted").await.status(), 200);
    // Not from a token without it.
    problem(
        create(&app, &plain, json!({"name": "up", "scopes": ["admin"]})).await,
        403,
        "forbidden",
    )
    .await;
    // Never on an agent token, and an agent token of an admin reads nothing.
    let body = problem(
        create(
            &app,
            &root,
            json!({"name": "a", "agent": true, "scopes": ["admin"]}),
        )
        .await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("agent"),
        "{body:#}"
    );
    let (_, agent, body) = create_ok(&app, &root, json!({"name": "a", "agent": true})).await;
    assert!(!body["scopes"].as_array().unwrap().contains(&json!("admin")));
    problem(
        app.get_authed("/api/v1/audit", &agent).await,
        403,
        "forbidden",
    )
    .await;
    problem(
        set_tier(&app, &agent, "bob", "untrusted").await,
        403,
        "forbidden",
    )
    .await;
    // A non-admin user cannot name it either.
    let bob = app.user("carol", Tier::Trusted).await;
    problem(
        create(&app, &bob, json!({"name": "x", "scopes": ["admin"]})).await,
        403,
        "forbidden",
    )
    .await;
}

async fn listing_needs_tokens_and_agents_revoke_only_agents(app: TestApp) {
    let own = app.user("alice", Tier::Verified).await;
    let (_, yank_only, _) =
        create_ok(&app, &own, json!({"name": "yank", "scopes": ["yank"]})).await;
    let body = problem(
        app.get_authed("/api/v1/tokens", &yank_only).await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("`tokens`"),
        "{body:#}"
    );

    let (human_id, human, _) = create_ok(&app, &own, json!({"name": "human"})).await;
    let (_, agent, _) = create_ok(&app, &own, json!({"name": "agent", "agent": true})).await;
    let (other_agent_id, other_agent, _) =
        create_ok(&app, &own, json!({"name": "agent-2", "agent": true})).await;
    let body = problem(revoke(&app, &agent, human_id).await, 403, "forbidden").await;
    assert!(
        body["detail"].as_str().unwrap().contains("agent"),
        "{body:#}"
    );
    assert_eq!(app.get_authed("/api/v1/me", &human).await.status(), 200);
    assert_eq!(revoke(&app, &agent, other_agent_id).await.status(), 204);
    problem(
        app.get_authed("/api/v1/me", &other_agent).await,
        401,
        "unauthorized",
    )
    .await;
}

both_backends!(async TestApp::start =>
    a_child_never_outlives_its_parent,
    revoking_a_parent_revokes_its_children,
    administration_needs_the_admin_scope,
    listing_needs_tokens_and_agents_revoke_only_agents,
);
