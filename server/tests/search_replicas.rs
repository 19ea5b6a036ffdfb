//! Two real `toolreg-server` processes on one PostgreSQL database, each with
//! its own search index: a publish or yank on one is visible in search on the
//! other within 2 s (each replica tails the shared change log).
//! Skipped with a message when PostgreSQL is unreachable, unless `CI` is set.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::BundleBuilder;
use diesel::prelude::*;
use serde_json::Value;

const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
const BIN: &str = env!("CARGO_BIN_EXE_toolreg-server");

/// A database of our own, dropped at the end.
struct TestDb {
    name: String,
}

impl TestDb {
    fn create() -> Option<TestDb> {
        let mut conn = match toolreg_server::db::connect_postgres(PG_ADMIN_URL) {
            Ok(c) => c,
            Err(e) => {
                if std::env::var_os("CI").is_some() {
                    panic!("PostgreSQL is required in CI: {e}");
                }
                eprintln!("SKIPPED: PostgreSQL unreachable at {PG_ADMIN_URL}: {e}");
                return None;
            }
        };
        let name = format!("toolreg_replicas_{}", std::process::id());
        let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut conn);
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .expect("create database");
        Some(TestDb { name })
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/{}", self.name)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut conn) = toolreg_server::db::connect_postgres(PG_ADMIN_URL) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&mut conn);
        }
    }
}

/// A running server process, killed when dropped.
struct Replica {
    child: Child,
    url: String,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn command(data: &Path, db: &TestDb, storage: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env("TOOLREG_DATA_DIR", data)
        .env("TOOLREG_DATABASE_URL", db.url())
        .env("TOOLREG_STORAGE", format!("file://{}", storage.display()))
        .env("RUST_LOG", "warn");
    cmd
}

async fn start_replica(data: &Path, db: &TestDb, storage: &Path) -> Replica {
    let port = free_port();
    let child = command(data, db, storage)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .spawn()
        .expect("start toolreg-server");
    let replica = Replica {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    let start = Instant::now();
    loop {
        if let Ok(res) = client.get(format!("{}/healthz", replica.url)).send().await {
            if res.status().is_success() {
                break;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "replica on port {port} did not start"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    replica
}

async fn search(client: &reqwest::Client, replica: &Replica, q: &str) -> Value {
    let res = client
        .get(format!("{}/api/v1/search?q={q}", replica.url))
        .send()
        .await
        .expect("search");
    assert_eq!(res.status(), 200);
    res.json().await.expect("search JSON")
}

/// Polls replica `r` until `ok` holds; panics after `within`; returns the time taken.
async fn eventually(
    client: &reqwest::Client,
    r: &Replica,
    q: &str,
    within: Duration,
    ok: impl Fn(&Value) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        let body = search(client, r, q).await;
        if ok(&body) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "search?q={q} on {} still {body} after {within:?}",
            r.url
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_web::test]
async fn a_publish_on_one_replica_is_searchable_on_the_other() {
    let Some(db) = TestDb::create() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let storage = tmp.path().join("objects");
    let (data_a, data_b) = (tmp.path().join("a"), tmp.path().join("b"));

    let out = command(&data_a, &db, &storage)
        .args(["admin", "create-user", "alice", "--tier", "verified"])
        .output()
        .expect("create-user");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout).trim().to_string();

    let a = start_replica(&data_a, &db, &storage).await;
    let b = start_replica(&data_b, &db, &storage).await;
    let client = reqwest::Client::new();

    let bundle = BundleBuilder::http("replica-probe", "1.0.0").pack();
    let res = client
        .post(format!("{}/api/v1/tools", a.url))
        .bearer_auth(&token)
        .header("content-type", "application/gzip")
        .body(bundle)
        .send()
        .await
        .expect("publish on A");
    assert_eq!(
        res.status(),
        201,
        "{}",
        res.text().await.unwrap_or_default()
    );
    let on_b = eventually(&client, &b, "replica", Duration::from_secs(2), |v| {
        v["hits"][0]["name"] == "replica-probe"
    })
    .await;
    let on_a = eventually(&client, &a, "replica", Duration::from_secs(1), |v| {
        v["total"] == 1
    })
    .await;
    eprintln!("publish on A: searchable on B after {on_b:?} (on A: {on_a:?} later)");

    let res = client
        .delete(format!("{}/api/v1/tools/replica-probe/1.0.0/yank", a.url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("yank on A");
    assert_eq!(res.status(), 200);
    let gone = eventually(&client, &b, "replica", Duration::from_secs(2), |v| {
        v["total"] == 0
    })
    .await;
    eprintln!("yank on A: gone from B after {gone:?}");

    // Each replica has its own index directory.
    assert!(data_a.join("index/meta.json").is_file());
    assert!(data_b.join("index/meta.json").is_file());
    drop((a, b));
}
