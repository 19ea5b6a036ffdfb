//! Yank and unyank: owners only, scope `yank`; written to the change log and
//! the audit log; the version stays but resolve skips it.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn yank(app: &TestApp, token: &str, version: &str) -> reqwest::Response {
    app.client
        .delete(app.api(&format!("/api/v1/tools/calc/{version}/yank")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

async fn unyank(app: &TestApp, token: &str, version: &str) -> reqwest::Response {
    app.client
        .put(app.api(&format!("/api/v1/tools/calc/{version}/unyank")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

async fn owner_yanks_and_unyanks(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let (status, body) = json(yank(&app, &token, "1.0.0").await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(
        body,
        serde_json::json!({"name": "calc", "version": "1.0.0", "yanked": true})
    );
    let (_, tool) = json(app.get("/api/v1/tools/calc").await).await;
    assert_eq!(tool["versions"][0]["yanked"], true);
    let (_, v) = json(app.get("/api/v1/tools/calc/1.0.0").await).await;
    assert_eq!(v["yanked"], true);

    let (status, body) = json(unyank(&app, &token, "1.0.0").await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["yanked"], false);
    let (_, resolved) = json(app.get("/api/v1/resolve/calc").await).await;
    assert_eq!(resolved["version"], "1.0.0");

    // publish + yank + unyank in the change log, in order, and in the audit log.
    let kinds = app
        .state
        .db
        .read(|conn| toolreg_server::models::change::LoggedChange::since(conn, 0, 100))
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.kind)
        .collect::<Vec<_>>();
    assert_eq!(kinds, ["publish", "yank", "unyank"]);
    assert_eq!(app.count("audit_log").await, 3);
}

async fn yanking_twice_changes_nothing(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    assert_eq!(yank(&app, &token, "1.0.0").await.status(), 200);
    assert_eq!(yank(&app, &token, "1.0.0").await.status(), 200);
    assert_eq!(
        app.count("changes").await,
        2,
        "the second yank is not a change"
    );
}

async fn only_owners_yank(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Trusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let body = problem(yank(&app, &bob, "1.0.0").await, 403, "forbidden").await;
    assert!(
        body["detail"].as_str().unwrap().contains("owners"),
        "{body:#}"
    );
    problem(unyank(&app, &bob, "1.0.0").await, 403, "forbidden").await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/calc/1.0.0/yank"))
        .send()
        .await
        .unwrap();
    problem(res, 401, "unauthorized").await;
    let (_, v) = json(app.get("/api/v1/tools/calc/1.0.0").await).await;
    assert_eq!(v["yanked"], false);
}

async fn unknown_version_is_404(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    problem(yank(&app, &token, "2.0.0").await, 404, "not-found").await;
}

both_backends!(async TestApp::start =>
    owner_yanks_and_unyanks,
    yanking_twice_changes_nothing,
    only_owners_yank,
    unknown_version_is_404
);
