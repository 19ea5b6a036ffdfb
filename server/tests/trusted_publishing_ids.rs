//! Trusted publishers bound to the provider's immutable IDs, over HTTP on
//! both backends against the local OpenID Connect issuer: the first
//! exchange records the repository's and owner's IDs; a repository of the
//! same name with another ID (recreated, or its name taken) or another
//! owner ID (transferred) is refused with 403 saying so and how to
//! re-confirm; the same ID under a new name (a rename) is accepted and the
//! trusted publisher shows the new name; an ID given when the owner adds
//! the trusted publisher is honoured from the first exchange; and the
//! version's provenance and signed attestation carry the IDs.

mod common;

use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

use common::{json as read_json, problem, BundleBuilder, Ci};

const REPO: &str = "acme/tools";
const WORKFLOW: &str = "release.yml";

/// alice's `ci-tool` 1.0.0 with a trusted publisher for `REPO`'s
/// `WORKFLOW`, with `extra` fields in the request; alice's token.
async fn setup(ci: &Ci, extra: Value) -> String {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    let mut body = json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": WORKFLOW});
    for (k, v) in extra.as_object().into_iter().flatten() {
        body[k] = v.clone();
    }
    let (status, added) = ci
        .app
        .send(
            reqwest::Method::POST,
            "/api/v1/tools/ci-tool/trusted-publishers",
            &alice,
            Some(body),
        )
        .await;
    assert_eq!(status, 201, "{added}");
    alice
}

/// An ID token of `repository`'s `WORKFLOW` with these IDs (`None`: the
/// claim left out).
fn claims(ci: &Ci, repository: &str, repo_id: Option<&str>, owner_id: Option<&str>) -> Value {
    let mut claims = ci.issuer.github_claims(repository, WORKFLOW);
    let object = claims.as_object_mut().expect("claims");
    object.remove("repository_id");
    object.remove("repository_owner_id");
    if let Some(id) = repo_id {
        claims["repository_id"] = json!(id);
    }
    if let Some(id) = owner_id {
        claims["repository_owner_id"] = json!(id);
    }
    claims
}

async fn exchange(ci: &Ci, claims: &Value) -> reqwest::Response {
    ci.app
        .client
        .post(ci.app.api("/api/v1/oidc/exchange"))
        .json(&json!({"token": ci.issuer.mint(claims), "tools": ["ci-tool"]}))
        .send()
        .await
        .expect("POST exchange")
}

/// The exchanged token, expecting 201.
async fn exchange_ok(ci: &Ci, claims: &Value) -> String {
    let (status, body) = read_json(exchange(ci, claims).await).await;
    assert_eq!(status, 201, "{body}");
    body["token"].as_str().expect("token").to_string()
}

/// 403 whose detail contains every one of `needles`.
async fn refused(ci: &Ci, claims: &Value, needles: &[&str]) {
    let body = problem(exchange(ci, claims).await, 403, "forbidden").await;
    let detail = body["detail"].as_str().unwrap_or_default();
    for needle in needles {
        assert!(detail.contains(needle), "{needle:?} not in {detail:?}");
    }
}

/// `ci-tool`'s only trusted publisher, as the API lists it.
async fn the_publisher(ci: &Ci, alice: &str) -> Value {
    let (status, list) = read_json(
        ci.app
            .get_authed("/api/v1/tools/ci-tool/trusted-publishers", alice)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let rows = list["trusted_publishers"].as_array().expect("list");
    assert_eq!(rows.len(), 1, "{list}");
    rows[0].clone()
}

async fn the_first_exchange_binds_and_a_recreated_repository_is_refused(ci: Ci) {
    let alice = setup(&ci, json!({})).await;
    let row = the_publisher(&ci, &alice).await;
    assert_eq!(
        (&row["repository_id"], &row["owner_id"]),
        (&Value::Null, &Value::Null)
    );

    exchange_ok(&ci, &claims(&ci, REPO, Some("100"), Some("7"))).await;
    let row = the_publisher(&ci, &alice).await;
    assert_eq!(
        (&row["repository_id"], &row["owner_id"]),
        (&json!("100"), &json!("7")),
        "{row}"
    );
    assert!(
        ci.app
            .audit_actions()
            .await
            .contains(&"trusted_publisher_bind".to_string()),
        "the binding is audited"
    );

    // Deleted and recreated under the same name: a new ID.
    refused(
        &ci,
        &claims(&ci, REPO, Some("200"), Some("7")),
        &[
            "now has ID 200",
            "bound to ID 100",
            "recreated",
            "--repository-id 200",
        ],
    )
    .await;
    // A token that carries no ID no longer matches by name alone.
    refused(
        &ci,
        &claims(&ci, REPO, None, None),
        &["carries no repository ID"],
    )
    .await;
    // The same repository moved to another owner.
    refused(
        &ci,
        &claims(&ci, REPO, Some("100"), Some("8")),
        &["owner ID 8", "bound to owner ID 7", "another owner"],
    )
    .await;
    // Nothing of that moved the binding; the real repository still publishes.
    let row = the_publisher(&ci, &alice).await;
    assert_eq!(
        (&row["repository"], &row["repository_id"]),
        (&json!(REPO), &json!("100"))
    );
    let token = exchange_ok(&ci, &claims(&ci, REPO, Some("100"), Some("7"))).await;
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;
}

async fn a_renamed_repository_is_accepted_and_shows_its_new_name(ci: Ci) {
    let alice = setup(&ci, json!({"repository_id": "100", "owner_id": "7"})).await;
    // A repository by another name that is not the bound one: no match.
    refused(
        &ci,
        &claims(&ci, "acme/other", Some("300"), Some("7")),
        &["no trusted publisher"],
    )
    .await;
    // The bound repository under its new name.
    let token = exchange_ok(&ci, &claims(&ci, "acme-corp/tools", Some("100"), Some("7"))).await;
    let row = the_publisher(&ci, &alice).await;
    assert_eq!(row["repository"], "acme-corp/tools", "{row}");
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;
    let (_, v) = read_json(ci.app.get("/api/v1/tools/ci-tool/1.1.0").await).await;
    assert_eq!(v["provenance"]["repository"], "acme-corp/tools", "{v}");
    assert_eq!(
        (
            &v["provenance"]["repository_id"],
            &v["provenance"]["owner_id"]
        ),
        (&json!("100"), &json!("7"))
    );
    // The old name, now someone else's repository, is refused.
    refused(
        &ci,
        &claims(&ci, REPO, Some("400"), Some("9")),
        &["no trusted publisher"],
    )
    .await;

    // The attestation signs the IDs.
    let (status, att) =
        read_json(ci.app.get("/api/v1/tools/ci-tool/1.1.0/attestation").await).await;
    assert_eq!(status, 200, "{att}");
    let note = att["note"].as_str().expect("note");
    let key = ci
        .app
        .get("/api/v1/log/key")
        .await
        .text()
        .await
        .expect("key");
    let text = toolreg_core::tlog::Verifier::parse(&key)
        .expect("log key")
        .open(note)
        .expect("the attestation verifies");
    assert!(
        text.contains(r#""repository_id":"100""#) && text.contains(r#""owner_id":"7""#),
        "{text}"
    );
}

async fn an_id_given_when_adding_is_honoured(ci: Ci) {
    let alice = setup(&ci, json!({"repository_id": "300"})).await;
    refused(
        &ci,
        &claims(&ci, REPO, Some("100"), Some("7")),
        &["now has ID 100", "bound to ID 300"],
    )
    .await;
    exchange_ok(&ci, &claims(&ci, REPO, Some("300"), Some("7"))).await;
    // The owner ID, not given, is recorded by that first exchange.
    let row = the_publisher(&ci, &alice).await;
    assert_eq!(
        (&row["repository_id"], &row["owner_id"]),
        (&json!("300"), &json!("7"))
    );
}

async fn a_bad_id_is_refused_naming_the_field(ci: Ci) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    for (field, value) in [
        ("repository_id", "12 34"),
        ("owner_id", ""),
        ("repository_id", &"9".repeat(41)),
    ] {
        let res = ci
            .app
            .client
            .post(ci.app.api("/api/v1/tools/ci-tool/trusted-publishers"))
            .bearer_auth(&alice)
            .json(
                &json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": WORKFLOW,
                          field: value}),
            )
            .send()
            .await
            .expect("POST");
        let body = problem(res, 400, "bad-request").await;
        assert!(
            body["detail"]
                .as_str()
                .unwrap_or_default()
                .starts_with(field),
            "{body}"
        );
    }
    assert_eq!(ci.app.count("trusted_publishers").await, 0);
}

both_backends!(async Ci::start =>
    the_first_exchange_binds_and_a_recreated_repository_is_refused,
    a_renamed_repository_is_accepted_and_shows_its_new_name,
    an_id_given_when_adding_is_honoured,
    a_bad_id_is_refused_naming_the_field,
);
