//! Group commit on PostgreSQL (`Db::write_grouped`, what publish writes
//! through), against a real database: concurrent writes share one
//! transaction, each is answered only once it is committed, a failing write
//! is rolled back alone, and a write that waits for a lock does not hold
//! the rest of its batch.
//!
//! Each test first parks the committing thread on a row that an outside
//! transaction holds, so that the writes it queues meanwhile are one batch.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use toolreg_server::db::{Db, DbConnection};
use toolreg_server::error::{internal, AppResult};
use toolreg_test_support::{services::connect_postgres, Services};

/// A PostgreSQL database of the test's own with the table the writes use,
/// and a connection outside the pool to hold locks with.
fn start() -> Option<(Services, Db, PgConnection)> {
    let services = Services::postgres_only()?;
    let url = services.database_url()?;
    let db = Db::connect(&url).expect("pool");
    let mut outside = connect_postgres(&url).expect("outside connection");
    outside
        .batch_execute(
            "CREATE TABLE rows (id BIGINT PRIMARY KEY, txid BIGINT NOT NULL); \
             CREATE TABLE gates (id BIGINT PRIMARY KEY); \
             INSERT INTO gates VALUES (1), (2), (3);",
        )
        .expect("tables");
    Some((services, db, outside))
}

fn pg(conn: &mut DbConnection) -> AppResult<&mut PgConnection> {
    match conn {
        DbConnection::Postgresql(c) => Ok(c),
        DbConnection::Sqlite(_) => Err(internal("these tests run on PostgreSQL")),
    }
}

/// Insert row `id`, stamped with the transaction it ran in; answer that
/// transaction's id.
fn insert(conn: &mut DbConnection, id: i64) -> AppResult<i64> {
    let c = pg(conn)?;
    let txid: i64 = diesel::select(diesel::dsl::sql::<BigInt>("txid_current()")).get_result(c)?;
    diesel::sql_query(format!("INSERT INTO rows VALUES ({id}, {txid})")).execute(c)?;
    Ok(txid)
}

/// Wait for the gate row `gate` (held by an outside transaction), then insert `id`.
fn through_gate(conn: &mut DbConnection, gate: i64, id: i64) -> AppResult<i64> {
    diesel::sql_query(format!("SELECT id FROM gates WHERE id = {gate} FOR UPDATE"))
        .execute(pg(conn)?)?;
    insert(conn, id)
}

/// Hold gate rows in an open transaction of `outside`.
fn hold(outside: &mut PgConnection, gates: &[i64]) {
    let list = gates
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    outside
        .batch_execute(&format!(
            "BEGIN; SELECT id FROM gates WHERE id IN ({list}) FOR UPDATE;"
        ))
        .expect("hold the gates");
}

/// Wait until some backend is waiting for a lock (the committing thread on
/// a held gate). Sleeps on the runtime, so that the spawned writes run.
async fn until_waiting_on_a_lock(url: &str) {
    let mut watcher = connect_postgres(url).expect("watcher");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: i64 = diesel::select(diesel::dsl::sql::<BigInt>(
            "(SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock')",
        ))
        .get_result(&mut watcher)
        .expect("pg_stat_activity");
        if waiting > 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no write ever waited on the gate"
        );
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Park the committing thread: hold gate 1 in `outside` and queue a write
/// that waits for it (it inserts row 0), until it does.
async fn park(
    db: &Db,
    outside: &mut PgConnection,
    url: &str,
) -> actix_web::rt::task::JoinHandle<AppResult<i64>> {
    hold(outside, &[1]);
    let parked = actix_web::rt::spawn({
        let db = db.clone();
        async move { db.write_grouped(|conn| through_gate(conn, 1, 0)).await }
    });
    until_waiting_on_a_lock(url).await;
    parked
}

fn visible(url: &str, id: i64) -> bool {
    let mut c = connect_postgres(url).expect("reader");
    let n: i64 = diesel::select(diesel::dsl::sql::<BigInt>(&format!(
        "(SELECT count(*) FROM rows WHERE id = {id})"
    )))
    .get_result(&mut c)
    .expect("count");
    n == 1
}

#[actix_web::test]
async fn queued_writes_share_one_transaction_and_are_answered_once_committed() {
    let Some((services, db, mut outside)) = start() else {
        return;
    };
    let url = services.database_url().expect("url");
    let parked = park(&db, &mut outside, &url).await;

    // Twenty writes queue behind the parked batch; each checks, as soon as
    // it is answered, that its row is visible to another connection.
    let writes: Vec<_> = (1..=20)
        .map(|id| {
            let (db, url) = (db.clone(), url.clone());
            actix_web::rt::spawn(async move {
                let txid = db.write_grouped(move |conn| insert(conn, id)).await?;
                let seen = actix_web::web::block(move || visible(&url, id))
                    .await
                    .map_err(|e| internal(e.to_string()))?;
                AppResult::Ok((txid, seen))
            })
        })
        .collect();
    // Every write is queued before the gate opens.
    actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    outside.batch_execute("COMMIT").expect("open the gate");

    let parked_txid = parked.await.expect("task").expect("parked write");
    let mut txids = Vec::new();
    for w in writes {
        let (txid, seen) = w.await.expect("task").expect("write");
        assert!(seen, "a write was answered before its row was committed");
        txids.push(txid);
    }
    txids.dedup();
    assert_eq!(
        txids.len(),
        1,
        "the 20 queued writes ran in {} transactions, not one",
        txids.len()
    );
    assert_ne!(
        txids[0], parked_txid,
        "the queued writes joined the parked batch"
    );
    let counts = db.group_commit_counts();
    assert_eq!(
        counts.batches.load(Ordering::Relaxed),
        2,
        "two transactions"
    );
    assert_eq!(
        counts.writes.load(Ordering::Relaxed),
        21,
        "21 writes answered"
    );
    assert_eq!(counts.moved.load(Ordering::Relaxed), 0, "none moved");
}

#[actix_web::test]
async fn a_failing_write_is_rolled_back_alone_and_answers_its_own_error() {
    let Some((services, db, mut outside)) = start() else {
        return;
    };
    let url = services.database_url().expect("url");
    let parked = park(&db, &mut outside, &url).await;

    let write = |id: i64| {
        let db = db.clone();
        actix_web::rt::spawn(async move { db.write_grouped(move |conn| insert(conn, id)).await })
    };
    let before = write(1);
    // Inserts row 100, then row 0 again (a unique violation, which aborts
    // the statement's transaction on PostgreSQL).
    let failing = actix_web::rt::spawn({
        let db = db.clone();
        async move {
            db.write_grouped(|conn| {
                insert(conn, 100)?;
                insert(conn, 0)
            })
            .await
        }
    });
    let after = write(2);
    actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    outside.batch_execute("COMMIT").expect("open the gate");

    parked.await.expect("task").expect("parked write");
    before
        .await
        .expect("task")
        .expect("the write before the failing one");
    after
        .await
        .expect("task")
        .expect("the write after the failing one");
    let err = failing.await.expect("task").expect_err("a duplicate key");
    assert!(
        toolreg_server::db::is_unique_violation(&err),
        "the failing write answered {err}, not its unique violation"
    );
    assert!(
        visible(&url, 1) && visible(&url, 2),
        "the other writes committed"
    );
    assert!(
        !visible(&url, 100),
        "the failing write's first insert was kept"
    );
}

#[actix_web::test]
async fn a_write_waiting_for_a_lock_moves_to_the_next_batch() {
    let Some((services, db, mut outside)) = start() else {
        return;
    };
    let url = services.database_url().expect("url");
    // Gate 1 parks the committing thread; gate 2, held by another
    // transaction, is what one write of the next batch needs.
    let mut holder = connect_postgres(&url).expect("holder");
    hold(&mut holder, &[2]);
    let parked = park(&db, &mut outside, &url).await;

    let spawn_write = |f: fn(&mut DbConnection) -> AppResult<i64>| {
        let db = db.clone();
        actix_web::rt::spawn(async move { db.write_grouped(f).await })
    };
    let first = spawn_write(|conn| insert(conn, 1));
    let blocked = spawn_write(|conn| through_gate(conn, 2, 2));
    let last = spawn_write(|conn| insert(conn, 3));
    actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    outside.batch_execute("COMMIT").expect("open gate 1");

    // The writes around the blocked one commit while gate 2 is still held.
    let within = |task| actix_web::rt::time::timeout(Duration::from_secs(10), task);
    within(parked)
        .await
        .expect("the parked write waited for gate 2")
        .expect("task")
        .expect("parked write");
    let first = within(first)
        .await
        .expect("the first write waited for gate 2")
        .expect("task")
        .expect("first write");
    let last = within(last)
        .await
        .expect("the last write waited for gate 2")
        .expect("task")
        .expect("last write");
    assert_eq!(first, last, "the two free writes shared their batch");
    assert!(
        !blocked.is_finished(),
        "the blocked write was answered while its lock was held"
    );

    holder.batch_execute("COMMIT").expect("open gate 2");
    let blocked = blocked
        .await
        .expect("task")
        .expect("the blocked write, in a later batch");
    assert_ne!(
        blocked, first,
        "the blocked write ran again in a batch of its own"
    );
    let counts = db.group_commit_counts();
    assert_eq!(counts.moved.load(Ordering::Relaxed), 1, "one write moved");
    assert_eq!(
        counts.writes.load(Ordering::Relaxed),
        4,
        "every write answered once"
    );
    assert!(visible(&url, 2));
}
