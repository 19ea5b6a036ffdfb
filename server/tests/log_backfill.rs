//! Versions published before the transparency log existed get their records
//! when the server starts, in publish order, and `verify` then passes.

mod common;

use common::{registry_with, BundleBuilder};
use diesel::prelude::*;
use reqwest::blocking::Client;

#[test]
fn versions_without_records_are_logged_on_start() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let token = registry_with(&data, &[]).create_user("alice", "verified", false);
    let server = registry_with(&data, &[]).serve(&[]);
    let client = Client::new();
    for version in ["1.0.0", "1.1.0", "2.0.0"] {
        let res = server.publish(
            &client,
            &token,
            BundleBuilder::http("old-tool", version).pack(),
        );
        assert_eq!(res.status(), 201);
    }
    drop(server);

    // As if these versions predate the log.
    let db = data.join("toolreg.db");
    let mut conn = diesel::SqliteConnection::establish(db.to_str().unwrap()).unwrap();
    diesel::sql_query("DELETE FROM log_entries")
        .execute(&mut conn)
        .unwrap();
    diesel::sql_query("DELETE FROM log_hashes")
        .execute(&mut conn)
        .unwrap();
    let out = registry_with(&data, &[]).run(&["verify"]);
    assert!(
        !out.status.success(),
        "verify notices the versions have no records"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("old-tool@2.0.0 sha256:"));

    let server = registry_with(&data, &[]).serve(&[]);
    for (index, version) in ["1.0.0", "1.1.0", "2.0.0"].iter().enumerate() {
        let meta: serde_json::Value = client
            .get(server.api(&format!("/api/v1/tools/old-tool/{version}")))
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(
            meta["log_index"], index as i64,
            "{version} logged in publish order"
        );
    }
    drop(server);
    let out = registry_with(&data, &[]).run(&["verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
