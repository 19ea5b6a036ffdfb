//! A server started with a different `--policy` re-checks every version:
//! what the policy now forbids is blocked (download 403, `blocked: true`),
//! what it allows again is unblocked, in one transaction with change-log and
//! audit entries; a policy other than the last one recorded is logged as a
//! warning (replicas with different policies disagree on blocks). Runs the
//! real binary on SQLite + files and, when available, PostgreSQL + S3.

mod common;

use common::{registry_with, BundleBuilder};
use reqwest::blocking::Client;
use serde_json::Value;
use toolreg_test_support::{ServerProcess, Services};

fn get(client: &Client, server: &ServerProcess, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = client.get(server.api(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().expect("GET");
    let status = res.status().as_u16();
    let text = res.text().expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn a_stricter_policy_at_restart_blocks_old_versions(env: &[(String, String)]) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let bob = registry_with(&data, env).create_user("bob", "untrusted", false);
    let root = registry_with(&data, env).create_user("root", "trusted", true);
    let client = Client::new();
    let download = "/api/v1/tools/weather-lookup/1.0.0/download";

    let mut server = registry_with(&data, env).serve(&[]);
    let res = server.publish(
        &client,
        &bob,
        BundleBuilder::http("weather-lookup", "1.0.0").pack(),
    );
    assert_eq!(res.status(), 201, "{}", res.text().unwrap_or_default());
    assert_eq!(get(&client, &server, download, None).0, 200);
    server.kill();

    // Restarted with `http` needing `verified`: bob's old version is blocked.
    let mut server = registry_with(&data, env).serve(&["--policy", "http=verified"]);
    let (status, body) = get(&client, &server, download, None);
    assert_eq!(status, 403, "{body:#}");
    let (_, tool) = get(&client, &server, "/api/v1/tools/weather-lookup", None);
    assert_eq!(tool["versions"][0]["blocked"], true, "{tool:#}");
    let (_, version) = get(&client, &server, "/api/v1/tools/weather-lookup/1.0.0", None);
    assert_eq!(version["blocked"], true, "{version:#}");
    let (status, _) = get(
        &client,
        &server,
        "/api/v1/resolve/weather-lookup?req=%5E1",
        None,
    );
    assert_ne!(status, 200, "a blocked version does not resolve");
    assert!(
        server.log_text().contains("tier policy differs"),
        "the changed policy is logged as a warning:\n{}",
        server.log_text()
    );
    let (status, audit) = get(&client, &server, "/api/v1/audit", Some(&root));
    assert_eq!(status, 200, "{audit:#}");
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert!(
        actions.contains(&"block") && actions.contains(&"policy_apply"),
        "{actions:?}"
    );
    server.kill();

    // The same policy again: nothing to re-check, still blocked, no warning.
    let mut server = registry_with(&data, env).serve(&["--policy", "http=verified"]);
    assert_eq!(get(&client, &server, download, None).0, 403);
    assert!(!server.log_text().contains("tier policy differs"));
    server.kill();

    // Back to the default: unblocked again.
    let server = registry_with(&data, env).serve(&[]);
    assert_eq!(get(&client, &server, download, None).0, 200);
    let (_, tool) = get(&client, &server, "/api/v1/tools/weather-lookup", None);
    assert_eq!(tool["versions"][0]["blocked"], false, "{tool:#}");
}

#[test]
fn a_stricter_policy_at_restart_blocks_old_versions_sqlite() {
    a_stricter_policy_at_restart_blocks_old_versions(&[]);
}

#[test]
fn a_stricter_policy_at_restart_blocks_old_versions_postgres() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    a_stricter_policy_at_restart_blocks_old_versions(&services.env());
}
