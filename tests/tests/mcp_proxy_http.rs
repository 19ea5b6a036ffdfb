//! `toolreg mcp proxy --url`: the proxy in front of a Streamable HTTP
//! server, as a process between real MCP peers. The upstream is the rug
//! pull server of the stdio tests (tests/mcp/proxy/rug_server.py) run by
//! the MCP Python SDK's Streamable HTTP transport, the agent the SDK's
//! `ClientSession` over stdio (tests/mcp/proxy/client.py). Endpoints that
//! refuse the connection, fail or answer HTML are local sockets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolreg_e2e::mcp::{
    assert_rug_pull_withheld, listed_names, proxy_fixture, read_request, rug_pull_plan,
    ProxyProject, Sdk,
};
use toolreg_e2e::{free_port, ClosedPort, User};

/// The rug pull server over Streamable HTTP, stopped when dropped.
struct HttpRug {
    child: Child,
    url: String,
}

impl HttpRug {
    fn start(python: &Path, root: &Path, json_answers: bool) -> HttpRug {
        let port = free_port();
        let mut cmd = Command::new(python);
        cmd.arg(proxy_fixture("rug_server.py"))
            .env("RUG_FLAG", root.join("flag"))
            .env("RUG_CANCELLED", root.join("cancelled"))
            .env("RUG_HTTP_PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if json_answers {
            cmd.env("RUG_JSON", "1");
        }
        let child = cmd.spawn().expect("start rug_server.py");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "rug_server.py never listened on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpRug {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    /// Whether the server process has exited.
    fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

impl Drop for HttpRug {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project directory and its user.
/// The agent running `plan` against `toolreg mcp proxy --pin rug --url URL
/// FLAGS` in `project`.
fn session(project: &ProxyProject, url: &str, flags: &[&str], plan: Value) -> (Vec<Value>, String) {
    let mut args: Vec<String> = ["--pin", "rug", "--url", url].map(String::from).to_vec();
    args.extend(flags.iter().map(|s| s.to_string()));
    project.agent(&args, &[], plan)
}

const ALL: [&str; 4] = ["add", "crash", "pull_rug", "slow"];

#[test]
fn an_http_server_is_recorded_checked_rug_pulled_and_its_death_ends_the_session() {
    let Some(sdk) = Sdk::find() else { return };
    let project = ProxyProject::new(&sdk);
    let mut rug = HttpRug::start(&sdk.python, project.root(), false);

    // Without pins nothing gets through; --record pins the URL's tools.
    let (r, err) = session(&project, &rug.url, &[], json!({"steps": [{"op": "list"}]}));
    assert!(listed_names(&r[0]).is_empty(), "{r:?}\n{err}");
    let (r, err) = session(
        &project,
        &rug.url,
        &["--record"],
        json!({"steps": [{"op": "list"}]}),
    );
    assert_eq!(listed_names(&r[0]), ALL, "{err}");
    let lock = project.lock();
    assert!(
        lock.contains(&format!(
            "[[server]]\nname = \"rug\"\nurl = \"{}\"\n",
            rug.url
        )),
        "{lock}"
    );
    assert!(lock.contains("tools = { add = \"sha256:"), "{lock}");

    // A clean session: calls, progress and cancellation pass through.
    let (r, err) = session(
        &project,
        &rug.url,
        &[],
        json!({"steps": [
            {"op": "list"},
            {"op": "call", "name": "add", "args": {"a": 2, "b": 3}},
            {"op": "progress", "name": "slow", "args": {"seconds": 0.05}},
            {"op": "cancel", "name": "slow", "args": {"seconds": 5}, "after": 0.4},
            {"op": "call", "name": "add", "args": {"a": 2, "b": 2}},
        ]}),
    );
    assert_eq!(listed_names(&r[0]), ALL, "{err}");
    assert_eq!(r[1]["text"], "5", "{r:?}\n{err}");
    assert_eq!(r[2]["text"], "done", "{r:?}");
    assert_eq!(r[2]["progress"].as_array().unwrap().len(), 3, "{r:?}");
    assert_eq!(r[3]["cancelled"], true, "{r:?}");
    assert_eq!(r[4]["text"], "4", "{r:?}");
    assert!(!err.contains("withheld"), "{err}");
    let cancelled = std::fs::read_to_string(project.root().join("cancelled"));
    assert_eq!(
        cancelled.unwrap_or_default(),
        "cancelled",
        "the server never saw the cancellation"
    );

    // The rug pull: tools/list_changed comes on the server's GET stream,
    // the proxy checks again, `add` is withheld and its call refused.
    let (r, err) = session(&project, &rug.url, &[], rug_pull_plan());
    assert_rug_pull_withheld(&r, &err);

    // The server dies mid-call: the call gets an error, the session ends.
    let (r, err) = session(
        &project,
        &rug.url,
        &[],
        json!({"steps": [{"op": "call", "name": "crash"}, {"op": "list"}]}),
    );
    assert!(rug.exited(), "crash did not stop the server");
    let crashed = r[0]["error"].as_str().unwrap_or_default();
    assert!(crashed.contains("the server rug failed"), "{r:?}\n{err}");
    assert!(
        err.contains("toolreg mcp proxy: the server rug failed: ")
            && err.contains(&rug.url)
            && err.contains("; the session ends"),
        "{err}"
    );
    // And with it gone, the next session can't start.
    let (r, err) = session(&project, &rug.url, &[], json!({"steps": [{"op": "list"}]}));
    assert!(
        err.contains("could not connect") && err.contains(&rug.url),
        "{r:?}\n{err}"
    );
}

#[test]
fn a_server_answering_json_bodies_is_proxied_the_same() {
    let Some(sdk) = Sdk::find() else { return };
    let project = ProxyProject::new(&sdk);
    let rug = HttpRug::start(&sdk.python, project.root(), true);
    let (r, err) = session(
        &project,
        &rug.url,
        &["--record"],
        json!({"steps": [{"op": "list"}]}),
    );
    assert_eq!(listed_names(&r[0]), ALL, "{err}");
    // The same definitions as over stdio: the fingerprints don't depend on
    // the transport (the stdio session runs the same server).
    let python = sdk.python.display().to_string();
    let stdio = ProxyProject::new(&sdk);
    let flag = stdio.root().join("flag").display().to_string();
    stdio.agent(
        &[
            "--pin",
            "rug",
            "--record",
            "--",
            python.as_str(),
            &proxy_fixture("rug_server.py"),
        ]
        .map(String::from),
        &[("RUG_FLAG", flag.as_str())],
        json!({"steps": [{"op": "list"}]}),
    );
    let tools = |lock: &str| {
        lock.lines()
            .find(|l| l.starts_with("tools = "))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(tools(&project.lock()), tools(&stdio.lock()));
    assert!(!tools(&project.lock()).is_empty());
    let (r, err) = session(
        &project,
        &rug.url,
        &[],
        json!({"steps": [
            {"op": "call", "name": "add", "args": {"a": 20, "b": 22}},
            {"op": "progress", "name": "slow", "args": {"seconds": 0.01}},
        ]}),
    );
    assert_eq!(r[0]["text"], "42", "{r:?}\n{err}");
    assert_eq!(r[1]["text"], "done", "{r:?}\n{err}");
}

/// A socket that answers every request with `status`, `content_type` and
/// `body`.
fn fixed_endpoint(status: &'static str, content_type: &'static str, body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream, status, content_type, body));
        }
    });
    format!("http://127.0.0.1:{port}/mcp")
}

fn answer(mut stream: TcpStream, status: &str, content_type: &str, body: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut skip = vec![0; len];
    let _ = reader.read_exact(&mut skip);
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// `toolreg mcp proxy --url URL` sent an `initialize`: its answer, exit
/// code and stderr.
fn initialize_against(url: &str) -> (Value, i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let user = User::new();
    let mut child = user
        .command(
            dir.path(),
            &["mcp", "proxy", "--pin", "remote", "--url", url],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).unwrap();
    stdin.write_all(b"\n").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON answer ({e}): {stdout}"));
    (
        answer,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn endpoints_that_refuse_fail_or_answer_html_end_the_session_with_a_clear_error() {
    let port = ClosedPort::new();
    let closed = format!("{}/mcp", port.url());
    let failing = fixed_endpoint(
        "500 Internal Server Error",
        "text/plain",
        "database is down",
    );
    let html = fixed_endpoint(
        "200 OK",
        "text/html; charset=utf-8",
        "<!doctype html><title>Welcome</title>",
    );
    let cases = [
        (closed.as_str(), "could not connect"),
        (
            failing.as_str(),
            "answered 500 Internal Server Error (text/plain): database is down",
        ),
        (
            html.as_str(),
            "answered with Content-Type `text/html`, not an MCP message",
        ),
    ];
    for (url, why) in cases {
        let (answer, code, err) = initialize_against(url);
        assert_eq!(answer["id"], 1, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(why) && message.contains(url),
            "{url}: {answer}"
        );
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("the server remote failed: ") && err.contains(why),
            "{err}"
        );
    }

    // Bad URLs and flags are refused before anything runs; nothing is written.
    let user = User::new();
    let dir = tempfile::tempdir().unwrap();
    for (args, why) in [
        (
            vec!["--url", "ftp://example.com/mcp"],
            "the scheme is `ftp`",
        ),
        (vec!["--url", "not a url"], "not a URL"),
        (
            vec!["--url", "https://me:secret@example.com/mcp"],
            "carries credentials",
        ),
        (
            vec!["--url", "https://example.com/mcp", "--", "python3", "s.py"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["mcp", "proxy", "--pin", "remote"];
        all.extend(args);
        let run = user.run(dir.path(), &all);
        assert_eq!(run.code, 2, "{all:?}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{all:?}: {}", run.stderr);
    }
    assert!(!dir.path().join("toolreg.lock").exists());
}

/// One request the scripted endpoint received: method, headers (lowercase
/// names), body.
type Seen = (String, Vec<(String, String)>, String);

/// A scripted Streamable HTTP server: `initialize` answered as JSON with a
/// session id, `tools/list` as an event stream (a priming event with only
/// an id, then the answer), `tools/call` with a 500, everything else POSTed
/// with 202 (wrong for a request), GET with 405, DELETE with 200; every
/// request recorded.
fn scripted_endpoint() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let Some(request) = read_request(&stream) else {
                continue;
            };
            let method = request.method;
            let headers: Vec<(String, String)> = request
                .headers
                .into_iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect();
            let body = request.body;
            let body = String::from_utf8_lossy(&body).into_owned();
            let msg: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            // The id exactly as sent, without a JSON number round trip.
            let id = body
                .split("\"id\":")
                .nth(1)
                .and_then(|rest| rest.split([',', '}']).next())
                .unwrap_or("null")
                .to_string();
            let (status, extra, ctype, answer) = match (method.as_str(), msg["method"].as_str()) {
                ("POST", Some("initialize")) => ("200 OK", "Mcp-Session-Id: s-1\r\n", "application/json",
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"scripted","version":"1"}}}}}}"#)),
                ("POST", Some("tools/list")) => ("200 OK", "", "text/event-stream",
                    format!("id: e-0\ndata:\n\nid: e-1\nevent: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[{{\"name\":\"t\",\"description\":\"A tool.\",\"inputSchema\":{{\"type\":\"object\"}},\"x-unknown\":{{\"kept\":true}}}}]}}}}\n\n")),
                ("POST", Some("tools/call")) => ("500 Internal Server Error", "", "application/json",
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"the backend is down"}}}}"#)),
                ("POST", _) => ("202 Accepted", "", "text/plain", String::new()),
                ("GET", _) => ("405 Method Not Allowed", "", "text/plain", String::new()),
                _ => ("200 OK", "", "text/plain", String::new()),
            };
            log.lock().unwrap().push((method, headers, body));
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{extra}Content-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (format!("http://127.0.0.1:{port}/mcp"), seen)
}

#[test]
fn the_session_id_protocol_version_and_ids_are_kept_and_the_session_is_deleted() {
    let (url, seen) = scripted_endpoint();
    let dir = tempfile::tempdir().unwrap();
    let user = User::new();
    let mut child = user
        .command(
            dir.path(),
            &[
                "mcp", "proxy", "--pin", "scripted", "--record", "--url", &url,
            ],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut next = || {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        line
    };
    stdin.write_all(br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).unwrap();
    stdin.write_all(b"\n").unwrap();
    let init = next();
    assert!(init.contains(r#""id":9007199254740993"#), "{init}");
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"l-1\",\"method\":\"tools/list\"}\n").unwrap();
    let list: Value = serde_json::from_str(&next()).unwrap();
    assert_eq!(list["id"], "l-1");
    // Byte for byte: a member no SDK type knows is passed and pinned as is.
    assert_eq!(
        list["result"]["tools"][0]["x-unknown"],
        json!({"kept": true}),
        "{list}"
    );
    // An HTTP error, and a request acknowledged without an answer: an
    // error each for that request, and the session goes on.
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{}}}\n").unwrap();
    let failed: Value = serde_json::from_str(&next()).unwrap();
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(failed["id"], 2, "{failed}");
    assert!(
        message.contains(&format!(
            "POST {url} answered 500 Internal Server Error: the backend is down"
        )),
        "{failed}"
    );
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n")
        .unwrap();
    let unanswered: Value = serde_json::from_str(&next()).unwrap();
    assert_eq!(unanswered["id"], 3, "{unanswered}");
    assert!(
        unanswered["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("answered 202 Accepted to a request, with no answer"),
        "{unanswered}"
    );
    // The GET for the server's own stream has gone out by now.
    std::thread::sleep(Duration::from_millis(300));
    drop(stdin);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    let lock = std::fs::read_to_string(dir.path().join("toolreg.lock")).unwrap();
    assert!(
        lock.contains(&format!("url = \"{url}\"\ntools = {{ t = \"sha256:")),
        "{lock}"
    );

    let seen = seen.lock().unwrap().clone();
    let header =
        |h: &[(String, String)], k: &str| h.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let (method, headers, body) = &seen[0];
    assert_eq!(method, "POST");
    assert!(body.contains("9007199254740993"), "{body}");
    assert_eq!(header(headers, "mcp-session-id"), None);
    for (method, headers, body) in &seen[1..] {
        assert_eq!(
            header(headers, "mcp-session-id").as_deref(),
            Some("s-1"),
            "{method} {body}"
        );
        if method == "POST" {
            assert_eq!(
                header(headers, "mcp-protocol-version").as_deref(),
                Some("2025-06-18")
            );
            let accept = header(headers, "accept").unwrap_or_default();
            assert!(
                accept.contains("application/json") && accept.contains("text/event-stream"),
                "{accept}"
            );
        }
    }
    let methods: Vec<&str> = seen.iter().map(|(m, _, _)| m.as_str()).collect();
    assert!(methods.contains(&"GET"), "{methods:?}");
    assert_eq!(methods.last(), Some(&"DELETE"), "{methods:?}");
}
