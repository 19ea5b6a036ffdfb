//! Owners: anyone can list them; owners invite owners and remove them
//! (scope `owners`); an invitee becomes an owner by accepting within 30
//! days; the last owner can't be removed; unknown logins are 404.

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

/// `login` (holding `token`) accepts (PUT) or declines (DELETE) their
/// invitation to own `calc`: the status and body.
async fn answer(app: &TestApp, token: &str, method: reqwest::Method) -> reqwest::Response {
    app.client
        .request(method, app.api("/api/v1/me/invitations/calc"))
        .bearer_auth(token)
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

    // Adding bob invites him: he is not an owner until he accepts.
    let (status, body) = json(change(&app, &alice, reqwest::Method::PUT, &["bob"]).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(logins(&body), ["alice"]);
    assert_eq!(body["invitations"][0]["invitee"], "bob", "{body:#}");
    assert_eq!(body["invitations"][0]["inviter"], "alice");
    assert_eq!(body["invitations"][0]["expired"], false);
    problem(
        app.publish(&bob, BundleBuilder::http("calc", "1.1.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    let (_, public) = json(app.get("/api/v1/tools/calc/owners").await).await;
    assert_eq!(logins(&public), ["alice"]);
    let page = app.get("/tools/calc").await.text().await.unwrap();
    assert!(
        page.contains("<li>alice ") && !page.contains("bob"),
        "{page}"
    );
    assert!(public.get("invitations").is_none(), "{public:#}");
    // Owners see the pending invitation; bob sees it as his.
    let (status, pending) = app
        .send(
            reqwest::Method::GET,
            "/api/v1/tools/calc/owners/invitations",
            &alice,
            None,
        )
        .await;
    assert_eq!(status, 200, "{pending:#}");
    assert_eq!(pending["invitations"][0]["invitee"], "bob");
    let (status, mine) = app
        .send(reqwest::Method::GET, "/api/v1/me/invitations", &bob, None)
        .await;
    assert_eq!(status, 200, "{mine:#}");
    assert_eq!(mine["invitations"][0]["tool"], "calc", "{mine:#}");
    // Only owners see a tool's invitations.
    problem(
        app.client
            .get(app.api("/api/v1/tools/calc/owners/invitations"))
            .bearer_auth(&bob)
            .send()
            .await
            .unwrap(),
        403,
        "forbidden",
    )
    .await;

    let (status, body) = json(answer(&app, &bob, reqwest::Method::PUT).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(logins(&body), ["alice", "bob"]);
    assert_eq!(body["owners"][1]["tier"], "verified");
    let (_, mine) = app
        .send(reqwest::Method::GET, "/api/v1/me/invitations", &bob, None)
        .await;
    assert_eq!(mine["invitations"], json!([]));
    // The web page lists him now.
    let page = app.get("/tools/calc").await.text().await.unwrap();
    assert!(page.contains("<li>bob "), "{page}");

    // Bob is an owner now: he can publish a new version, and remove alice
    // (a transfer: invite, accept, remove yourself).
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
    assert_eq!(
        app.audit_actions().await,
        [
            "publish",
            "owner_invite",
            "owner_add",
            "publish",
            "owner_remove"
        ]
    );
}

async fn a_declined_or_withdrawn_invitation_adds_nobody(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Verified).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    // No invitation yet: 404.
    let body = problem(
        answer(&app, &bob, reqwest::Method::PUT).await,
        404,
        "not-found",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("no invitation"),
        "{body:#}"
    );

    let (status, _) = json(change(&app, &alice, reqwest::Method::PUT, &["bob"]).await).await;
    assert_eq!(status, 200);
    // Answering needs the `owners` scope.
    let (status, created) = app
        .send(
            reqwest::Method::POST,
            "/api/v1/tokens",
            &bob,
            Some(json!({"name": "ci", "scopes": ["publish"]})),
        )
        .await;
    assert_eq!(status, 201, "{created:#}");
    let publish_only = created["token"].as_str().unwrap().to_string();
    problem(
        answer(&app, &publish_only, reqwest::Method::PUT).await,
        403,
        "forbidden",
    )
    .await;
    let (status, body) = json(answer(&app, &bob, reqwest::Method::DELETE).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(logins(&body), ["alice"]);
    problem(
        answer(&app, &bob, reqwest::Method::PUT).await,
        404,
        "not-found",
    )
    .await;

    // Invited again, then withdrawn by the owner.
    let (status, _) = json(change(&app, &alice, reqwest::Method::PUT, &["bob"]).await).await;
    assert_eq!(status, 200);
    let (status, body) = json(change(&app, &alice, reqwest::Method::DELETE, &["bob"]).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["invitations"], json!([]));
    problem(
        answer(&app, &bob, reqwest::Method::PUT).await,
        404,
        "not-found",
    )
    .await;
    assert_eq!(app.count("tool_owners").await, 1);
    assert_eq!(app.count("owner_invitations").await, 0);
    assert_eq!(
        app.audit_actions().await,
        [
            "publish",
            "owner_invite",
            "token_create",
            "owner_invite_decline",
            "owner_invite",
            "owner_invite_withdraw"
        ]
    );
}

async fn an_expired_invitation_says_so(app: TestApp) {
    let alice = app.user("alice", Tier::Untrusted).await;
    let bob = app.user("bob", Tier::Verified).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let (_, body) = json(change(&app, &alice, reqwest::Method::PUT, &["bob"]).await).await;
    let created = chrono::DateTime::parse_from_rfc3339(
        body["invitations"][0]["created_at"].as_str().unwrap(),
    )
    .unwrap();
    let expires = chrono::DateTime::parse_from_rfc3339(
        body["invitations"][0]["expires_at"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(expires - created, chrono::TimeDelta::days(30));
    // Thirty days pass.
    app.state
        .db
        .write(|conn| {
            use diesel::prelude::*;
            use toolreg_server::schema::owner_invitations;
            let past = chrono::Utc::now().naive_utc() - chrono::TimeDelta::seconds(1);
            diesel::update(owner_invitations::table)
                .set(owner_invitations::expires_at.eq(past))
                .execute(conn)?;
            Ok(())
        })
        .await
        .unwrap();
    let (_, mine) = app
        .send(reqwest::Method::GET, "/api/v1/me/invitations", &bob, None)
        .await;
    assert_eq!(mine["invitations"][0]["expired"], true, "{mine:#}");
    let body = problem(
        answer(&app, &bob, reqwest::Method::PUT).await,
        410,
        "invitation-expired",
    )
    .await;
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("expired") && detail.contains("invite you again"),
        "{body:#}"
    );
    assert_eq!(app.count("tool_owners").await, 1);
    // Inviting again renews it, and then it can be accepted.
    let (status, _) = json(change(&app, &alice, reqwest::Method::PUT, &["bob"]).await).await;
    assert_eq!(status, 200);
    let (status, body) = json(answer(&app, &bob, reqwest::Method::PUT).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(logins(&body), ["alice", "bob"]);
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
    assert_eq!(app.count("owner_invitations").await, 0);
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
    a_declined_or_withdrawn_invitation_adds_nobody,
    an_expired_invitation_says_so,
    the_last_owner_cannot_be_removed,
    unknown_login_is_404,
    only_owners_change_owners,
    malformed_bodies_are_400,
);
