//! Downloads and blobs: the exact bytes with digest headers and immutable
//! caching, 304 on `If-None-Match`, counted downloads, blocked versions 403;
//! definition export in every format, with the loss report header and the
//! MCP protocol and OpenAI strict options.

mod common;

use common::{json, problem, BundleBuilder, TestApp};
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

async fn download_serves_the_bytes_with_digest_headers(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let bundle = BundleBuilder::http("create-issue", "1.0.0").pack();
    let digest = toolreg_core::digest::sha256_hex(&bundle);
    app.publish_ok(&token, bundle.clone()).await;

    let res = app.get("/api/v1/tools/create-issue/1.0.0/download").await;
    assert_eq!(res.status(), 200);
    let h = res.headers().clone();
    assert_eq!(h["content-type"], "application/gzip");
    assert_eq!(h["etag"], format!("\"{digest}\""));
    assert_eq!(h["x-checksum-sha256"], digest.as_str());
    assert_eq!(h["cache-control"], "public, max-age=31536000, immutable");
    assert_eq!(h["content-length"], bundle.len().to_string().as_str());
    assert_eq!(res.bytes().await.unwrap().to_vec(), bundle);

    // By digest, and by a normalized name.
    let res = app.get(&format!("/api/v1/blobs/sha256/{digest}")).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), bundle);
    let res = app.get("/api/v1/tools/Create_Issue/1.0.0/download").await;
    assert_eq!(res.status(), 200);
}

async fn if_none_match_gives_304(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let body = app
        .publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    let digest = body["sha256"].as_str().unwrap();
    let res = app
        .client
        .get(app.api("/api/v1/tools/create-issue/1.0.0/download"))
        .header("If-None-Match", format!("\"{digest}\""))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 304);
    assert_eq!(res.headers()["etag"], format!("\"{digest}\""));
    let res = app
        .client
        .get(app.api("/api/v1/tools/create-issue/1.0.0/download"))
        .header("If-None-Match", "\"something-else\"")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

async fn downloads_are_counted(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    for _ in 0..3 {
        assert_eq!(
            app.get("/api/v1/tools/create-issue/1.0.0/download")
                .await
                .status(),
            200
        );
    }
    // Counts are flushed to the database about once a second.
    let mut seen = serde_json::Value::Null;
    for _ in 0..50 {
        let (_, tool) = json(app.get("/api/v1/tools/create-issue").await).await;
        if tool["downloads"] == 3 {
            assert_eq!(tool["versions"][0]["downloads"], 3);
            return;
        }
        seen = tool;
        actix_web::rt::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("downloads never reached 3: {seen:#}");
}

async fn yanked_versions_still_download(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    let res = app
        .client
        .delete(app.api("/api/v1/tools/create-issue/1.0.0/yank"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        app.get("/api/v1/tools/create-issue/1.0.0/download")
            .await
            .status(),
        200
    );
}

async fn blocked_versions_answer_403(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let body = app
        .publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    let digest = body["sha256"].as_str().unwrap().to_string();
    // Blocking is done by the tiers work; set the column directly here.
    app.state
        .db
        .write(|conn| {
            use diesel::prelude::*;
            use toolreg_server::schema::versions;
            diesel::update(versions::table)
                .set((
                    versions::blocked.eq(true),
                    versions::blocked_reason.eq(Some("the publisher was demoted")),
                ))
                .execute(conn)?;
            Ok(())
        })
        .await
        .unwrap();
    let body = problem(
        app.get("/api/v1/tools/create-issue/1.0.0/download").await,
        403,
        "blocked",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("demoted"),
        "{body:#}"
    );
    problem(
        app.get(&format!("/api/v1/blobs/sha256/{digest}")).await,
        403,
        "blocked",
    )
    .await;
    let (_, v) = json(app.get("/api/v1/tools/create-issue/1.0.0").await).await;
    assert_eq!(v["blocked"], true);
    assert_eq!(v["blocked_reason"], "the publisher was demoted");
}

async fn missing_things_are_404(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    problem(app.get("/api/v1/tools/nope").await, 404, "not-found").await;
    problem(
        app.get("/api/v1/tools/create-issue/9.9.9").await,
        404,
        "not-found",
    )
    .await;
    problem(
        app.get("/api/v1/tools/create-issue/9.9.9/download").await,
        404,
        "not-found",
    )
    .await;
    problem(
        app.get(&format!("/api/v1/blobs/sha256/{}", "0".repeat(64)))
            .await,
        404,
        "not-found",
    )
    .await;
    problem(
        app.get("/api/v1/blobs/sha256/not-a-digest").await,
        400,
        "bad-request",
    )
    .await;
    problem(app.get("/api/v1/no/such/route").await, 404, "not-found").await;
}

async fn definition_exports(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, BundleBuilder::http("create-issue", "1.0.0").pack())
        .await;
    let original =
        std::fs::read(common::corpus_dir("matimo/github-create-issue").join("definition.yaml"))
            .unwrap();

    let res = app
        .get("/api/v1/tools/create-issue/1.0.0/definition?format=native")
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.bytes().await.unwrap().to_vec(),
        original,
        "native is the original bytes"
    );

    let (status, mcp) = json(
        app.get("/api/v1/tools/create-issue/1.0.0/definition?format=mcp")
            .await,
    )
    .await;
    assert_eq!(status, 200, "{mcp:#}");
    assert!(
        mcp["name"].is_string() && mcp["inputSchema"]["type"] == "object",
        "{mcp:#}"
    );

    let (status, openai) = json(
        app.get("/api/v1/tools/create-issue/1.0.0/definition?format=openai")
            .await,
    )
    .await;
    assert_eq!(status, 200, "{openai:#}");
    assert_eq!(openai["type"], "function");
    assert_eq!(openai["function"]["name"], mcp["name"]);

    let res = app
        .get("/api/v1/tools/create-issue/1.0.0/definition?format=matimo")
        .await;
    assert_eq!(res.status(), 200);

    let body = problem(
        app.get("/api/v1/tools/create-issue/1.0.0/definition?format=pdf")
            .await,
        400,
        "bad-request",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("format"),
        "{body:#}"
    );
}

async fn definition_exports_for_agent_apis(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(
        &token,
        BundleBuilder::corpus(
            "mcp/spec-tool-with-array-output-schema",
            "list-users",
            "1.0.0",
        )
        .pack(),
    )
    .await;
    let base = "/api/v1/tools/list-users/1.0.0/definition";
    let warnings = |res: &reqwest::Response| -> Option<Value> {
        res.headers()
            .get("x-toolreg-export-warnings")
            .map(|h| serde_json::from_str(h.to_str().expect("ASCII header")).expect("JSON header"))
    };

    // The default MCP export is the newest protocol, unchanged, with no report.
    let res = app.get(&format!("{base}?format=mcp")).await;
    assert!(warnings(&res).is_none());
    let (status, latest) = json(res).await;
    assert_eq!(status, 200);
    assert_eq!(latest["outputSchema"]["type"], "array", "{latest:#}");
    let res = app
        .get(&format!("{base}?format=mcp&protocol=2026-07-28"))
        .await;
    assert!(warnings(&res).is_none());
    assert_eq!(json(res).await.1, latest);

    // An older protocol wraps the array output, and says so in the header.
    let res = app
        .get(&format!("{base}?format=mcp&protocol=2025-11-25"))
        .await;
    let report = warnings(&res).expect("a loss report");
    let (status, old) = json(res).await;
    assert_eq!(status, 200);
    assert_eq!(old["outputSchema"]["type"], "object", "{old:#}");
    assert_eq!(old["outputSchema"]["required"], json!(["result"]));
    assert_eq!(report[0]["pointer"], "/outputSchema", "{report:#}");
    assert_eq!(report[0]["keyword"], "type");
    assert!(report[0]["message"]
        .as_str()
        .unwrap()
        .contains("2025-11-25"));

    let (status, a) = json(app.get(&format!("{base}?format=anthropic")).await).await;
    assert_eq!(status, 200);
    assert_eq!(a["name"], "list_users");
    assert_eq!(a["input_schema"]["type"], "object");
    let (status, g) = json(app.get(&format!("{base}?format=gemini")).await).await;
    assert_eq!(status, 200);
    assert_eq!(g["name"], "list_users");
    assert!(g.get("parameters").is_none(), "no parameters: {g:#}");
    let (status, gj) = json(app.get(&format!("{base}?format=gemini-json-schema")).await).await;
    assert_eq!(status, 200);
    assert_eq!(gj["parameters_json_schema"]["type"], "object");
    let (status, strict) = json(app.get(&format!("{base}?format=openai&strict=true")).await).await;
    assert_eq!(status, 200);
    assert_eq!(strict["function"]["strict"], true);
    assert_eq!(
        strict["function"]["parameters"]["additionalProperties"],
        false
    );
    let (_, plain) = json(app.get(&format!("{base}?format=openai&strict=false")).await).await;
    assert!(plain["function"].get("strict").is_none(), "{plain:#}");

    // Bad values name the parameter and what it takes.
    for (query, needles) in [
        (
            "format=claude",
            &["format", "anthropic, gemini, gemini-json-schema"][..],
        ),
        (
            "format=mcp&protocol=2024-11-05",
            &["protocol", "2025-06-18, 2025-11-25, 2026-07-28"][..],
        ),
        (
            "format=openai&protocol=2025-11-25",
            &["protocol", "format=mcp"][..],
        ),
        ("format=openai&strict=yes", &["strict", "true, false"][..]),
        (
            "format=gemini&strict=true",
            &["strict", "format=openai"][..],
        ),
    ] {
        let body = problem(
            app.get(&format!("{base}?{query}")).await,
            400,
            "bad-request",
        )
        .await;
        let detail = body["detail"].as_str().unwrap();
        for n in needles {
            assert!(detail.contains(n), "{query}: {detail}");
        }
    }

    // A schema strict mode can't follow is refused with the reason.
    app.publish_ok(
        &token,
        BundleBuilder::corpus("mcp/github-issue_write", "issue-write", "1.0.0").pack(),
    )
    .await;
    let body = problem(
        app.get("/api/v1/tools/issue-write/1.0.0/definition?format=openai&strict=true")
            .await,
        422,
        "unprocessable",
    )
    .await;
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("openai (strict)") && detail.contains("/inputSchema"),
        "{detail}"
    );
    // ... while the plain export works.
    let (status, _) = json(
        app.get("/api/v1/tools/issue-write/1.0.0/definition?format=openai")
            .await,
    )
    .await;
    assert_eq!(status, 200);
}

async fn impossible_export_is_422(app: TestApp) {
    // An MCP tool (a declaration) has no execution block to write as Matimo.
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(
        &token,
        BundleBuilder::corpus("mcp/github-get_me", "get-me", "1.0.0").pack(),
    )
    .await;
    let body = problem(
        app.get("/api/v1/tools/get-me/1.0.0/definition?format=matimo")
            .await,
        422,
        "unprocessable",
    )
    .await;
    assert!(
        body["detail"].as_str().unwrap().contains("matimo"),
        "{body:#}"
    );
}

/// The bundle's blob as storage holds it matters on a download from
/// storage, on both stores: a missing blob is a 500 (nothing to serve), a
/// blob whose bytes don't hash to the version's digest is served as stored
/// but not kept in the read cache, so the next download reads storage
/// again and serves the repaired blob.
async fn damaged_blobs_are_not_cached(app: TestApp) {
    let token = app.user("alice", Tier::Untrusted).await;
    let bundle = BundleBuilder::http("create-issue", "1.0.0").pack();
    let body = app.publish_ok(&token, bundle.clone()).await;
    let digest = body["sha256"].as_str().unwrap().to_string();
    let url = "/api/v1/tools/create-issue/1.0.0/download";
    let blobs = &app.state.blobs;
    let path = toolreg_server::blobs::bundle_path(&digest);

    blobs.delete(&path).await.unwrap();
    problem(app.get(url).await, 500, "internal").await;

    let damaged = b"not the published bundle".to_vec();
    blobs
        .put_bundle(&digest, damaged.clone().into())
        .await
        .unwrap();
    let res = app.get(url).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), damaged);

    blobs
        .put_bundle(&digest, bundle.clone().into())
        .await
        .unwrap();
    let res = app.get(url).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), bundle);
    // Now cached: served even while the blob is gone.
    blobs.delete(&path).await.unwrap();
    let res = app.get(url).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), bundle);
}

both_backends!(async TestApp::start =>
    download_serves_the_bytes_with_digest_headers,
    if_none_match_gives_304,
    downloads_are_counted,
    yanked_versions_still_download,
    blocked_versions_answer_403,
    missing_things_are_404,
    damaged_blobs_are_not_cached,
    definition_exports,
    definition_exports_for_agent_apis,
    impossible_export_is_422,
);
