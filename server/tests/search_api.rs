//! `GET /api/v1/search` over HTTP against the real server and database:
//! query features, bad parameters, freshness after publish/yank/block, and
//! rebuilding the index (the `reindex` subcommand, a deleted or corrupt index
//! directory at start).

mod common;

use std::time::{Duration, Instant};

use common::{json, problem, Backend, BundleBuilder, TestApp};
use serde_json::Value;
use toolreg_core::Tier;
use toolreg_search::{SearchIndex, SearchParams};
use toolreg_server::search::StoreSource;
use toolreg_test_support::both_backends;

/// A Matimo `http` tool with its own description, keywords and license.
fn tool(name: &str, version: &str, description: &str, keywords: &[&str], license: &str) -> Vec<u8> {
    let yaml = format!(
        "name: {name}\ndescription: {description}\nversion: '{version}'\nparameters:\n  input:\n    type: string\n    required: true\n    description: The input\nexecution:\n  type: http\n  method: GET\n  url: 'https://example.com/{name}'\n"
    );
    let keywords: Vec<String> = keywords.iter().map(|k| format!("\"{k}\"")).collect();
    BundleBuilder::http(name, version)
        .file("definition.yaml", yaml)
        .toml_line(&format!("license = \"{license}\""))
        .toml_line(&format!("keywords = [{}]", keywords.join(", ")))
        .pack()
}

async fn search(app: &TestApp, query: &str) -> Value {
    let res = app.get(&format!("/api/v1/search?{query}")).await;
    let (status, body) = json(res).await;
    assert_eq!(status, 200, "search?{query}: {body:#}");
    body
}

fn names(body: &Value) -> Vec<String> {
    body["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Polls `search?query` until `ok` holds; panics after `within`. Returns how long it took.
async fn eventually(
    app: &TestApp,
    query: &str,
    within: Duration,
    ok: impl Fn(&Value) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        let body = search(app, query).await;
        if ok(&body) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "search?{query} still {body:#} after {within:?}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn publish_sample(app: &TestApp) -> String {
    let token = app.user("alice", Tier::Verified).await;
    let tools = [
        (
            "weather-forecast",
            "Five-day weather forecast for any city.",
            &["weather", "forecast"][..],
            "Apache-2.0",
        ),
        (
            "slack-send-message",
            "Post a message to a Slack channel.",
            &["chat", "slack"][..],
            "MIT",
        ),
        (
            "notify-team",
            "Notify your team on Slack or by email when a build fails.",
            &["chat"][..],
            "MIT",
        ),
        (
            "calculator",
            "Evaluate arithmetic <expressions> & formulas.",
            &["math"][..],
            "MIT",
        ),
        (
            "calendar-events",
            "List the events of a calendar.",
            &["calendar"][..],
            "BSD-3-Clause",
        ),
    ];
    for (name, description, keywords, license) in tools {
        app.publish_ok(&token, tool(name, "1.0.0", description, keywords, license))
            .await;
    }
    eventually(app, "", Duration::from_secs(5), |b| b["total"] == 5).await;
    token
}

async fn query_features(app: TestApp) {
    publish_sample(&app).await;

    let body = search(&app, "q=slack").await;
    assert_eq!(names(&body), ["slack-send-message", "notify-team"]);
    assert_eq!(
        body["hits"][0]["highlights"]["name"],
        "<mark>slack</mark>-send-message"
    );
    assert_eq!(body["total"], 2);

    assert_eq!(
        names(&search(&app, "q=forcast").await),
        ["weather-forecast"]
    );

    let body = search(&app, "q=calc").await;
    assert_eq!(names(&body), ["calculator"]);
    let hit = &body["hits"][0];
    assert_eq!(hit["highlights"]["name"], "<mark>calc</mark>ulator");
    assert_eq!(hit["version"], "1.0.0");
    assert_eq!(hit["execution"], "http");
    assert_eq!(hit["format"], "matimo");
    assert_eq!(hit["tier"], "verified");
    assert_eq!(hit["license"], "MIT");
    assert_eq!(hit["keywords"], serde_json::json!(["math"]));
    assert_eq!(hit["blocked"], false);
    assert!(
        hit["updated_at"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{hit}"
    );

    let body = search(&app, "q=arithmetic").await;
    assert_eq!(
        body["hits"][0]["highlights"]["description"],
        "Evaluate <mark>arithmetic</mark> &lt;expressions&gt; &amp; formulas."
    );

    // Filters combine; facets count every match, not just the page.
    let body = search(&app, "per_page=1").await;
    assert_eq!(
        (
            body["total"].as_u64(),
            body["hits"].as_array().map(Vec::len)
        ),
        (Some(5), Some(1))
    );
    assert_eq!(body["facets"]["license"]["MIT"], 3);
    assert_eq!(body["facets"]["keyword"]["chat"], 2);
    assert_eq!(body["facets"]["execution"]["http"], 5);
    assert_eq!(body["facets"]["tier"]["verified"], 5);
    let body = search(
        &app,
        "keyword=chat&license=mit&execution=http&tier=verified&format=matimo",
    )
    .await;
    assert_eq!(names(&body), ["notify-team", "slack-send-message"]);
    assert_eq!(
        search(&app, "keyword=chat&license=Apache-2.0").await["total"],
        0
    );
    assert_eq!(search(&app, "q=slack&tier=trusted").await["total"], 0);

    // Sorting and paging.
    let all: Vec<String> = [
        "calculator",
        "calendar-events",
        "notify-team",
        "slack-send-message",
        "weather-forecast",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(names(&search(&app, "sort=name").await), all);
    let mut paged = vec![];
    for page in 1..=3 {
        let body = search(&app, &format!("sort=name&per_page=2&page={page}")).await;
        assert_eq!(
            (body["page"].as_u64(), body["per_page"].as_u64()),
            (Some(page), Some(2))
        );
        paged.extend(names(&body));
    }
    assert_eq!(paged, all);
    assert_eq!(
        names(&search(&app, "sort=recent&per_page=1").await),
        ["calendar-events"]
    );
    assert_eq!(search(&app, "sort=downloads").await["total"], 5);

    // The query text has no length limit: a need of over a thousand
    // characters is read for its telling words.
    let need = format!(
        "{}Could you please tell me the weather forecast for Lisbon for the next 5 days?",
        "We are planning a trip with the whole family and want to pack well. ".repeat(16)
    );
    assert!(need.len() > 1_000);
    let body = search(&app, &format!("q={}", need.replace(' ', "%20"))).await;
    assert_eq!(names(&body)[0], "weather-forecast", "{body:#}");
    let words: Vec<&str> = body["words"]
        .as_array()
        .map(|w| w.iter().filter_map(|w| w.as_str()).collect())
        .unwrap_or_default();
    assert!(words.contains(&"forecast") && !words.contains(&"the") && !words.contains(&"5"));
    let body = search(&app, &format!("q={}", "weather%20".repeat(2_000))).await;
    assert_eq!(body["words"], serde_json::json!(["weather"]));

    // Query syntax is just text.
    for q in [
        "%22unclosed",
        "a:b:c",
        "((",
        "*",
        "AND%20OR",
        "%3Cscript%3E",
    ] {
        search(&app, &format!("q={q}")).await;
    }
}

async fn bad_parameters(app: TestApp) {
    for (query, param) in [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=abc", "page"),
        ("page=1000000000000", "page"),
        ("page=99999999999999999999999999", "page"),
        ("per_page=0", "per_page"),
        ("per_page=1000", "per_page"),
        ("sort=popular", "sort"),
        ("execution=binary", "execution"),
        ("tier=gold", "tier"),
        ("format=openapi", "format"),
    ] {
        let res = app.get(&format!("/api/v1/search?{query}")).await;
        let body = problem(res, 400, "bad-request").await;
        let detail = body["detail"].as_str().unwrap_or("");
        assert!(
            detail.starts_with(&format!("{param}:")),
            "{query}: {detail}"
        );
    }
    // The limits themselves are fine.
    search(
        &app,
        &format!("q={}&per_page=100&page=100", "x".repeat(512)),
    )
    .await;
}

async fn fresh_after_publish_yank_and_block(app: TestApp) {
    let token = app.user("bob", Tier::Verified).await;
    // Let the tailer's first (empty) rebuild finish.
    eventually(&app, "", Duration::from_secs(5), |b| b["total"] == 0).await;

    app.publish_ok(
        &token,
        tool(
            "zebra-finder",
            "1.0.0",
            "Finds zebras.",
            &["animals"],
            "MIT",
        ),
    )
    .await;
    let took = eventually(&app, "q=zebra", Duration::from_secs(1), |b| {
        names(b) == ["zebra-finder"]
    })
    .await;
    eprintln!("publish visible in search after {took:?}");

    app.publish_ok(
        &token,
        tool(
            "zebra-finder",
            "2.0.0",
            "Finds zebras and okapis.",
            &["animals"],
            "MIT",
        ),
    )
    .await;
    eventually(&app, "q=okapi", Duration::from_secs(1), |b| {
        b["hits"][0]["version"] == "2.0.0"
    })
    .await;

    // Yanking the newest version lists the previous one; yanking every version removes the tool.
    let yank = |v: &str| {
        app.client
            .delete(app.api(&format!("/api/v1/tools/zebra-finder/{v}/yank")))
            .bearer_auth(&token)
            .send()
    };
    assert_eq!(yank("2.0.0").await.expect("yank").status(), 200);
    eventually(&app, "q=zebra", Duration::from_secs(1), |b| {
        b["hits"][0]["version"] == "1.0.0"
    })
    .await;
    assert_eq!(yank("1.0.0").await.expect("yank").status(), 200);
    let took = eventually(&app, "q=zebra", Duration::from_secs(1), |b| b["total"] == 0).await;
    eprintln!("yank visible in search after {took:?}");
    let unyank = app
        .client
        .put(app.api("/api/v1/tools/zebra-finder/1.0.0/unyank"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("unyank");
    assert_eq!(unyank.status(), 200);
    eventually(&app, "q=zebra", Duration::from_secs(1), |b| {
        b["hits"][0]["version"] == "1.0.0"
    })
    .await;

    // A block (as a tier demotion writes it: the flag plus a change-log row).
    use diesel::prelude::*;
    use toolreg_server::models::change::{ChangeLogKind, LoggedChange};
    use toolreg_server::models::{ToolRow, VersionRow};
    use toolreg_server::schema::versions;
    app.state
        .db
        .write(|conn| {
            let tool = ToolRow::require(conn, "zebra-finder")?;
            let v = VersionRow::require(conn, tool.id, &tool.name, "1.0.0")?;
            diesel::update(versions::table.find(v.id))
                .set((
                    versions::blocked.eq(true),
                    versions::blocked_reason.eq(Some("publisher demoted")),
                ))
                .execute(conn)?;
            LoggedChange::append(conn, tool.id, &tool.name, "1.0.0", ChangeLogKind::Block)
        })
        .await
        .expect("block");
    eventually(&app, "q=zebra", Duration::from_secs(1), |b| {
        b["hits"][0]["blocked"] == true && b["hits"][0]["blocked_reason"] == "publisher demoted"
    })
    .await;

    // The bulk reads used by `reindex` (every tool) and by the download-count
    // refresh (the tools named) agree with the per-tool read the tailer
    // uses: yanked-out tools absent, blocked ones present as blocked, names
    // of no tool skipped.
    app.publish_ok(
        &token,
        tool("gone-tool", "1.0.0", "Yanked at once.", &[], "MIT"),
    )
    .await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/gone-tool/1.0.0/yank"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("yank");
    assert_eq!(res.status(), 200);
    let source = StoreSource::new(app.state.db.clone());
    let (bulk, each, mut named) = actix_web::web::block(move || {
        use toolreg_search::SearchSource;
        let bulk = source.all_docs().expect("all_docs");
        let mut each = vec![];
        let mut names = source.all_tool_names().expect("names");
        for name in &names {
            each.extend(source.search_doc(name).expect("search_doc"));
        }
        names.push("no-such-tool".into());
        let named = source.search_docs(&names).expect("search_docs");
        (bulk, each, named)
    })
    .await
    .expect("read");
    assert_eq!(bulk, each);
    named.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(named, each);
    assert_eq!(
        bulk.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["zebra-finder"]
    );
    assert!(bulk[0].blocked);
}

/// Every query's answer, to compare two indexes.
const PROBES: [&str; 8] = [
    "",
    "q=slack",
    "q=cal",
    "q=forcast",
    "keyword=chat",
    "sort=name&per_page=2&page=2",
    "license=MIT&sort=recent",
    "q=message%20slack",
];

async fn probe_all(app: &TestApp) -> Vec<Value> {
    let mut out = vec![];
    for q in PROBES {
        out.push(search(app, q).await);
    }
    out
}

async fn rebuild(app: TestApp) {
    publish_sample(&app).await;
    let before = probe_all(&app).await;

    // `reindex` from the database alone into another directory gives the same answers.
    let rebuilt_dir = app.data_dir().join("rebuilt-index");
    let out = app.binary(&[
        "reindex",
        "--index",
        rebuilt_dir.to_str().expect("utf-8 path"),
    ]);
    assert!(
        out.status.success(),
        "reindex failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("reindexed 5 tools"),
        "{out:?}"
    );
    {
        let rebuilt = SearchIndex::open(&rebuilt_dir).expect("open the rebuilt index");
        for (q, expected) in PROBES.iter().zip(&before) {
            let raw: toolreg_search::SearchRequest = serde_urlencoded_like(q);
            let got =
                serde_json::to_value(rebuilt.query(&raw.parse().expect("params")).expect("query"))
                    .expect("json");
            assert_eq!(&got, expected, "{q}");
        }
    }
    // `reindex` refuses an index a running server holds, and leaves it alone.
    let out = app.binary(&["reindex"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("in use by a running server"),
        "{out:?}"
    );
    assert_eq!(probe_all(&app).await, before);

    // A corrupt index directory is rebuilt at start.
    let dir = app.data_dir().join("index");
    app.state.search.stop();
    std::fs::write(dir.join("meta.json"), b"{ this is not an index").expect("corrupt meta.json");
    app.start_search();
    eventually(&app, "", Duration::from_secs(5), |b| b["total"] == 5).await;
    assert_eq!(probe_all(&app).await, before);

    // So is a deleted one.
    app.state.search.stop();
    std::fs::remove_dir_all(&dir).expect("delete the index");
    app.start_search();
    eventually(&app, "", Duration::from_secs(5), |b| b["total"] == 5).await;
    assert_eq!(probe_all(&app).await, before);

    // And a restart over a good index resumes without a rebuild.
    app.state.search.stop();
    let index = SearchIndex::open(&dir).expect("reopen");
    assert!(!index.needs_rebuild(), "{:?}", index.state());
    drop(index);
    app.start_search();
    assert_eq!(probe_all(&app).await, before);
}

/// Parses `a=b&c=d` into the search parameters the route would see.
fn serde_urlencoded_like(q: &str) -> toolreg_search::SearchRequest {
    let mut out = toolreg_search::SearchRequest::default();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = Some(v.replace("%20", " "));
        match k {
            "q" => out.q = v,
            "keyword" => out.keyword = v,
            "license" => out.license = v,
            "sort" => out.sort = v,
            "page" => out.page.page = v,
            "per_page" => out.page.per_page = v,
            other => panic!("probe parameter {other}"),
        }
    }
    out
}

/// Search without a started index is a 503 telling the client when to try
/// again, never a crash or a 500.
#[actix_web::test]
async fn search_before_the_index_starts_is_a_problem_answer() {
    let Some(app) = TestApp::start(Backend::Sqlite).await else {
        return;
    };
    let res = app.get("/api/v1/search?q=x").await;
    let retry_after = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = problem(res, 503, "unavailable").await;
    assert_eq!(retry_after.as_deref(), Some("5"), "{body}");
    assert_eq!(
        body["detail"],
        "search is not available on this server right now"
    );
    // Parameters are still checked first.
    problem(
        app.get("/api/v1/search?per_page=0").await,
        400,
        "bad-request",
    )
    .await;
    let _ = SearchParams::default();
}

both_backends!(async TestApp::with_search =>
    query_features,
    bad_parameters,
    fresh_after_publish_yank_and_block,
    rebuild
);
