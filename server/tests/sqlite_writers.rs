//! Two processes writing one SQLite database (the server and an `admin`
//! subcommand beside it): a write transaction that reads before it writes
//! must wait for the other's commit, not fail with "database is locked".
//! Two `Db` pools on one file stand for the two processes: each queues its
//! own writers on its own lock, so only SQLite's locking is between them.

use std::sync::Arc;
use std::thread;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use toolreg_server::db::{Db, DbConnection};
use toolreg_server::error::{internal, AppResult};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn sqlite(conn: &mut DbConnection) -> AppResult<&mut SqliteConnection> {
    match conn {
        DbConnection::Sqlite(c) => Ok(c),
        DbConnection::Postgresql(_) => Err(internal("an SQLite database")),
    }
}

/// Read the row count, then insert: the shape of `admin create-user` (a
/// lookup, then the insert) and of most write transactions.
fn read_then_write(conn: &mut DbConnection, writer: i64) -> AppResult<()> {
    let c = sqlite(conn)?;
    let seen = diesel::sql_query("SELECT count(*) AS n FROM rows")
        .get_result::<Count>(c)?
        .n;
    diesel::sql_query("INSERT INTO rows (writer, seen) VALUES (?, ?)")
        .bind::<BigInt, _>(writer)
        .bind::<BigInt, _>(seen)
        .execute(c)?;
    Ok(())
}

#[actix_web::test]
async fn a_write_beside_another_process_commit_waits_instead_of_failing() {
    const WRITES: i64 = 150;
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("t.db").to_string_lossy().into_owned();
    let first = Db::connect(&url).expect("pool");
    first
        .conn()
        .expect("connection")
        .batch_execute("CREATE TABLE rows (writer INTEGER NOT NULL, seen INTEGER NOT NULL)")
        .expect("table");
    let first = Arc::new(first);
    let second = Arc::new(Db::connect(&url).expect("second pool"));

    let writers: Vec<_> = [(1, first.clone()), (2, second.clone())]
        .into_iter()
        .map(|(writer, db)| {
            thread::spawn(move || {
                (0..WRITES)
                    .map(|_| {
                        db.write_blocking(|conn| read_then_write(conn, writer))
                            .map_err(|e| e.to_string())
                    })
                    .filter_map(Result::err)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for writer in writers {
        let errors = writer.join().expect("writer thread");
        assert!(
            errors.is_empty(),
            "{} failed writes: {:?}",
            errors.len(),
            &errors[..errors.len().min(3)]
        );
    }
    let total = first
        .read(|conn| {
            Ok(diesel::sql_query("SELECT count(*) AS n FROM rows")
                .get_result::<Count>(sqlite(conn)?)?
                .n)
        })
        .await
        .expect("count");
    assert_eq!(total, 2 * WRITES);
}
