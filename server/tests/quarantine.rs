//! Reports and quarantine over HTTP against the real server and database.
//! Any signed-in user reports a version (reason required, 1 to 2000
//! characters, rate-limited); admins list open reports, newest first, and
//! quarantine a version or lift its quarantine. While it is quarantined its
//! download, resolve and definition answer 403 `quarantined` with the
//! reason, its version JSON withholds the definition, the tool summary marks
//! it, search and the web index drop it; lifting restores everything. Both
//! are recorded in the audit and change logs; bad input stores nothing.

mod common;

use std::time::Duration;

use common::{json, problem, BundleBuilder, TestApp};
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_server::rate_limit::{RateLimit, RateLimits};
use toolreg_test_support::{both_backends, Backend};

async fn report(app: &TestApp, token: Option<&str>, path: &str, body: &str) -> reqwest::Response {
    let mut req = app
        .client
        .post(app.api(&format!("/api/v1/tools/{path}/reports")))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.expect("POST reports")
}

async fn quarantine(
    app: &TestApp,
    token: Option<&str>,
    path: &str,
    body: &str,
) -> reqwest::Response {
    let mut req = app
        .client
        .put(app.api(&format!("/api/v1/tools/{path}/quarantine")))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.expect("PUT quarantine")
}

async fn lift(app: &TestApp, token: Option<&str>, path: &str) -> reqwest::Response {
    let mut req = app
        .client
        .delete(app.api(&format!("/api/v1/tools/{path}/quarantine")));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.expect("DELETE quarantine")
}

fn reason(text: &str) -> String {
    json!({ "reason": text }).to_string()
}

/// An agent token made by the holder of `token`.
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

/// The kinds of the change log, in order.
async fn change_kinds(app: &TestApp) -> Vec<String> {
    app.state
        .db
        .read(|conn| toolreg_server::models::change::LoggedChange::since(conn, 0, 1000))
        .await
        .expect("changes")
        .into_iter()
        .map(|c| c.kind)
        .collect()
}

/// The audit entries with `action`, newest first.
async fn audit_entries(app: &TestApp, admin: &str, action: &str) -> Vec<Value> {
    let (status, body) = json(app.get_authed("/api/v1/audit?per_page=100", admin).await).await;
    assert_eq!(status, 200, "{body:#}");
    body["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == action)
        .cloned()
        .collect()
}

async fn reports_need_a_signed_in_user_and_a_bounded_reason(app: TestApp) {
    let alice = app.user("alice", Tier::Verified).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;

    problem(
        report(&app, None, "calc/1.0.0", &reason("steals keys")).await,
        401,
        "unauthorized",
    )
    .await;
    let too_long = "x".repeat(2001);
    for (body, needle) in [
        ("{}".to_string(), "reason: is required"),
        (reason("   "), "reason: must not be empty"),
        (reason(&too_long), "at most 2000"),
        ("not json".to_string(), "not JSON"),
        (json!({"reason": 1}).to_string(), "reason: must be a string"),
    ] {
        let body = problem(
            report(&app, Some(&bob), "calc/1.0.0", &body).await,
            400,
            "bad-request",
        )
        .await;
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(needle), "{detail:?} lacks {needle:?}");
    }
    problem(
        report(&app, Some(&bob), "calc/2.0.0", &reason("steals keys")).await,
        404,
        "not-found",
    )
    .await;
    problem(
        report(&app, Some(&bob), "nope/1.0.0", &reason("steals keys")).await,
        404,
        "not-found",
    )
    .await;
    assert_eq!(
        app.count("reports").await,
        0,
        "a refused report stores nothing"
    );

    let at_limit = "é".repeat(2000);
    let (status, body) =
        json(report(&app, Some(&bob), "calc/1.0.0", &reason(&at_limit)).await).await;
    assert_eq!(status, 201, "{body:#}");
    assert_eq!(body["reason"], at_limit.as_str());
    let (status, body) = json(
        report(
            &app,
            Some(&bob),
            "calc/1.0.0",
            &reason("  asks for ~/.ssh/id_rsa "),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body:#}");
    assert_eq!(body["name"], "calc");
    assert_eq!(body["version"], "1.0.0");
    assert_eq!(body["reporter"], "bob");
    assert_eq!(body["reason"], "asks for ~/.ssh/id_rsa");
    assert_eq!(body["status"], "open");
    assert!(body["id"].as_i64().is_some() && body["created_at"].is_string());
    // An agent token is a signed-in user too.
    let agent = agent_token(&app, &alice).await;
    let (status, body) = json(report(&app, Some(&agent), "calc/1.0.0", &reason("odd")).await).await;
    assert_eq!(status, 201, "{body:#}");
    assert_eq!(app.count("reports").await, 3);
}

async fn admins_list_open_reports_newest_first(app: TestApp) {
    let admin = app.admin("root", Tier::Trusted).await;
    let alice = app.user("alice", Tier::Verified).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    for text in ["first", "second", "third"] {
        let res = report(&app, Some(&bob), "calc/1.0.0", &reason(text)).await;
        assert_eq!(res.status(), 201);
    }

    problem(app.get("/api/v1/reports").await, 401, "unauthorized").await;
    let body = problem(
        app.get_authed("/api/v1/reports", &bob).await,
        403,
        "forbidden",
    )
    .await;
    assert!(body["detail"]
        .as_str()
        .unwrap_or_default()
        .contains("administrators"));
    let agent = agent_token(&app, &admin).await;
    let body = problem(
        app.get_authed("/api/v1/reports", &agent).await,
        403,
        "forbidden",
    )
    .await;
    assert!(body["detail"]
        .as_str()
        .unwrap_or_default()
        .contains("agent"));
    for query in ["page=0", "per_page=101", "per_page=x"] {
        problem(
            app.get_authed(&format!("/api/v1/reports?{query}"), &admin)
                .await,
            400,
            "bad-request",
        )
        .await;
    }

    let (status, body) = json(app.get_authed("/api/v1/reports", &admin).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["total"], 3);
    let reasons: Vec<&str> = body["reports"]
        .as_array()
        .expect("reports")
        .iter()
        .map(|r| r["reason"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(reasons, ["third", "second", "first"]);
    let (_, page) = json(
        app.get_authed("/api/v1/reports?per_page=2&page=2", &admin)
            .await,
    )
    .await;
    assert_eq!(page["total"], 3);
    assert_eq!(page["page"], 2);
    assert_eq!(page["reports"].as_array().map(Vec::len), Some(1));
    assert_eq!(page["reports"][0]["reason"], "first");
}

async fn reports_past_the_limit_are_429(app: TestApp) {
    let alice = app.user("alice", Tier::Verified).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    for _ in 0..2 {
        let res = report(&app, Some(&bob), "calc/1.0.0", &reason("spam?")).await;
        assert_eq!(res.status(), 201);
    }
    let res = report(&app, Some(&bob), "calc/1.0.0", &reason("spam?")).await;
    let retry_after: u64 = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a numeric Retry-After");
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
    let body = problem(res, 429, "rate-limited").await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("at most 2 reports per hour"),
        "{body:#}"
    );
    assert_eq!(
        app.count("reports").await,
        2,
        "a limited report stores nothing"
    );
    // Another user has an allowance of their own... from another address it
    // would be; here the per-IP count is shared, so it is limited too.
    let carol = app.user("carol", Tier::Untrusted).await;
    problem(
        report(&app, Some(&carol), "calc/1.0.0", &reason("spam?")).await,
        429,
        "rate-limited",
    )
    .await;
}

async fn quarantine_withholds_everything_until_lifted(app: TestApp) {
    let admin = app.admin("root", Tier::Trusted).await;
    let alice = app.user("alice", Tier::Verified).await;
    let bob = app.user("bob", Tier::Untrusted).await;
    for v in ["1.0.0", "1.1.0"] {
        app.publish_ok(&alice, BundleBuilder::http("calc", v).pack())
            .await;
    }
    app.publish_ok(&alice, BundleBuilder::http("lonely", "1.0.0").pack())
        .await;
    let res = report(&app, Some(&bob), "calc/1.1.0", &reason("reads ~/.ssh")).await;
    assert_eq!(res.status(), 201);
    let why = "exfiltrates SSH keys in a sidenote parameter";

    // Who may: admins with their own token only; bad input stores nothing.
    problem(
        quarantine(&app, None, "calc/1.1.0", &reason(why)).await,
        401,
        "unauthorized",
    )
    .await;
    problem(lift(&app, None, "calc/1.1.0").await, 401, "unauthorized").await;
    for token in [&alice, &bob] {
        problem(
            quarantine(&app, Some(token), "calc/1.1.0", &reason(why)).await,
            403,
            "forbidden",
        )
        .await;
        problem(
            lift(&app, Some(token), "calc/1.1.0").await,
            403,
            "forbidden",
        )
        .await;
    }
    let agent = agent_token(&app, &admin).await;
    let body = problem(
        quarantine(&app, Some(&agent), "calc/1.1.0", &reason(why)).await,
        403,
        "forbidden",
    )
    .await;
    assert!(body["detail"]
        .as_str()
        .unwrap_or_default()
        .contains("agent"));
    problem(
        lift(&app, Some(&agent), "calc/1.1.0").await,
        403,
        "forbidden",
    )
    .await;
    for (body, needle) in [
        ("{}".to_string(), "reason: is required"),
        (reason(""), "reason: must not be empty"),
        (reason(&"y".repeat(2001)), "at most 2000"),
    ] {
        let body = problem(
            quarantine(&app, Some(&admin), "calc/1.1.0", &body).await,
            400,
            "bad-request",
        )
        .await;
        assert!(
            body["detail"].as_str().unwrap_or_default().contains(needle),
            "{body:#}"
        );
    }
    problem(
        quarantine(&app, Some(&admin), "calc/9.0.0", &reason(why)).await,
        404,
        "not-found",
    )
    .await;
    problem(
        lift(&app, Some(&admin), "calc/9.0.0").await,
        404,
        "not-found",
    )
    .await;
    problem(
        quarantine(&app, Some(&admin), "nope/1.0.0", &reason(why)).await,
        404,
        "not-found",
    )
    .await;
    assert_eq!(change_kinds(&app).await, ["publish", "publish", "publish"]);

    // Fill the read cache with the open answers first: the quarantine must
    // reach cached answers too.
    for path in [
        "/api/v1/tools/calc",
        "/api/v1/tools/calc/1.1.0",
        "/api/v1/tools/calc/1.1.0/download",
    ] {
        assert_eq!(app.get(path).await.status(), 200, "{path}");
    }
    let (_, open) = json(app.get("/api/v1/tools/calc/1.1.0").await).await;
    let blob = format!(
        "/api/v1/blobs/sha256/{}",
        open["sha256"].as_str().unwrap_or_default()
    );
    assert_eq!(app.get(&blob).await.status(), 200);
    let search_total = |body: &Value| body["total"].as_u64();
    wait_search(&app, "q=lonely", |b| search_total(b) == Some(1)).await;
    let index = app.get("/?q=lonely").await.text().await.expect("index");
    assert!(
        index.contains("/tools/lonely"),
        "the web index lists the open tool"
    );

    let (status, body) =
        json(quarantine(&app, Some(&admin), "calc/1.1.0", &reason(why)).await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["name"], "calc");
    assert_eq!(body["version"], "1.1.0");
    assert_eq!(body["quarantined"], true);
    assert_eq!(body["quarantine_reason"], why);
    assert!(body["quarantined_at"].is_string(), "{body:#}");
    let (status, _) =
        json(quarantine(&app, Some(&admin), "lonely/1.0.0", &reason(why)).await).await;
    assert_eq!(status, 200);

    for path in [
        "/api/v1/tools/calc/1.1.0/download",
        blob.as_str(),
        "/api/v1/tools/calc/1.1.0/definition",
        "/api/v1/tools/calc/1.1.0/definition?format=mcp",
        "/api/v1/tools/calc/1.1.0/definition?format=openai",
        "/api/v1/resolve/calc?req==1.1.0",
        "/api/v1/resolve/lonely",
    ] {
        let body = problem(app.get(path).await, 403, "quarantined").await;
        assert_eq!(body["title"], "Version quarantined");
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(why) && detail.contains("quarantined"),
            "{path}: {detail}"
        );
    }
    let (_, resolved) = json(app.get("/api/v1/resolve/calc?req=^1").await).await;
    assert_eq!(
        resolved["version"], "1.0.0",
        "resolve skips the quarantined version"
    );
    let (_, v) = json(app.get("/api/v1/tools/calc/1.1.0").await).await;
    assert_eq!(v["quarantined"], true);
    assert_eq!(v["quarantine_reason"], why);
    assert_eq!(
        v["definition"],
        Value::Null,
        "the definition is withheld: {v:#}"
    );
    assert_eq!(v["manifest"], Value::Null);
    assert_eq!(v["readme"], Value::Null);
    let (_, open) = json(app.get("/api/v1/tools/calc/1.0.0").await).await;
    assert_eq!(open["quarantined"], false);
    assert!(open["definition"].as_str().is_some_and(|d| !d.is_empty()));
    let (_, tool) = json(app.get("/api/v1/tools/calc").await).await;
    assert_eq!(tool["latest_version"], "1.0.0", "{tool:#}");
    assert_eq!(tool["versions"][0]["version"], "1.1.0");
    assert_eq!(tool["versions"][0]["quarantined"], true);
    assert_eq!(tool["versions"][0]["quarantine_reason"], why);
    assert_eq!(tool["versions"][1]["quarantined"], false);
    let (_, lonely) = json(app.get("/api/v1/tools/lonely").await).await;
    assert_eq!(
        lonely["description"],
        Value::Null,
        "no listing text of a quarantined version: {lonely:#}"
    );

    // Search and the web index drop it.
    wait_search(&app, "q=lonely", |b| search_total(b) == Some(0)).await;
    for path in ["/tools/calc/1.1.0", "/tools/lonely", "/tools/lonely/1.0.0"] {
        let res = app.get(path).await;
        assert_eq!(res.status(), 403, "{path}");
        let html = res.text().await.expect("page");
        assert!(
            html.contains("quarantined") && html.contains("SSH keys"),
            "{path}: no notice"
        );
        assert!(
            !html.contains("definition?format="),
            "{path} links an export"
        );
        assert!(
            !html.contains("Create a new issue"),
            "{path} shows the definition"
        );
    }
    let page = app.get("/tools/calc").await;
    assert_eq!(page.status(), 200, "the tool's open version is still shown");
    let index = app.get("/?q=lonely").await.text().await.expect("index");
    assert!(
        !index.contains("/tools/lonely"),
        "the web index lists a quarantined tool"
    );

    // Quarantine closed the open report; it is audited and in the change log.
    let (_, reports) = json(app.get_authed("/api/v1/reports", &admin).await).await;
    assert_eq!(reports["total"], 0, "{reports:#}");
    let entries = audit_entries(&app, &admin, "quarantine").await;
    assert_eq!(entries.len(), 2, "{entries:#?}");
    let calc = entries
        .iter()
        .find(|e| e["tool"] == "calc")
        .expect("calc's entry");
    assert_eq!(calc["actor"], "root");
    assert_eq!(calc["version"], "1.1.0");
    assert_eq!(calc["detail"]["reason"], why);
    assert_eq!(calc["detail"]["reports_closed"], 1);
    assert_eq!(change_kinds(&app).await[3..], ["quarantine", "quarantine"]);
    // The same quarantine again changes nothing.
    let (status, _) = json(quarantine(&app, Some(&admin), "calc/1.1.0", &reason(why)).await).await;
    assert_eq!(status, 200);
    assert_eq!(change_kinds(&app).await.len(), 5);

    // Lifted: everything is served again.
    let (status, body) = json(lift(&app, Some(&admin), "calc/1.1.0").await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["quarantined"], false);
    assert_eq!(body["quarantine_reason"], Value::Null);
    assert_eq!(body["quarantined_at"], Value::Null);
    let (status, _) = json(lift(&app, Some(&admin), "lonely/1.0.0").await).await;
    assert_eq!(status, 200);
    for path in [
        "/api/v1/tools/calc/1.1.0/download",
        blob.as_str(),
        "/api/v1/tools/calc/1.1.0/definition?format=mcp",
        "/api/v1/resolve/lonely",
        "/tools/calc/1.1.0",
        "/tools/lonely",
    ] {
        assert_eq!(app.get(path).await.status(), 200, "{path} after the lift");
    }
    let (_, resolved) = json(app.get("/api/v1/resolve/calc?req=^1").await).await;
    assert_eq!(resolved["version"], "1.1.0");
    let (_, v) = json(app.get("/api/v1/tools/calc/1.1.0").await).await;
    assert_eq!(v["quarantined"], false);
    assert!(
        v["definition"].as_str().is_some_and(|d| !d.is_empty()),
        "{v:#}"
    );
    let (_, tool) = json(app.get("/api/v1/tools/calc").await).await;
    assert_eq!(tool["latest_version"], "1.1.0");
    assert_eq!(tool["versions"][0]["quarantined"], false);
    wait_search(&app, "q=lonely", |b| search_total(b) == Some(1)).await;
    let lifted = audit_entries(&app, &admin, "unquarantine").await;
    assert_eq!(lifted.len(), 2);
    assert_eq!(lifted[1]["detail"]["previous_reason"], why);
    assert_eq!(
        change_kinds(&app).await[5..],
        ["unquarantine", "unquarantine"]
    );
    // Lifting again changes nothing.
    assert_eq!(lift(&app, Some(&admin), "calc/1.1.0").await.status(), 200);
    assert_eq!(change_kinds(&app).await.len(), 7);
}

/// Poll `search?query` until `ok` holds (the index follows the change log).
async fn wait_search(app: &TestApp, query: &str, ok: impl Fn(&Value) -> bool) {
    let started = std::time::Instant::now();
    loop {
        let (status, body) = json(app.get(&format!("/api/v1/search?{query}")).await).await;
        if status == 200 && ok(&body) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "search?{query}: {status} {body:#}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn with_search(backend: Backend) -> Option<TestApp> {
    TestApp::with_search(backend).await
}

async fn with_report_limit(backend: Backend) -> Option<TestApp> {
    let limits = RateLimits {
        reports: RateLimit::parse("2/hour").expect("limit"),
        ..RateLimits::default()
    };
    TestApp::builder(backend)
        .with_rate_limits(limits)
        .start()
        .await
}

both_backends!(async TestApp::start =>
    reports_need_a_signed_in_user_and_a_bounded_reason,
    admins_list_open_reports_newest_first,
);

both_backends!(async with_search => quarantine_withholds_everything_until_lifted);
both_backends!(async with_report_limit => reports_past_the_limit_are_429);
