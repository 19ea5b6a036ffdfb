//! Tokens: random `trg_` secrets shown once and stored hashed, scopes,
//! expiry, revocation and agent tokens (which always publish as untrusted).

mod common;

use common::{json, problem, BundleBuilder, TestApp};
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

async fn created_token_is_shown_once_and_stored_hashed(app: TestApp) {
    let admin_token = app.user("alice", Tier::Trusted).await;
    let (status, body) = json(create(&app, &admin_token, json!({"name": "ci"})).await).await;
    assert_eq!(status, 201, "{body:#}");
    let secret = body["token"].as_str().unwrap().to_string();
    assert!(secret.starts_with("trg_") && secret.len() == 44, "{secret}");
    assert!(secret[4..].bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(body["name"], "ci");
    assert_eq!(body["agent"], false);
    assert_eq!(body["expires_at"], Value::Null);
    assert_eq!(
        body["scopes"],
        json!(["publish-new", "publish-update", "yank", "owners", "tokens"])
    );

    // It works, the listing never shows a secret, and the database holds only the hash.
    let (status, me) = json(app.get_authed("/api/v1/me", &secret).await).await;
    assert_eq!(status, 200);
    assert_eq!(
        me,
        json!({"login": "alice", "tier": "trusted", "admin": false})
    );
    let (_, list) = json(app.get_authed("/api/v1/tokens", &secret).await).await;
    assert_eq!(list["tokens"].as_array().unwrap().len(), 2);
    assert!(!list.to_string().contains(&secret));
    assert!(list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("token").is_none()));
    let stored = app
        .state
        .db
        .read(|conn| {
            use diesel::prelude::*;
            use toolreg_server::schema::tokens;
            Ok(tokens::table
                .select(tokens::token_hash)
                .load::<String>(conn)?)
        })
        .await
        .unwrap();
    assert!(stored.contains(&toolreg_core::digest::sha256_hex(secret.as_bytes())));
    assert!(!stored.iter().any(|h| h.contains("trg_")));
}

async fn scopes_limit_what_a_token_does(app: TestApp) {
    let full = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&full, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let (_, body) = json(
        create(
            &app,
            &full,
            json!({"name": "yank-only", "scopes": ["yank"]}),
        )
        .await,
    )
    .await;
    let yank_only = body["token"].as_str().unwrap().to_string();
    assert_eq!(body["scopes"], json!(["yank"]));

    let body = problem(
        app.publish(&yank_only, BundleBuilder::http("calc", "1.1.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("publish"),
        "{body:#}"
    );
    let res = app
        .client
        .put(app.api("/api/v1/tools/calc/owners"))
        .bearer_auth(&yank_only)
        .json(&json!({"logins": ["alice"]}))
        .send()
        .await
        .unwrap();
    let body = problem(res, 403, "forbidden").await;
    assert!(
        body["detail"].as_str().unwrap().contains("owners"),
        "{body:#}"
    );
    problem(
        create(&app, &yank_only, json!({"name": "x"})).await,
        403,
        "forbidden",
    )
    .await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/calc/1.0.0/yank"))
        .bearer_auth(&yank_only)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // publish-update may add versions to existing tools but not create tools.
    let (_, body) = json(
        create(
            &app,
            &full,
            json!({"name": "update", "scopes": ["publish-update"]}),
        )
        .await,
    )
    .await;
    let update = body["token"].as_str().unwrap().to_string();
    app.publish_ok(&update, BundleBuilder::http("calc", "1.1.0").pack())
        .await;
    let body = problem(
        app.publish(&update, BundleBuilder::http("brand-new", "1.0.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("publish-new"),
        "{body:#}"
    );
    // `publish` is shorthand for both.
    let (_, body) =
        json(create(&app, &full, json!({"name": "both", "scopes": ["publish"]})).await).await;
    assert_eq!(body["scopes"], json!(["publish-new", "publish-update"]));
}

async fn unknown_scopes_and_bad_bodies_are_400(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let body = problem(
        create(&app, &token, json!({"name": "x", "scopes": ["root"]})).await,
        400,
        "bad-request",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("root"),
        "{body:#}"
    );
    problem(
        create(&app, &token, json!({"name": ""})).await,
        400,
        "bad-request",
    )
    .await;
    let body = problem(
        create(&app, &token, json!({"name": "x", "expires_at": "tomorrow"})).await,
        400,
        "bad-request",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("expires_at"),
        "{body:#}"
    );
    problem(
        create(
            &app,
            &token,
            json!({"name": "x", "expires_at": "2001-01-01T00:00:00Z"}),
        )
        .await,
        400,
        "bad-request",
    )
    .await;
    problem(
        create(&app, &token, json!({"scopes": []})).await,
        400,
        "bad-request",
    )
    .await;
}

async fn expired_tokens_are_401(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let soon = (chrono::Utc::now() + chrono::TimeDelta::seconds(2)).to_rfc3339();
    let (status, body) =
        json(create(&app, &token, json!({"name": "short", "expires_at": soon})).await).await;
    assert_eq!(status, 201, "{body:#}");
    assert!(body["expires_at"].is_string());
    let short = body["token"].as_str().unwrap().to_string();
    assert_eq!(app.get_authed("/api/v1/me", &short).await.status(), 200);
    actix_web::rt::time::sleep(std::time::Duration::from_millis(2500)).await;
    let body = problem(
        app.get_authed("/api/v1/me", &short).await,
        401,
        "unauthorized",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("expired"),
        "{body:#}"
    );
}

async fn revoked_tokens_are_401(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let (_, body) = json(create(&app, &token, json!({"name": "temp"})).await).await;
    let (id, temp) = (
        body["id"].as_i64().unwrap(),
        body["token"].as_str().unwrap().to_string(),
    );
    let res = app
        .client
        .delete(app.api(&format!("/api/v1/tokens/{id}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    problem(
        app.get_authed("/api/v1/me", &temp).await,
        401,
        "unauthorized",
    )
    .await;
    let (_, list) = json(app.get_authed("/api/v1/tokens", &token).await).await;
    assert!(list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["id"] != id));
    // Revoking again, or someone else's token, is 404.
    let res = app
        .client
        .delete(app.api(&format!("/api/v1/tokens/{id}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    problem(res, 404, "not-found").await;
    let bob = app.user("bob", Tier::Untrusted).await;
    let (_, body) = json(create(&app, &token, json!({"name": "mine"})).await).await;
    let mine = body["id"].as_i64().unwrap();
    let res = app
        .client
        .delete(app.api(&format!("/api/v1/tokens/{mine}")))
        .bearer_auth(&bob)
        .send()
        .await
        .unwrap();
    problem(res, 404, "not-found").await;
    assert_eq!(
        app.audit_actions().await,
        ["token_create", "token_revoke", "token_create"]
    );
}

async fn agent_tokens_publish_as_untrusted(app: TestApp) {
    let trusted = app.user("trudy", Tier::Trusted).await;
    let (status, body) =
        json(create(&app, &trusted, json!({"name": "agent", "agent": true})).await).await;
    assert_eq!(status, 201, "{body:#}");
    assert_eq!(body["agent"], true);
    let agent = body["token"].as_str().unwrap().to_string();
    let calculator = || {
        BundleBuilder::corpus("matimo/calculator", "calculator", "1.0.0")
            .file("calculator.ts", "export default () => 1;\n")
            .pack()
    };
    let body = problem(
        app.publish(&agent, calculator()).await,
        403,
        "tier-forbidden",
    )
    .await;
    assert_eq!(body["publisher_tier"], "untrusted");
    assert_eq!(body["required_tier"], "trusted");
    // An http tool is fine, and is recorded as published by an untrusted publisher.
    let body = app
        .publish_ok(&agent, BundleBuilder::http("agent-made", "1.0.0").pack())
        .await;
    assert_eq!(body["tier"], "untrusted");
    let (_, v) = json(app.get("/api/v1/tools/agent-made/1.0.0").await).await;
    assert_eq!(v["publisher"]["tier"], "untrusted");
    // The user's own token still publishes as trusted.
    let body = app.publish_ok(&trusted, calculator()).await;
    assert_eq!(body["tier"], "trusted");
    // An agent token cannot mint a non-agent token.
    problem(
        create(&app, &agent, json!({"name": "escape", "agent": false})).await,
        403,
        "forbidden",
    )
    .await;
    let (_, body) = json(create(&app, &agent, json!({"name": "child"})).await).await;
    assert_eq!(
        body["agent"], true,
        "tokens made by agent tokens are agent tokens"
    );
}

both_backends!(async TestApp::start =>
    created_token_is_shown_once_and_stored_hashed,
    scopes_limit_what_a_token_does,
    unknown_scopes_and_bad_bodies_are_400,
    expired_tokens_are_401,
    revoked_tokens_are_401,
    agent_tokens_publish_as_untrusted,
);
