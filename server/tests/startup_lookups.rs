//! At start-up the server looks for versions that still lack a filled-in
//! value (their SemVer order key, their definition fingerprint), and those
//! lookups read an index holding only such versions instead of every
//! version row (which on a large registry dominated the time to the first
//! answer). The query plans name those indexes; the fills themselves are
//! tested by `migrations.rs` and `log_backfill.rs`.

mod common;

use common::registry_with;
use diesel::prelude::*;
use diesel::sql_types::Text;

#[derive(QueryableByName)]
struct PlanRow {
    #[diesel(sql_type = Text)]
    detail: String,
}

fn plan(conn: &mut SqliteConnection, query: &str) -> String {
    diesel::sql_query(format!("EXPLAIN QUERY PLAN {query}"))
        .load::<PlanRow>(conn)
        .expect("explain")
        .into_iter()
        .map(|r| r.detail)
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn start_up_fill_lookups_read_only_the_versions_still_missing_a_value() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // Creating a user migrates the database.
    registry_with(&data, &[]).create_user("alice", "verified", false);
    let db = data.join("toolreg.db");
    let mut conn = SqliteConnection::establish(db.to_str().unwrap()).unwrap();

    // The lookups of `fill_order` and `fill_fingerprints`. `fill_order`'s
    // condition is the model's own SQL text.
    let order = plan(
        &mut conn,
        &format!(
            "SELECT id, version FROM versions WHERE {} ORDER BY id LIMIT ?",
            toolreg_server::models::version::WITHOUT_ORDER
        ),
    );
    assert!(order.contains("versions_without_order"), "{order}");
    // The same condition with the value bound as a parameter (what
    // diesel's `.eq("")` sends) cannot use the partial index: SQLite scans
    // every version row, which is what start-up did at 100,000 versions.
    let bound = plan(
        &mut conn,
        "SELECT id, version FROM versions WHERE version_order = ? ORDER BY id LIMIT ?",
    );
    assert!(!bound.contains("versions_without_order"), "{bound}");
    let fingerprints = plan(
        &mut conn,
        "SELECT versions.id, version_contents.manifest FROM versions \
         INNER JOIN version_contents ON version_contents.version_id = versions.id \
         WHERE versions.definition_sha256 IS NULL AND versions.id > 0 \
         ORDER BY versions.id LIMIT 200",
    );
    assert!(
        fingerprints.contains("versions_without_fingerprint"),
        "{fingerprints}"
    );
}
