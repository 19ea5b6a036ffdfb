//! What a token from trusted publishing may do, over HTTP on both backends
//! against the local OpenID Connect issuer: it never carries more than the
//! token that set its trusted publisher up (agent tokens cannot set them
//! up, and a row an agent token set up issues agent tokens); an exchange
//! matches the tools the job publishes, so someone else's trusted publisher
//! for the same repository neither decides nor breaks it; and it publishes,
//! and does nothing else in its owner's name.

mod common;

use diesel::RunQueryDsl;
use serde_json::{json, Value};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

use common::{json as read_json, problem, BundleBuilder, Ci};

const REPO: &str = "acme/tools";
const WORKFLOW: &str = "release.yml";

/// `POST /api/v1/tools/{tool}/trusted-publishers` for `REPO`'s `WORKFLOW` with `token`.
async fn add_publisher(ci: &Ci, token: &str, tool: &str) -> (u16, Value) {
    ci.app
        .send(
            reqwest::Method::POST,
            &format!("/api/v1/tools/{tool}/trusted-publishers"),
            token,
            Some(json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": WORKFLOW})),
        )
        .await
}

/// Exchange a fresh ID token of `REPO`'s `WORKFLOW`, sending `tools` when given.
async fn exchange(ci: &Ci, tools: Option<Value>) -> reqwest::Response {
    let id_token = ci.issuer.mint(&ci.issuer.github_claims(REPO, WORKFLOW));
    let mut body = json!({ "token": id_token });
    if let Some(tools) = tools {
        body["tools"] = tools;
    }
    ci.app
        .client
        .post(ci.app.api("/api/v1/oidc/exchange"))
        .json(&body)
        .send()
        .await
        .expect("POST exchange")
}

/// [`exchange`], expecting 201; the answer.
async fn exchange_ok(ci: &Ci, tools: Option<Value>) -> Value {
    let (status, body) = read_json(exchange(ci, tools).await).await;
    assert_eq!(status, 201, "{body}");
    body
}

/// A problem's detail, asserting status, slug and that it contains `needle`.
async fn refused(res: reqwest::Response, status: u16, slug: &str, needle: &str) -> String {
    let body = problem(res, status, slug).await;
    let detail = body["detail"].as_str().unwrap_or_default().to_string();
    assert!(detail.contains(needle), "{needle:?} not in {detail:?}");
    detail
}

/// An agent token of the user holding `owner`.
async fn agent_token(ci: &Ci, owner: &str) -> String {
    let (status, body) = ci
        .app
        .send(
            reqwest::Method::POST,
            "/api/v1/tokens",
            owner,
            Some(json!({"name": "agent", "agent": true})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    body["token"].as_str().expect("token").to_string()
}

async fn agent_tokens_cannot_escalate_through_trusted_publishing(ci: Ci) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    let agent = agent_token(&ci, &alice).await;
    // The agent token itself may not publish a `function` tool...
    problem(
        ci.app
            .publish(&agent, BundleBuilder::function("ci-tool", "1.1.0").pack())
            .await,
        403,
        "tier-forbidden",
    )
    .await;
    // ...nor set up a trusted publisher that would.
    let (status, body) = add_publisher(&ci, &agent, "ci-tool").await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("agent token"),
        "{body}"
    );
    assert_eq!(ci.app.count("trusted_publishers").await, 0);

    // alice's own token sets one up; the agent token cannot remove it.
    let (status, added) = add_publisher(&ci, &alice, "ci-tool").await;
    assert_eq!(status, 201, "{added}");
    let id = added["id"].as_i64().expect("id");
    let (status, body) = ci
        .app
        .send(
            reqwest::Method::DELETE,
            &format!("/api/v1/tools/ci-tool/trusted-publishers/{id}"),
            &agent,
            None,
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(ci.app.count("trusted_publishers").await, 1);

    // Set up by alice's own token, it carries her tier.
    let token = exchange_ok(&ci, Some(json!(["ci-tool"]))).await["token"]
        .as_str()
        .expect("token")
        .to_string();
    ci.app
        .publish_ok(&token, BundleBuilder::function("ci-tool", "1.1.0").pack())
        .await;

    // A row an agent token set up before agent tokens were refused (the
    // migration marks those from the audit log) issues agent tokens, which
    // publish as `untrusted`: the `function` version is refused, an `http`
    // one still publishes.
    ci.app
        .state
        .db
        .write(|conn| {
            diesel::sql_query("UPDATE trusted_publishers SET creator_agent = TRUE")
                .execute(conn)?;
            Ok(())
        })
        .await
        .expect("mark the row");
    let token = exchange_ok(&ci, None).await["token"]
        .as_str()
        .expect("token")
        .to_string();
    refused(
        ci.app
            .publish(&token, BundleBuilder::function("ci-tool", "1.2.0").pack())
            .await,
        403,
        "tier-forbidden",
        "`untrusted`",
    )
    .await;
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.2.0").pack())
        .await;
}

async fn a_squatted_repository_still_exchanges_for_its_owner(ci: Ci) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    let mallory = ci.app.user("mallory", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    ci.app
        .publish_ok(&mallory, BundleBuilder::http("squat-tool", "1.0.0").pack())
        .await;
    // mallory registers alice's repository first, on her own tool.
    assert_eq!(add_publisher(&ci, &mallory, "squat-tool").await.0, 201);
    assert_eq!(add_publisher(&ci, &alice, "ci-tool").await.0, 201);

    // The job names the tool it publishes: alice's token, for it only.
    let exchanged = exchange_ok(&ci, Some(json!(["ci-tool"]))).await;
    assert_eq!(exchanged["tools"], json!(["ci-tool"]));
    let token = exchanged["token"].as_str().expect("token");
    let published = ci
        .app
        .publish_ok(token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;
    assert_eq!(published["name"], "ci-tool", "{published}");
    let (_, v) = read_json(ci.app.get("/api/v1/tools/ci-tool/1.1.0").await).await;
    assert_eq!(v["publisher"]["login"], "alice");
    problem(
        ci.app
            .publish(token, BundleBuilder::http("squat-tool", "1.1.0").pack())
            .await,
        403,
        "forbidden",
    )
    .await;

    // Without `tools`, the first registration no longer decides: two
    // owners match, and the answer says how to choose.
    let detail = refused(
        exchange(&ci, None).await,
        403,
        "forbidden",
        "different owners",
    )
    .await;
    assert!(detail.contains("`tools`"), "{detail}");

    // A tool no trusted publisher of this job covers, and bad lists.
    refused(
        exchange(&ci, Some(json!(["ci-tool", "elsewhere"]))).await,
        403,
        "forbidden",
        "`elsewhere`",
    )
    .await;
    for (bad, needle) in [
        (json!([]), "tools: name at least one"),
        (
            json!(["ci-tool", "ci-tool"]),
            "tools: `ci-tool` is named twice",
        ),
        (json!([""]), "tools: each tool name"),
        (
            json!((0..21).map(|i| format!("t{i}")).collect::<Vec<_>>()),
            "tools: at most 20",
        ),
    ] {
        refused(exchange(&ci, Some(bad)).await, 400, "bad-request", needle).await;
    }
    assert_eq!(ci.app.count("token_tools").await, 1);
}

async fn an_exchanged_token_only_publishes(ci: Ci) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    assert_eq!(add_publisher(&ci, &alice, "ci-tool").await.0, 201);
    let token = exchange_ok(&ci, Some(json!(["ci-tool"]))).await["token"]
        .as_str()
        .expect("token")
        .to_string();
    let before = ci.app.count("reports").await;
    let res = ci
        .app
        .client
        .post(ci.app.api("/api/v1/tools/ci-tool/1.0.0/reports"))
        .bearer_auth(&token)
        .json(&json!({"reason": "filed in alice's name by a CI run"}))
        .send()
        .await
        .expect("POST report");
    refused(res, 403, "forbidden", "only publishes").await;
    assert_eq!(ci.app.count("reports").await, before);
    refused(
        ci.app.get_authed("/api/v1/me", &token).await,
        403,
        "forbidden",
        "only publishes",
    )
    .await;
    // Publishing still works.
    ci.app
        .publish_ok(&token, BundleBuilder::http("ci-tool", "1.1.0").pack())
        .await;
}

async fn removing_an_environment_bound_publisher_stops_its_tokens(ci: Ci) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    let mut ids = Vec::new();
    for environment in ["release", "staging"] {
        let (status, added) = ci
            .app
            .send(
                reqwest::Method::POST,
                "/api/v1/tools/ci-tool/trusted-publishers",
                &alice,
                Some(json!({"issuer": ci.issuer.url, "repository": REPO,
                            "workflow": WORKFLOW, "environment": environment})),
            )
            .await;
        assert_eq!(status, 201, "{added}");
        ids.push(added["id"].as_i64().expect("id"));
    }
    let mut claims = ci.issuer.github_claims(REPO, WORKFLOW);
    claims["environment"] = json!("release");
    let (status, exchanged) = read_json(
        ci.app
            .client
            .post(ci.app.api("/api/v1/oidc/exchange"))
            .json(&json!({"token": ci.issuer.mint(&claims), "tools": ["ci-tool"]}))
            .send()
            .await
            .expect("POST exchange"),
    )
    .await;
    assert_eq!(status, 201, "{exchanged}");
    let token = exchanged["token"].as_str().expect("token");
    let (status, _) = ci
        .app
        .send(
            reqwest::Method::DELETE,
            &format!("/api/v1/tools/ci-tool/trusted-publishers/{}", ids[0]),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, 204);
    // The `staging` one remains, but the run was in `release`.
    refused(
        ci.app
            .publish(token, BundleBuilder::http("ci-tool", "1.1.0").pack())
            .await,
        403,
        "forbidden",
        "no trusted publisher of `ci-tool` accepts",
    )
    .await;
}

async fn a_fractional_exp_is_kept_until_the_real_expiry(ci: Ci) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    assert_eq!(add_publisher(&ci, &alice, "ci-tool").await.0, 201);
    let post = |id_token: String| {
        ci.app
            .client
            .post(ci.app.api("/api/v1/oidc/exchange"))
            .json(&json!({"token": id_token, "tools": ["ci-tool"]}))
            .send()
    };
    let mut claims = ci.issuer.github_claims(REPO, WORKFLOW);
    claims["exp"] = json!(claims["exp"].as_f64().expect("exp") + 0.5);
    let fractional = ci.issuer.mint(&claims);
    assert_eq!(post(fractional.clone()).await.expect("POST").status(), 201);
    // Another exchange prunes expired replay records; this one is not.
    exchange_ok(&ci, Some(json!(["ci-tool"]))).await;
    refused(
        post(fractional).await.expect("POST"),
        401,
        "unauthorized",
        "replayed",
    )
    .await;
    // An `exp` that is no time is refused, naming the claim.
    let mut claims = ci.issuer.github_claims(REPO, WORKFLOW);
    claims["exp"] = json!(1e20);
    refused(
        post(ci.issuer.mint(&claims)).await.expect("POST"),
        401,
        "unauthorized",
        "`exp`",
    )
    .await;
}

/// A trusted issuer that accepts connections and never answers.
fn stalled_issuer() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    url
}

/// An app trusting the local issuer and a [`stalled_issuer`]; its URL.
async fn start_with_stalled(backend: common::Backend) -> Option<(Ci, String)> {
    let issuer = toolreg_test_support::issuer::Issuer::start();
    let stalled = stalled_issuer();
    let app = common::TestApp::builder(backend)
        .with_trusted_issuer(&issuer.url)
        .with_trusted_issuer(&stalled)
        .start()
        .await?;
    Some((Ci { app, issuer }, stalled))
}

async fn a_stalled_issuer_stalls_no_one_else((ci, stalled): (Ci, String)) {
    let alice = ci.app.user("alice", Tier::Trusted).await;
    ci.app
        .publish_ok(&alice, BundleBuilder::http("ci-tool", "1.0.0").pack())
        .await;
    assert_eq!(add_publisher(&ci, &alice, "ci-tool").await.0, 201);

    let mut claims = ci.issuer.github_claims(REPO, WORKFLOW);
    claims["iss"] = json!(stalled);
    let stuck = ci
        .app
        .client
        .post(ci.app.api("/api/v1/oidc/exchange"))
        .json(&json!({"token": ci.issuer.mint(&claims)}))
        .send();
    let started = std::time::Instant::now();
    let (stuck, fast) = futures::join!(stuck, async {
        actix_web::rt::time::sleep(std::time::Duration::from_millis(200)).await;
        let t = std::time::Instant::now();
        let body = exchange_ok(&ci, Some(json!(["ci-tool"]))).await;
        (t.elapsed(), body)
    });
    assert!(
        fast.0 < std::time::Duration::from_secs(2),
        "the other issuer's exchange took {:?}",
        fast.0
    );
    // The stalled fetch gives up after its short timeout.
    let stuck = stuck.expect("POST");
    assert!(!stuck.status().is_success(), "{}", stuck.status());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );

    // A key rotated in right after a fetch (within the refetch interval)
    // is waited for, not refused: the first rotation makes the registry
    // fetch, the second one follows at once.
    for _ in 0..2 {
        ci.issuer.rotate();
        let body = exchange_ok(&ci, Some(json!(["ci-tool"]))).await;
        assert_eq!(body["tools"], json!(["ci-tool"]));
    }
}

both_backends!(async start_with_stalled => a_stalled_issuer_stalls_no_one_else);

both_backends!(async Ci::start =>
    a_fractional_exp_is_kept_until_the_real_expiry,
    removing_an_environment_bound_publisher_stops_its_tokens,
    agent_tokens_cannot_escalate_through_trusted_publishing,
    a_squatted_repository_still_exchanges_for_its_owner,
    an_exchanged_token_only_publishes,
);
