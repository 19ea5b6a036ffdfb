//! Operations: `/healthz`, `/metrics`, `/api/openapi.json`, and the binary's
//! subcommands (`admin`, `verify`, `gc`, graceful shutdown on SIGTERM;
//! `serve` with zero configuration and its log is in `serve_process.rs`).

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use common::{json, sigterm, BundleBuilder, TestApp};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn healthz_checks_the_database_and_storage(app: TestApp) {
    app.caught_up().await;
    let (status, body) = json(app.get("/healthz").await).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(
        body,
        serde_json::json!({"status": "ok", "database": "ok", "storage": "ok",
                           "changes": {"latest": 0, "applied": 0}})
    );
    // A publish is a change: the head moves, and the follower catches up.
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let (_, body) = json(app.get("/healthz").await).await;
    assert_eq!(body["changes"]["latest"], 1, "{body:#}");
    app.caught_up().await;
    let (_, body) = json(app.get("/healthz").await).await;
    assert_eq!(body["changes"]["applied"], 1, "{body:#}");
}

async fn metrics_count_requests_publishes_and_downloads(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    assert_eq!(
        app.get("/api/v1/tools/calc/1.0.0/download").await.status(),
        200
    );
    assert_eq!(app.get("/api/v1/tools/nope").await.status(), 404);
    let res = app.get("/metrics").await;
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let text = res.text().await.unwrap();
    for line in [
        r#"toolreg_http_requests_total{method="POST",route="/api/v1/tools",status="201"} 1"#,
        r#"toolreg_http_requests_total{method="GET",route="/api/v1/tools/{name}/{version}/download",status="200"} 1"#,
        r#"toolreg_http_requests_total{method="GET",route="/api/v1/tools/{name}",status="404"} 1"#,
        r#"toolreg_http_request_duration_seconds_count{method="POST",route="/api/v1/tools"} 1"#,
        "toolreg_publishes_total 1",
        "toolreg_downloads_total 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
    assert!(text.contains(r#"toolreg_http_request_duration_seconds_bucket{method="POST",route="/api/v1/tools",le="+Inf"} 1"#));
    // The publish went through group commit, on both backends.
    for line in [
        "toolreg_group_commit_batches_total 1".to_string(),
        "toolreg_group_commit_writes_total 1".to_string(),
        "toolreg_group_commit_moved_total 0".to_string(),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
}

async fn openapi_covers_every_route(app: TestApp) {
    let (status, doc) = json(app.get("/api/openapi.json").await).await;
    assert_eq!(status, 200);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3."),
        "{}",
        doc["openapi"]
    );
    let routes = [
        ("post", "/api/v1/tools"),
        ("get", "/api/v1/tools/{name}"),
        ("get", "/api/v1/tools/{name}/{version}"),
        ("get", "/api/v1/tools/{name}/{version}/download"),
        ("get", "/api/v1/tools/{name}/{version}/definition"),
        ("get", "/api/v1/resolve/{name}"),
        ("get", "/api/v1/blobs/sha256/{hex}"),
        ("delete", "/api/v1/tools/{name}/{version}/yank"),
        ("put", "/api/v1/tools/{name}/{version}/unyank"),
        ("get", "/api/v1/tools/{name}/owners"),
        ("put", "/api/v1/tools/{name}/owners"),
        ("delete", "/api/v1/tools/{name}/owners"),
        ("get", "/api/v1/tools/{name}/owners/invitations"),
        ("get", "/api/v1/me/invitations"),
        ("put", "/api/v1/me/invitations/{name}"),
        ("delete", "/api/v1/me/invitations/{name}"),
        ("post", "/api/v1/tokens"),
        ("get", "/api/v1/tokens"),
        ("delete", "/api/v1/tokens/{id}"),
        ("get", "/api/v1/me"),
        ("get", "/healthz"),
        ("get", "/metrics"),
        ("get", "/api/openapi.json"),
    ];
    for (method, path) in routes {
        assert!(
            doc["paths"][path][method].is_object(),
            "{method} {path} missing from the OpenAPI document"
        );
    }
    // Every route the server's code declares is documented, and every
    // documented operation is declared: a new route without OpenAPI fails here.
    let declared = declared_routes();
    assert!(
        declared.len() >= routes.len(),
        "the route scan found too little: {declared:?}"
    );
    for (method, path) in &declared {
        assert!(
            doc["paths"][path.as_str()][method.as_str()].is_object(),
            "{method} {path} is routed but missing from the OpenAPI document"
        );
    }
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| (method.clone(), path.clone()))
        })
        .collect();
    assert_eq!(
        documented, declared,
        "the OpenAPI operations and the declared API routes differ"
    );
    // Every documented operation is one the server really answers (no stale entries).
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let concrete = path
                .replace("{name}", "x")
                .replace("{version}", "1.0.0")
                .replace("{hex}", &"0".repeat(64))
                .replace("{id}", "1");
            let res = app
                .client
                .request(method.to_uppercase().parse().unwrap(), app.api(&concrete))
                .send()
                .await
                .unwrap();
            if res.status() == 404 {
                let body: serde_json::Value = res.json().await.unwrap();
                assert!(
                    !body["detail"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("nothing at"),
                    "{method} {path} is documented but not routed"
                );
            }
        }
    }
    assert!(doc["components"]["schemas"]["ProblemBody"].is_object());
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert_eq!(
        doc["paths"]["/api/v1/tools"]["post"]["security"][0]["bearer"],
        serde_json::json!([])
    );
}

/// The API routes the server's code declares, as (lowercase method, path):
/// the actix route attributes of the handlers (`#[get("/api/v1/me")]`,
/// `#[route(..., method = "GET")]`) and `.route(path, web::get()...)`
/// registrations of paths under `/api`, read from every file under
/// `server/src`. (The web index's HTML pages, registered with `.route`
/// outside `/api`, are not part of the API.)
fn declared_routes() -> BTreeSet<(String, String)> {
    fn quoted(text: &str) -> Option<&str> {
        let start = text.find('"')? + 1;
        let len = text[start..].find('"')?;
        Some(&text[start..start + len])
    }
    /// `{name:regex}` segments as OpenAPI writes them: `{name}`.
    fn openapi_path(path: &str) -> String {
        let mut out = String::new();
        let mut in_regex = false;
        for c in path.chars() {
            match c {
                ':' if out.rfind('{') > out.rfind('}') => in_regex = true,
                '}' if in_regex => {
                    in_regex = false;
                    out.push('}');
                }
                _ if in_regex => {}
                _ => out.push(c),
            }
        }
        out
    }
    fn scan(dir: &std::path::Path, out: &mut BTreeSet<(String, String)>) {
        for entry in std::fs::read_dir(dir).expect("read server/src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                scan(&path, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read a source file");
            for line in text.lines().map(str::trim) {
                assert!(
                    !(line.contains("scope(\"/api") || line.contains("resource(\"/api")),
                    "{}: API routes are declared one by one, with their full path, \
                     for this test and the OpenAPI document: {line}",
                    path.display()
                );
                for method in ["get", "post", "put", "delete", "patch", "head"] {
                    if let Some(rest) = line.strip_prefix(&format!("#[{method}(")) {
                        let route = quoted(rest).expect("a quoted route path");
                        out.insert((method.to_string(), openapi_path(route)));
                    }
                    if line.contains(".route(") && line.contains(&format!("web::{method}()")) {
                        let route = quoted(line).expect("a quoted route path");
                        if route.starts_with("/api") {
                            out.insert((method.to_string(), openapi_path(route)));
                        }
                    }
                }
                if let Some(rest) = line.strip_prefix("#[route(") {
                    let route = quoted(rest).expect("a quoted route path");
                    for part in rest.split("method").skip(1) {
                        let method = quoted(part).expect("a quoted method");
                        out.insert((method.to_ascii_lowercase(), openapi_path(route)));
                    }
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    scan(&common::repo_root().join("server/src"), &mut out);
    out
}

async fn admin_create_user_prints_a_working_token(app: TestApp) {
    let out = app.binary(&["admin", "create-user", "bob", "--tier", "verified"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let token = stdout.trim_end_matches('\n');
    assert_eq!(
        stdout.lines().count(),
        1,
        "the token alone on stdout: {stdout:?}"
    );
    assert!(token.starts_with("trg_") && token.len() == 44, "{token}");
    let (status, me) = json(app.get_authed("/api/v1/me", token).await).await;
    assert_eq!(status, 200, "{me:#}");
    assert_eq!(
        me,
        serde_json::json!({"login": "bob", "tier": "verified", "admin": false})
    );

    // A taken login is an error with a message, and a bad tier is a usage error.
    let out = app.binary(&["admin", "create-user", "bob"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("taken"));
    let out = app.binary(&["admin", "create-user", "carol", "--tier", "godlike"]);
    assert_eq!(out.status.code(), Some(2));

    let out = app.binary(&["admin", "set-tier", "bob", "trusted"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, me) = json(app.get_authed("/api/v1/me", token).await).await;
    assert_eq!(me["tier"], "trusted");
    // An unknown login is an error naming it — and the subcommand exits
    // cleanly every time: on PostgreSQL, a connection the pool opened in the
    // background once crashed it at exit (SIGSEGV in OpenSSL's cleanup,
    // about 1 run in 8).
    for run in 0..20 {
        let out = app.binary(&["admin", "set-tier", "nobody", "trusted"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "run {run}: {:?} {stderr}",
            out.status
        );
        assert!(stderr.contains("nobody"), "run {run}: {stderr}");
    }
}

async fn verify_finds_missing_and_corrupt_blobs(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let a = app
        .publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let b = app
        .publish_ok(&token, BundleBuilder::http("calc", "1.1.0").pack())
        .await;
    app.publish_ok(&token, BundleBuilder::http("other", "1.0.0").pack())
        .await;
    let out = app.binary(&["verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());

    // Corrupt one blob and delete another.
    let (a, b) = (a["sha256"].as_str().unwrap(), b["sha256"].as_str().unwrap());
    app.state
        .blobs
        .put_bundle(a, Bytes::from_static(b"tampered"))
        .await
        .unwrap();
    app.state
        .blobs
        .delete(&toolreg_server::blobs::bundle_path(b))
        .await
        .unwrap();
    let out = app.binary(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("calc@1.0.0") && l.contains("hashes to")),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("calc@1.1.0") && l.contains("missing")),
        "{stdout}"
    );
}

async fn gc_removes_only_old_unreferenced_blobs(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let kept = app
        .publish_ok(&token, BundleBuilder::http("calc", "1.0.0").pack())
        .await;
    let orphan_bytes = Bytes::from_static(b"an orphan left by a crashed publish");
    let orphan = toolreg_core::digest::sha256_hex(&orphan_bytes);
    app.state
        .blobs
        .put_bundle(&orphan, orphan_bytes)
        .await
        .unwrap();
    assert_eq!(app.stored_objects().await.len(), 2);

    // Default: only blobs older than an hour go, so a fresh orphan stays.
    let out = app.binary(&["gc"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(app.stored_objects().await.len(), 2);

    let out = app.binary(&["gc", "--min-age", "0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&orphan));
    assert_eq!(
        app.stored_objects().await,
        vec![format!(
            "bundles/sha256/{}",
            kept["sha256"].as_str().unwrap()
        )]
    );
    assert_eq!(app.binary(&["verify"]).status.code(), Some(0));
}

async fn sigterm_finishes_the_publish_in_flight(app: TestApp) {
    // Run the binary on this app's database and storage.
    let token = app.user("alice", Tier::Untrusted).await;
    // Its health is polled with a blocking client: not on the test's executor.
    let registry = app.registry().clone();
    let mut server = actix_web::web::block(move || registry.serve(&[]))
        .await
        .expect("start toolreg-server");

    // Start a publish whose body arrives slowly, then send SIGTERM mid-upload.
    let bundle = BundleBuilder::http("slow", "1.0.0").pack();
    let half = bundle.len() / 2;
    let (first, second) = (bundle[..half].to_vec(), bundle[half..].to_vec());
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let body = futures::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(
        futures::stream::once(async move {
            let _ = rx.await;
            Ok::<_, std::io::Error>(second)
        }),
    );
    use futures::StreamExt;
    let request = app
        .client
        .post(server.api("/api/v1/tools"))
        .bearer_auth(&token)
        .body(reqwest::Body::wrap_stream(body))
        .send();
    let publish = actix_web::rt::spawn(request);
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    sigterm(server.id());
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    if let Some(status) = server.exited() {
        panic!("the server exited ({status}) before the publish in flight finished");
    }
    let _ = tx.send(());
    let res = publish.await.unwrap().unwrap();
    assert_eq!(
        res.status(),
        201,
        "{}",
        res.text().await.unwrap_or_default()
    );
    let status = server.wait_exit(Duration::from_secs(20));
    assert!(status.success(), "{status}");
    let (status, _) = json(app.get("/api/v1/tools/slow/1.0.0").await).await;
    assert_eq!(
        status, 200,
        "the publish finished before shutdown is visible"
    );
}

both_backends!(async TestApp::start =>
    healthz_checks_the_database_and_storage,
    metrics_count_requests_publishes_and_downloads,
    openapi_covers_every_route,
    admin_create_user_prints_a_working_token,
    verify_finds_missing_and_corrupt_blobs,
    gc_removes_only_old_unreferenced_blobs,
    sigterm_finishes_the_publish_in_flight,
);
