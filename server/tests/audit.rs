//! `GET /api/v1/audit` against the real server and database: admins only,
//! paginated, newest first, and listing publishes, yanks, owner and token
//! changes, tier changes and blocks with who, when, what and from which
//! token — each entry written in the same transaction as its change.

mod common;

use std::collections::HashMap;

use common::{json, problem, BundleBuilder, FailingInsert, TestApp};
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn audit(app: &TestApp, token: &str, query: &str) -> Value {
    let (status, body) = json(
        app.get_authed(&format!("/api/v1/audit{query}"), token)
            .await,
    )
    .await;
    assert_eq!(status, 200, "audit{query}: {body:#}");
    body
}

/// Token ids of the holder of `token`, by token name.
async fn token_ids(app: &TestApp, token: &str) -> HashMap<String, i64> {
    let list: Value = app
        .get_authed("/api/v1/tokens", token)
        .await
        .json()
        .await
        .expect("tokens");
    list["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("name").to_string(),
                t["id"].as_i64().expect("id"),
            )
        })
        .collect()
}

async fn admins_only_and_bad_pages(app: TestApp) {
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let bob = app.user("bob", Tier::Trusted).await;
    problem(app.get("/api/v1/audit").await, 401, "unauthorized").await;
    let body = problem(
        app.get_authed("/api/v1/audit", &bob).await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("administrators"),
        "{body:#}"
    );
    for (query, param) in [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=two", "page"),
        ("page=99999999999999999999", "page"),
        ("per_page=0", "per_page"),
        ("per_page=101", "per_page"),
        ("per_page=1.5", "per_page"),
    ] {
        let body = problem(
            app.get_authed(&format!("/api/v1/audit?{query}"), &admin)
                .await,
            400,
            "bad-request",
        )
        .await;
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(
            detail.starts_with(&format!("{param}: ")),
            "{query}: {detail}"
        );
    }
    // A blank value is the default, as on every paginated list.
    let (status, body) = json(
        app.get_authed("/api/v1/audit?page=&per_page=", &admin)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(
        (body["page"].as_i64(), body["per_page"].as_i64()),
        (Some(1), Some(50))
    );
    // Both admin routes are in the OpenAPI document, with their answer shapes.
    let api: Value = app
        .get("/api/openapi.json")
        .await
        .json()
        .await
        .expect("openapi");
    for (path, method) in [
        ("/api/v1/audit", "get"),
        ("/api/v1/publishers/{login}/tier", "put"),
    ] {
        assert!(
            api["paths"][path][method].is_object(),
            "{path} {method} missing from OpenAPI"
        );
    }
    for schema in [
        "AuditPage",
        "EncodableAuditEntry",
        "TierChanged",
        "VersionRef",
    ] {
        assert!(
            api["components"]["schemas"][schema].is_object(),
            "schema {schema} missing from OpenAPI"
        );
    }
    let body = audit(&app, &admin, "").await;
    assert_eq!(
        (
            body["total"].clone(),
            body["page"].clone(),
            body["per_page"].clone()
        ),
        (json!(0), json!(1), json!(50))
    );
    assert_eq!(body["entries"], json!([]));
}

async fn every_action_with_who_what_and_token(app: TestApp) {
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let bob = app.user("bob", Tier::Trusted).await;
    let alice = app.user("alice", Tier::Verified).await;
    let bob_token = token_ids(&app, &bob).await["test"];
    let alice_token = token_ids(&app, &alice).await["test"];
    let admin_token = token_ids(&app, &admin).await["test"];
    use reqwest::Method;

    // token_create, token_revoke
    let (status, created) = app
        .send(
            Method::POST,
            "/api/v1/tokens",
            &bob,
            Some(json!({"name": "ci", "scopes": ["publish"]})),
        )
        .await;
    assert_eq!(status, 201, "{created:#}");
    let ci = created["id"].as_i64().expect("id");
    let (status, _) = app
        .send(Method::DELETE, &format!("/api/v1/tokens/{ci}"), &bob, None)
        .await;
    assert_eq!(status, 204);
    // publish, yank, unyank
    let published = app
        .publish_ok(&bob, BundleBuilder::function("calc", "1.0.0").pack())
        .await;
    for (method, path) in [(Method::DELETE, "yank"), (Method::PUT, "unyank")] {
        let (status, body) = app
            .send(
                method,
                &format!("/api/v1/tools/calc/1.0.0/{path}"),
                &bob,
                None,
            )
            .await;
        assert_eq!(status, 200, "{body:#}");
    }
    // owner_invite, owner_add (alice accepts), owner_remove
    let owners = |method| {
        app.send(
            method,
            "/api/v1/tools/calc/owners",
            &bob,
            Some(json!({"logins": ["alice"]})),
        )
    };
    let (status, body) = owners(Method::PUT).await;
    assert_eq!(status, 200, "{body:#}");
    let (status, body) = app
        .send(Method::PUT, "/api/v1/me/invitations/calc", &alice, None)
        .await;
    assert_eq!(status, 200, "{body:#}");
    let (status, body) = owners(Method::DELETE).await;
    assert_eq!(status, 200, "{body:#}");
    // tier_change + block, tier_change + unblock
    for tier in ["verified", "trusted"] {
        let (status, body) = app
            .send(
                Method::PUT,
                "/api/v1/publishers/bob/tier",
                &admin,
                Some(json!({"tier": tier})),
            )
            .await;
        assert_eq!(status, 200, "{body:#}");
    }
    // user_create and its first token, by the operator
    let out = app.binary(&["admin", "create-user", "carol", "--tier", "verified"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let body = audit(&app, &admin, "").await;
    let entries = body["entries"].as_array().expect("entries").clone();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        actions,
        [
            "token_create",
            "user_create",
            "unblock",
            "tier_change",
            "block",
            "tier_change",
            "owner_remove",
            "owner_add",
            "owner_invite",
            "unyank",
            "yank",
            "publish",
            "token_revoke",
            "token_create",
        ],
        "newest first"
    );
    assert_eq!(body["total"], entries.len());
    let ids: Vec<i64> = entries
        .iter()
        .map(|e| e["id"].as_i64().expect("id"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "ids descend: {ids:?}");
    let times: Vec<&str> = entries
        .iter()
        .map(|e| e["created_at"].as_str().expect("created_at"))
        .collect();
    for t in &times {
        chrono::DateTime::parse_from_rfc3339(t)
            .unwrap_or_else(|e| panic!("{t} is not RFC 3339: {e}"));
    }
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");

    let by = |action: &str| -> Vec<Value> {
        entries
            .iter()
            .filter(|e| e["action"] == action)
            .cloned()
            .collect()
    };
    let who = |e: &Value| {
        (
            e["actor"].clone(),
            e["token_id"].clone(),
            e["tool"].clone(),
            e["version"].clone(),
        )
    };
    let publish = &by("publish")[0];
    assert_eq!(
        who(publish),
        (
            json!("bob"),
            json!(bob_token),
            json!("calc"),
            json!("1.0.0")
        )
    );
    assert_eq!(publish["detail"]["sha256"], published["sha256"]);
    assert_eq!(publish["detail"]["execution"], "function");
    assert_eq!(publish["detail"]["tier"], "trusted");
    for action in ["yank", "unyank"] {
        assert_eq!(
            who(&by(action)[0]),
            (
                json!("bob"),
                json!(bob_token),
                json!("calc"),
                json!("1.0.0")
            )
        );
    }
    for (action, actor, token) in [
        ("owner_invite", "bob", bob_token),
        ("owner_add", "alice", alice_token),
        ("owner_remove", "bob", bob_token),
    ] {
        let e = &by(action)[0];
        assert_eq!(
            who(e),
            (json!(actor), json!(token), json!("calc"), Value::Null)
        );
        assert_eq!(e["detail"]["login"], "alice");
    }
    assert_eq!(by("owner_add")[0]["detail"]["invited_by"], "bob");
    let token_create = by("token_create");
    let bobs = token_create
        .iter()
        .find(|e| e["actor"] == "bob")
        .expect("bob's token_create");
    assert_eq!(
        (
            bobs["token_id"].clone(),
            bobs["detail"]["id"].clone(),
            bobs["detail"]["name"].clone()
        ),
        (json!(bob_token), json!(ci), json!("ci"))
    );
    let revoke = &by("token_revoke")[0];
    assert_eq!(
        (revoke["token_id"].clone(), revoke["detail"]["id"].clone()),
        (json!(bob_token), json!(ci))
    );
    let tier_changes = by("tier_change");
    assert_eq!(tier_changes.len(), 2);
    for (e, (from, to)) in tier_changes
        .iter()
        .zip([("verified", "trusted"), ("trusted", "verified")])
    {
        assert_eq!(
            who(e),
            (json!("root"), json!(admin_token), Value::Null, Value::Null)
        );
        assert_eq!(
            (
                e["detail"]["login"].clone(),
                e["detail"]["from"].clone(),
                e["detail"]["to"].clone()
            ),
            (json!("bob"), json!(from), json!(to))
        );
    }
    for action in ["block", "unblock"] {
        let e = &by(action)[0];
        assert_eq!(
            who(e),
            (
                json!("root"),
                json!(admin_token),
                json!("calc"),
                json!("1.0.0")
            )
        );
        assert_eq!(e["detail"]["execution"], "function");
    }
    assert!(by("block")[0]["detail"]["reason"]
        .as_str()
        .unwrap_or_default()
        .contains("`bob` is now `verified`"));
    let user_create = &by("user_create")[0];
    assert_eq!(
        user_create["actor"],
        Value::Null,
        "the operator has no login"
    );
    assert_eq!(user_create["detail"]["login"], "carol");

    // Pages of 4 put together are the whole list; past the end is empty.
    let mut paged = Vec::new();
    for page in 1..=4 {
        let body = audit(&app, &admin, &format!("?page={page}&per_page=4")).await;
        assert_eq!(
            (
                body["page"].clone(),
                body["per_page"].clone(),
                body["total"].clone()
            ),
            (json!(page), json!(4), json!(entries.len()))
        );
        paged.extend(body["entries"].as_array().expect("entries").iter().cloned());
    }
    assert_eq!(paged, entries);
    let body = audit(&app, &admin, "?page=5&per_page=4").await;
    assert_eq!(body["entries"], json!([]));
}

/// When the audit entry can't be written, the change it records doesn't
/// happen either (and the other way round for publish's change-log row).
async fn entries_share_the_changes_transaction(app: TestApp) {
    use reqwest::Method;
    let bob = app.user("bob", Tier::Trusted).await;

    // publish: failing its audit entry or its change-log row leaves no version.
    for (table, column) in [("audit_log", "action"), ("changes", "kind")] {
        let failing = FailingInsert::new(table, column, "publish");
        app.fail_inserts(failing).await;
        problem(
            app.publish(&bob, BundleBuilder::function("calc", "1.0.0").pack())
                .await,
            500,
            "internal",
        )
        .await;
        app.stop_failing(failing).await;
        assert_eq!(
            (app.count("tools").await, app.count("versions").await),
            (0, 0),
            "failing {table}"
        );
        assert_eq!(
            (app.count("audit_log").await, app.count("changes").await),
            (0, 0),
            "failing {table}"
        );
        problem(app.get("/api/v1/tools/calc").await, 404, "not-found").await;
    }
    app.publish_ok(&bob, BundleBuilder::function("calc", "1.0.0").pack())
        .await;

    // yank: the version stays unyanked.
    let failing = FailingInsert::new("audit_log", "action", "yank");
    app.fail_inserts(failing).await;
    let (status, _) = app
        .send(Method::DELETE, "/api/v1/tools/calc/1.0.0/yank", &bob, None)
        .await;
    app.stop_failing(failing).await;
    assert_eq!(status, 500);
    let v: Value = app
        .get("/api/v1/tools/calc/1.0.0")
        .await
        .json()
        .await
        .expect("version");
    assert_eq!(v["yanked"], false);

    // token_create: no token appears.
    let before = token_ids(&app, &bob).await;
    let failing = FailingInsert::new("audit_log", "action", "token_create");
    app.fail_inserts(failing).await;
    let (status, _) = app
        .send(
            Method::POST,
            "/api/v1/tokens",
            &bob,
            Some(json!({"name": "ci"})),
        )
        .await;
    app.stop_failing(failing).await;
    assert_eq!(status, 500);
    assert_eq!(token_ids(&app, &bob).await, before);

    // owner_invite: no invitation; owner_add: alice is not an owner and
    // her invitation stays.
    let alice = app.user("alice", Tier::Verified).await;
    let invite = || {
        app.send(
            Method::PUT,
            "/api/v1/tools/calc/owners",
            &bob,
            Some(json!({"logins": ["alice"]})),
        )
    };
    let failing = FailingInsert::new("audit_log", "action", "owner_invite");
    app.fail_inserts(failing).await;
    let (status, _) = invite().await;
    app.stop_failing(failing).await;
    assert_eq!(status, 500);
    assert_eq!(app.count("owner_invitations").await, 0);
    let (status, _) = invite().await;
    assert_eq!(status, 200);
    let failing = FailingInsert::new("audit_log", "action", "owner_add");
    app.fail_inserts(failing).await;
    let (status, _) = app
        .send(Method::PUT, "/api/v1/me/invitations/calc", &alice, None)
        .await;
    app.stop_failing(failing).await;
    assert_eq!(status, 500);
    assert_eq!(app.count("owner_invitations").await, 1);
    let owners: Value = app
        .get("/api/v1/tools/calc/owners")
        .await
        .json()
        .await
        .expect("owners");
    assert_eq!(
        owners["owners"],
        json!([{"login": "bob", "tier": "trusted"}])
    );
    // (tier changes and blocks: tiers_demotion.rs `a_tier_change_is_one_transaction`.)
}

both_backends!(async TestApp::start =>
    admins_only_and_bad_pages,
    every_action_with_who_what_and_token,
    entries_share_the_changes_transaction
);
