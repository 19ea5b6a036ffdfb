//! The server's test harness, on top of `toolreg-test-support`:
//! [`TestApp`] runs the app in this process on a loopback port with one
//! backend pair — SQLite + local files, or PostgreSQL + S3 (a database and
//! bucket of its own) — built by [`TestApp::builder`] (policy, search index);
//! it makes users and tokens, runs the `toolreg-server` binary on the same
//! data ([`TestApp::registry`]) and injects write failures.
//! [`BundleBuilder`] makes bundles from real corpus definitions. Tests run
//! on both backends with `toolreg_test_support::both_backends!`.
#![allow(dead_code)]

pub mod skills;

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use actix_web::web;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use serde_json::Value;
use toolreg_core::{Policy, Tier, ToolFiles};
use toolreg_server::app::{self, AppState};
use toolreg_server::blobs::BlobStore;
use toolreg_server::db::{Db, DbConnection};
use toolreg_server::models::{Scope, Token, User};
use toolreg_server::search::StoreSource;
use toolreg_test_support::issuer::Issuer;
use toolreg_test_support::SqlDialect;
pub use toolreg_test_support::{Backend, FailingInsert, Registry, Services};

/// The `toolreg-server` binary of this build.
pub const BIN: &str = env!("CARGO_BIN_EXE_toolreg-server");

/// The `toolreg-server` binary of this build on the data directory `data`
/// with the environment `env` (e.g. [`Services::env`]).
pub fn registry_with(data: &std::path::Path, env: &[(String, String)]) -> Registry {
    Registry::new(BIN, data).with_env(env.iter().cloned())
}

/// What a [`TestApp`] starts with.
#[must_use]
pub struct TestAppBuilder {
    backend: Backend,
    policy: Policy,
    search: bool,
    max_versions_per_tool: Option<i64>,
    trusted_issuers: Vec<String>,
    rate_limits: Option<toolreg_server::rate_limit::RateLimits>,
}

impl TestAppBuilder {
    /// The rate limits (default: none).
    pub fn with_rate_limits(mut self, limits: toolreg_server::rate_limit::RateLimits) -> Self {
        self.rate_limits = Some(limits);
        self
    }

    /// The tier policy (default: [`Policy::default`]).
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The most versions one tool may have (default: the server's).
    pub fn with_max_versions_per_tool(mut self, max: i64) -> Self {
        self.max_versions_per_tool = Some(max);
        self
    }

    /// Trust the OpenID Connect issuer at `url` for trusted publishing.
    pub fn with_trusted_issuer(mut self, url: &str) -> Self {
        self.trusted_issuers.push(url.to_string());
        self
    }

    /// Start the search index (under the data directory) with the app.
    pub fn with_search(mut self) -> Self {
        self.search = true;
        self
    }

    /// Start the app, or `None` (after `SKIPPED: ...`) when the backend's
    /// services are unreachable and not required (see
    /// `toolreg_test_support::unavailable`).
    pub async fn start(self) -> Option<TestApp> {
        let backend = self.backend;
        let services = web::block(move || Services::for_backend(backend))
            .await
            .expect("prepare the test services")?;
        let dir = tempfile::tempdir().expect("tempdir");
        let db_url = services
            .database_url()
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("toolreg.db").display()));
        let storage_url = services
            .storage_url()
            .unwrap_or_else(|| format!("file://{}", dir.path().join("objects").display()));
        let registry = Registry::new(BIN, dir.path())
            .with_services(&services)
            .with_env([
                ("TOOLREG_DATABASE_URL", db_url.clone()),
                ("TOOLREG_STORAGE", storage_url.clone()),
            ]);

        let db = Db::connect(&db_url).expect("connect to the test database");
        db.migrate().expect("migrations");
        let blobs = BlobStore::open_with(&storage_url, services.s3_options())
            .expect("open the test blob store");
        let mut state = AppState::new(db, blobs, self.policy);
        if let Some(max) = self.max_versions_per_tool {
            state.max_versions_per_tool = max;
        }
        if !self.trusted_issuers.is_empty() {
            state.oidc = std::sync::Arc::new(toolreg_trustpub::IdTokenVerifier::new(
                toolreg_trustpub::Options {
                    issuers: self.trusted_issuers.clone(),
                    audience: toolreg_trustpub::DEFAULT_AUDIENCE.to_string(),
                },
            ));
        }
        if let Some(limits) = self.rate_limits {
            state.rate_limits = limits;
        }
        let state = web::Data::new(state);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local addr");
        let server = app::server(state.clone(), listener, Some(2)).expect("build the server");
        let handle = server.handle();
        actix_web::rt::spawn(server);
        app::spawn_download_flusher(state.clone());
        app::spawn_change_follower(state.clone());
        let app = TestApp {
            backend,
            url: format!("http://{addr}"),
            client: reqwest::Client::new(),
            state,
            registry,
            handle,
            services,
            dir,
        };
        if self.search {
            app.start_search();
        }
        Some(app)
    }
}

/// The running registry under test.
pub struct TestApp {
    pub backend: Backend,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    pub client: reqwest::Client,
    pub state: web::Data<AppState>,
    registry: Registry,
    handle: actix_web::dev::ServerHandle,
    // Dropped after the server is stopped: the database goes with it.
    services: Services,
    dir: tempfile::TempDir,
}

impl TestApp {
    /// A builder for an app on `backend`.
    pub fn builder(backend: Backend) -> TestAppBuilder {
        TestAppBuilder {
            backend,
            policy: Policy::default(),
            search: false,
            max_versions_per_tool: None,
            trusted_issuers: Vec::new(),
            rate_limits: None,
        }
    }

    /// The app on `backend` with the default policy and no search index.
    pub async fn start(backend: Backend) -> Option<TestApp> {
        TestApp::builder(backend).start().await
    }

    /// The app on `backend` with its search index running.
    pub async fn with_search(backend: Backend) -> Option<TestApp> {
        TestApp::builder(backend).with_search().start().await
    }

    /// Start (or restart) the search index in `<data>/index`.
    pub fn start_search(&self) {
        let source = Arc::new(StoreSource::new(self.state.db.clone()));
        self.state
            .search
            .start(
                &self.data_dir().join("index"),
                source,
                toolreg_server::search::SearchMemory::default(),
            )
            .expect("start search");
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// The `toolreg-server` binary on this app's database and storage.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Run the `toolreg-server` binary against this app's data.
    pub fn binary(&self, args: &[&str]) -> std::process::Output {
        self.registry.run(args)
    }

    /// Create a user with `tier` and return a token with every scope.
    pub async fn user(&self, login: &str, tier: Tier) -> String {
        self.user_with(login, tier, false).await
    }

    /// Create an administrator with `tier` and return a token with every scope.
    pub async fn admin(&self, login: &str, tier: Tier) -> String {
        self.user_with(login, tier, true).await
    }
    pub async fn user_with(&self, login: &str, tier: Tier, admin: bool) -> String {
        let login = login.to_string();
        self.state
            .db
            .write(move |conn| {
                let user = User::create(conn, &login, tier, admin)?;
                let scopes: &[Scope] = if admin { &Scope::ALL } else { &Scope::DEFAULT };
                Ok(Token::create(conn, user.id, "test", scopes, false, None)?.secret)
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

    /// The actions in the audit log, oldest first, straight from the database.
    pub async fn audit_actions(&self) -> Vec<String> {
        self.state
            .db
            .read(|conn| {
                use toolreg_server::schema::audit_log;
                Ok(audit_log::table
                    .order(audit_log::id.asc())
                    .select(audit_log::action)
                    .load::<String>(conn)?)
            })
            .await
            .expect("audit log")
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
                .read(toolreg_server::models::change::LoggedChange::latest_seq)
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

    /// `method path` with an optional JSON body as the holder of `token`:
    /// the status and the JSON body.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .client
            .request(method, self.api(path))
            .bearer_auth(token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        json(req.send().await.expect("request")).await
    }

    /// Make `login` (holding `invitee`) an owner of `tool`: the owner holding
    /// `owner` invites them and they accept; asserts both answer 200.
    pub async fn add_owner(&self, owner: &str, tool: &str, login: &str, invitee: &str) {
        let (status, body) = self
            .send(
                reqwest::Method::PUT,
                &format!("/api/v1/tools/{tool}/owners"),
                owner,
                Some(serde_json::json!({ "logins": [login] })),
            )
            .await;
        assert_eq!(status, 200, "invite {login}: {body:#}");
        let (status, body) = self
            .send(
                reqwest::Method::PUT,
                &format!("/api/v1/me/invitations/{tool}"),
                invitee,
                None,
            )
            .await;
        assert_eq!(status, 200, "{login} accepts: {body:#}");
    }

    /// Set `login`'s tier as the administrator holding `admin`; asserts 200.
    pub async fn set_tier(&self, admin: &str, login: &str, tier: &str) {
        let (status, body) = self
            .send(
                reqwest::Method::PUT,
                &format!("/api/v1/publishers/{login}/tier"),
                admin,
                Some(serde_json::json!({ "tier": tier })),
            )
            .await;
        assert_eq!(status, 200, "set {login} to {tier}: {body:#}");
    }

    /// Make inserts that match `failing` fail (see [`FailingInsert`]).
    pub async fn fail_inserts(&self, failing: FailingInsert) {
        self.state
            .db
            .write(move |conn| {
                match conn {
                    DbConnection::Sqlite(c) => {
                        c.batch_execute(&failing.install_sql(SqlDialect::Sqlite))?
                    }
                    DbConnection::Postgresql(c) => {
                        c.batch_execute(&failing.install_sql(SqlDialect::Postgres))?
                    }
                }
                Ok(())
            })
            .await
            .expect("install the failing trigger");
    }

    /// Let inserts that match `failing` succeed again.
    pub async fn stop_failing(&self, failing: FailingInsert) {
        self.state
            .db
            .write(move |conn| {
                match conn {
                    DbConnection::Sqlite(c) => {
                        c.batch_execute(&failing.remove_sql(SqlDialect::Sqlite))?
                    }
                    DbConnection::Postgresql(c) => {
                        c.batch_execute(&failing.remove_sql(SqlDialect::Postgres))?
                    }
                }
                Ok(())
            })
            .await
            .expect("remove the failing trigger");
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Stop the server (best effort; the System ends with the test anyway).
        // `stop` sends the command at once; the returned future only waits for it.
        let _stopping = self.handle.stop(false);
    }
}

/// An app that trusts a local OpenID Connect issuer, and the issuer.
pub struct Ci {
    pub app: TestApp,
    pub issuer: Issuer,
}

impl Ci {
    /// The app on `backend` with a new issuer trusted.
    pub async fn start(backend: Backend) -> Option<Ci> {
        let issuer = Issuer::start();
        let app = TestApp::builder(backend)
            .with_trusted_issuer(&issuer.url)
            .start()
            .await?;
        Some(Ci { app, issuer })
    }

    /// [`Ci::start`], with the search index running.
    pub async fn start_with_search(backend: Backend) -> Option<Ci> {
        let issuer = Issuer::start();
        let app = TestApp::builder(backend)
            .with_trusted_issuer(&issuer.url)
            .with_search()
            .start()
            .await?;
        Some(Ci { app, issuer })
    }
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

/// Send SIGTERM to the process `pid`.
pub fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
