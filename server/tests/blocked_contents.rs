//! A blocked version's contents are not served anywhere: the bundle
//! download, the definition export in every format and the web version page
//! all withhold them (403 `blocked` with the reason; the page says why
//! instead of showing the definition and code), and promotion serves them
//! again.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

const FORMATS: [&str; 4] = ["native", "matimo", "mcp", "openai"];

async fn page(app: &TestApp, path: &str) -> String {
    let res = app.get(path).await;
    assert_eq!(res.status(), 200, "GET {path}");
    res.text().await.expect("page body")
}

async fn blocked_versions_withhold_definition_and_code(app: TestApp) {
    let admin = app.admin("root", Tier::Trusted).await;
    let bob = app.user("bob", Tier::Trusted).await;
    // A `function` tool: its definition names the code it loads.
    app.publish_ok(&bob, BundleBuilder::function("fn-tool", "1.0.0").pack())
        .await;
    for format in FORMATS {
        let res = app
            .get(&format!(
                "/api/v1/tools/fn-tool/1.0.0/definition?format={format}"
            ))
            .await;
        assert_ne!(res.status(), 403, "{format} before the demotion");
    }
    let open = page(&app, "/tools/fn-tool/1.0.0").await;
    assert!(
        open.contains("calculator.ts"),
        "the open page shows the definition"
    );

    // Demoted: `function` tools need `trusted`, bob is now `verified`.
    app.set_tier(&admin, "bob", "verified").await;
    for format in FORMATS {
        let body = problem(
            app.get(&format!(
                "/api/v1/tools/fn-tool/1.0.0/definition?format={format}"
            ))
            .await,
            403,
            "blocked",
        )
        .await;
        let detail = body["detail"].as_str().unwrap_or_default();
        for needle in ["1.0.0", "`function`", "`trusted`", "`verified`"] {
            assert!(
                detail.contains(needle),
                "{format}: {detail:?} lacks {needle}"
            );
        }
    }
    problem(
        app.get("/api/v1/tools/fn-tool/1.0.0/download").await,
        403,
        "blocked",
    )
    .await;
    // The version's JSON says it is blocked but carries neither the
    // definition nor the model built from it.
    let (status, version) = json(app.get("/api/v1/tools/fn-tool/1.0.0").await).await;
    assert_eq!(status, 200);
    assert_eq!(version["blocked"], true);
    assert_eq!(version["definition"], serde_json::Value::Null, "{version}");
    assert_eq!(version["manifest"], serde_json::Value::Null, "{version}");
    assert!(
        !version.to_string().contains("calculator.ts"),
        "the version JSON still names the code: {version}"
    );
    for path in ["/tools/fn-tool/1.0.0", "/tools/fn-tool"] {
        let html = page(&app, path).await;
        assert!(
            !html.contains("calculator.ts"),
            "{path} still shows the definition or code"
        );
        assert!(html.contains("withheld"), "{path} does not say why");
        assert!(
            html.contains("require the <strong>trusted</strong> tier") && html.contains("verified"),
            "{path} does not name the required and the publisher's tier"
        );
        assert!(
            !html.contains("definition?format="),
            "{path} links an export"
        );
    }

    // Promoted again: served again.
    app.set_tier(&admin, "bob", "trusted").await;
    for format in FORMATS {
        let (status, _) = json(
            app.get(&format!(
                "/api/v1/tools/fn-tool/1.0.0/definition?format={format}"
            ))
            .await,
        )
        .await;
        assert_ne!(status, 403, "{format} after the promotion");
    }
    assert!(page(&app, "/tools/fn-tool/1.0.0")
        .await
        .contains("calculator.ts"));
    let (_, version) = json(app.get("/api/v1/tools/fn-tool/1.0.0").await).await;
    assert!(
        version["definition"]
            .as_str()
            .is_some_and(|d| d.contains("calculator.ts")),
        "{version}"
    );
}

both_backends!(async TestApp::start =>
    blocked_versions_withhold_definition_and_code,
);
