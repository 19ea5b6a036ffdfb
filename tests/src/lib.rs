//! Support for the end-to-end tests: find (and first build) the real
//! `toolreg` and `toolreg-server` binaries, start a server (through
//! `toolreg-test-support`, on either backend) on a free
//! loopback port with its own data directory, create users, and run the CLI
//! as a process with a private config dir and `$HOME`.
//!
//! The binaries live next to the test executable's directory
//! (`target/debug/deps/<test>` → `target/debug/`). They are built once per
//! test process with `cargo build -p toolreg -p toolreg-server --bins`, so a
//! plain `cargo test --workspace` works without a separate build step.

pub mod mcp;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub use toolreg_test_support::{
    both_backends, free_port, Backend, ClosedPort, Registry, ServerProcess, Services,
};

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

/// The shared corpus of real tool definitions (`../shared/corpus`), or
/// `None` when it is missing and not required
/// (`toolreg_test_support::unavailable`).
pub fn shared_corpus() -> Option<PathBuf> {
    toolreg_test_support::corpus()
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

/// Environment variables of the server and CLI that must not leak in from
/// the developer's shell into the CLI (a server process gets none of the
/// caller's `TOOLREG_*` settings, see [`Registry::command`]).
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
    // Trusted publishing: a test sets these itself, and a CI job running
    // the tests must not lend them its own.
    "TOOLREG_OIDC_TOKEN",
    "TOOLREG_OIDC_AUDIENCE",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "GITHUB_ACTIONS",
    // `toolreg link` writes where these point (Codex's and Copilot CLI's
    // config homes): a test's files go under its own $HOME.
    "CODEX_HOME",
    "COPILOT_HOME",
];

/// The real `toolreg-server` on the data directory `data` with `services`.
pub fn registry(data: &Path, services: &Services) -> Registry {
    Registry::new(bin("toolreg-server"), data).with_services(services)
}

/// A running `toolreg-server serve` process with its own data directory
/// (and, for [`Backend::Postgres`], its own database and bucket).
/// Killed on drop.
pub struct Server {
    process: ServerProcess,
    pub url: String,
    pub data: tempfile::TempDir,
    // Dropped after the process: the database goes with it.
    _services: Services,
}

impl Server {
    /// Start a server on the embedded defaults (SQLite + files) on a free
    /// port and wait until `/healthz` answers.
    pub fn start() -> Server {
        Server::start_on(Backend::Sqlite).expect("the SQLite backend needs no services")
    }

    /// Start a server on `backend`; `None` when its services are missing
    /// and not required (`toolreg_test_support::unavailable`).
    pub fn start_on(backend: Backend) -> Option<Server> {
        Server::start_with(backend, &[])
    }

    /// [`Server::start_on`] with extra `serve` arguments
    /// (`--trusted-issuer URL`, ...).
    pub fn start_with(backend: Backend, args: &[&str]) -> Option<Server> {
        let services = Services::for_backend(backend)?;
        let data = tempfile::tempdir().unwrap();
        let process = registry(&data.path().join("registry"), &services).serve(args);
        Some(Server {
            url: process.url.clone(),
            process,
            data,
            _services: services,
        })
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// The server's log so far (for failure messages).
    pub fn log_text(&self) -> String {
        self.process.log_text()
    }

    /// Run `toolreg-server ARGS` on this server's store. A tier change
    /// reaches the running server through the change log: after a
    /// successful `admin set-tier` this waits until it has followed.
    pub fn admin(&self, args: &[&str]) -> Output {
        let out = self.process.registry().run(args);
        if out.status.success() && args.starts_with(&["admin", "set-tier"]) {
            self.process.caught_up();
        }
        out
    }

    /// `admin create-user LOGIN --tier TIER`; returns the printed token.
    pub fn create_user(&self, login: &str, tier: &str) -> String {
        self.process.registry().create_user(login, tier, false)
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

    /// Run `toolreg ARGS` in `dir` with extra environment variables.
    pub fn run_with_env(&self, dir: &Path, args: &[&str], env: &[(String, String)]) -> Run {
        to_run(
            self.command(dir, args)
                .envs(env.iter().map(|(k, v)| (k, v)))
                .output()
                .expect("run toolreg"),
        )
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

impl User {
    /// Run `toolreg ARGS` in `dir` on a terminal: under `script(1)`, which
    /// gives it a pseudo-terminal for stdin, stdout and stderr, with `input`
    /// typed into it. stdout holds everything the terminal showed.
    pub fn run_on_terminal(&self, dir: &Path, args: &[&str], input: &str) -> Run {
        use std::io::Write;
        let inner = self.command(dir, args);
        let quote = |a: &str| format!("'{}'", a.replace('\'', "'\\''"));
        let line = std::iter::once(quote(&bin("toolreg").display().to_string()))
            .chain(args.iter().map(|a| quote(a)))
            .collect::<Vec<_>>()
            .join(" ");
        let mut cmd = Command::new("script");
        cmd.args(["-q", "-e", "-c", &line, "/dev/null"])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in inner.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let mut child = cmd.spawn().expect("run script(1)");
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

/// A new user of `server` (`login`, at `tier`) signed in from a fresh CLI
/// user, and a working directory.
pub fn signed_in(server: &Server, login: &str, tier: &str) -> (User, tempfile::TempDir) {
    let token = server.create_user(login, tier);
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    user.run(
        work.path(),
        &["login", "--registry", &server.url, "--token", &token],
    )
    .ok();
    (user, work)
}

/// An agent project `name` under `work` whose toolreg.toml is `[registry]
/// url = registry` followed by `rest`.
pub fn agent_project(registry: &str, work: &Path, name: &str, rest: &str) -> PathBuf {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("toolreg.toml"),
        format!("[registry]\nurl = \"{registry}\"\n\n{rest}"),
    )
    .unwrap();
    dir
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
