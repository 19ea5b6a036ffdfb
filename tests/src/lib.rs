//! Support for the end-to-end tests: find (and first build) the real
//! `toolreg` and `toolreg-server` binaries, start a server on a free
//! loopback port with its own data directory, create users, and run the CLI
//! as a process with a private config dir and `$HOME`.
//!
//! The binaries live next to the test executable's directory
//! (`target/debug/deps/<test>` → `target/debug/`). They are built once per
//! test process with `cargo build -p toolreg -p toolreg-server --bins`, so a
//! plain `cargo test --workspace` works without a separate build step.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The workspace root (`tests/..`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The directory holding the built binaries, after building them once.
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("current_exe");
        // target/<profile>/deps/<test binary> → target/<profile>
        let dir = exe
            .parent()
            .and_then(|deps| {
                if deps.ends_with("deps") {
                    deps.parent()
                } else {
                    Some(deps)
                }
            })
            .expect("test binary lives in a target directory")
            .to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root()).args([
            "build",
            "-p",
            "toolreg",
            "-p",
            "toolreg-server",
            "--bins",
        ]);
        if dir.ends_with("release") {
            cmd.arg("--release");
        }
        // Build into the same target dir this test binary came from.
        if let Some(target) = dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let out = cmd
            .output()
            .expect("run cargo build for the toolreg binaries");
        assert!(
            out.status.success(),
            "cargo build -p toolreg -p toolreg-server --bins failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for bin in ["toolreg", "toolreg-server"] {
            let path = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
            assert!(path.is_file(), "{} was not built", path.display());
        }
        dir
    })
}

/// Path of a built binary (`toolreg` or `toolreg-server`).
pub fn bin(name: &str) -> PathBuf {
    bin_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// The shared corpus of real tool definitions (`../shared/corpus`), if present.
pub fn shared_corpus() -> Option<PathBuf> {
    let p = workspace_root().join("../shared/corpus");
    p.is_dir().then_some(p)
}

/// A corpus tool directory (`matimo/hubspot-get-contact`): from the shared
/// corpus, else from the core's MIT/Apache fixtures copy.
pub fn corpus_tool(rel: &str) -> PathBuf {
    if let Some(c) = shared_corpus() {
        let p = c.join(rel);
        if p.exists() {
            return p;
        }
    }
    let p = workspace_root().join("core/tests/fixtures").join(rel);
    assert!(
        p.exists(),
        "corpus tool {rel} is in neither ../shared/corpus nor core/tests/fixtures; the e2e tests need it"
    );
    p
}

/// Copy a directory tree (regular files only) into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A free loopback port (bound, read and released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Environment variables of the server and CLI that must not leak in from
/// the developer's shell.
const SCRUBBED: &[&str] = &[
    "TOOLREG_REGISTRY",
    "TOOLREG_TOKEN",
    "TOOLREG_CONFIG_DIR",
    "TOOLREG_DATABASE_URL",
    "TOOLREG_STORAGE",
    "TOOLREG_DATA_DIR",
    "TOOLREG_LISTEN",
    "TOOLREG_POLICY",
    "TOOLREG_WORKERS",
    "TOOLREG_RATE_LIMIT_PUBLISH",
    "TOOLREG_RATE_LIMIT_TOKENS",
    "TOOLREG_TRUST_PROXY",
];

/// Where a test server keeps its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded defaults: SQLite and local files under `--data`.
    Sqlite,
    /// A fresh PostgreSQL database and S3 bucket (from `TOOLREG_TEST_DATABASE_URL`
    /// and `TOOLREG_TEST_S3_ENDPOINT`, which `scripts/test` sets).
    PostgresS3,
}

/// The store options (`--data`, `--database-url`, `--storage`) and the
/// environment (AWS_*) shared by `serve` and the admin subcommands.
struct Store {
    args: Vec<std::ffi::OsString>,
    env: Vec<(String, String)>,
    /// (admin URL, database name) to drop afterwards.
    postgres: Option<(String, String)>,
}

fn store_for(backend: Backend, data: &Path) -> Result<Store, String> {
    let mut args: Vec<std::ffi::OsString> = vec!["--data".into(), data.join("registry").into()];
    if backend == Backend::Sqlite {
        return Ok(Store {
            args,
            env: Vec::new(),
            postgres: None,
        });
    }
    let admin_url = std::env::var("TOOLREG_TEST_DATABASE_URL")
        .map_err(|_| "TOOLREG_TEST_DATABASE_URL is not set".to_string())?;
    let endpoint = std::env::var("TOOLREG_TEST_S3_ENDPOINT")
        .map_err(|_| "TOOLREG_TEST_S3_ENDPOINT is not set".to_string())?;
    let suffix = format!(
        "{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            % 1_000_000_000
    );
    let db_name = format!("toolreg_e2e_{suffix}");
    let out = Command::new("psql")
        .arg(&admin_url)
        .args([
            "-v",
            "ON_ERROR_STOP=1",
            "-q",
            "-c",
            &format!("CREATE DATABASE {db_name}"),
        ])
        .output()
        .map_err(|e| format!("psql: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "CREATE DATABASE {db_name}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let base = admin_url
        .rsplit_once('/')
        .map(|(b, _)| b)
        .unwrap_or(&admin_url);
    let bucket = format!("toolreg-e2e-{}", suffix.replace('_', "-"));
    let created = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .map_err(|e| format!("S3 at {endpoint}: {e}"))?;
    if !created.status().is_success() {
        return Err(format!(
            "S3 at {endpoint}: creating bucket {bucket} answered {}",
            created.status()
        ));
    }
    args.push("--database-url".into());
    args.push(format!("{base}/{db_name}").into());
    args.push("--storage".into());
    args.push(format!("s3://{bucket}/registry").into());
    let env = vec![
        ("AWS_ENDPOINT_URL".to_string(), endpoint),
        ("AWS_ALLOW_HTTP".to_string(), "true".to_string()),
        ("AWS_ACCESS_KEY_ID".to_string(), "test".to_string()),
        ("AWS_SECRET_ACCESS_KEY".to_string(), "test".to_string()),
        ("AWS_REGION".to_string(), "us-east-1".to_string()),
    ];
    Ok(Store {
        args,
        env,
        postgres: Some((admin_url, db_name)),
    })
}

/// A running `toolreg-server serve` process with its own data directory
/// (and, for [`Backend::PostgresS3`], its own database and bucket).
/// Killed on drop.
pub struct Server {
    child: Child,
    pub url: String,
    pub data: tempfile::TempDir,
    log: PathBuf,
    store: Store,
}

impl Server {
    /// Start a server on the embedded defaults (SQLite + files) on a free
    /// port and wait until `/healthz` answers.
    pub fn start() -> Server {
        Server::start_on(Backend::Sqlite).expect("the SQLite backend needs no services")
    }

    /// Start a server on `backend`. `None` (with a SKIPPED note) when
    /// PostgreSQL/S3 are not configured, unless `CI` is set, which makes that a failure.
    pub fn start_on(backend: Backend) -> Option<Server> {
        let mut last_err = String::new();
        for _attempt in 0..3 {
            let data = tempfile::tempdir().unwrap();
            let store = match store_for(backend, data.path()) {
                Ok(s) => s,
                Err(why) if std::env::var_os("CI").is_none() => {
                    eprintln!("SKIPPED: the PostgreSQL + S3 backend is unavailable: {why}");
                    return None;
                }
                Err(why) => {
                    panic!("CI is set but the PostgreSQL + S3 backend is unavailable: {why}")
                }
            };
            let log = data.path().join("server.log");
            let port = free_port();
            let url = format!("http://127.0.0.1:{port}");
            let log_file = std::fs::File::create(&log).unwrap();
            let mut cmd = Command::new(bin("toolreg-server"));
            for v in SCRUBBED {
                cmd.env_remove(v);
            }
            let child = cmd
                .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
                .args(&store.args)
                .envs(store.env.iter().map(|(k, v)| (k, v)))
                .env("RUST_LOG", "warn")
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file)
                .spawn()
                .expect("start toolreg-server");
            let mut server = Server {
                child,
                url,
                data,
                log,
                store,
            };
            match server.wait_healthy(Duration::from_secs(60)) {
                Ok(()) => return Some(server),
                Err(e) => {
                    // Another process may have taken the port between probe and bind.
                    let retry = e.contains("in use");
                    last_err = e;
                    drop(server);
                    if !retry {
                        break;
                    }
                }
            }
        }
        panic!("toolreg-server did not become healthy: {last_err}");
    }

    fn wait_healthy(&mut self, limit: Duration) -> Result<(), String> {
        let started = Instant::now();
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!("exited with {status}; log:\n{}", self.log_text()));
            }
            if let Ok(r) = client.get(format!("{}/healthz", self.url)).send() {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            if started.elapsed() > limit {
                return Err(format!(
                    "no healthy /healthz after {limit:?}; log:\n{}",
                    self.log_text()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The server's log so far (for failure messages).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Run `toolreg-server ARGS` with this server's store options.
    pub fn admin(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(bin("toolreg-server"));
        for v in SCRUBBED {
            cmd.env_remove(v);
        }
        let out = cmd
            .args(args)
            .args(&self.store.args)
            .envs(self.store.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run toolreg-server");
        // A tier change reaches the server through the change log.
        if out.status.success() && args.starts_with(&["admin", "set-tier"]) {
            self.caught_up();
        }
        out
    }

    /// Wait until the running server's read cache has applied every
    /// committed change (`/healthz` `changes.applied == changes.latest`):
    /// a subcommand is another process, and the server learns of its
    /// changes from the change log.
    pub fn caught_up(&self) {
        let client = reqwest::blocking::Client::new();
        let started = Instant::now();
        loop {
            let health: serde_json::Value = client
                .get(format!("{}/healthz", self.url))
                .send()
                .and_then(|r| r.json())
                .unwrap_or_default();
            let changes = &health["changes"];
            if changes["applied"].as_i64().is_some()
                && changes["applied"].as_i64() >= changes["latest"].as_i64()
            {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the server did not follow the change log: {health}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `admin create-user LOGIN --tier TIER`; returns the printed token.
    pub fn create_user(&self, login: &str, tier: &str) -> String {
        let out = self.admin(&["admin", "create-user", login, "--tier", tier]);
        assert!(
            out.status.success(),
            "create-user failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
        assert!(
            token.starts_with("trg_"),
            "unexpected token output `{token}`"
        );
        token
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some((admin_url, db)) = &self.store.postgres {
            let _ = Command::new("psql")
                .arg(admin_url)
                .args([
                    "-q",
                    "-c",
                    &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
                ])
                .output();
        }
    }
}

/// The result of running `toolreg`.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Assert exit 0 and return self.
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Assert the exit code and return self.
    #[track_caller]
    pub fn code(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "unexpected exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Assert failure (exit 1) whose first stderr line is `error: ...` containing every needle.
    #[track_caller]
    pub fn fails_with(self, needles: &[&str]) -> Run {
        let run = self.code(1);
        let first = run.stderr.lines().next().unwrap_or_default().to_string();
        assert!(
            first.starts_with("error: "),
            "first stderr line is not `error: ...`: {}",
            run.stderr
        );
        for n in needles {
            assert!(
                run.stderr.contains(n),
                "stderr lacks `{n}`:\n{}",
                run.stderr
            );
        }
        run
    }

    /// stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// A user of the CLI: a private config dir and `$HOME`, and a working directory.
pub struct User {
    pub home: tempfile::TempDir,
    pub config: PathBuf,
}

impl Default for User {
    fn default() -> Self {
        Self::new()
    }
}

impl User {
    pub fn new() -> User {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join("toolreg-config");
        User { home, config }
    }

    /// A command for `toolreg ARGS` run in `dir`.
    pub fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin("toolreg"));
        for v in SCRUBBED {
            cmd.env_remove(v);
        }
        cmd.current_dir(dir)
            .args(args)
            .env("TOOLREG_CONFIG_DIR", &self.config)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("NO_COLOR", "1")
            // every registry in these tests is on loopback; never go through a proxy
            .env("NO_PROXY", "127.0.0.1,localhost")
            .stdin(Stdio::null());
        cmd
    }

    /// Run `toolreg ARGS` in `dir`.
    pub fn run(&self, dir: &Path, args: &[&str]) -> Run {
        to_run(self.command(dir, args).output().expect("run toolreg"))
    }

    /// Run `toolreg ARGS` in `dir` with `input` on stdin.
    pub fn run_with_stdin(&self, dir: &Path, args: &[&str], input: &str) -> Run {
        use std::io::Write;
        let mut child = self
            .command(dir, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run toolreg");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        to_run(child.wait_with_output().unwrap())
    }
}

fn to_run(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Write `toolreg.toml` with a `[tool]` table into a tool directory.
pub fn write_tool_manifest(dir: &Path, name: &str, version: &str) {
    std::fs::write(
        dir.join("toolreg.toml"),
        format!("[tool]\nname = \"{name}\"\nversion = \"{version}\"\nlicense = \"MIT\"\n"),
    )
    .unwrap();
}

/// An HTTP answer from a [`FakeRegistry`] handler.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(status: u16, value: serde_json::Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
        }
    }
    pub fn problem(status: u16, value: serde_json::Value) -> Reply {
        Reply {
            status,
            content_type: "application/problem+json",
            body: value.to_string().into_bytes(),
        }
    }
    pub fn bytes(body: Vec<u8>) -> Reply {
        Reply {
            status: 200,
            content_type: "application/gzip",
            body,
        }
    }
}

/// A tiny registry impostor on a free loopback port, answering each request
/// with `handler(method, path)` — for answers the real server must never
/// give (a bundle that doesn't match its digest). The thread ends with the process.
pub struct FakeRegistry {
    pub url: String,
}

impl FakeRegistry {
    pub fn start(handler: impl Fn(&str, &str) -> Reply + Send + 'static) -> FakeRegistry {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let mut content_length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            content_length = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; content_length];
                let _ = reader.read_exact(&mut body);
                let mut parts = request_line.split_whitespace();
                let method = parts.next().unwrap_or("").to_string();
                let path = parts.next().unwrap_or("").to_string();
                let reply = handler(&method, &path);
                let head = format!(
                    "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    reply.status,
                    reply.content_type,
                    reply.body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&reply.body);
                let _ = stream.flush();
            }
        });
        FakeRegistry { url }
    }
}
