//! Real `toolreg-server` processes for the operations tests (replicas, rate
//! limits, S3 downloads): [`Services`] makes a PostgreSQL database and an S3
//! bucket of their own (or skips with `SKIPPED:` — or fails when `CI` is set —
//! when a service is unreachable), and [`Server`] runs `serve` on a free
//! loopback port until dropped.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use rand::distr::{Alphanumeric, SampleString};

pub const BIN: &str = env!("CARGO_BIN_EXE_toolreg-server");
pub const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

pub fn s3_endpoint() -> String {
    std::env::var("TOOLREG_TEST_S3_ENDPOINT")
        .unwrap_or_else(|_| "http://127.0.0.1:9000".to_string())
}

/// Skip (print `SKIPPED: why`, return `None`) unless `CI` is set, then fail.
fn unavailable<T>(why: String) -> Option<T> {
    if std::env::var_os("CI").is_some() || std::env::var_os("TOOLREG_REQUIRE_SERVICES").is_some() {
        panic!("required service unavailable (CI is set): {why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

fn suffix() -> String {
    Alphanumeric
        .sample_string(&mut rand::rng(), 10)
        .to_ascii_lowercase()
}

/// A PostgreSQL database and/or an S3 bucket of this test's own; the
/// database is dropped at the end (moto keeps buckets in memory only).
pub struct Services {
    pub database: Option<String>,
    pub bucket: Option<String>,
}

impl Services {
    /// A fresh PostgreSQL database and S3 bucket.
    pub fn postgres_and_s3() -> Option<Services> {
        let mut services = Services {
            database: None,
            bucket: None,
        };
        services.database = Some(create_database()?);
        services.bucket = Some(create_bucket()?);
        Some(services)
    }

    /// A fresh S3 bucket only (the database stays SQLite).
    pub fn s3_only() -> Option<Services> {
        Some(Services {
            database: None,
            bucket: Some(create_bucket()?),
        })
    }

    /// The environment a server (or admin command) needs to use these services.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(db) = &self.database {
            env.push((
                "TOOLREG_DATABASE_URL".into(),
                format!("postgres://postgres@127.0.0.1:5432/{db}"),
            ));
        }
        if let Some(bucket) = &self.bucket {
            env.push(("TOOLREG_STORAGE".into(), format!("s3://{bucket}/registry")));
            env.push(("AWS_ENDPOINT_URL".into(), s3_endpoint()));
            env.push(("AWS_ALLOW_HTTP".into(), "true".into()));
            env.push(("AWS_ACCESS_KEY_ID".into(), "test".into()));
            env.push(("AWS_SECRET_ACCESS_KEY".into(), "test".into()));
            env.push(("AWS_REGION".into(), "us-east-1".into()));
        }
        env
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        if let Some(name) = &self.database {
            if let Ok(mut conn) = toolreg_server::db::connect_postgres(PG_ADMIN_URL) {
                let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut conn);
            }
        }
    }
}

fn create_database() -> Option<String> {
    let mut conn = match toolreg_server::db::connect_postgres(PG_ADMIN_URL) {
        Ok(c) => c,
        Err(e) => return unavailable(format!("PostgreSQL unreachable at {PG_ADMIN_URL}: {e}")),
    };
    let name = format!("toolreg_ops_{}", suffix());
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .expect("create the test database");
    Some(name)
}

fn create_bucket() -> Option<String> {
    let endpoint = s3_endpoint();
    let bucket = format!("toolreg-ops-{}", suffix());
    match reqwest::blocking::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
    {
        Ok(res) if res.status().is_success() => Some(bucket),
        Ok(res) => unavailable(format!(
            "S3 server at {endpoint}: creating bucket {bucket} answered {}",
            res.status()
        )),
        Err(e) => unavailable(format!("S3 server unreachable at {endpoint}: {e}")),
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// `toolreg-server` with `env` and a data directory, nothing inherited from
/// the caller's `TOOLREG_*` settings.
pub fn command(data: &Path, env: &[(String, String)]) -> Command {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key.starts_with("TOOLREG_") || key.starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("TOOLREG_DATA_DIR", data).env("RUST_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// `admin create-user LOGIN --tier TIER [--admin]`; returns the token.
pub fn create_user(
    data: &Path,
    env: &[(String, String)],
    login: &str,
    tier: &str,
    admin: bool,
) -> String {
    let mut cmd = command(data, env);
    cmd.args(["admin", "create-user", login, "--tier", tier]);
    if admin {
        cmd.arg("--admin");
    }
    let out = cmd.output().expect("run admin create-user");
    assert!(
        out.status.success(),
        "create-user {login}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Run a subcommand to completion.
pub fn run(data: &Path, env: &[(String, String)], args: &[&str]) -> Output {
    command(data, env)
        .args(args)
        .output()
        .expect("run toolreg-server")
}

/// A running `toolreg-server serve`, killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
    pub data: PathBuf,
}

impl Server {
    /// Start `serve` with `env` and extra `args` and wait for `/healthz`.
    pub fn start(data: &Path, env: &[(String, String)], args: &[&str]) -> Server {
        let port = free_port();
        let child = command(data, env)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .expect("start toolreg-server");
        let mut server = Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
            data: data.to_path_buf(),
        };
        let client = reqwest::blocking::Client::new();
        let started = Instant::now();
        loop {
            if client
                .get(format!("{}/healthz", server.url))
                .send()
                .is_ok_and(|r| r.status().is_success())
            {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("toolreg-server exited during start-up: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "toolreg-server did not start on {}",
                server.url
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn api(&self, path: &str) -> String {
        format!("{}{}", self.url, path)
    }

    /// `POST /api/v1/tools` with `bundle`.
    pub fn publish(
        &self,
        client: &reqwest::blocking::Client,
        token: &str,
        bundle: Vec<u8>,
    ) -> reqwest::blocking::Response {
        client
            .post(self.api("/api/v1/tools"))
            .bearer_auth(token)
            .header("content-type", "application/gzip")
            .body(bundle)
            .send()
            .expect("POST /api/v1/tools")
    }

    /// Kill the process now (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Poll `check` every 20 ms until it gives `Some`, failing after `within`.
pub fn eventually<T>(
    within: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> (T, Duration) {
    let started = Instant::now();
    loop {
        if let Some(v) = check() {
            return (v, started.elapsed());
        }
        assert!(started.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    toolreg_core::digest::sha256_hex(bytes)
}
