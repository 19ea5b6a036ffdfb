//! The real `toolreg-server` binary as a process: a [`Registry`] is the
//! binary plus a data directory and the environment naming its database
//! and storage; it runs subcommands (`admin create-user` gives a user and a
//! token) and starts `serve` as a [`ServerProcess`] on a free loopback port.
//! Nothing of the caller's `TOOLREG_*` / `AWS_*` settings leaks into the
//! process.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::Services;

/// What `toolreg-server serve` logs once it has bound its port.
const LISTENING: &str = "toolreg-server listening";

/// A free loopback port (bound, read and released; [`Registry::serve`]
/// retries when another process takes it in between).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A loopback port where nothing listens, for as long as this value
/// lives: the tests' "unreachable registry" or "closed endpoint".
///
/// The port is held by a socket that is bound but not listening, so a
/// connection to it is refused at once, and — because the socket does not
/// set `SO_REUSEADDR` — no other process can bind it meanwhile. A port
/// from [`free_port`] is only free at the moment it is read: a server
/// started by a test running in parallel may take it and answer.
#[derive(Debug)]
pub struct ClosedPort {
    _socket: socket2::Socket,
    port: u16,
}

impl ClosedPort {
    /// Hold a fresh loopback port.
    pub fn new() -> ClosedPort {
        let socket = tcp_socket();
        let any = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        socket.bind(&any.into()).expect("bind a loopback port");
        let port = socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.port())
            .expect("the bound port");
        ClosedPort {
            _socket: socket,
            port,
        }
    }

    /// Hold `port`, the port of a server this test just stopped, so that
    /// nothing started by another test answers there.
    ///
    /// The bind is exclusive, as in [`ClosedPort::new`], once the stopped
    /// process has released the port. If the port is still taken after 2 s
    /// — connections the server closed first linger in `TIME_WAIT` for a
    /// minute — the socket sets `SO_REUSEADDR`, as a server restarting on
    /// its port does: connections are still refused, and a port from
    /// [`free_port`] (the kernel's choice for port 0) is never one a socket
    /// holds.
    #[track_caller]
    pub fn hold(port: u16) -> ClosedPort {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let started = Instant::now();
        loop {
            let socket = tcp_socket();
            let waited = started.elapsed();
            if waited > Duration::from_secs(2) {
                socket.set_reuse_address(true).expect("SO_REUSEADDR");
            }
            match socket.bind(&addr.into()) {
                Ok(()) => {
                    return ClosedPort {
                        _socket: socket,
                        port,
                    }
                }
                Err(e) if waited > Duration::from_secs(5) => {
                    panic!("could not hold port {port}: {e}")
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// The held port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// An IPv4 TCP socket, neither bound nor listening.
fn tcp_socket() -> socket2::Socket {
    socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a TCP socket")
}

impl Default for ClosedPort {
    fn default() -> ClosedPort {
        ClosedPort::new()
    }
}

/// Poll `check` every 20 ms until it gives `Some`, failing after `within`;
/// returns the value and the time it took.
#[track_caller]
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

/// A `toolreg-server` binary with its data directory and store settings.
#[derive(Debug, Clone)]
pub struct Registry {
    bin: PathBuf,
    data: PathBuf,
    env: Vec<(String, String)>,
}

impl Registry {
    /// `bin` on the data directory `data` (SQLite and files under it unless
    /// the environment names other services).
    pub fn new(bin: impl Into<PathBuf>, data: impl Into<PathBuf>) -> Registry {
        Registry {
            bin: bin.into(),
            data: data.into(),
            env: Vec::new(),
        }
    }

    /// Also use `services` (the database and bucket it made).
    pub fn with_services(self, services: &Services) -> Registry {
        self.with_env(services.env())
    }

    /// Also set these environment variables on every process.
    pub fn with_env<K: Into<String>, V: Into<String>>(
        mut self,
        env: impl IntoIterator<Item = (K, V)>,
    ) -> Registry {
        self.env
            .extend(env.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    pub fn data(&self) -> &Path {
        &self.data
    }

    /// The environment given to every process (besides `TOOLREG_DATA_DIR`).
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// A command for the binary with this registry's settings and nothing
    /// of the caller's `TOOLREG_*` / `AWS_*` settings.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("TOOLREG_") || key.starts_with("AWS_") {
                cmd.env_remove(&*key);
            }
        }
        cmd.env("TOOLREG_DATA_DIR", &self.data)
            .env("RUST_LOG", "warn")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        cmd
    }

    /// Run a subcommand to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .output()
            .expect("run toolreg-server")
    }

    /// `admin create-user LOGIN --tier TIER [--admin]`; returns the token.
    #[track_caller]
    pub fn create_user(&self, login: &str, tier: &str, admin: bool) -> String {
        let mut args = vec!["admin", "create-user", login, "--tier", tier];
        if admin {
            args.push("--admin");
        }
        let out = self.run(&args);
        assert!(
            out.status.success(),
            "create-user {login}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let token = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            token.starts_with("trg_"),
            "unexpected create-user output `{token}`"
        );
        token
    }

    /// Start `serve` with extra `args` on a free port and wait for `/healthz`.
    #[track_caller]
    pub fn serve(&self, args: &[&str]) -> ServerProcess {
        let mut last_err = String::new();
        for _attempt in 0..3 {
            match self.try_serve(free_port(), args) {
                Ok(server) => return server,
                // Another process may have taken the port between probe and bind.
                Err(e) if e.contains("in use") => last_err = e,
                Err(e) => panic!("toolreg-server did not start: {e}"),
            }
        }
        panic!("toolreg-server did not start: {last_err}");
    }

    /// Start `serve` on `port` (a restart on the address of a stopped
    /// server; retried while the old process releases it).
    #[track_caller]
    pub fn serve_on(&self, port: u16, args: &[&str]) -> ServerProcess {
        let started = Instant::now();
        loop {
            match self.try_serve(port, args) {
                Ok(server) => return server,
                Err(e) if e.contains("in use") && started.elapsed() < Duration::from_secs(30) => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("toolreg-server did not start on port {port}: {e}"),
            }
        }
    }

    fn try_serve(&self, port: u16, args: &[&str]) -> Result<ServerProcess, String> {
        let log = tempfile::NamedTempFile::new().expect("a server log file");
        let out = log.reopen().expect("open the server log");
        let err = out.try_clone().expect("open the server log");
        let child = self
            .command()
            // The start-up line ("toolreg-server listening", logged by
            // `ops` once the port is bound) tells this process's answers
            // from another server's on the same port.
            .env("RUST_LOG", "warn,toolreg_server::ops=info")
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start toolreg-server");
        let mut server = ServerProcess {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
            registry: self.clone(),
            log,
        };
        server.wait_healthy(Duration::from_secs(60))?;
        Ok(server)
    }
}

/// A running `toolreg-server serve`, killed when dropped (its log is
/// printed then if the test is failing).
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    pub port: u16,
    registry: Registry,
    log: tempfile::NamedTempFile,
}

impl ServerProcess {
    fn wait_healthy(&mut self, limit: Duration) -> Result<(), String> {
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(2))
            .build()
            .expect("HTTP client");
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited with {status}; log:\n{}", self.log_text()));
            }
            // Until this process has bound the port, a `/healthz` answer
            // there is another server's (the port was free when probed).
            if self.log_text().contains(LISTENING)
                && client
                    .get(self.api("/healthz"))
                    .send()
                    .is_ok_and(|r| r.status().is_success())
            {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(format!(
                    "no healthy /healthz on {} after {limit:?}; log:\n{}",
                    self.url,
                    self.log_text()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The registry this server runs on (for subcommands and restarts).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn api(&self, path: &str) -> String {
        format!("{}{}", self.url, path)
    }

    /// The process id (for signals).
    pub fn id(&self) -> u32 {
        self.child.id()
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

    /// Wait until the server's read cache has applied every committed
    /// change (`/healthz` `changes.applied >= changes.latest`): a
    /// subcommand is another process, and the server learns of its changes
    /// from the change log.
    #[track_caller]
    pub fn caught_up(&self) {
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .build()
            .expect("HTTP client");
        eventually(Duration::from_secs(5), "following the change log", || {
            let health: serde_json::Value = client
                .get(self.api("/healthz"))
                .send()
                .and_then(|r| r.json())
                .unwrap_or_default();
            let changes = &health["changes"];
            let applied = changes["applied"].as_i64()?;
            (Some(applied) >= changes["latest"].as_i64()).then_some(())
        });
    }

    /// The server's output so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Kill the process now (SIGKILL) and reap it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The exit status if the process has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("wait for toolreg-server")
    }

    /// Wait up to `within` for the process to exit by itself.
    #[track_caller]
    pub fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for toolreg-server") {
                return status;
            }
            if started.elapsed() > within {
                self.kill();
                panic!("toolreg-server did not exit within {within:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("toolreg-server log ({}):\n{}", self.url, self.log_text());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;
    use std::net::TcpStream;

    #[test]
    fn a_closed_port_refuses_connections_and_cannot_be_taken() {
        let closed = ClosedPort::new();
        let refused = TcpStream::connect(("127.0.0.1", closed.port())).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::ConnectionRefused);
        // std's listeners set SO_REUSEADDR, as the server's do.
        assert!(TcpListener::bind(("127.0.0.1", closed.port())).is_err());
    }

    /// The port of a listener that had one connection and is gone;
    /// `server_closes_first` leaves that connection in `TIME_WAIT` on it.
    fn stopped_listener(server_closes_first: bool) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        if server_closes_first {
            drop(accepted);
            drop(client);
        } else {
            // as the CLI's connections end: the client closes first
            drop(client);
            drop(accepted);
        }
        port
    }

    #[test]
    fn a_stopped_servers_port_is_held_closed() {
        let port = stopped_listener(false);
        let held = ClosedPort::hold(port);
        let refused = TcpStream::connect(("127.0.0.1", held.port())).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::ConnectionRefused);
        assert!(TcpListener::bind(("127.0.0.1", port)).is_err());
    }

    #[test]
    fn a_port_in_time_wait_is_held_closed_too() {
        let port = stopped_listener(true);
        let held = ClosedPort::hold(port);
        let refused = TcpStream::connect(("127.0.0.1", held.port())).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::ConnectionRefused);
    }
}
