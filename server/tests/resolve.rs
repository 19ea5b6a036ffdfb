//! Resolve: the highest version matching a SemVer requirement that is
//! neither yanked nor blocked; 400 for a bad requirement, 404 naming the
//! versions that exist, 403 for an exact blocked version.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn publish_versions(app: &TestApp, versions: &[&str]) -> String {
    let token = app.user("alice", Tier::Untrusted).await;
    for v in versions {
        app.publish_ok(&token, BundleBuilder::http("calc", v).pack())
            .await;
    }
    token
}

async fn resolves_the_highest_match(app: TestApp) {
    publish_versions(&app, &["1.0.0", "1.2.0", "1.10.3", "2.0.0", "2.1.0-beta.1"]).await;
    for (req, want) in [
        ("^1.2", "1.10.3"),
        ("~1.2", "1.2.0"),
        ("=1.0.0", "1.0.0"),
        ("*", "2.0.0"),
        (">=2.1.0-beta.0", "2.1.0-beta.1"),
    ] {
        let (status, body) = json(
            app.get(&format!("/api/v1/resolve/calc?req={}", urlencode(req)))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{req}: {body:#}");
        assert_eq!(body["version"], want, "{req}");
        assert_eq!(body["name"], "calc");
        assert_eq!(
            body["download_url"],
            format!("/api/v1/tools/calc/{want}/download")
        );
        assert_eq!(body["sha256"].as_str().unwrap().len(), 64);
    }
    let (_, body) = json(app.get("/api/v1/resolve/calc").await).await;
    assert_eq!(body["version"], "2.0.0", "no req means *");
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn skips_yanked_versions(app: TestApp) {
    let token = publish_versions(&app, &["1.0.0", "1.1.0"]).await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/calc/1.1.0/yank"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let (_, body) = json(app.get("/api/v1/resolve/calc?req=%5E1").await).await;
    assert_eq!(body["version"], "1.0.0");
    let body = problem(
        app.get("/api/v1/resolve/calc?req=%3D1.1.0").await,
        404,
        "not-found",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("1.1.0 (yanked)"),
        "{body:#}"
    );
}

async fn skips_blocked_versions(app: TestApp) {
    publish_versions(&app, &["1.0.0", "1.1.0"]).await;
    app.state
        .db
        .write(|conn| {
            use diesel::prelude::*;
            use toolreg_server::schema::versions;
            diesel::update(versions::table.filter(versions::version.eq("1.1.0")))
                .set((
                    versions::blocked.eq(true),
                    versions::blocked_reason.eq(Some("tier too low")),
                ))
                .execute(conn)?;
            Ok(())
        })
        .await
        .unwrap();
    let (_, body) = json(app.get("/api/v1/resolve/calc?req=%5E1").await).await;
    assert_eq!(body["version"], "1.0.0");
    let body = problem(
        app.get("/api/v1/resolve/calc?req=%3D1.1.0").await,
        403,
        "blocked",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("tier too low"),
        "{body:#}"
    );
}

async fn no_match_is_404_naming_the_versions(app: TestApp) {
    publish_versions(&app, &["1.0.0", "1.2.0"]).await;
    let body = problem(
        app.get("/api/v1/resolve/calc?req=%5E3").await,
        404,
        "not-found",
    )
    .await;
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("1.0.0") && detail.contains("1.2.0") && detail.contains("^3"),
        "{detail}"
    );
    problem(
        app.get("/api/v1/resolve/unknown-tool").await,
        404,
        "not-found",
    )
    .await;
}

async fn bad_requirement_is_400(app: TestApp) {
    publish_versions(&app, &["1.0.0"]).await;
    let body = problem(
        app.get("/api/v1/resolve/calc?req=not-a-req").await,
        400,
        "bad-request",
    )
    .await;
    assert!(body["detail"].as_str().unwrap().contains("req"), "{body:#}");
}

both_backends!(async TestApp::start =>
    resolves_the_highest_match,
    skips_yanked_versions,
    skips_blocked_versions,
    no_match_is_404_naming_the_versions,
    bad_requirement_is_400,
);
