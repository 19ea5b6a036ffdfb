//! The stored tool summaries (`toolreg_server::models::tool_summary`), on
//! both backends: after every kind of write that changes a summary —
//! publish, yank, unyank, owners added and removed, a tier change of an
//! owner who published and of one who did not, download counts flushed —
//! the row in `tool_summaries`, read straight from the database rather than
//! through the read cache, shows the change and is byte for byte the body
//! `GET /api/v1/tools/{name}` sends. A tool without a row (published before
//! the table existed) is answered the same, built from its rows, until the
//! filler stores its row. Every body reads into the shared wire type
//! (`toolreg_api::EncodableTool`) and encodes back to the same bytes.

mod common;

use std::time::{Duration, Instant};

use diesel::prelude::*;
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_server::models::tool_summary;
use toolreg_server::schema::{tool_summaries, tools};

use common::{BundleBuilder, TestApp};
use toolreg_test_support::both_backends;

/// The stored body of `normalized_name`, from the database.
async fn stored(app: &TestApp, normalized_name: &str) -> Option<String> {
    let name = normalized_name.to_string();
    app.state
        .db
        .read(move |conn| {
            Ok(tools::table
                .inner_join(tool_summaries::table)
                .filter(tools::normalized_name.eq(name))
                .select(tool_summaries::body)
                .first::<String>(conn)
                .optional()?)
        })
        .await
        .expect("read tool_summaries")
}

/// The stored summary of `name`, checked to be exactly what the API sends.
async fn summary(app: &TestApp, name: &str) -> Value {
    let body = stored(app, name)
        .await
        .unwrap_or_else(|| panic!("no stored summary for {name}"));
    let res = app.get(&format!("/api/v1/tools/{name}")).await;
    assert_eq!(res.status(), 200);
    let sent = res.text().await.expect("body");
    assert_eq!(sent, body, "the API sends the stored body");
    // The body is the shared wire type, field for field: what the CLI reads
    // it into gives back the same bytes.
    let typed: toolreg_api::EncodableTool =
        serde_json::from_str(&body).expect("the summary reads as toolreg_api::EncodableTool");
    assert_eq!(
        serde_json::to_string(&typed).expect("encode"),
        body,
        "toolreg_api::EncodableTool round-trips the summary"
    );
    serde_json::from_str(&body).expect("stored summary is JSON")
}

/// Builds the summary of `name` again from its rows and checks that the
/// stored one was already those bytes.
async fn built_again_is_stored(app: &TestApp, name: &'static str) {
    let before = stored(app, name).await;
    app.state
        .db
        .write(move |conn| {
            let id: i64 = tools::table
                .filter(tools::normalized_name.eq(name))
                .select(tools::id)
                .first(conn)?;
            tool_summary::refresh(conn, id)
        })
        .await
        .expect("refresh the summary");
    assert_eq!(stored(app, name).await, before, "{name}");
}

fn logins_and_tiers(tool: &Value) -> Vec<(String, String)> {
    tool["owners"]
        .as_array()
        .expect("owners")
        .iter()
        .map(|o| {
            (
                o["login"].as_str().unwrap_or_default().to_string(),
                o["tier"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn owners(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(l, t)| (l.to_string(), t.to_string()))
        .collect()
}

async fn send_ok(req: reqwest::RequestBuilder, what: &str) {
    let res = req.send().await.unwrap_or_else(|e| panic!("{what}: {e}"));
    let status = res.status();
    let body = res.text().await.unwrap_or_default();
    assert_eq!(status.as_u16(), 200, "{what}: {body}");
}

/// Yank (`yanked`) or unyank `calc` `version` as `token`.
async fn set_yanked(app: &TestApp, token: &str, version: &str, yanked: bool) {
    let (method, action) = if yanked {
        (reqwest::Method::DELETE, "yank")
    } else {
        (reqwest::Method::PUT, "unyank")
    };
    let url = app.api(&format!("/api/v1/tools/calc/{version}/{action}"));
    send_ok(app.client.request(method, url).bearer_auth(token), action).await;
}

/// Add (PUT) or remove (DELETE) `login` as an owner of `calc`, as `token`.
async fn change_owner(app: &TestApp, token: &str, method: reqwest::Method, login: &str) {
    let req = app
        .client
        .request(method, app.api("/api/v1/tools/calc/owners"))
        .bearer_auth(token)
        .json(&json!({ "logins": [login] }));
    send_ok(req, "change owners").await;
}

/// Set `login`'s tier as the admin `token`.
async fn set_tier(app: &TestApp, token: &str, login: &str, tier: &str) {
    let req = app
        .client
        .put(app.api(&format!("/api/v1/publishers/{login}/tier")))
        .bearer_auth(token)
        .json(&json!({ "tier": tier }));
    send_ok(req, "set tier").await;
}

async fn every_write_stores_the_summary_it_changes(app: TestApp) {
    let alice = app.user("alice", Tier::Trusted).await;
    let bob = app.user("bob", Tier::Verified).await;
    let admin = app.user_with("root", Tier::Trusted, true).await;

    // Publish: a new tool, then a new version of it.
    app.publish_ok(&alice, BundleBuilder::function("calc", "1.0.0").pack())
        .await;
    let tool = summary(&app, "calc").await;
    assert_eq!(tool["latest_version"], "1.0.0", "{tool:#}");
    assert_eq!(logins_and_tiers(&tool), owners(&[("alice", "trusted")]));
    app.publish_ok(&alice, BundleBuilder::function("calc", "1.1.0").pack())
        .await;
    let tool = summary(&app, "calc").await;
    assert_eq!(tool["latest_version"], "1.1.0", "{tool:#}");
    assert_eq!(tool["versions"].as_array().map(Vec::len), Some(2));

    // Yank and unyank.
    set_yanked(&app, &alice, "1.1.0", true).await;
    let tool = summary(&app, "calc").await;
    assert_eq!(tool["latest_version"], "1.0.0", "{tool:#}");
    assert_eq!(tool["versions"][0]["yanked"], true, "{tool:#}");
    set_yanked(&app, &alice, "1.1.0", false).await;
    let tool = summary(&app, "calc").await;
    assert_eq!(tool["latest_version"], "1.1.0", "{tool:#}");
    assert_eq!(tool["versions"][0]["yanked"], false, "{tool:#}");

    // Owners: bob added (he published nothing of calc).
    app.add_owner(&alice, "calc", "bob", &bob).await;
    let tool = summary(&app, "calc").await;
    assert_eq!(
        logins_and_tiers(&tool),
        owners(&[("alice", "trusted"), ("bob", "verified")])
    );

    // A tier change of an owner who published nothing of the tool: only
    // the tier shown with the owners changes.
    set_tier(&app, &admin, "bob", "trusted").await;
    let tool = summary(&app, "calc").await;
    assert_eq!(
        logins_and_tiers(&tool),
        owners(&[("alice", "trusted"), ("bob", "trusted")])
    );

    // Bob removed again.
    change_owner(&app, &alice, reqwest::Method::DELETE, "bob").await;
    let tool = summary(&app, "calc").await;
    assert_eq!(logins_and_tiers(&tool), owners(&[("alice", "trusted")]));

    // A demotion of the publisher blocks her function tool's versions (the
    // latest falls back to the highest one), a promotion unblocks them.
    for (tier, blocked) in [("verified", true), ("trusted", false)] {
        set_tier(&app, &admin, "alice", tier).await;
        let tool = summary(&app, "calc").await;
        assert_eq!(tool["versions"][0]["blocked"], blocked, "{tool:#}");
        assert_eq!(tool["versions"][1]["blocked"], blocked, "{tool:#}");
        assert_eq!(
            tool["versions"][0]["blocked_reason"].is_string(),
            blocked,
            "{tool:#}"
        );
        assert_eq!(logins_and_tiers(&tool), owners(&[("alice", tier)]));
    }

    // Downloads, once the counts are flushed (about once a second).
    for _ in 0..3 {
        let res = app.get("/api/v1/tools/calc/1.0.0/download").await;
        assert_eq!(res.status(), 200);
    }
    let started = Instant::now();
    loop {
        let body = stored(&app, "calc").await.expect("stored");
        let tool: Value = serde_json::from_str(&body).expect("JSON");
        if tool["downloads"] == 3 {
            assert_eq!(tool["versions"][1]["version"], "1.0.0");
            assert_eq!(tool["versions"][1]["downloads"], 3, "{tool:#}");
            assert_eq!(tool["versions"][0]["downloads"], 0, "{tool:#}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the stored summary did not get the download counts: {tool:#}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    summary(&app, "calc").await;
    // The flush added the counts to the stored body; building the summary
    // again from the rows gives the same bytes.
    built_again_is_stored(&app, "calc").await;

    // A write that fails stores nothing: removing the last owner is refused
    // and the stored summary is unchanged.
    let before = stored(&app, "calc").await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/calc/owners"))
        .bearer_auth(&alice)
        .json(&json!({"logins": ["alice"]}))
        .send()
        .await
        .expect("remove the last owner");
    assert_eq!(res.status(), 400);
    assert_eq!(stored(&app, "calc").await, before);
}

async fn a_tool_without_a_stored_summary_is_built_from_its_rows_and_filled(app: TestApp) {
    let alice = app.user("alice", Tier::Trusted).await;
    app.publish_ok(&alice, BundleBuilder::http("send-mail", "1.0.0").pack())
        .await;
    app.publish_ok(&alice, BundleBuilder::http("send-mail", "1.2.0").pack())
        .await;
    app.publish_ok(&alice, BundleBuilder::http("calc", "0.1.0").pack())
        .await;
    let send_mail = stored(&app, "send-mail").await.expect("stored");
    let calc = stored(&app, "calc").await.expect("stored");
    // As if both were published before the table existed.
    app.state
        .db
        .write(|conn| Ok(diesel::delete(tool_summaries::table).execute(conn)?))
        .await
        .expect("delete the stored summaries");
    assert_eq!(app.count("tool_summaries").await, 0);

    // Answered from the rows, exactly as stored before; in any spelling.
    let res = app.get("/api/v1/tools/Send_Mail").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.expect("body"), send_mail);
    let res = app.get("/api/v1/tools/no-such-tool").await;
    assert_eq!(res.status(), 404);

    // The filler `serve` starts stores them again.
    toolreg_server::app::spawn_summary_filler(app.state.clone());
    let started = Instant::now();
    while app.count("tool_summaries").await < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the filler did not store the summaries"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        stored(&app, "send-mail").await.as_deref(),
        Some(&*send_mail)
    );
    assert_eq!(stored(&app, "calc").await.as_deref(), Some(&*calc));

    // Having found nothing missing, the filler records it, and the next
    // start's check reads that row instead of counting every summary: it
    // no longer looks (every write keeps the summaries since).
    let started = Instant::now();
    while app.count("startup_fills").await < 1 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the filler did not record that nothing is missing"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    app.state
        .db
        .write(|conn| Ok(diesel::delete(tool_summaries::table).execute(conn)?))
        .await
        .expect("delete the stored summaries");
    let missing = app
        .state
        .db
        .write(toolreg_server::models::tool_summary::any_missing)
        .await
        .expect("check");
    assert!(!missing, "the recorded fill is trusted, no count is taken");
}

/// A tool with more versions than a summary lists: the summary shows the
/// newest by SemVer (not by publish order, not by string order) and their
/// number, `latest_version` skips a yanked newest one (even past the
/// versions listed), and `/versions` pages through every version in the
/// same order.
async fn many_versions_are_listed_newest_first_a_page_at_a_time(app: TestApp) {
    let alice = app.user("alice", Tier::Trusted).await;
    // Published oldest-last, so neither the publish order nor the string
    // order ("0.99.0" > "0.100.0") is SemVer's.
    let mut expected: Vec<String> = (0..102).map(|i| format!("0.{i}.0")).collect();
    for v in expected.iter().rev() {
        app.publish_ok(&alice, BundleBuilder::http("many", v).pack())
            .await;
    }
    for v in ["1.0.0-rc.1", "1.0.0-alpha", "1.0.0-rc.1.1"] {
        app.publish_ok(&alice, BundleBuilder::http("many", v).pack())
            .await;
    }
    expected.extend(["1.0.0-alpha", "1.0.0-rc.1", "1.0.0-rc.1.1"].map(String::from));
    expected.reverse();

    let listed = |tool: &Value| -> Vec<String> {
        tool["versions"]
            .as_array()
            .expect("versions")
            .iter()
            .map(|v| v["version"].as_str().expect("version").to_string())
            .collect()
    };
    let tool = summary(&app, "many").await;
    assert_eq!(tool["versions_total"], 105);
    assert_eq!(listed(&tool), expected[..100].to_vec());
    assert_eq!(tool["latest_version"], "1.0.0-rc.1.1");

    let url = app.api("/api/v1/tools/many/1.0.0-rc.1.1/yank");
    send_ok(
        app.client
            .request(reqwest::Method::DELETE, url)
            .bearer_auth(&alice),
        "yank",
    )
    .await;
    let tool = summary(&app, "many").await;
    assert_eq!(
        tool["latest_version"], "1.0.0-rc.1",
        "{}",
        tool["latest_version"]
    );

    let page = |query: &'static str| {
        let app = &app;
        async move {
            let (status, body) = common::json(
                app.get(&format!("/api/v1/tools/many/versions{query}"))
                    .await,
            )
            .await;
            assert_eq!(status, 200, "{query}: {body}");
            body
        }
    };
    let first = page("").await;
    assert_eq!(first["total"], 105);
    assert_eq!(
        (first["page"].clone(), first["per_page"].clone()),
        (json!(1), json!(100))
    );
    assert_eq!(listed(&first), expected[..100].to_vec());
    let second = page("?page=2").await;
    assert_eq!(listed(&second), expected[100..].to_vec());
    assert_eq!(second["versions"][4]["version"], "0.0.0");
    let small = page("?page=3&per_page=7").await;
    assert_eq!(listed(&small), expected[14..21].to_vec());
    assert_eq!(listed(&page("?page=99").await), Vec::<String>::new());
    // The yank shows in the listing too.
    assert_eq!(first["versions"][0]["yanked"], true);

    for (query, names) in [
        ("?per_page=0", "per_page"),
        ("?per_page=101", "per_page"),
        ("?page=0", "page"),
        ("?page=two", "page"),
    ] {
        let body = common::problem(
            app.get(&format!("/api/v1/tools/many/versions{query}"))
                .await,
            400,
            "bad-request",
        )
        .await;
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(detail.starts_with(names), "{query}: {detail}");
    }
    common::problem(
        app.get("/api/v1/tools/none/versions").await,
        404,
        "not-found",
    )
    .await;

    // Downloads of a listed version and of one past the list: the stored
    // counts get both in the total and the listed one's in its line, as a
    // summary built again from the rows shows them.
    for v in ["1.0.0-rc.1", "0.0.0", "0.0.0"] {
        let res = app.get(&format!("/api/v1/tools/many/{v}/download")).await;
        assert_eq!(res.status(), 200, "download {v}");
    }
    let started = Instant::now();
    let tool = loop {
        let tool: Value =
            serde_json::from_str(&stored(&app, "many").await.expect("stored")).expect("JSON");
        if tool["downloads"] == 3 {
            break tool;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the counts were not flushed: {}",
            tool["downloads"]
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(tool["versions"][1]["version"], "1.0.0-rc.1");
    assert_eq!(tool["versions"][1]["downloads"], 1);
    built_again_is_stored(&app, "many").await;

    // Every version but the two oldest withdrawn: the version the tool is
    // listed under is found past the versions its summary lists.
    app.state
        .db
        .write(|conn| {
            use toolreg_server::schema::versions;
            diesel::update(versions::table.filter(versions::version.ne_all(["0.0.0", "0.1.0"])))
                .set(versions::yanked.eq(true))
                .execute(conn)?;
            diesel::update(versions::table.filter(versions::version.eq("0.1.0")))
                .set(versions::yanked.eq(true))
                .execute(conn)?;
            Ok(())
        })
        .await
        .expect("yank all but the oldest");
    let url = app.api("/api/v1/tools/many/0.1.0/unyank");
    send_ok(
        app.client
            .request(reqwest::Method::PUT, url)
            .bearer_auth(&alice),
        "unyank",
    )
    .await;
    assert_eq!(summary(&app, "many").await["latest_version"], "0.1.0");
}

both_backends!(async TestApp::start =>
    every_write_stores_the_summary_it_changes,
    a_tool_without_a_stored_summary_is_built_from_its_rows_and_filled,
    many_versions_are_listed_newest_first_a_page_at_a_time
);
