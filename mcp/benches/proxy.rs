//! What `toolreg mcp proxy` adds, in process (the agent side an in-memory
//! pipe, the upstream a real child process speaking stdio):
//!
//! * one `ping` round trip through the proxy, next to the same round trip
//!   straight to the same upstream process: the difference is the proxy's
//!   overhead per request (parsing the line, the id bookkeeping, the extra
//!   hop through two pipes);
//! * checking a `tools/list` of 100 tools against their pins: the
//!   fingerprint of each tool and the lint on it.
//!
//! The upstream is tests/mcp/proxy/raw_server.py (python3, no SDK).

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolreg_mcp::proxy::{self, check, Config, Hooks, Launch, Pins, Verdict};

const TOOLS: usize = 100;

struct Quiet;

impl Hooks for Quiet {
    fn checked(&self, _: &Pins, _: &[Verdict]) -> Result<(), String> {
        Ok(())
    }
}

fn server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/mcp/proxy/raw_server.py")
        .display()
        .to_string()
}

/// One end of a line-per-message JSON-RPC conversation.
struct Peer<W, R> {
    w: W,
    r: BufReader<R>,
    line: String,
}

impl<W: tokio::io::AsyncWrite + Unpin, R: tokio::io::AsyncRead + Unpin> Peer<W, R> {
    async fn request(&mut self, msg: &str) -> usize {
        self.w.write_all(msg.as_bytes()).await.unwrap();
        self.w.write_all(b"\n").await.unwrap();
        self.w.flush().await.unwrap();
        loop {
            self.line.clear();
            self.r.read_line(&mut self.line).await.unwrap();
            // skip notifications
            if self.line.contains("\"id\"") {
                return self.line.len();
            }
        }
    }

    async fn open(&mut self) {
        self.request(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#).await;
        self.w
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .unwrap();
    }
}

/// A tools/list of 100 tools of corpus-like shape, and pins for all of them.
fn listed() -> (Vec<Value>, Pins) {
    let tools: Vec<Value> = (0..TOOLS)
        .map(|i| {
            serde_json::json!({
                "name": format!("tool_{i:03}"),
                "title": format!("Tool {i}"),
                "description": format!("Look up issue number {i} in the tracker and return its title, state, labels and the people assigned to it."),
                "inputSchema": {"type": "object", "properties": {
                    "owner": {"type": "string", "description": "Account that owns the repository."},
                    "repo": {"type": "string", "description": "Repository name."},
                    "number": {"type": "integer", "description": "The issue number."}
                }, "required": ["owner", "repo", "number"]},
                "annotations": {"readOnlyHint": true}
            })
        })
        .collect();
    let mut pins = Pins::default();
    for t in &tools {
        let name = t["name"].as_str().unwrap().to_string();
        pins.tools
            .insert(name, toolreg_core::fingerprint::of_mcp(t));
    }
    (tools, pins)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("proxy");
    group.measurement_time(Duration::from_secs(5));

    let (tools, pins) = listed();
    let verdicts = check::check(&pins, &tools, false);
    assert!(verdicts.iter().all(|v| v.status.passes()));
    group.bench_function(format!("check a tools/list of {TOOLS} tools"), |b| {
        b.iter(|| check::check(&pins, &tools, false).len())
    });

    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut direct = rt.block_on(async {
        let mut child = tokio::process::Command::new("python3")
            .arg(server())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs the upstream");
        let mut peer = Peer {
            w: child.stdin.take().unwrap(),
            r: BufReader::new(child.stdout.take().unwrap()),
            line: String::new(),
        };
        peer.open().await;
        (peer, child)
    });
    group.bench_function("ping straight to the upstream", |b| {
        b.iter(|| rt.block_on(direct.0.request(ping)))
    });

    let mut proxied = rt.block_on(async {
        let (agent, proxy_side) = tokio::io::duplex(1 << 20);
        let (proxy_in, proxy_out) = tokio::io::split(proxy_side);
        let config = Config {
            server: "bench".into(),
            launch: Launch::Command(vec!["python3".into(), server()]),
            pins: Pins::default(),
            record: false,
            strict: false,
            max_message: proxy::frame::MAX_MESSAGE,
        };
        tokio::spawn(proxy::run_on(config, Arc::new(Quiet), proxy_in, proxy_out));
        let (r, w) = tokio::io::split(agent);
        let mut peer = Peer {
            w,
            r: BufReader::new(r),
            line: String::new(),
        };
        peer.open().await;
        peer
    });
    group.bench_function("ping through the proxy", |b| {
        b.iter(|| rt.block_on(proxied.request(ping)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
