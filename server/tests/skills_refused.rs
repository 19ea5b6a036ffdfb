//! Bad skills over HTTP on both backends: refused with the field or the
//! limit named, and nothing stored (no tool, version, archive or blob).
//! And search's `format=skill` filter finds skills and nothing else.

mod common;

use std::time::{Duration, Instant};

use common::skills::{pack, skill_files};
use common::{json, problem, BundleBuilder, TestApp};
use serde_json::Value;
use toolreg_core::{Tier, ToolFiles};
use toolreg_test_support::both_backends;

/// The refusal left no trace.
async fn assert_nothing_stored(app: &TestApp) {
    assert_eq!(app.count("tools").await, 0, "no tool row");
    assert_eq!(app.count("versions").await, 0, "no version row");
    assert_eq!(app.count("skill_archives").await, 0, "no archive row");
    assert!(
        app.stored_objects().await.is_empty(),
        "no blob: {:?}",
        app.stored_objects().await
    );
    let index = json(app.get("/.well-known/agent-skills/index.json").await)
        .await
        .1;
    assert_eq!(index["skills"], serde_json::json!([]), "{index:#}");
}

/// A skill whose SKILL.md is `text`, with a toolreg.toml giving its version.
fn skill_md(text: &str) -> Vec<u8> {
    let mut files = ToolFiles::new();
    files.insert("SKILL.md", text);
    files.insert(
        "toolreg.toml",
        "[tool]\nname = \"tidy-notes\"\nversion = \"1.0.0\"\n",
    );
    pack(&files)
}

/// The paths of a 422's `errors[]`.
fn error_paths(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("errors[]: {body:#}"))
        .iter()
        .map(|e| e["path"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The message of the error at `path`.
fn message_at<'a>(body: &'a Value, path: &str) -> &'a str {
    body["errors"]
        .as_array()
        .expect("errors[]")
        .iter()
        .find(|e| e["path"] == path)
        .and_then(|e| e["message"].as_str())
        .unwrap_or_else(|| panic!("no error at {path}: {body:#}"))
}

async fn a_skill_folder_without_skill_md(app: TestApp) {
    let token = app.user("ann", Tier::Trusted).await;
    let mut files = ToolFiles::new();
    files.insert("references/guide.md", "# Guide\n");
    files.insert("scripts/tidy.sh", "#!/bin/sh\n");
    files.insert(
        "toolreg.toml",
        "[tool]\nname = \"tidy-notes\"\nversion = \"1.0.0\"\n",
    );
    let res = app.publish(&token, pack(&files)).await;
    let status = res.status().as_u16();
    let (_, body) = json(res).await;
    assert!(status == 400 || status == 422, "{status}: {body:#}");
    let text = body.to_string();
    assert!(
        text.contains("SKILL.md"),
        "the skill file is named: {body:#}"
    );
    assert_nothing_stored(&app).await;
}

async fn frontmatter_that_is_not_yaml(app: TestApp) {
    let token = app.user("ann", Tier::Trusted).await;
    let res = app
        .publish(
            &token,
            skill_md("---\nname: [unclosed\ndescription: d\n---\n# Body\n"),
        )
        .await;
    let body = problem(res, 422, "invalid-definition").await;
    assert!(
        message_at(&body, "SKILL.md").contains("not valid YAML"),
        "{body:#}"
    );
    // No frontmatter at all.
    let res = app.publish(&token, skill_md("# Just Markdown\n")).await;
    let body = problem(res, 422, "invalid-definition").await;
    assert!(message_at(&body, "SKILL.md").contains("`---`"), "{body:#}");
    // A list, not a mapping.
    let res = app.publish(&token, skill_md("---\n- a\n- b\n---\n")).await;
    let body = problem(res, 422, "invalid-definition").await;
    assert!(
        message_at(&body, "SKILL.md").contains("mapping"),
        "{body:#}"
    );
    assert_nothing_stored(&app).await;
}

async fn oversize_fields_are_named(app: TestApp) {
    let token = app.user("ann", Tier::Trusted).await;
    let text = format!(
        "---\nname: {}\ndescription: {}\ncompatibility: {}\nallowed-tools: [Bash]\n---\nbody\n",
        "n".repeat(65),
        "d".repeat(1025),
        "c".repeat(501)
    );
    let body = problem(
        app.publish(&token, skill_md(&text)).await,
        422,
        "invalid-definition",
    )
    .await;
    let paths = error_paths(&body);
    for field in ["name", "description", "compatibility", "allowed-tools"] {
        assert!(paths.iter().any(|p| p == field), "{field} named: {body:#}");
    }
    assert!(
        message_at(&body, "description").contains("1024"),
        "{body:#}"
    );
    assert!(
        message_at(&body, "compatibility").contains("500"),
        "{body:#}"
    );
    assert_nothing_stored(&app).await;
}

async fn a_twenty_megabyte_skill_md(app: TestApp) {
    let token = app.user("ann", Tier::Trusted).await;
    let head = "---\nname: tidy-notes\ndescription: Tidies notes.\n---\n";
    // Compressible, so under the 10 MiB upload cap: refused by the
    // definition's own size limit. (An upload over the cap is refused by
    // the cap, naming it: tests/publish_bad_bundles.rs.)
    let text = format!(
        "{head}{}",
        "Tidy the notes.\n".repeat(20 * 1024 * 1024 / 16)
    );
    let res = app.publish(&token, skill_md(&text)).await;
    let body = problem(res, 422, "invalid-definition").await;
    let message = message_at(&body, "SKILL.md");
    assert!(
        message.contains("at most 1048576 bytes"),
        "the limit is named: {body:#}"
    );
    assert_nothing_stored(&app).await;
}

async fn a_path_skill_clients_would_truncate(app: TestApp) {
    let token = app.user("ann", Tier::Trusted).await;
    // One file name over the 100 bytes a ustar header holds: clients would
    // read it cut short, so the skill is refused naming it.
    let long = format!("references/{}.md", "n".repeat(110));
    let mut files = skill_files("tidy-notes", "1.0.0", "# Notes");
    files.insert(long.as_str(), "# Long\n");
    let body = problem(app.publish(&token, pack(&files)).await, 400, "bad-bundle").await;
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains(&long) && detail.contains("ustar"),
        "{detail}"
    );
    assert_nothing_stored(&app).await;
    // Deep folders are fine while the last 100 bytes are the file's name.
    let deep = format!("references/{}/guide.md", "d".repeat(120));
    let mut files = skill_files("tidy-notes", "1.0.0", "# Notes");
    files.insert(deep.as_str(), "# Deep\n");
    app.publish_ok(&token, pack(&files)).await;
}

both_backends!(async TestApp::start =>
    a_path_skill_clients_would_truncate,
    a_skill_folder_without_skill_md,
    frontmatter_that_is_not_yaml,
    oversize_fields_are_named,
    a_twenty_megabyte_skill_md,
);

/// `search?query` once the index answers `ok`.
async fn search_until(app: &TestApp, query: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (status, body) = json(app.get(&format!("/api/v1/search?{query}")).await).await;
        assert_eq!(status, 200, "{body:#}");
        if ok(&body) {
            return body;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "search?{query} still {body:#}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn search_filters_by_format_skill(app: TestApp) {
    let token = app.user("ann", Tier::Trusted).await;
    app.publish_ok(&token, pack(&skill_files("tidy-notes", "1.0.0", "# Notes")))
        .await;
    app.publish_ok(&token, BundleBuilder::http("notes-http", "1.0.0").pack())
        .await;
    search_until(&app, "", |b| b["total"] == 2).await;
    let body = search_until(&app, "format=skill", |_| true).await;
    assert_eq!(body["total"], 1, "{body:#}");
    assert_eq!(body["hits"][0]["name"], "tidy-notes", "{body:#}");
    assert_eq!(body["hits"][0]["format"], "skill", "{body:#}");
    let body = search_until(&app, "format=matimo", |_| true).await;
    assert_eq!(body["hits"][0]["name"], "notes-http", "{body:#}");
    // An unknown format names every format, skill included.
    let res = app.get("/api/v1/search?format=skills").await;
    let body = problem(res, 400, "bad-request").await;
    assert!(
        body["detail"].as_str().unwrap().contains("skill"),
        "{body:#}"
    );
}

both_backends!(async TestApp::with_search => search_filters_by_format_skill);
