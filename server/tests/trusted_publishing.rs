//! Trusted publishing over HTTP on both backends, against a real local
//! OpenID Connect issuer (`toolreg_test_support::issuer`) serving its
//! discovery document and keys on loopback: owners set trusted publishers;
//! a CI job's ID token is exchanged for a short-lived token that publishes
//! new versions of the matched tools only; the version records the run's
//! provenance, which the signed attestation carries; every refusal names
//! what did not match; keys rotate; removing a trusted publisher stops the
//! tokens it issued.

mod common;

use std::time::Duration;

use serde_json::{json, Value};
use toolreg_core::tlog::Verifier;
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

use common::{json as read_json, problem, BundleBuilder, Ci};

const REPO: &str = "acme/tools";
const WORKFLOW: &str = "release.yml";

/// alice owns `ci-tool` 1.0.0 (published with her own token) and trusts
/// `acme/tools`'s `release.yml` for it; returns her token.
async fn setup(ci: &Ci) -> String {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    let res = add_publisher(
        ci,
        &alice,
        "ci-tool",
        json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": WORKFLOW}),
    )
    .await;
    assert_eq!(res.0, 201, "{}", res.1);
    alice
}

async fn add_publisher(ci: &Ci, token: &str, tool: &str, body: Value) -> (u16, Value) {
    read_json(
        ci.app
            .client
            .post(
                ci.app
                    .api(&format!("/api/v1/tools/{tool}/trusted-publishers")),
            )
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("POST trusted-publishers"),
    )
    .await
}

async fn exchange(ci: &Ci, id_token: &str) -> reqwest::Response {
    ci.app
        .client
        .post(ci.app.api("/api/v1/oidc/exchange"))
        .json(&json!({ "token": id_token }))
        .send()
        .await
        .expect("POST exchange")
}

/// Exchange `claims` minted by the issuer; the 201 body.
async fn exchange_ok(ci: &Ci, claims: &Value) -> Value {
    let (status, body) = read_json(exchange(ci, &ci.issuer.mint(claims)).await).await;
    assert_eq!(status, 201, "{body}");
    body
}

async fn refused(ci: &Ci, id_token: &str, status: u16, slug: &str, needle: &str) {
    let body = problem(exchange(ci, id_token).await, status, slug).await;
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(needle), "{needle:?} not in {detail:?}");
}

async fn happy_path_records_provenance_and_signs_it(ci: Ci) {
    let alice = setup(&ci).await;
    let claims = ci.issuer.github_claims(REPO, WORKFLOW);
    let exchanged = exchange_ok(&ci, &claims).await;
    assert_eq!(exchanged["tools"], json!(["ci-tool"]));
    let expires = chrono::DateTime::parse_from_rfc3339(exchanged["expires_at"].as_str().unwrap())
        .expect("expires_at");
    let left = expires.signed_duration_since(chrono::Utc::now());
    assert!(
        left > chrono::Duration::minutes(1) && left <= chrono::Duration::minutes(30),
        "{left}"
    );
    let token = exchanged["token"].as_str().expect("token").to_string();
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;

    let (_, v) = read_json(ci.app.get("/api/v1/tools/ci-tool/1.1.0").await).await;
    assert_eq!(
        v["provenance"],
        json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": WORKFLOW,
               "repository_id": claims["repository_id"], "owner_id": claims["repository_owner_id"],
               "ref": "refs/tags/v1.1.0", "sha": claims["sha"], "run_id": "4242"}),
        "{v}"
    );
    assert_eq!(v["publisher"]["login"], "alice");
    let (_, old) = read_json(ci.app.get("/api/v1/tools/ci-tool/1.0.0").await).await;
    assert_eq!(old["provenance"], Value::Null);

    // The attestation is signed with the log's key and says the same.
    let key = ci
        .app
        .get("/api/v1/log/key")
        .await
        .text()
        .await
        .expect("key");
    let verifier = Verifier::parse(&key).expect("log key");
    for (version, provenance) in [("1.1.0", v["provenance"].clone()), ("1.0.0", Value::Null)] {
        let (status, att) = read_json(
            ci.app
                .get(&format!("/api/v1/tools/ci-tool/{version}/attestation"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{att}");
        let text = verifier
            .open(att["note"].as_str().expect("note"))
            .expect("the attestation verifies with the log key");
        let (header, statement) = text.split_once('\n').expect("two lines");
        assert_eq!(header, toolreg_api::ATTESTATION_HEADER);
        let statement: Value = serde_json::from_str(statement.trim_end()).expect("statement");
        assert_eq!(statement, att["statement"]);
        assert_eq!(statement["provenance"], provenance);
        let (_, shown) = read_json(
            ci.app
                .get(&format!("/api/v1/tools/ci-tool/{version}"))
                .await,
        )
        .await;
        assert_eq!(statement["definition_sha256"], shown["definition_sha256"]);
        assert!(statement["definition_sha256"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:")));
        assert_eq!(statement["version"], version);
        // A changed statement does not verify.
        let forged = att["note"].as_str().unwrap().replace(version, "9.9.9");
        assert!(verifier.open(&forged).is_err());
    }

    // The exchanged token publishes new versions of its tools, nothing else.
    ci.app
        .publish_ok(&alice, BundleBuilder::http("other-tool", "1.0.0").pack())
        .await;
    problem(
        ci.app
            .publish(&token, BundleBuilder::http("other-tool", "1.1.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    let new_tool = problem(
        ci.app
            .publish(&token, BundleBuilder::http("brand-new", "1.0.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    assert!(new_tool["detail"]
        .as_str()
        .unwrap_or_default()
        .contains("existing tools only"));
    let yank = ci
        .app
        .client
        .delete(ci.app.api("/api/v1/tools/ci-tool/1.1.0/yank"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("yank");
    assert_eq!(yank.status(), 403, "the token only publishes");

    // Audited: the trusted publisher's addition and the exchange.
    let admin = ci.app.admin("root", Tier::Trusted).await;
    let (_, audit) = read_json(ci.app.get_authed("/api/v1/audit", &admin).await).await;
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert!(actions.contains(&"trusted_publisher_add"), "{actions:?}");
    assert!(
        audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["detail"]["trusted_publishing"]["run_id"] == "4242"),
        "{audit}"
    );
}

async fn every_refusal_names_what_did_not_match(ci: Ci) {
    setup(&ci).await;
    let good = || ci.issuer.github_claims(REPO, WORKFLOW);

    let mut foreign = good();
    foreign["iss"] = json!("https://issuer.example");
    refused(
        &ci,
        &ci.issuer.mint(&foreign),
        401,
        "unauthorized",
        "unknown issuer",
    )
    .await;

    refused(
        &ci,
        &ci.issuer.mint_forged(&good()),
        401,
        "unauthorized",
        "bad signature",
    )
    .await;

    let mut audience = good();
    audience["aud"] = json!("sigstore");
    refused(
        &ci,
        &ci.issuer.mint(&audience),
        401,
        "unauthorized",
        "wrong audience",
    )
    .await;

    let mut expired = good();
    expired["exp"] = json!(chrono::Utc::now().timestamp() - 120);
    refused(
        &ci,
        &ci.issuer.mint(&expired),
        401,
        "unauthorized",
        "expired",
    )
    .await;

    let mut early = good();
    early["nbf"] = json!(chrono::Utc::now().timestamp() + 600);
    refused(
        &ci,
        &ci.issuer.mint(&early),
        401,
        "unauthorized",
        "not yet valid",
    )
    .await;

    let once = ci.issuer.mint(&good());
    assert_eq!(exchange(&ci, &once).await.status(), 201);
    refused(&ci, &once, 401, "unauthorized", "replayed").await;
    // Rows of ID tokens long expired are dropped by the next exchange; the
    // live one stays (it still refuses its replay).
    ci.app
        .state
        .db
        .write(|conn| {
            use diesel::prelude::*;
            use toolreg_server::schema::oidc_exchanges;
            diesel::insert_into(oidc_exchanges::table)
                .values((
                    oidc_exchanges::issuer.eq("https://old.example"),
                    oidc_exchanges::jti.eq("long-gone"),
                    oidc_exchanges::expires_at
                        .eq(chrono::Utc::now().naive_utc() - chrono::Duration::hours(2)),
                ))
                .execute(conn)?;
            Ok(())
        })
        .await
        .expect("insert an old exchange");
    assert_eq!(ci.app.count("oidc_exchanges").await, 2);
    assert_eq!(exchange(&ci, &ci.issuer.mint(&good())).await.status(), 201);
    assert_eq!(
        ci.app.count("oidc_exchanges").await,
        2,
        "the stale row is gone"
    );
    refused(&ci, &once, 401, "unauthorized", "replayed").await;

    refused(
        &ci,
        &ci.issuer
            .mint(&ci.issuer.github_claims("acme/other", WORKFLOW)),
        403,
        "forbidden",
        "no trusted publisher for repository `acme/other`",
    )
    .await;
    refused(
        &ci,
        &ci.issuer.mint(&ci.issuer.github_claims(REPO, "ci.yml")),
        403,
        "forbidden",
        "workflow `ci.yml`",
    )
    .await;
    refused(&ci, "not-a-jwt", 401, "unauthorized", "not a JWT").await;
    let empty = problem(exchange(&ci, "").await, 400, "bad-request").await;
    assert!(empty["detail"]
        .as_str()
        .unwrap_or_default()
        .starts_with("token"));

    // An environment, once set, must match.
    let alice_again = ci.app.user("bob", Tier::Trusted).await;
    ci.app
        .publish_ok(
            &alice_again,
            BundleBuilder::http("env-tool", "1.0.0").pack(),
        )
        .await;
    let (status, _) = add_publisher(
        &ci,
        &alice_again,
        "env-tool",
        json!({"issuer": ci.issuer.url, "repository": "bob/env", "workflow": WORKFLOW,
               "environment": "release"}),
    )
    .await;
    assert_eq!(status, 201);
    let mut no_env = ci.issuer.github_claims("bob/env", WORKFLOW);
    refused(&ci, &ci.issuer.mint(&no_env), 403, "forbidden", "bob/env").await;
    no_env["environment"] = json!("release");
    no_env["jti"] = json!("another-jti");
    assert_eq!(exchange(&ci, &ci.issuer.mint(&no_env)).await.status(), 201);
}

async fn a_rotated_key_is_fetched_when_a_token_names_it(ci: Ci) {
    setup(&ci).await;
    exchange_ok(&ci, &ci.issuer.github_claims(REPO, WORKFLOW)).await;
    let kid = ci.issuer.rotate();
    // The registry fetches an issuer's keys at most once a second.
    actix_web::rt::time::sleep(Duration::from_millis(1100)).await;
    let claims = ci.issuer.github_claims(REPO, WORKFLOW);
    let token = ci.issuer.mint(&claims);
    let header = jsonwebtoken::decode_header(&token).expect("header");
    assert_eq!(header.kid.as_deref(), Some(kid.as_str()));
    let (status, body) = read_json(exchange(&ci, &token).await).await;
    assert_eq!(status, 201, "{body}");
}

async fn removing_a_trusted_publisher_stops_its_tokens(ci: Ci) {
    let alice = setup(&ci).await;
    let exchanged = exchange_ok(&ci, &ci.issuer.github_claims(REPO, WORKFLOW)).await;
    let token = exchanged["token"].as_str().expect("token").to_string();
    let (_, list) = read_json(
        ci.app
            .get_authed("/api/v1/tools/ci-tool/trusted-publishers", &alice)
            .await,
    )
    .await;
    let id = list["trusted_publishers"][0]["id"].as_i64().expect("id");
    assert_eq!(list["trusted_publishers"][0]["created_by"], "alice");
    let res = ci
        .app
        .client
        .delete(
            ci.app
                .api(&format!("/api/v1/tools/ci-tool/trusted-publishers/{id}")),
        )
        .bearer_auth(&alice)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(res.status(), 204);
    let body = problem(
        ci.app
            .publish(&token, BundleBuilder::http("ci-tool", "1.2.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("no trusted publisher of `ci-tool`"),
        "{body}"
    );
    refused(
        &ci,
        &ci.issuer.mint(&ci.issuer.github_claims(REPO, WORKFLOW)),
        403,
        "forbidden",
        "no trusted publisher",
    )
    .await;
    // Removing it again: 404 naming it.
    let again = ci
        .app
        .client
        .delete(
            ci.app
                .api(&format!("/api/v1/tools/ci-tool/trusted-publishers/{id}")),
        )
        .bearer_auth(&alice)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(again.status(), 404);
}

async fn only_owners_set_trusted_publishers(ci: Ci) {
    let alice = setup(&ci).await;
    let mallory = ci.app.user("mallory", Tier::Trusted).await;
    let body = json!({"issuer": ci.issuer.url, "repository": "mallory/x", "workflow": "a.yml"});
    let (status, _) = add_publisher(&ci, &mallory, "ci-tool", body.clone()).await;
    assert_eq!(status, 403);
    let anonymous = ci
        .app
        .client
        .post(ci.app.api("/api/v1/tools/ci-tool/trusted-publishers"))
        .json(&body)
        .send()
        .await
        .expect("POST");
    assert_eq!(anonymous.status(), 401);
    assert_eq!(
        ci.app
            .get_authed("/api/v1/tools/ci-tool/trusted-publishers", &mallory)
            .await
            .status(),
        403
    );
    for (bad, field) in [
        (
            json!({"issuer": "https://issuer.example", "repository": REPO, "workflow": WORKFLOW}),
            "issuer",
        ),
        (
            json!({"issuer": ci.issuer.url, "repository": " ", "workflow": WORKFLOW}),
            "repository",
        ),
        (
            json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": "x".repeat(201)}),
            "workflow",
        ),
    ] {
        let (status, problem) = add_publisher(&ci, &alice, "ci-tool", bad).await;
        assert_eq!(status, 400, "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap_or_default()
                .starts_with(field),
            "{problem}"
        );
    }
    let (status, _) = add_publisher(&ci, &alice, "no-such-tool", body).await;
    assert_eq!(status, 404);
}

/// Search filters on provenance and the version page shows it; links are
/// made only for GitHub's and GitLab's issuers, so this local issuer's
/// claims are shown as text.
async fn provenance_is_searchable_and_shown(ci: Ci) {
    let alice = setup(&ci).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("by-hand", "1.0.0").pack())
        .await;
    let exchanged = exchange_ok(&ci, &ci.issuer.github_claims(REPO, WORKFLOW)).await;
    let token = exchanged["token"].as_str().expect("token").to_string();
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;
    let search = |query: &'static str| {
        let app = &ci.app;
        async move {
            let (status, body) = read_json(app.get(&format!("/api/v1/search?{query}")).await).await;
            assert_eq!(status, 200, "{body}");
            body
        }
    };
    let start = std::time::Instant::now();
    loop {
        let all = search("sort=name").await;
        let ci_hit = all["hits"]
            .as_array()
            .and_then(|h| h.iter().find(|h| h["name"] == "ci-tool").cloned());
        if ci_hit.as_ref().is_some_and(|h| h["version"] == "1.1.0") && all["total"] == 2 {
            assert_eq!(ci_hit.unwrap()["provenance"], true);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "never indexed: {all}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    let names = |body: &Value| -> Vec<String> {
        body["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(names(&search("provenance=true").await), ["ci-tool"]);
    assert_eq!(names(&search("provenance=false").await), ["by-hand"]);
    let bad = problem(
        ci.app.get("/api/v1/search?provenance=yes").await,
        400,
        "bad-request",
    )
    .await;
    assert!(bad["detail"]
        .as_str()
        .unwrap_or_default()
        .starts_with("provenance"));

    let page = ci
        .app
        .get("/tools/ci-tool/1.1.0")
        .await
        .text()
        .await
        .expect("page");
    assert!(page.contains("Provenance"), "{page}");
    for needle in [
        REPO,
        WORKFLOW,
        "refs/tags/v1.1.0",
        "4242",
        "/api/v1/tools/ci-tool/1.1.0/attestation",
    ] {
        assert!(page.contains(needle), "the page lacks {needle}");
    }
    assert!(
        !page.contains("https://github.com/acme"),
        "a local issuer's claims are not linked"
    );
    let old = ci
        .app
        .get("/tools/ci-tool/1.0.0")
        .await
        .text()
        .await
        .expect("page");
    assert!(!old.contains("Provenance"));
}

both_backends!(async Ci::start_with_search => provenance_is_searchable_and_shown);

both_backends!(async Ci::start =>
    happy_path_records_provenance_and_signs_it,
    every_refusal_names_what_did_not_match,
    a_rotated_key_is_fetched_when_a_token_names_it,
    removing_a_trusted_publisher_stops_its_tokens,
    only_owners_set_trusted_publishers,
);
