//! `toolreg mcp proxy` as a process between real MCP peers: the MCP Python
//! SDK's `ClientSession` as the agent (tests/mcp/proxy/client.py), and as
//! the upstream a server written with the SDK's MCPServer (FastMCP) whose
//! `add` tool changes mid-session (tests/mcp/proxy/rug_server.py), or a
//! hand-written server for exact messages (raw_server.py).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use toolreg_e2e::mcp::{
    assert_rug_pull_withheld, listed_names, proxy_fixture, rug_pull_plan, ProxyProject, Sdk,
};
use toolreg_e2e::User;

/// A project where the agent talks to `toolreg mcp proxy --pin rug` in
/// front of the rug-pull server (tests/mcp/proxy/rug_server.py).
struct Rug(ProxyProject);

impl Rug {
    fn new(sdk: &Sdk) -> Rug {
        Rug(ProxyProject::new(sdk))
    }

    fn root(&self) -> &Path {
        self.0.root()
    }

    /// The agent running `plan` against `toolreg mcp proxy --pin rug FLAGS
    /// -- rug_server.py`, with `env` for the server.
    fn session(&self, flags: &[&str], env: &[(&str, &str)], plan: Value) -> (Vec<Value>, String) {
        let flag = self.root().join("flag").display().to_string();
        let cancelled = self.root().join("cancelled").display().to_string();
        let mut all = vec![
            ("RUG_FLAG", flag.as_str()),
            ("RUG_CANCELLED", cancelled.as_str()),
        ];
        all.extend_from_slice(env);
        let mut args: Vec<String> = vec!["--pin".into(), "rug".into()];
        args.extend(flags.iter().map(|s| s.to_string()));
        args.extend([
            "--".to_string(),
            self.0.python().display().to_string(),
            proxy_fixture("rug_server.py"),
        ]);
        self.0.agent(&args, &all, plan)
    }

    fn lock(&self) -> String {
        self.0.lock()
    }

    fn toolreg(&self, args: &[&str]) -> toolreg_e2e::Run {
        self.0.toolreg(args)
    }
}

#[test]
fn record_then_a_clean_session_then_a_rug_pull_is_withheld_until_accepted() {
    let Some(sdk) = Sdk::find() else { return };
    let rug = Rug::new(&sdk);
    let all = ["add", "crash", "pull_rug", "slow"];

    // Without pins, nothing gets through.
    let (r, err) = rug.session(
        &[],
        &[],
        json!({"steps": [{"op": "list"}, {"op": "call", "name": "add", "args": {"a": 2, "b": 3}}]}),
    );
    assert!(listed_names(&r[0]).is_empty(), "{r:?}");
    assert!(
        r[1]["error"].as_str().unwrap().contains("it is not pinned"),
        "{r:?}"
    );
    assert!(err.contains("pins no server rug"), "{err}");

    // --record pins every tool (trust on first use).
    let (r, err) = rug.session(&["--record"], &[], json!({"steps": [{"op": "list"}]}));
    assert_eq!(listed_names(&r[0]), all, "{err}");
    let lock = rug.lock();
    assert!(
        lock.contains("[[server]]\nname = \"rug\"\ncommand = ["),
        "{lock}"
    );
    assert!(lock.contains("tools = { add = \"sha256:"), "{lock}");

    // A clean session: everything passes, calls work.
    let (r, err) = rug.session(
        &[],
        &[],
        json!({"steps": [{"op": "list"}, {"op": "call", "name": "add", "args": {"a": 2, "b": 3}}]}),
    );
    assert_eq!(listed_names(&r[0]), all, "{err}");
    assert_eq!(r[1]["text"], "5", "{r:?}");
    assert!(!err.contains("withheld"), "{err}");

    // The rug pull mid-session: `add` is withheld and its call refused.
    let (r, err) = rug.session(&[], &[], rug_pull_plan());
    // The report, in `toolreg update`'s words.
    assert_rug_pull_withheld(&r, &err);

    // --strict ends the session instead.
    let (r, err) = rug.session(&["--strict"], &[], json!({"steps": [{"op": "list"}]}));
    assert!(
        err.contains("--strict: toolreg withheld the tool `add`"),
        "{err}\n{r:?}"
    );

    // review shows it; accept needs a yes off a terminal, then moves the pin.
    let review = rug.toolreg(&["mcp", "review", "rug"]).ok();
    assert!(
        review
            .stdout
            .contains("high    added    /inputSchema/properties/note"),
        "{}",
        review.stdout
    );
    let before = rug.lock();
    let refused = rug.toolreg(&["mcp", "accept", "rug"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("--yes"), "{}", refused.stderr);
    assert_eq!(rug.lock(), before);
    rug.toolreg(&["mcp", "accept", "rug", "add", "--yes"]).ok();
    let after = rug.lock();
    assert_ne!(after, before);
    assert!(
        after.contains("accepted_findings = { add = [\"P4\"] }"),
        "{after}"
    );
    let (r, err) = rug.session(
        &[],
        &[],
        json!({"steps": [{"op": "list"}, {"op": "call", "name": "add", "args": {"a": 1, "b": 1}}]}),
    );
    assert_eq!(listed_names(&r[0]), all, "{err}");
    assert_eq!(r[1]["text"], "2");
}

#[test]
fn new_tools_are_withheld_and_poisoned_ones_blocked_even_when_recording() {
    let Some(sdk) = Sdk::find() else { return };
    let rug = Rug::new(&sdk);
    rug.session(&["--record"], &[], json!({"steps": [{"op": "list"}]}));
    let (r, err) = rug.session(
        &[],
        &[("RUG_EXTRA", "1")],
        json!({"steps": [{"op": "list"}, {"op": "call", "name": "extra"}]}),
    );
    assert!(!listed_names(&r[0]).contains(&"extra".to_string()), "{r:?}");
    assert!(r[1]["error"].as_str().unwrap().contains("it is not pinned"));
    assert!(
        err.contains("withheld extra of rug: it is not pinned"),
        "{err}"
    );

    let (r, err) = rug.session(
        &["--record"],
        &[("RUG_POISON", "1")],
        json!({"steps": [{"op": "list"}, {"op": "call", "name": "hidden"}]}),
    );
    assert!(
        !listed_names(&r[0]).contains(&"hidden".to_string()),
        "{r:?}"
    );
    assert!(
        r[1]["error"].as_str().unwrap().contains("block rule(s) U1"),
        "{r:?}"
    );
    assert!(err.contains("hits block rule(s) U1"), "{err}");
    assert!(!rug.lock().contains("hidden"), "{}", rug.lock());
    let accept = rug.toolreg(&["mcp", "accept", "rug", "hidden", "--yes"]);
    assert_ne!(accept.code, 0);
    assert!(
        accept.stderr.contains("can't be accepted"),
        "{}",
        accept.stderr
    );
}

#[test]
fn progress_and_cancellation_pass_through_and_a_crash_ends_the_session() {
    let Some(sdk) = Sdk::find() else { return };
    let rug = Rug::new(&sdk);
    rug.session(&["--record"], &[], json!({"steps": [{"op": "list"}]}));
    let (r, err) = rug.session(
        &[],
        &[],
        json!({"steps": [
            {"op": "progress", "name": "slow", "args": {"seconds": 0.05}},
            {"op": "cancel", "name": "slow", "args": {"seconds": 5}, "after": 0.4},
            {"op": "call", "name": "add", "args": {"a": 2, "b": 2}},
            {"op": "call", "name": "crash"},
        ]}),
    );
    assert_eq!(r[0]["text"], "done", "{r:?}\n{err}");
    assert_eq!(r[0]["progress"].as_array().unwrap().len(), 3, "{r:?}");
    assert_eq!(r[1]["cancelled"], true);
    assert_eq!(
        std::fs::read_to_string(rug.root().join("cancelled")).unwrap_or_default(),
        "cancelled",
        "the server never saw the cancellation"
    );
    assert_eq!(r[2]["text"], "4", "the session goes on after a cancel");
    let crashed = r[3]["error"].as_str().unwrap_or_default();
    assert!(crashed.contains("the server rug exited"), "{r:?}");
    assert!(
        err.contains("toolreg mcp proxy: the server rug exited (exit status: 3); the session ends"),
        "{err}"
    );
}

/// The proxy run directly, speaking JSON-RPC lines, in front of raw_server.py.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    _dir: tempfile::TempDir,
}

impl Raw {
    fn start(env: &[(&str, &str)], record: bool) -> Raw {
        let dir = tempfile::tempdir().unwrap();
        let user = User::new();
        let mut args = vec!["mcp", "proxy", "--pin", "raw"];
        if record {
            args.push("--record");
        }
        let server = proxy_fixture("raw_server.py");
        args.extend(["--", "python3", &server]);
        let mut child = user
            .command(dir.path(), &args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        // Read stderr as it comes: a full pipe would stall the proxy.
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut text);
            text
        });
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut raw = Raw {
            child,
            stdin,
            lines,
            stderr,
            _dir: dir,
        };
        raw.send(r#"{"jsonrpc":"2.0","id":"init-α","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
        let init = raw.next();
        assert_eq!(init["id"], "init-α");
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(120))
            .expect("an answer from the proxy");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn stderr(mut self) -> (i32, String) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        (status.code().unwrap_or(-1), self.stderr.join().unwrap())
    }
}

#[test]
fn ids_and_progress_tokens_are_kept_and_bad_input_is_refused_without_crashing() {
    let mut raw = Raw::start(&[("RAW_MODE", "garbage")], true);
    raw.send(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}"#);
    let list = raw.next();
    assert_eq!(list["id"].to_string(), "9007199254740993");
    assert_eq!(list["result"]["tools"][0]["name"], "t0");
    raw.send(r#"{"jsonrpc":"2.0","id":"call/1","method":"tools/call","params":{"name":"t0","arguments":{},"_meta":{"progressToken":"p-7"}}}"#);
    let progress = raw.next();
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "p-7");
    let result = raw.next();
    assert_eq!(result["id"], "call/1");
    assert_eq!(result["result"]["content"][0]["text"], "\"call/1\"");
    // Bad input from the agent: an error each, nothing forwarded.
    raw.send("{not json");
    let e = raw.next();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(17 << 20)
    ));
    let e = raw.next();
    assert!(
        e["error"]["message"].as_str().unwrap().contains("limit"),
        "{e}"
    );
    raw.send(r#"{"jsonrpc":"2.0","id":"toolreg-proxy-1","method":"ping"}"#);
    assert!(raw.next()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("proxy's own"));
    // Garbage from the server: not forwarded, the session goes on.
    raw.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#);
    assert_eq!(raw.next()["id"], 6);
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}"#);
    let refused = raw.next();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("never checked"),
        "{refused}"
    );
    let (code, err) = raw.stderr();
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("not valid JSON") && err.contains("was not forwarded"),
        "{err}"
    );
}

#[test]
fn a_huge_server_message_ends_the_session_and_ten_thousand_tools_are_withheld() {
    let mut raw = Raw::start(&[("RAW_MODE", "huge")], true);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let e = raw.next();
    assert_eq!(e["id"], 1);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("bytes"),
        "{e}"
    );
    let (code, err) = raw.stderr();
    assert_eq!(code, 1);
    assert!(
        err.contains("nothing of it was forwarded and the session ends"),
        "{err}"
    );

    let mut raw = Raw::start(&[("RAW_TOOLS", "10000")], false);
    let started = std::time::Instant::now();
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let list = raw.next();
    assert_eq!(list["result"]["tools"], json!([]));
    assert!(started.elapsed() < Duration::from_secs(120));
    let (_, err) = raw.stderr();
    assert!(
        err.contains("withheld t9999 of raw: it is not pinned"),
        "{}",
        &err[..err.len().min(2000)]
    );
}
