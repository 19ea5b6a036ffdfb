//! Publish limits that keep one tool's data bounded, against the real
//! server: README.md is at most 512 KiB, and a tool has at most
//! `--max-versions-per-tool` versions. A refused publish names the limit
//! and stores nothing.

mod common;

use common::{problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

const MAX_README: usize = 512 * 1024;

async fn start_with_three_versions(backend: common::Backend) -> Option<TestApp> {
    TestApp::builder(backend)
        .with_max_versions_per_tool(3)
        .start()
        .await
}

async fn readme_over_512_kib_is_refused(app: TestApp) {
    let bob = app.user("bob", Tier::Verified).await;
    // Exactly at the limit: published, and the README is kept.
    let at_limit = "a".repeat(MAX_README);
    app.publish_ok(
        &bob,
        BundleBuilder::http("docs-tool", "1.0.0")
            .file("README.md", at_limit.clone())
            .pack(),
    )
    .await;
    let v: serde_json::Value = app
        .get("/api/v1/tools/docs-tool/1.0.0")
        .await
        .json()
        .await
        .expect("version JSON");
    assert_eq!(v["readme"].as_str().map(str::len), Some(MAX_README));

    let versions_before = app.count("versions").await;
    let objects_before = app.stored_objects().await;
    // One byte over (it compresses to almost nothing): refused.
    let body = problem(
        app.publish(
            &bob,
            BundleBuilder::http("docs-tool", "1.1.0")
                .file("README.md", "a".repeat(MAX_README + 1))
                .pack(),
        )
        .await,
        413,
        "too-large",
    )
    .await;
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("README.md") && detail.contains("512 KiB"),
        "{detail:?} does not name README.md and the limit"
    );
    assert_eq!(app.count("versions").await, versions_before);
    assert_eq!(app.stored_objects().await, objects_before);
    assert_eq!(app.get("/api/v1/tools/docs-tool/1.1.0").await.status(), 404);
}

/// The README is rendered (and sanitized) once, at publish, and stored with
/// the version; the tool page serves the stored HTML.
async fn readme_html_is_stored_at_publish(app: TestApp) {
    let bob = app.user("bob", Tier::Verified).await;
    app.publish_ok(
        &bob,
        BundleBuilder::http("docs-tool", "1.0.0")
            .file(
                "README.md",
                "# Usage\n\nCall it.<script>alert(1)</script>\n",
            )
            .pack(),
    )
    .await;
    #[derive(diesel::QueryableByName)]
    struct Html {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        readme_html: Option<String>,
    }
    let stored = app
        .state
        .db
        .read(|conn| {
            use diesel::RunQueryDsl;
            Ok(
                diesel::sql_query("SELECT readme_html FROM version_contents")
                    .get_result::<Html>(conn)?
                    .readme_html,
            )
        })
        .await
        .expect("read readme_html")
        .expect("the README's HTML is stored at publish");
    assert!(stored.contains("<h3>Usage</h3>"), "{stored}");
    assert!(!stored.contains("<script"), "{stored}");
    let page = app
        .get("/tools/docs-tool/1.0.0")
        .await
        .text()
        .await
        .expect("page");
    assert!(page.contains(&stored), "the page serves the stored HTML");
}

async fn versions_per_tool_are_capped(app: TestApp) {
    let bob = app.user("bob", Tier::Verified).await;
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        app.publish_ok(&bob, BundleBuilder::http("busy-tool", v).pack())
            .await;
    }
    let versions_before = app.count("versions").await;
    let body = problem(
        app.publish(&bob, BundleBuilder::http("busy-tool", "2.1.0").pack())
            .await,
        409,
        "too-many-versions",
    )
    .await;
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("busy-tool") && detail.contains("limit is 3"),
        "{detail:?} does not name the tool and the limit"
    );
    assert_eq!(app.count("versions").await, versions_before);
    let tool: serde_json::Value = app
        .get("/api/v1/tools/busy-tool")
        .await
        .json()
        .await
        .expect("tool JSON");
    assert_eq!(tool["latest_version"], "2.0.0");
    assert_eq!(tool["versions"].as_array().map(Vec::len), Some(3));
    // Other tools are not affected.
    app.publish_ok(&bob, BundleBuilder::http("other-tool", "1.0.0").pack())
        .await;
}

both_backends!(async TestApp::start =>
    readme_over_512_kib_is_refused,
    readme_html_is_stored_at_publish,
);

both_backends!(async start_with_three_versions =>
    versions_per_tool_are_capped,
);
