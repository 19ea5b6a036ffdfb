//! `toolreg-server` as a process with zero configuration: where it keeps
//! its data, the log line every request writes, and clear errors for bad
//! settings.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sigterm;
use toolreg_test_support::free_port;

/// Kills the server process if a test fails before it exits.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Wait until `/healthz` answers 200 on `port`.
fn wait_healthy(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let client = reqwest::blocking::Client::new();
    while Instant::now() < deadline {
        if let Ok(res) = client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
        {
            if res.status() == 200 {
                return;
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("toolreg-server exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("toolreg-server did not become healthy");
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("toolreg-server did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Run `toolreg-server` with no subcommand and no `TOOLREG_*` settings but
/// the port (8080 may be busy on a shared machine), in `cwd`, with
/// `RUST_LOG=rust_log`; ask for `/healthz` and for a tool that does not
/// exist, stop it, and return its log.
fn serve_zero_config(cwd: &std::path::Path, rust_log: &str) -> String {
    let port = free_port();
    let mut guard = spawn_zero_config(cwd, rust_log, port);
    let child = &mut guard.0;
    let started = Instant::now();
    wait_healthy(port, child);
    eprintln!("healthy after {:?}", started.elapsed());
    let res = reqwest::blocking::get(format!("http://127.0.0.1:{port}/api/v1/tools/no-such-tool"))
        .unwrap();
    assert_eq!(res.status(), 404);
    sigterm(child.id());
    let status = wait_exit(child, Duration::from_secs(10));
    assert!(status.success(), "{status}");
    stderr_of(child)
}

/// `toolreg-server` with no subcommand and no `TOOLREG_*` settings but the
/// port, in `cwd`, with `RUST_LOG=rust_log` and its stderr piped.
fn spawn_zero_config(cwd: &std::path::Path, rust_log: &str, port: u16) -> ChildGuard {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolreg-server"));
    cmd.current_dir(cwd)
        .env("RUST_LOG", rust_log)
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("TOOLREG_") || key.starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    ChildGuard(
        cmd.env("TOOLREG_LISTEN", format!("127.0.0.1:{port}"))
            .spawn()
            .unwrap(),
    )
}

/// Everything an exited child wrote to its piped stderr.
fn stderr_of(child: &mut Child) -> String {
    let mut log = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        log.push_str(&line.unwrap());
        log.push('\n');
    }
    log
}

/// The access line of a request, as every log line looks:
/// `<RFC 3339 time in µs>Z  INFO toolreg_server::metrics: request method=…
/// path=… route=… status=… ms=<milliseconds, 3 decimals>`.
fn access_line<'a>(log: &'a str, path: &str) -> Option<&'a str> {
    log.lines()
        .find(|l| l.contains(&format!(" request method=GET path={path} ")))
}

#[test]
fn zero_config_serve_uses_sqlite_and_files_under_data() {
    let cwd = tempfile::tempdir().unwrap();
    let log = serve_zero_config(cwd.path(), "info");
    assert!(
        cwd.path().join("data/toolreg.db").is_file(),
        "SQLite database in ./data"
    );
    assert!(
        cwd.path().join("data/objects").is_dir(),
        "blobs in ./data/objects"
    );
    assert!(log.contains("listening"), "structured start log: {log}");

    // Every request is logged, in the format of the other lines.
    for (path, route, status) in [
        ("/healthz", "/healthz", 200),
        ("/api/v1/tools/no-such-tool", "/api/v1/tools/{name}", 404),
    ] {
        let line = access_line(&log, path).unwrap_or_else(|| panic!("no line for {path}: {log}"));
        let (time, rest) = line.split_once("Z  INFO ").expect(line);
        let time = chrono::NaiveDateTime::parse_from_str(time, "%Y-%m-%dT%H:%M:%S%.6f")
            .unwrap_or_else(|e| panic!("time of `{line}`: {e}"));
        let age = chrono::Utc::now().naive_utc() - time;
        assert!(age.num_seconds().abs() < 60, "{line}");
        let ms = rest
            .strip_prefix(&format!(
                "toolreg_server::metrics: request method=GET path={path} route={route} status={status} ms="
            ))
            .unwrap_or_else(|| panic!("fields of `{line}`"));
        let (whole, thousandths) = ms.split_once('.').expect(line);
        assert!(
            whole.parse::<u64>().is_ok() && thousandths.len() == 3,
            "{line}"
        );
        assert!(thousandths.bytes().all(|b| b.is_ascii_digit()), "{line}");
    }
    // The other lines keep tracing's own format around the access lines.
    let other = log.lines().find(|l| l.contains("listening")).unwrap();
    assert!(other.contains("Z  INFO toolreg_server::"), "{other}");
}

#[test]
fn rust_log_silences_the_access_lines() {
    let cwd = tempfile::tempdir().unwrap();
    let log = serve_zero_config(cwd.path(), "warn");
    assert!(access_line(&log, "/healthz").is_none(), "{log}");
    assert!(!log.contains(" request method="), "{log}");
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolreg-server"))
        .args(["--policy", "function=godlike", "migrate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("godlike"));
    let out = Command::new(env!("CARGO_BIN_EXE_toolreg-server"))
        .args(["--listen", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("listen"));
}

/// The search index opens after the server listens, and a search sent as
/// soon as `/healthz` answers is answered (it waits for the index if it is
/// still opening), not refused. A second server on
/// the same data directory cannot open the index the first one holds: it
/// stops on its own, with the index's error and a failing status, rather
/// than serving without search.
#[test]
fn the_search_index_opens_after_listening_and_a_held_index_stops_the_server() {
    let cwd = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = spawn_zero_config(cwd.path(), "info", port);
    wait_healthy(port, &mut first.0);
    let res =
        reqwest::blocking::get(format!("http://127.0.0.1:{port}/api/v1/search?q=weather")).unwrap();
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().unwrap();
    assert_eq!(body["total"], 0, "{body}");

    let second_port = free_port();
    let mut second = spawn_zero_config(cwd.path(), "info", second_port);
    let status = wait_exit(&mut second.0, Duration::from_secs(20));
    assert!(!status.success(), "{status}");
    let log = stderr_of(&mut second.0);
    assert!(log.contains("toolreg-server listening"), "{log}");
    assert!(
        log.contains("another process has this search index open"),
        "{log}"
    );

    sigterm(first.0.id());
    let status = wait_exit(&mut first.0, Duration::from_secs(10));
    assert!(status.success(), "{status}");
    let log = stderr_of(&mut first.0);
    let listening = log.find("toolreg-server listening").expect(&log);
    let opened = log.find("search index open").expect(&log);
    assert!(listening < opened, "{log}");
}
