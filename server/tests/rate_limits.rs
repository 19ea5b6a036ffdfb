//! Rate limits on publish and token creation, through the real
//! binary and its flags: past the limit the answer is `429` problem+json
//! with `Retry-After` and nothing is stored; the window resets; the per-IP
//! limit counts every token from one address (an IPv6 client per /64), the
//! per-user limit every token a user mints; `--trust-proxy` decides
//! whether `X-Forwarded-For` is believed; two replicas on one PostgreSQL
//! database share the count; a malformed limit is refused at start.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{registry_with, BundleBuilder};
use reqwest::blocking::{Client, Response};
use serde_json::Value;
use toolreg_test_support::{ServerProcess, Services};

/// Sleep until just after the start of the next `window`-second window, so a
/// short burst of requests lands in one fixed window.
fn align_to_window(window: u64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64;
    let into = now % (window * 1000);
    std::thread::sleep(Duration::from_millis(window * 1000 - into + 50));
}

/// Assert a 429 rate-limited problem; returns (Retry-After, body).
fn assert_limited(res: Response, within_window: u64) -> (u64, Value) {
    assert_eq!(
        res.status(),
        429,
        "expected 429, got {}: {}",
        res.status(),
        res.text().unwrap_or_default()
    );
    let ct = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert_eq!(ct, "application/problem+json");
    let retry_after: u64 = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a numeric Retry-After header");
    assert!(
        (1..=within_window).contains(&retry_after),
        "Retry-After {retry_after} outside 1..={within_window}"
    );
    let body: Value = res.json().expect("problem JSON");
    assert_eq!(
        body["type"], "https://toolreg.dev/problems/rate-limited",
        "{body:#}"
    );
    assert_eq!(body["status"], 429);
    (retry_after, body)
}

fn bundle(name: &str, version: &str) -> Vec<u8> {
    BundleBuilder::http(name, version).pack()
}

#[test]
fn publishes_past_the_token_limit_are_429_with_retry_after_and_the_window_resets() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let token = registry_with(&data, &[]).create_user("alice", "verified", false);
    let server = registry_with(&data, &[]).serve(&["--rate-limit-publish", "2/4s"]);
    let client = Client::new();

    align_to_window(4);
    assert_eq!(
        server
            .publish(&client, &token, bundle("limited-one", "1.0.0"))
            .status(),
        201
    );
    assert_eq!(
        server
            .publish(&client, &token, bundle("limited-two", "1.0.0"))
            .status(),
        201
    );
    let (retry_after, body) = assert_limited(
        server.publish(&client, &token, bundle("limited-three", "1.0.0")),
        4,
    );
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("at most 2 publishes per 4 seconds"),
        "the detail names the limit: {detail}"
    );

    // Nothing of the refused publish is stored.
    let res = client
        .get(server.api("/api/v1/tools/limited-three"))
        .send()
        .expect("GET");
    assert_eq!(
        res.status(),
        404,
        "a rate-limited publish must store nothing"
    );

    // After Retry-After, the next window takes publishes again.
    std::thread::sleep(Duration::from_secs(retry_after) + Duration::from_millis(100));
    let res = server.publish(&client, &token, bundle("limited-three", "1.0.0"));
    assert_eq!(
        res.status(),
        201,
        "after Retry-After: {}",
        res.text().unwrap_or_default()
    );
}

#[test]
fn the_ip_limit_counts_every_token_from_one_address() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let alice = registry_with(&data, &[]).create_user("alice", "verified", false);
    let bob = registry_with(&data, &[]).create_user("bob", "verified", false);
    let carol = registry_with(&data, &[]).create_user("carol", "verified", false);
    let plain = registry_with(&data, &[]).serve(&["--rate-limit-publish", "2/10s"]);
    let client = Client::new();

    align_to_window(10);
    // X-Forwarded-For is not believed without --trust-proxy: it cannot dodge the IP limit.
    let forwarded = |server: &ServerProcess, token: &str, name: &str, ip: &str| {
        client
            .post(server.api("/api/v1/tools"))
            .bearer_auth(token)
            .header("content-type", "application/gzip")
            .header("x-forwarded-for", ip)
            .body(bundle(name, "1.0.0"))
            .send()
            .expect("publish")
    };
    assert_eq!(
        forwarded(&plain, &alice, "ip-one", "10.0.0.1").status(),
        201
    );
    assert_eq!(forwarded(&plain, &bob, "ip-two", "10.0.0.2").status(), 201);
    // Carol's token is fresh, but the address has had its 2 publishes.
    let (_, body) = assert_limited(forwarded(&plain, &carol, "ip-three", "10.0.0.3"), 10);
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("per IP address"),
        "the detail says the IP limit was hit: {detail}"
    );
    drop(plain);

    // Behind a trusted proxy, each forwarded client address has its own count.
    let dave = registry_with(&data, &[]).create_user("dave", "verified", false);
    let erin = registry_with(&data, &[]).create_user("erin", "verified", false);
    let proxied =
        registry_with(&data, &[]).serve(&["--rate-limit-publish", "2/10s", "--trust-proxy"]);
    align_to_window(10);
    assert_eq!(
        forwarded(&proxied, &alice, "proxy-one", "10.0.1.1").status(),
        201
    );
    assert_eq!(
        forwarded(&proxied, &bob, "proxy-two", "10.0.1.1").status(),
        201
    );
    assert_eq!(
        forwarded(&proxied, &carol, "proxy-three", "10.0.1.2").status(),
        201,
        "another client address"
    );
    assert_eq!(
        forwarded(&proxied, &dave, "proxy-four", "10.0.1.2").status(),
        201
    );
    // A client cannot forge its address: only the hop our proxy appended (the last) counts.
    assert_limited(
        forwarded(&proxied, &erin, "proxy-five", "203.0.113.9, 10.0.1.1"),
        10,
    );
}

#[test]
fn token_creation_is_limited() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let token = registry_with(&data, &[]).create_user("alice", "verified", false);
    let server = registry_with(&data, &[]).serve(&[
        "--rate-limit-tokens",
        "2/10s",
        "--rate-limit-publish",
        "0",
    ]);
    let client = Client::new();
    let create = |name: &str| {
        client
            .post(server.api("/api/v1/tokens"))
            .bearer_auth(&token)
            .json(&serde_json::json!({"name": name}))
            .send()
            .expect("POST /api/v1/tokens")
    };
    align_to_window(10);
    assert_eq!(create("ci-1").status(), 201);
    assert_eq!(create("ci-2").status(), 201);
    let (_, body) = assert_limited(create("ci-3"), 10);
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("token creations"),
        "{body:#}"
    );
    // The refused token was not created.
    let list: Value = client
        .get(server.api("/api/v1/tokens"))
        .bearer_auth(&token)
        .send()
        .expect("list")
        .json()
        .expect("JSON");
    let names: Vec<&str> = list["tokens"]
        .as_array()
        .expect("tokens")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        !names.contains(&"ci-3"),
        "a rate-limited token creation stored a token: {names:?}"
    );

    // With publishing unlimited (`0`), many publishes pass.
    for i in 0..5 {
        assert_eq!(
            server
                .publish(&client, &token, bundle(&format!("unlimited-{i}"), "1.0.0"))
                .status(),
            201
        );
    }
}

#[test]
fn a_malformed_limit_is_refused_at_start_with_the_syntax() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out =
        registry_with(tmp.path(), &[]).run(&["serve", "--rate-limit-publish", "60/fortnight"]);
    assert_eq!(out.status.code(), Some(2), "a bad flag is a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--rate-limit-publish") && stderr.contains("COUNT/PERIOD"),
        "{stderr}"
    );

    let out = registry_with(
        tmp.path(),
        &[("TOOLREG_RATE_LIMIT_TOKENS".into(), "lots".into())],
    )
    .command()
    .arg("serve")
    .output()
    .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("COUNT/PERIOD"));
}

#[test]
fn two_replicas_on_one_database_share_the_count() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    let env = services.env();
    let tmp = tempfile::tempdir().expect("tempdir");
    let token = registry_with(&tmp.path().join("a"), &env).create_user("alice", "verified", false);
    let a = registry_with(&tmp.path().join("a"), &env).serve(&["--rate-limit-publish", "3/10s"]);
    let b = registry_with(&tmp.path().join("b"), &env).serve(&["--rate-limit-publish", "3/10s"]);
    let client = Client::new();

    align_to_window(10);
    assert_eq!(
        a.publish(&client, &token, bundle("shared-one", "1.0.0"))
            .status(),
        201
    );
    assert_eq!(
        b.publish(&client, &token, bundle("shared-two", "1.0.0"))
            .status(),
        201
    );
    assert_eq!(
        a.publish(&client, &token, bundle("shared-three", "1.0.0"))
            .status(),
        201
    );
    // Replica B has seen one publish itself, but the shared count is 3.
    assert_limited(
        b.publish(&client, &token, bundle("shared-four", "1.0.0")),
        10,
    );
    assert_limited(
        a.publish(&client, &token, bundle("shared-four", "1.0.0")),
        10,
    );
}

#[test]
fn minted_tokens_share_their_users_count_and_ipv6_counts_per_64() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let alice = registry_with(&data, &[]).create_user("alice", "verified", false);
    let bob = registry_with(&data, &[]).create_user("bob", "verified", false);
    let carol = registry_with(&data, &[]).create_user("carol", "verified", false);
    let dave = registry_with(&data, &[]).create_user("dave", "verified", false);
    let erin = registry_with(&data, &[]).create_user("erin", "verified", false);
    let server = registry_with(&data, &[]).serve(&[
        "--rate-limit-publish",
        "2/10s",
        "--rate-limit-tokens",
        "0",
        "--trust-proxy",
    ]);
    let client = Client::new();
    let mint = |token: &str, name: &str| -> String {
        let body: Value = client
            .post(server.api("/api/v1/tokens"))
            .bearer_auth(token)
            .json(&serde_json::json!({"name": name}))
            .send()
            .expect("POST /api/v1/tokens")
            .json()
            .expect("JSON");
        body["token"].as_str().expect("a new token").to_string()
    };
    let minted: Vec<String> = (0..3)
        .map(|i| mint(&alice, &format!("fresh-{i}")))
        .collect();
    let forwarded = |token: &str, name: &str, ip: &str| {
        client
            .post(server.api("/api/v1/tools"))
            .bearer_auth(token)
            .header("content-type", "application/gzip")
            .header("x-forwarded-for", ip)
            .body(bundle(name, "1.0.0"))
            .send()
            .expect("publish")
    };

    align_to_window(10);
    // Fresh tokens from fresh addresses: the user's count still applies.
    assert_eq!(forwarded(&minted[0], "user-one", "10.0.2.1").status(), 201);
    assert_eq!(forwarded(&minted[1], "user-two", "10.0.2.2").status(), 201);
    let (_, body) = assert_limited(forwarded(&minted[2], "user-three", "10.0.2.3"), 10);
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("per user"), "{detail}");

    // Addresses in one IPv6 /64 are one client; another /64 is another.
    assert_eq!(forwarded(&bob, "v6-one", "2001:db8:1:2::1").status(), 201);
    assert_eq!(
        forwarded(&carol, "v6-two", "2001:db8:1:2:aaaa:bbbb:cccc:dddd").status(),
        201
    );
    let (_, body) = assert_limited(forwarded(&dave, "v6-three", "2001:db8:1:2::ffff"), 10);
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("per IP address"), "{detail}");
    assert_eq!(forwarded(&erin, "v6-four", "2001:db8:1:3::1").status(), 201);
}
