//! Changing a publisher's tier (`PUT /api/v1/publishers/{login}/tier` and
//! `toolreg-server admin set-tier`) against the real server and database:
//! who may do it, bad requests, and what it does to versions already out —
//! demotion blocks the versions whose kind the new tier may not publish
//! (download, blob, resolve 403 `blocked` with the reason; metadata and
//! search show it), promotion unblocks them, versions published with an
//! agent token stay `untrusted`, and the HTTP API and the subcommand have the
//! same effects. Everything a tier change writes is one transaction, and a
//! publish racing a demotion never escapes the block.

mod common;

use std::time::{Duration, Instant};

use common::{json, problem, BundleBuilder, FailingInsert, TestApp};
use diesel::prelude::*;
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

/// A Matimo `command` tool.
fn command_tool(name: &str, version: &str) -> Vec<u8> {
    BundleBuilder::corpus("matimo/valid-tool", name, version).pack()
}

/// A Matimo `http` tool.
fn http_tool(name: &str, version: &str) -> Vec<u8> {
    BundleBuilder::http(name, version).pack()
}

async fn put_tier(
    app: &TestApp,
    token: Option<&str>,
    login: &str,
    body: &str,
) -> reqwest::Response {
    let mut req = app
        .client
        .put(app.api(&format!("/api/v1/publishers/{login}/tier")))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.expect("PUT tier")
}

/// Change a tier as `admin`; asserts 200 and returns the answer.
async fn set_tier(app: &TestApp, admin: &str, login: &str, tier: &str) -> Value {
    let (status, body) = json(
        put_tier(
            app,
            Some(admin),
            login,
            &json!({ "tier": tier }).to_string(),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "set {login} to {tier}: {body:#}");
    body
}

fn refs(pairs: &[(&str, &str)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(n, v)| json!({"name": n, "version": v}))
            .collect(),
    )
}

/// An agent token created over HTTP by the holder of `token`.
async fn agent_token(app: &TestApp, token: &str) -> String {
    let res = app
        .client
        .post(app.api("/api/v1/tokens"))
        .bearer_auth(token)
        .json(&json!({"name": "agent", "agent": true}))
        .send()
        .await
        .expect("POST tokens");
    let (status, body) = json(res).await;
    assert_eq!(status, 201, "{body:#}");
    body["token"].as_str().expect("token").to_string()
}

async fn get_json(app: &TestApp, path: &str) -> Value {
    let (status, body) = json(app.get(path).await).await;
    assert_eq!(status, 200, "GET {path}: {body:#}");
    body
}

/// The version is blocked everywhere, with a reason containing every needle.
async fn assert_blocked(app: &TestApp, name: &str, version: &str, needles: &[&str]) {
    let has_all = |text: &str| needles.iter().all(|n| text.contains(n));
    let body = problem(
        app.get(&format!("/api/v1/tools/{name}/{version}/download"))
            .await,
        403,
        "blocked",
    )
    .await;
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        has_all(detail) && detail.contains(version),
        "download detail {detail:?} lacks {needles:?}"
    );
    let v = get_json(app, &format!("/api/v1/tools/{name}/{version}")).await;
    assert_eq!(v["blocked"], true, "{v:#}");
    assert!(
        has_all(v["blocked_reason"].as_str().unwrap_or_default()),
        "{v:#}"
    );
    let sha = v["sha256"].as_str().expect("sha256").to_string();
    problem(
        app.get(&format!("/api/v1/blobs/sha256/{sha}")).await,
        403,
        "blocked",
    )
    .await;
    let body = problem(
        app.get(&format!("/api/v1/resolve/{name}?req=={version}"))
            .await,
        403,
        "blocked",
    )
    .await;
    assert!(
        has_all(body["detail"].as_str().unwrap_or_default()),
        "{body:#}"
    );
    let tool = get_json(app, &format!("/api/v1/tools/{name}")).await;
    let listed = tool["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .find(|x| x["version"] == version)
        .expect("listed");
    assert_eq!(listed["blocked"], true, "{tool:#}");
    assert!(
        has_all(listed["blocked_reason"].as_str().unwrap_or_default()),
        "{tool:#}"
    );
}

/// The version downloads and resolves, and says it is not blocked.
async fn assert_open(app: &TestApp, name: &str, version: &str) {
    let res = app
        .get(&format!("/api/v1/tools/{name}/{version}/download"))
        .await;
    assert_eq!(res.status(), 200, "download {name} {version}");
    let v = get_json(app, &format!("/api/v1/tools/{name}/{version}")).await;
    assert_eq!(
        (v["blocked"].clone(), v["blocked_reason"].clone()),
        (json!(false), Value::Null),
        "{v:#}"
    );
    let r = get_json(app, &format!("/api/v1/resolve/{name}?req=={version}")).await;
    assert_eq!(r["version"], version);
}

async fn tier_of(app: &TestApp, token: &str) -> String {
    let me: Value = app
        .get_authed("/api/v1/me", token)
        .await
        .json()
        .await
        .expect("me");
    me["tier"].as_str().expect("tier").to_string()
}

/// `(kind, tool_name, version)` of every change-log row, oldest first.
async fn change_log(app: &TestApp) -> Vec<(String, String, String)> {
    use toolreg_server::schema::changes;
    app.state
        .db
        .read(|conn| {
            Ok(changes::table
                .order(changes::seq.asc())
                .select((changes::kind, changes::tool_name, changes::version))
                .load(conn)?)
        })
        .await
        .expect("changes")
}

/// `(action, actor, token_id, tool, version, detail)` of every audit entry, oldest first.
type AuditRow = (
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Value,
);
/// An audit row as stored (`detail` as text).
type StoredAudit = (
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    String,
);
async fn audit_rows(app: &TestApp) -> Vec<AuditRow> {
    use toolreg_server::schema::audit_log as a;
    let rows: Vec<StoredAudit> = app
        .state
        .db
        .read(|conn| {
            Ok(a::table
                .order(a::id.asc())
                .select((
                    a::action,
                    a::actor_login,
                    a::token_id,
                    a::tool,
                    a::version,
                    a::detail,
                ))
                .load(conn)?)
        })
        .await
        .expect("audit");
    rows.into_iter()
        .map(|(act, actor, tok, tool, ver, d)| {
            (
                act,
                actor,
                tok,
                tool,
                ver,
                serde_json::from_str(&d).expect("detail JSON"),
            )
        })
        .collect()
}

/// The id of the (first) token listed for the holder of `token`.
async fn token_id(app: &TestApp, token: &str) -> i64 {
    let list: Value = app
        .get_authed("/api/v1/tokens", token)
        .await
        .json()
        .await
        .expect("tokens");
    list["tokens"]
        .as_array()
        .and_then(|t| t.last())
        .and_then(|t| t["id"].as_i64())
        .expect("a token id")
}

/// Run `toolreg-server ARGS` on the app's data with exactly these extra
/// variables. After a successful `admin set-tier` (another process) it waits
/// until the app's read cache has followed the change log, as `serve` does.
async fn server_binary(
    app: &TestApp,
    args: &[&str],
    extra: &[(&str, &str)],
) -> (i32, String, String) {
    let mut cmd = app.registry().command();
    cmd.args(args);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run toolreg-server");
    if out.status.success() && args.starts_with(&["admin", "set-tier"]) {
        app.caught_up().await;
    }
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Polls search until the hit for `name` satisfies `ok`.
async fn eventually_in_search(app: &TestApp, name: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (status, body) = json(app.get(&format!("/api/v1/search?q={name}")).await).await;
        assert_eq!(status, 200, "{body:#}");
        if let Some(hit) = body["hits"]
            .as_array()
            .and_then(|h| h.iter().find(|h| h["name"] == name))
        {
            if ok(hit) {
                return hit.clone();
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "search for {name} never matched: {body:#}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn only_admins_change_tiers(app: TestApp) {
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let bob = app.user("bob", Tier::Trusted).await;
    app.publish_ok(&bob, BundleBuilder::function("fn-tool", "1.0.0").pack())
        .await;
    let audit_before = app.count("audit_log").await;
    let changes_before = app.count("changes").await;
    let demote = r#"{"tier": "untrusted"}"#;

    problem(
        put_tier(&app, None, "bob", demote).await,
        401,
        "unauthorized",
    )
    .await;
    let body = problem(
        put_tier(&app, Some(&bob), "bob", demote).await,
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
    // Not an admin: refused before the body is even read.
    problem(
        put_tier(&app, Some(&bob), "bob", "not json").await,
        403,
        "forbidden",
    )
    .await;
    // An admin's agent token may not grant or take trust.
    let admin_agent = agent_token(&app, &admin).await;
    problem(
        put_tier(&app, Some(&admin_agent), "bob", demote).await,
        403,
        "forbidden",
    )
    .await;
    let body = problem(
        put_tier(&app, Some(&admin), "nobody", demote).await,
        404,
        "not-found",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("`nobody`"),
        "{body:#}"
    );
    for (bad, needle) in [
        (r#"{"tier": "gold"}"#, "tier: unknown tier `gold`"),
        (r#"{"tier": "Trusted"}"#, "tier: unknown tier `Trusted`"),
        (r#"{}"#, "tier: missing"),
        (r#"{"tier": null}"#, "tier: expected a string"),
        (r#"{"tier": ["trusted"]}"#, "tier: expected a string"),
        (
            r#"{"tier": "trusted", "admin": true}"#,
            "admin: unknown field",
        ),
        (r#""trusted""#, "JSON object"),
        ("", "not JSON"),
        ("{\"tier\": ", "not JSON"),
    ] {
        let body = problem(
            put_tier(&app, Some(&admin), "bob", bad).await,
            400,
            "bad-request",
        )
        .await;
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(needle), "body {bad:?}: {detail}");
    }
    // Nothing changed.
    assert_eq!(tier_of(&app, &bob).await, "trusted");
    assert_eq!(
        app.count("audit_log").await,
        audit_before + 1,
        "only the agent token's creation was audited"
    );
    assert_eq!(app.count("changes").await, changes_before);
    assert_open(&app, "fn-tool", "1.0.0").await;
    // The tier itself is shown to everyone, e.g. as an owner's.
    let owners = get_json(&app, "/api/v1/tools/fn-tool/owners").await;
    assert_eq!(
        owners["owners"],
        json!([{"login": "bob", "tier": "trusted"}])
    );
}

async fn demotion_blocks_and_promotion_unblocks(app: TestApp) {
    app.start_search();
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let admin_token_id = token_id(&app, &admin).await;
    let bob = app.user("bob", Tier::Trusted).await;
    let alice = app.user("alice", Tier::Verified).await;
    let bob_agent = agent_token(&app, &bob).await;

    app.publish_ok(&bob, BundleBuilder::function("fn-tool", "1.0.0").pack())
        .await;
    app.publish_ok(&bob, command_tool("cmd-tool", "1.0.0"))
        .await;
    app.publish_ok(&bob, http_tool("web-tool", "1.0.0")).await;
    let body = app
        .publish_ok(&bob_agent, http_tool("agent-tool", "1.0.0"))
        .await;
    assert_eq!(body["tier"], "untrusted");
    // alice co-owns cmd-tool and publishes 1.1.0 of it: her version is hers.
    app.add_owner(&bob, "cmd-tool", "alice", &alice).await;
    app.publish_ok(&alice, command_tool("cmd-tool", "1.1.0"))
        .await;
    eventually_in_search(&app, "fn-tool", |h| h["blocked"] == false).await;
    let changes_before = change_log(&app).await.len();

    // trusted -> verified: the function tool is blocked, nothing else.
    let body = set_tier(&app, &admin, "bob", "verified").await;
    assert_eq!(
        body,
        json!({"login": "bob", "tier": "verified", "blocked": refs(&[("fn-tool", "1.0.0")]), "unblocked": []})
    );
    assert_eq!(tier_of(&app, &bob).await, "verified");
    assert_blocked(
        &app,
        "fn-tool",
        "1.0.0",
        &["`function`", "`trusted`", "`verified`", "`bob`"],
    )
    .await;
    let body = problem(
        app.get("/api/v1/resolve/fn-tool?req=^1").await,
        403,
        "blocked",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("`function`"),
        "{body:#}"
    );
    for (name, version) in [
        ("cmd-tool", "1.0.0"),
        ("cmd-tool", "1.1.0"),
        ("web-tool", "1.0.0"),
        ("agent-tool", "1.0.0"),
    ] {
        assert_open(&app, name, version).await;
    }
    let hit = eventually_in_search(&app, "fn-tool", |h| h["blocked"] == true).await;
    // The web index shows it too: the version page and the search results.
    let page = app
        .get("/tools/fn-tool/1.0.0")
        .await
        .text()
        .await
        .expect("page");
    assert!(
        page.contains("This version is blocked.") && page.contains("is now"),
        "{page}"
    );
    let results = app
        .get("/?q=fn-tool")
        .await
        .text()
        .await
        .expect("results page");
    assert!(results.contains("status-blocked"), "{results}");
    assert!(
        hit["blocked_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("`function`"),
        "{hit:#}"
    );
    let log = change_log(&app).await;
    assert_eq!(
        log[changes_before..],
        [(
            "block".to_string(),
            "fn-tool".to_string(),
            "1.0.0".to_string()
        )]
    );
    let audit = audit_rows(&app).await;
    let tail: Vec<_> = audit[audit.len() - 2..].to_vec();
    assert_eq!(tail[0].0, "tier_change");
    assert_eq!(
        (tail[0].1.as_deref(), tail[0].2),
        (Some("root"), Some(admin_token_id))
    );
    assert_eq!(tail[0].5["from"], "trusted");
    assert_eq!(tail[0].5["to"], "verified");
    assert_eq!(tail[0].5["login"], "bob");
    assert_eq!(tail[1].0, "block");
    assert_eq!(
        (tail[1].3.as_deref(), tail[1].4.as_deref()),
        (Some("fn-tool"), Some("1.0.0"))
    );
    assert_eq!(
        (tail[1].1.as_deref(), tail[1].2),
        (Some("root"), Some(admin_token_id))
    );
    assert_eq!(tail[1].5["execution"], "function");
    assert_eq!(tail[1].5["required_tier"], "trusted");

    // verified -> untrusted: bob's command version too; alice's stays; the
    // function's reason now names the new tier.
    let body = set_tier(&app, &admin, "bob", "untrusted").await;
    assert_eq!(body["blocked"], refs(&[("cmd-tool", "1.0.0")]), "{body:#}");
    assert_eq!(body["unblocked"], json!([]));
    assert_blocked(
        &app,
        "cmd-tool",
        "1.0.0",
        &["`command`", "`verified`", "`untrusted`"],
    )
    .await;
    assert_blocked(
        &app,
        "fn-tool",
        "1.0.0",
        &["`function`", "`trusted`", "`untrusted`"],
    )
    .await;
    assert_open(&app, "cmd-tool", "1.1.0").await;
    let r = get_json(&app, "/api/v1/resolve/cmd-tool?req=^1").await;
    assert_eq!(r["version"], "1.1.0", "resolve skips the blocked version");
    // A requirement only the blocked version matches: 403 with the reason.
    let body = problem(
        app.get("/api/v1/resolve/cmd-tool?req=~1.0").await,
        403,
        "blocked",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("`bob` is now `untrusted`"),
        "{body:#}"
    );
    assert_eq!(
        get_json(&app, "/api/v1/tools/cmd-tool").await["latest_version"],
        "1.1.0"
    );
    for (name, version) in [("web-tool", "1.0.0"), ("agent-tool", "1.0.0")] {
        assert_open(&app, name, version).await;
    }
    // New publishes follow the tier as it is now.
    let body = problem(
        app.publish(&bob, command_tool("cmd-tool", "1.2.0")).await,
        403,
        "tier-forbidden",
    )
    .await;
    assert_eq!(body["publisher_tier"], "untrusted");

    // Setting the same tier again changes nothing but is still audited.
    let before = change_log(&app).await.len();
    let body = set_tier(&app, &admin, "bob", "untrusted").await;
    assert_eq!(
        (body["blocked"].clone(), body["unblocked"].clone()),
        (json!([]), json!([]))
    );
    assert_eq!(change_log(&app).await.len(), before);
    assert_eq!(
        audit_rows(&app)
            .await
            .last()
            .map(|r| r.0.clone())
            .as_deref(),
        Some("tier_change")
    );

    // untrusted -> trusted: both unblocked, in search too.
    let body = set_tier(&app, &admin, "bob", "trusted").await;
    assert_eq!(
        body,
        json!({"login": "bob", "tier": "trusted", "blocked": [],
               "unblocked": refs(&[("fn-tool", "1.0.0"), ("cmd-tool", "1.0.0")])})
    );
    for (name, version) in [
        ("fn-tool", "1.0.0"),
        ("cmd-tool", "1.0.0"),
        ("cmd-tool", "1.1.0"),
    ] {
        assert_open(&app, name, version).await;
    }
    let r = get_json(&app, "/api/v1/resolve/fn-tool?req=^1").await;
    assert_eq!(r["version"], "1.0.0");
    let hit = eventually_in_search(&app, "fn-tool", |h| h["blocked"] == false).await;
    assert_eq!(hit["blocked_reason"], Value::Null, "{hit:#}");
    let page = app
        .get("/tools/fn-tool/1.0.0")
        .await
        .text()
        .await
        .expect("page");
    assert!(!page.contains("This version is blocked."), "{page}");
    let log = change_log(&app).await;
    let kinds: Vec<_> = log[log.len() - 2..]
        .iter()
        .map(|(k, n, _)| format!("{k} {n}"))
        .collect();
    assert_eq!(kinds, ["unblock fn-tool", "unblock cmd-tool"]);
    let audit = audit_rows(&app).await;
    let actions: Vec<_> = audit[audit.len() - 3..]
        .iter()
        .map(|r| r.0.as_str())
        .collect();
    assert_eq!(actions, ["tier_change", "unblock", "unblock"]);
}

/// The same demotion and promotion through HTTP (bob) and through the
/// subcommand (carol), on identical publications, have the same effects.
async fn http_and_subcommand_agree(app: TestApp) {
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let mut tokens = Vec::new();
    for who in ["bob", "carol"] {
        let token = app.user(who, Tier::Trusted).await;
        app.publish_ok(
            &token,
            BundleBuilder::function(&format!("{who}-fn"), "1.0.0").pack(),
        )
        .await;
        app.publish_ok(&token, command_tool(&format!("{who}-cmd"), "1.0.0"))
            .await;
        app.publish_ok(&token, http_tool(&format!("{who}-web"), "1.0.0"))
            .await;
        tokens.push(token);
    }
    let (_, carol) = (&tokens[0], &tokens[1]);

    let start = audit_rows(&app).await.len();
    let via_http = set_tier(&app, &admin, "bob", "untrusted").await;
    let mid = audit_rows(&app).await.len();
    let (code, stdout, stderr) =
        server_binary(&app, &["admin", "set-tier", "carol", "untrusted"], &[]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "carol: trusted -> untrusted\nblocked carol-fn 1.0.0\nblocked carol-cmd 1.0.0\n"
    );
    assert_eq!(
        via_http["blocked"],
        refs(&[("bob-fn", "1.0.0"), ("bob-cmd", "1.0.0")])
    );
    assert_eq!(tier_of(&app, carol).await, "untrusted");

    // The same rows, up to the login, the actor and the route.
    let audit = audit_rows(&app).await;
    let normalize = |rows: &[AuditRow], login: &str| -> Vec<(String, Option<String>, Value)> {
        rows.iter()
            .map(|(action, _, _, tool, _, detail)| {
                let mut d = detail.clone();
                d.as_object_mut().expect("object").remove("via");
                let text = d.to_string().replace(login, "WHO");
                (
                    action.clone(),
                    tool.as_ref().map(|t| t.replace(login, "WHO")),
                    serde_json::from_str(&text).expect("json"),
                )
            })
            .collect()
    };
    let (http_rows, cli_rows) = (&audit[start..mid], &audit[mid..]);
    assert_eq!(normalize(http_rows, "bob"), normalize(cli_rows, "carol"));
    assert_eq!(http_rows[0].5["via"], "api");
    assert_eq!(cli_rows[0].5["via"], "admin-cli");
    assert_eq!(
        (cli_rows[0].1.clone(), cli_rows[0].2),
        (None, None),
        "the operator has no login or token"
    );
    for who in ["bob", "carol"] {
        let fn_reason = get_json(&app, &format!("/api/v1/tools/{who}-fn/1.0.0")).await
            ["blocked_reason"]
            .clone();
        assert!(
            fn_reason
                .as_str()
                .unwrap_or_default()
                .contains(&format!("`{who}` is now `untrusted`")),
            "{fn_reason}"
        );
        assert_open(&app, &format!("{who}-web"), "1.0.0").await;
    }
    let log = change_log(&app).await;
    let kinds: Vec<_> = log[log.len() - 4..]
        .iter()
        .map(|(k, n, v)| format!("{k} {n} {v}"))
        .collect();
    assert_eq!(
        kinds,
        [
            "block bob-fn 1.0.0",
            "block bob-cmd 1.0.0",
            "block carol-fn 1.0.0",
            "block carol-cmd 1.0.0"
        ]
    );

    // Promotion through the subcommand unblocks.
    let (code, stdout, stderr) =
        server_binary(&app, &["admin", "set-tier", "carol", "verified"], &[]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "carol: untrusted -> verified\nunblocked carol-cmd 1.0.0\n"
    );
    assert_open(&app, "carol-cmd", "1.0.0").await;
    assert_blocked(
        &app,
        "carol-fn",
        "1.0.0",
        &["`function`", "`trusted`", "`verified`"],
    )
    .await;

    // Bad input to the subcommand: a clear error, nothing changed.
    let before = audit_rows(&app).await.len();
    let (code, _, stderr) =
        server_binary(&app, &["admin", "set-tier", "nobody", "trusted"], &[]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("`nobody`"), "{stderr}");
    let (code, _, stderr) = server_binary(&app, &["admin", "set-tier", "carol", "gold"], &[]).await;
    assert_eq!(code, 2, "usage error: {stderr}");
    assert!(
        stderr.contains("gold") && stderr.contains("untrusted, verified, trusted"),
        "{stderr}"
    );
    assert_eq!(audit_rows(&app).await.len(), before);
    assert_eq!(tier_of(&app, carol).await, "verified");
}

/// A version published with an agent token counts as `untrusted` whatever
/// its user's tier, so a policy that refuses its kind to `untrusted` blocks
/// it even for a trusted user — here through `admin set-tier --policy`.
async fn agent_versions_stay_untrusted(app: TestApp) {
    let bob = app.user("bob", Tier::Trusted).await;
    let bob_agent = agent_token(&app, &bob).await;
    app.publish_ok(&bob, http_tool("bob-http", "1.0.0")).await;
    app.publish_ok(&bob_agent, http_tool("agent-http", "1.0.0"))
        .await;

    let (code, stdout, stderr) = server_binary(
        &app,
        &["admin", "set-tier", "bob", "trusted"],
        &[("TOOLREG_POLICY", "http=verified")],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "bob: trusted -> trusted\nblocked agent-http 1.0.0\n"
    );
    assert_blocked(
        &app,
        "agent-http",
        "1.0.0",
        &["`http`", "`verified`", "`untrusted`", "agent token"],
    )
    .await;
    assert_open(&app, "bob-http", "1.0.0").await;
    // The flag form works too, and a bad policy is refused before anything changes.
    let (code, _, stderr) = server_binary(
        &app,
        &[
            "admin",
            "set-tier",
            "bob",
            "trusted",
            "--policy",
            "http=gold",
        ],
        &[],
    )
    .await;
    assert_ne!(code, 0);
    assert!(stderr.contains("gold"), "{stderr}");
    assert_blocked(&app, "agent-http", "1.0.0", &["agent token"]).await;

    // Under the default policy the agent's http version is fine again.
    let (code, stdout, stderr) =
        server_binary(&app, &["admin", "set-tier", "bob", "trusted"], &[]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "bob: trusted -> trusted\nunblocked agent-http 1.0.0\n"
    );
    assert_open(&app, "agent-http", "1.0.0").await;
    // Demoting bob can't make the agent's version any worse: it was untrusted already.
    let (code, stdout, _) =
        server_binary(&app, &["admin", "set-tier", "bob", "untrusted"], &[]).await;
    assert_eq!((code, stdout.as_str()), (0, "bob: trusted -> untrusted\n"));
    assert_open(&app, "agent-http", "1.0.0").await;
}

/// The tier, the blocks, their change-log rows and their audit entries
/// commit together or not at all: failing the last write of any of them
/// leaves every one unchanged.
async fn a_tier_change_is_one_transaction(app: TestApp) {
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let bob = app.user("bob", Tier::Trusted).await;
    app.publish_ok(&bob, BundleBuilder::function("fn-tool", "1.0.0").pack())
        .await;
    app.publish_ok(&bob, command_tool("cmd-tool", "1.0.0"))
        .await;

    for (table, column, value) in [
        ("audit_log", "action", "block"),
        ("changes", "kind", "block"),
        ("audit_log", "action", "tier_change"),
    ] {
        let (audit, changes) = (app.count("audit_log").await, app.count("changes").await);
        let failing = FailingInsert::new(table, column, value);
        app.fail_inserts(failing).await;
        let res = put_tier(&app, Some(&admin), "bob", r#"{"tier": "untrusted"}"#).await;
        problem(res, 500, "internal").await;
        app.stop_failing(failing).await;
        assert_eq!(
            tier_of(&app, &bob).await,
            "trusted",
            "failing {table}.{column}={value}"
        );
        assert_open(&app, "fn-tool", "1.0.0").await;
        assert_open(&app, "cmd-tool", "1.0.0").await;
        assert_eq!(
            (app.count("audit_log").await, app.count("changes").await),
            (audit, changes)
        );
    }
    let body = set_tier(&app, &admin, "bob", "untrusted").await;
    assert_eq!(
        body["blocked"],
        refs(&[("fn-tool", "1.0.0"), ("cmd-tool", "1.0.0")])
    );

    // And back: a failing unblock leaves both blocked and bob untrusted.
    let failing = FailingInsert::new("changes", "kind", "unblock");
    app.fail_inserts(failing).await;
    problem(
        put_tier(&app, Some(&admin), "bob", r#"{"tier": "trusted"}"#).await,
        500,
        "internal",
    )
    .await;
    app.stop_failing(failing).await;
    assert_eq!(tier_of(&app, &bob).await, "untrusted");
    assert_blocked(&app, "fn-tool", "1.0.0", &["`function`"]).await;
}

/// Publishes of `function` versions racing demotions: whichever commits
/// first, no function version of a publisher below `trusted` is left unblocked.
async fn a_publish_racing_a_demotion_is_blocked_or_refused(app: TestApp) {
    let admin = app.user_with("root", Tier::Trusted, true).await;
    let bob = app.user("bob", Tier::Trusted).await;
    app.publish_ok(&bob, BundleBuilder::function("race-tool", "0.1.0").pack())
        .await;
    let mut outcomes = Vec::new();
    for round in 0..8u32 {
        set_tier(&app, &admin, "bob", "trusted").await;
        let version = format!("1.{round}.0");
        let bundle = BundleBuilder::function("race-tool", &version).pack();
        // Let the publish start first in half of the rounds.
        let delay = Duration::from_millis(if round % 2 == 0 { 0 } else { 3 });
        let publish = app.publish(&bob, bundle);
        let demote = async {
            actix_web::rt::time::sleep(delay).await;
            put_tier(&app, Some(&admin), "bob", r#"{"tier": "verified"}"#).await
        };
        let (published, demoted) = futures::join!(publish, demote);
        assert_eq!(demoted.status(), 200);
        let status = published.status().as_u16();
        assert!(
            status == 201 || status == 403,
            "round {round}: publish answered {status}"
        );
        outcomes.push(status);
        let tool = get_json(&app, "/api/v1/tools/race-tool").await;
        for v in tool["versions"].as_array().expect("versions") {
            assert_eq!(
                v["blocked"], true,
                "round {round} ({status}): {v:#} escaped the demotion"
            );
        }
    }
    eprintln!("publish outcomes while racing demotions: {outcomes:?}");
}

both_backends!(async TestApp::start =>
    only_admins_change_tiers,
    demotion_blocks_and_promotion_unblocks,
    http_and_subcommand_agree,
    agent_versions_stay_untrusted,
    a_tier_change_is_one_transaction,
    a_publish_racing_a_demotion_is_blocked_or_refused,
);
