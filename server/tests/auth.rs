//! Authentication: missing, malformed and unknown tokens are 401 with a
//! `WWW-Authenticate` header; `/api/v1/me` says who a token belongs to.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn publishing_needs_a_token(app: TestApp) {
    let res = app
        .client
        .post(app.api("/api/v1/tools"))
        .body(BundleBuilder::http("calc", "1.0.0").pack())
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["www-authenticate"], "Bearer");
    let body = problem(res, 401, "unauthorized").await;
    assert!(
        body["detail"].as_str().unwrap().contains("Bearer"),
        "{body:#}"
    );
    assert_eq!(app.count("tools").await, 0);
    assert!(app.stored_objects().await.is_empty());
}

async fn unknown_and_malformed_tokens_are_401(app: TestApp) {
    app.user("alice", Tier::Untrusted).await;
    let fake = format!("trg_{}", "a".repeat(40));
    problem(
        app.get_authed("/api/v1/me", &fake).await,
        401,
        "unauthorized",
    )
    .await;
    let res = app
        .client
        .get(app.api("/api/v1/me"))
        .header("Authorization", "Basic YWxpY2U6cHc=")
        .send()
        .await
        .unwrap();
    problem(res, 401, "unauthorized").await;
    let res = app
        .client
        .get(app.api("/api/v1/me"))
        .header("Authorization", "Bearer")
        .send()
        .await
        .unwrap();
    problem(res, 401, "unauthorized").await;
    problem(app.get("/api/v1/me").await, 401, "unauthorized").await;
    problem(app.get("/api/v1/tokens").await, 401, "unauthorized").await;
}

async fn me_describes_the_user(app: TestApp) {
    let token = app.user_with("root", Tier::Verified, true).await;
    let (status, me) = json(app.get_authed("/api/v1/me", &token).await).await;
    assert_eq!(status, 200);
    assert_eq!(
        me,
        serde_json::json!({"login": "root", "tier": "verified", "admin": true})
    );
    // `bearer` in any case works.
    let res = app
        .client
        .get(app.api("/api/v1/me"))
        .header("Authorization", format!("bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

both_backends!(async TestApp::start =>
    publishing_needs_a_token,
    unknown_and_malformed_tokens_are_401,
    me_describes_the_user
);
