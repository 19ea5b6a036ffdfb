//! The pool's check of a PostgreSQL connection, against a real database.
//! A connection that answered the check within the last second is handed
//! out without another one, so a connection the database closed meanwhile
//! may fail one query; it must then be dropped, not handed out again.
//! The batched lookups' own pool plans generic plans; the main pool keeps
//! PostgreSQL's default.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text};
use toolreg_server::db::{Db, DbConnection, DbOptions};
use toolreg_server::error::{internal, AppResult};
use toolreg_test_support::{services::connect_postgres, Services};

fn pg(conn: &mut DbConnection) -> AppResult<&mut PgConnection> {
    match conn {
        DbConnection::Postgresql(c) => Ok(c),
        DbConnection::Sqlite(_) => Err(internal("these tests run on PostgreSQL")),
    }
}

/// The server process id of the connection that runs the read.
async fn backend_pid(db: &Db) -> AppResult<i32> {
    db.read(|conn| {
        Ok(
            diesel::select(diesel::dsl::sql::<Integer>("pg_backend_pid()"))
                .get_result(pg(conn)?)?,
        )
    })
    .await
}

#[actix_web::test]
async fn a_connection_closed_by_the_database_is_dropped_after_one_failed_query() {
    let Some(services) = Services::postgres_only() else {
        return;
    };
    let url = services.database_url().expect("url");
    let db = Db::connect_with(
        &url,
        DbOptions {
            connections: Some(1),
            ..DbOptions::default()
        },
    )
    .expect("pool");
    let pid = backend_pid(&db).await.expect("first read");
    assert_eq!(
        backend_pid(&db).await.expect("second read"),
        pid,
        "one pooled connection"
    );

    let mut admin = connect_postgres(&url).expect("admin connection");
    let terminated: bool = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(&format!(
        "pg_terminate_backend({pid})"
    )))
    .get_result(&mut admin)
    .expect("terminate");
    assert!(terminated);

    // Within the second the connection is not checked when taken, so the
    // next read may find it closed; the one after must not.
    let _ = backend_pid(&db).await;
    let fresh = backend_pid(&db)
        .await
        .expect("the read after the one that found the connection closed");
    assert_ne!(fresh, pid, "a new connection replaced the closed one");
    let rows: i64 = db
        .read(|conn| {
            Ok(diesel::select(diesel::dsl::sql::<BigInt>("1::bigint")).get_result(pg(conn)?)?)
        })
        .await
        .expect("reads go on");
    assert_eq!(rows, 1);
}

/// `plan_cache_mode` of the connection that runs the read.
async fn plan_cache_mode(db: &Db) -> AppResult<String> {
    db.read(|conn| {
        Ok(diesel::select(diesel::dsl::sql::<Text>(
            "current_setting('plan_cache_mode')",
        ))
        .get_result(pg(conn)?)?)
    })
    .await
}

#[actix_web::test]
async fn only_the_batched_lookups_pool_forces_generic_plans() {
    let Some(services) = Services::postgres_only() else {
        return;
    };
    let url = services.database_url().expect("url");
    let db = Db::connect(&url).expect("pool");
    let batched = db
        .for_batched_lookups(2)
        .expect("the batched lookups' pool");
    assert_eq!(
        plan_cache_mode(&batched).await.expect("read"),
        "force_generic_plan"
    );
    assert_eq!(plan_cache_mode(&db).await.expect("read"), "auto");
    assert_ne!(
        backend_pid(&batched).await.expect("read"),
        backend_pid(&db).await.expect("read"),
        "a pool of its own"
    );
}
