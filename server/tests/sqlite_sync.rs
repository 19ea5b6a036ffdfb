//! When an SQLite commit returns (`--sqlite-synchronous`): by default only
//! after the write-ahead log is flushed to the disk (`PRAGMA synchronous =
//! FULL`), so an acknowledged publish survives a power loss; `normal` is
//! the operator's choice to survive only a killed process. Every pooled
//! connection carries the level, and the flag refuses an unknown value by
//! name. (Publishes share their flushes through group commit on SQLite
//! too: `ops.rs` counts the batch at `/metrics`, `crash.rs` kills the
//! server mid-way.)

mod common;

use std::process::Command;

use common::BIN;
use diesel::prelude::*;
use diesel::sql_types::Integer;
use toolreg_server::db::{Db, DbConnection, DbOptions, SqliteSync};
use toolreg_server::error::{internal, AppResult};

#[derive(QueryableByName)]
struct Level {
    #[diesel(sql_type = Integer)]
    synchronous: i32,
}

fn level(conn: &mut DbConnection) -> AppResult<i32> {
    let DbConnection::Sqlite(c) = conn else {
        return Err(internal("an SQLite database"));
    };
    Ok(diesel::sql_query("PRAGMA synchronous")
        .get_result::<Level>(c)?
        .synchronous)
}

/// The level on `connections` connections of one pool, all held at once
/// (so each is its own connection, not one reused).
fn levels(db: &Db, connections: usize) -> Vec<i32> {
    let mut held = Vec::new();
    for _ in 0..connections {
        held.push(db.conn().expect("a pooled connection"));
    }
    held.iter_mut()
        .map(|c| level(c).expect("PRAGMA synchronous"))
        .collect()
}

#[test]
fn every_connection_flushes_each_commit_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("t.db").to_string_lossy().into_owned();
    let db = Db::connect(&url).expect("pool");
    // SQLite's FULL is 2.
    assert_eq!(levels(&db, 3), vec![2, 2, 2]);

    let db = Db::connect_with(
        &url,
        DbOptions {
            sqlite_synchronous: SqliteSync::Normal,
            ..DbOptions::default()
        },
    )
    .expect("pool");
    // NORMAL is 1.
    assert_eq!(levels(&db, 3), vec![1, 1, 1]);
}

#[test]
fn the_flag_names_its_values_and_refuses_others() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["--data", &tmp.path().to_string_lossy()])
        .args(["--sqlite-synchronous", "sometimes", "migrate"])
        .output()
        .expect("run toolreg-server");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--sqlite-synchronous"), "{stderr}");
    assert!(stderr.contains("sometimes"), "{stderr}");
    assert!(
        stderr.contains("full") && stderr.contains("normal"),
        "{stderr}"
    );
    assert!(
        !tmp.path().join("toolreg.db").exists(),
        "nothing is created on a refused flag"
    );

    // The environment variable takes the same values.
    let out = Command::new(BIN)
        .args(["--data", &tmp.path().to_string_lossy(), "migrate"])
        .env("TOOLREG_SQLITE_SYNCHRONOUS", "normal")
        .output()
        .expect("run toolreg-server");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tmp.path().join("toolreg.db").exists());
}
