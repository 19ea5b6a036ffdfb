//! The test harness: [`TestApp`] starts the real server on a loopback port
//! with one backend pair — SQLite + local files, or PostgreSQL + S3 (its own
//! database and bucket) — and [`BundleBuilder`] makes bundles from real
//! corpus definitions. `both_backends!` runs a test against both.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

use actix_web::web;
use diesel::prelude::*;
use rand::distr::{Alphanumeric, SampleString};
use serde_json::Value;
use toolreg_core::{Policy, Tier, ToolFiles};
use toolreg_server::app::{self, AppState};
use toolreg_server::blobs::BlobStore;
use toolreg_server::db::Db;
use toolreg_server::models::{Scope, Token, User};

pub const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Which database and storage a [`TestApp`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite in a temp dir + local files.
    Sqlite,
    /// A fresh PostgreSQL database + a fresh bucket on the S3 server.
    Postgres,
}

/// Generate `mod NAME { sqlite(), postgres() }` tests calling `async fn NAME(app: TestApp)`.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[actix_web::test]
            async fn sqlite() {
                if let Some(app) = $crate::common::TestApp::start($crate::common::Backend::Sqlite).await {
                    super::$name(app).await;
                }
            }
            #[actix_web::test]
            async fn postgres() {
                if let Some(app) = $crate::common::TestApp::start($crate::common::Backend::Postgres).await {
                    super::$name(app).await;
                }
            }
        }
    )*};
}

fn s3_endpoint() -> String {
    std::env::var("TOOLREG_TEST_S3_ENDPOINT")
        .unwrap_or_else(|_| "http://127.0.0.1:9000".to_string())
}

fn services_required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("TOOLREG_REQUIRE_SERVICES").is_some()
}

fn random_suffix() -> String {
    Alphanumeric
        .sample_string(&mut rand::rng(), 12)
        .to_ascii_lowercase()
}

/// The running registry under test.
pub struct TestApp {
    pub backend: Backend,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    pub client: reqwest::Client,
    pub state: web::Data<AppState>,
    /// The settings the `toolreg-server` binary needs to see the same data.
    pub env: Vec<(String, String)>,
    handle: actix_web::dev::ServerHandle,
    dir: tempfile::TempDir,
    pg_database: Option<String>,
}

impl TestApp {
    /// Start the app, or `None` (after printing `SKIPPED: ...`) when the
    /// PostgreSQL/S3 services are unreachable and not required.
    pub async fn start(backend: Backend) -> Option<TestApp> {
        TestApp::start_with(backend, Policy::default()).await
    }

    pub async fn start_with(backend: Backend, policy: Policy) -> Option<TestApp> {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut env = vec![(
            "TOOLREG_DATA_DIR".to_string(),
            dir.path().display().to_string(),
        )];
        let (db_url, storage_url, s3_options, pg_database) = match backend {
            Backend::Sqlite => {
                let db = format!("sqlite://{}", dir.path().join("toolreg.db").display());
                let storage = format!("file://{}", dir.path().join("objects").display());
                (db, storage, vec![], None)
            }
            Backend::Postgres => match prepare_services().await {
                Ok((db_name, bucket)) => {
                    let db = format!("postgres://postgres@127.0.0.1:5432/{db_name}");
                    let storage = format!("s3://{bucket}/registry");
                    let opts = vec![
                        ("aws_endpoint".to_string(), s3_endpoint()),
                        ("aws_allow_http".to_string(), "true".to_string()),
                        ("aws_access_key_id".to_string(), "test".to_string()),
                        ("aws_secret_access_key".to_string(), "test".to_string()),
                        ("aws_region".to_string(), "us-east-1".to_string()),
                    ];
                    for (k, v) in &opts {
                        let key = if k == "aws_endpoint" {
                            "AWS_ENDPOINT_URL".to_string()
                        } else {
                            k.to_ascii_uppercase()
                        };
                        env.push((key, v.clone()));
                    }
                    (db, storage, opts, Some(db_name))
                }
                Err(why) => {
                    if services_required() {
                        panic!("PostgreSQL/S3 are required (CI or TOOLREG_REQUIRE_SERVICES is set) but: {why}");
                    }
                    eprintln!("SKIPPED: PostgreSQL + S3 backend unavailable: {why}");
                    return None;
                }
            },
        };
        env.push(("TOOLREG_DATABASE_URL".to_string(), db_url.clone()));
        env.push(("TOOLREG_STORAGE".to_string(), storage_url.clone()));

        let db = Db::connect(&db_url).expect("connect to the test database");
        db.migrate().expect("migrations");
        let blobs =
            BlobStore::open_with(&storage_url, s3_options).expect("open the test blob store");
        let state = web::Data::new(AppState::new(db, blobs, policy));
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local addr");
        let server = app::server(state.clone(), listener, Some(2)).expect("build the server");
        let handle = server.handle();
        actix_web::rt::spawn(server);
        app::spawn_download_flusher(state.clone());
        app::spawn_change_follower(state.clone());
        Some(TestApp {
            backend,
            url: format!("http://{addr}"),
            client: reqwest::Client::new(),
            state,
            env,
            handle,
            dir,
            pg_database,
        })
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Create a user with `tier` and return a token with every scope.
    pub async fn user(&self, login: &str, tier: Tier) -> String {
        self.user_with(login, tier, false).await
    }

    pub async fn user_with(&self, login: &str, tier: Tier, admin: bool) -> String {
        let login = login.to_string();
        self.state
            .db
            .write(move |conn| {
                let user = User::create(conn, &login, tier, admin)?;
                Ok(Token::create(conn, user.id, "test", &Scope::ALL, false, None)?.secret)
            })
            .await
            .expect("create a test user")
    }

    pub fn api(&self, path: &str) -> String {
        format!("{}{}", self.url, path)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.api(path)).send().await.expect("GET")
    }

    pub async fn get_authed(&self, path: &str, token: &str) -> reqwest::Response {
        self.client
            .get(self.api(path))
            .bearer_auth(token)
            .send()
            .await
            .expect("GET")
    }

    /// `POST /api/v1/tools` with the bundle.
    pub async fn publish(&self, token: &str, bundle: Vec<u8>) -> reqwest::Response {
        self.client
            .post(self.api("/api/v1/tools"))
            .bearer_auth(token)
            .header("content-type", "application/gzip")
            .body(bundle)
            .send()
            .await
            .expect("POST /api/v1/tools")
    }

    /// Publish and assert 201; returns the answer.
    pub async fn publish_ok(&self, token: &str, bundle: Vec<u8>) -> Value {
        let res = self.publish(token, bundle).await;
        let status = res.status();
        let body: Value = res.json().await.expect("JSON body");
        assert_eq!(status, 201, "publish failed: {body:#}");
        body
    }

    /// Every object in the blob store.
    pub async fn stored_objects(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .state
            .blobs
            .list_all()
            .await
            .expect("list")
            .into_iter()
            .map(|m| m.location.to_string())
            .collect();
        out.sort();
        out
    }

    /// Row count of a table, straight from the database.
    pub async fn count(&self, table: &'static str) -> i64 {
        #[derive(QueryableByName)]
        struct N {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        self.state
            .db
            .read(move |conn| {
                Ok(
                    diesel::sql_query(format!("SELECT COUNT(*) AS n FROM {table}"))
                        .get_result::<N>(conn)?
                        .n,
                )
            })
            .await
            .expect("count")
    }

    /// Wait until the app's read cache has applied every committed change
    /// of the change log — after a change made outside the app (the admin
    /// subcommand is another process), as `serve` follows the log.
    pub async fn caught_up(&self) {
        let started = std::time::Instant::now();
        loop {
            let applied = self.state.cache.followed();
            let latest = self
                .state
                .db
                .read(toolreg_server::models::change::Change::latest_seq)
                .await
                .expect("the change log's head");
            if applied.is_some_and(|a| a >= latest) {
                return;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "the read cache did not follow the change log: applied {applied:?}, latest {latest}"
            );
            actix_web::rt::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Run the `toolreg-server` binary against this app's data.
    pub fn binary(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolreg-server"));
        cmd.args(args).env("RUST_LOG", "warn");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.output().expect("run toolreg-server")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Stop the server (best effort; the System ends with the test anyway).
        // `stop` sends the command at once; the returned future only waits for it.
        let _stopping = self.handle.stop(false);
        if let Some(name) = &self.pg_database {
            if let Ok(mut conn) = toolreg_server::db::connect_postgres(PG_ADMIN_URL) {
                let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut conn);
            }
        }
    }
}

/// Create a fresh database and bucket; Err(reason) when a service is unreachable.
async fn prepare_services() -> Result<(String, String), String> {
    let suffix = random_suffix();
    let db_name = format!("toolreg_test_{suffix}");
    let bucket = format!("toolreg-test-{suffix}");
    let name = db_name.clone();
    web::block(move || -> Result<(), String> {
        let mut conn = toolreg_server::db::connect_postgres(PG_ADMIN_URL)
            .map_err(|e| format!("PostgreSQL at {PG_ADMIN_URL}: {e}"))?;
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
        Ok(())
    })
    .await
    .map_err(|e| e.to_string())??;
    let endpoint = s3_endpoint();
    let res = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .map_err(|e| format!("S3 server at {endpoint}: {e}"))?;
    if !res.status().is_success() {
        return Err(format!(
            "S3 server at {endpoint}: creating bucket {bucket} answered {}",
            res.status()
        ));
    }
    Ok((db_name, bucket))
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// A corpus tool directory: `core/tests/fixtures/<rel>` (matimo, mcp) or
/// `../shared/corpus/<rel>` (everything, including shinkai).
pub fn corpus_dir(rel: &str) -> PathBuf {
    let fixture = repo_root().join("core/tests/fixtures").join(rel);
    if fixture.is_dir() {
        return fixture;
    }
    let shared = repo_root().join("../shared/corpus").join(rel);
    assert!(
        shared.is_dir(),
        "corpus directory {rel} not found in core/tests/fixtures or ../shared/corpus"
    );
    shared
}

/// Builds a bundle from a corpus definition plus a `toolreg.toml` naming it.
pub struct BundleBuilder {
    files: ToolFiles,
    name: String,
    version: String,
    extra_toml: String,
}

impl BundleBuilder {
    /// A Matimo `http` tool any publisher may publish.
    pub fn http(name: &str, version: &str) -> BundleBuilder {
        BundleBuilder::corpus("matimo/github-create-issue", name, version)
    }

    /// The corpus directory `rel` with `name` and `version` from toolreg.toml.
    pub fn corpus(rel: &str, name: &str, version: &str) -> BundleBuilder {
        let files = ToolFiles::read_dir(&corpus_dir(rel)).expect("read corpus dir");
        BundleBuilder {
            files,
            name: name.to_string(),
            version: version.to_string(),
            extra_toml: String::new(),
        }
    }

    /// A Matimo `function` tool (needs the `trusted` tier): the corpus
    /// calculator plus a stand-in for its code file.
    pub fn function(name: &str, version: &str) -> BundleBuilder {
        BundleBuilder::corpus("matimo/calculator", name, version).file(
            "calculator.ts",
            "export default async function () { return { result: 0 }; }\n",
        )
    }

    pub fn file(mut self, path: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.insert(path, bytes);
        self
    }

    pub fn toml_line(mut self, line: &str) -> Self {
        self.extra_toml.push_str(line);
        self.extra_toml.push('\n');
        self
    }

    pub fn files(&self) -> ToolFiles {
        let mut files = self.files.clone();
        files.insert(
            "toolreg.toml",
            format!(
                "[tool]\nname = \"{}\"\nversion = \"{}\"\n{}",
                self.name, self.version, self.extra_toml
            ),
        );
        files
    }

    pub fn pack(&self) -> Vec<u8> {
        toolreg_core::bundle::pack(&self.files()).expect("pack the test bundle")
    }
}

/// The JSON body of a response, with its status.
pub async fn json(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

/// Assert a problem+json answer with `status` and `type` slug; returns the body.
pub async fn problem(res: reqwest::Response, status: u16, slug: &str) -> Value {
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let (got, body) = json(res).await;
    assert_eq!(got, status, "expected {status} {slug}, got {got}: {body:#}");
    assert_eq!(
        content_type, "application/problem+json",
        "problem content type; body {body:#}"
    );
    assert_eq!(
        body["type"],
        format!("https://toolreg.dev/problems/{slug}"),
        "problem type: {body:#}"
    );
    assert_eq!(body["status"], status);
    body
}
