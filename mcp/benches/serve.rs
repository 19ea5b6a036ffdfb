//! The MCP server's own costs, in process, over an in-memory byte stream
//! speaking the same newline-delimited JSON-RPC as stdio (so the figures
//! include rmcp's framing and serialization, not the pipe):
//!
//! * `tools/list` of 100 tools (real corpus definitions, each under a call
//!   name of its own), one request and its answer;
//! * an `http` tool call against a local upstream, next to the same request
//!   sent straight to that upstream with an HTTP client of the same crate:
//!   the difference is what serving adds (argument check, filling the
//!   definition, the answer as an MCP result, the JSON-RPC round trip).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use toolreg_mcp::{Catalog, Log, Pin, ServeHandler, Settings};

const TOOLS: usize = 100;

/// Corpus definitions (MCP and Matimo), loaded.
fn corpus_tools() -> Vec<toolreg_core::Tool> {
    let root = toolreg_test_support::corpus()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures"));
    let mut out = Vec::new();
    for (format, file) in [("mcp", "tool.json"), ("matimo", "definition.yaml")] {
        let Ok(entries) = std::fs::read_dir(root.join(format)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(bytes) = std::fs::read(entry.path().join(file)) else {
                continue;
            };
            let mut files = toolreg_core::ToolFiles::new();
            files.insert(file, bytes);
            files.insert(
                "toolreg.toml",
                "[tool]\nname = \"bench-tool\"\nversion = \"1.0.0\"\n",
            );
            if let Ok(loaded) = toolreg_core::load(&files) {
                out.push(loaded.tool);
            }
        }
    }
    assert!(!out.is_empty(), "no corpus definition loads");
    out
}

/// `n` pins of the corpus tools, each under a call name of its own.
fn pins(tools: &[toolreg_core::Tool], n: usize) -> Vec<Pin> {
    (0..n)
        .map(|i| {
            let mut tool = tools[i % tools.len()].clone();
            tool.call_name = format!("tool_{i:03}");
            Pin {
                name: format!("bench-tool-{i:03}"),
                version: "1.0.0".into(),
                dir: std::env::temp_dir(),
                tool,
            }
        })
        .collect()
}

/// The client end of an in-memory MCP session, initialized.
struct Session {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    next: u64,
    line: String,
}

impl Session {
    async fn open(handler: ServeHandler) -> Session {
        let (client, server) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let (r, w) = tokio::io::split(server);
            if let Ok(running) = rmcp::ServiceExt::serve(handler, (r, w)).await {
                let _ = running.waiting().await;
            }
        });
        let (r, w) = tokio::io::split(client);
        let mut s = Session {
            write: w,
            read: BufReader::new(r),
            next: 1,
            line: String::new(),
        };
        s.request(r#""method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#)
            .await;
        s.write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .unwrap();
        s
    }

    /// Send one request (`"method":…,"params":…`) and read its answer line.
    async fn request(&mut self, body: &str) -> &str {
        let id = self.next;
        self.next += 1;
        let msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{body}}}\n");
        self.write.write_all(msg.as_bytes()).await.unwrap();
        self.line.clear();
        self.read.read_line(&mut self.line).await.unwrap();
        &self.line
    }
}

/// A local HTTP/1.1 upstream with keep-alive that answers every request
/// with the same small JSON document.
async fn upstream() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut have = 0;
                loop {
                    let Ok(n) = stream.read(&mut buf[have..]).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    have += n;
                    // One request: its headers, then Content-Length bytes of body.
                    let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if have < end + 4 + len {
                        continue;
                    }
                    buf.copy_within(end + 4 + len..have, 0);
                    have -= end + 4 + len;
                    let body = r#"{"number": 7, "url": "http://example.test/issues/7"}"#;
                    // One write: headers and body in separate segments would
                    // meet the client's delayed ACK (40 ms per request).
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A Matimo http tool aimed at the local upstream, with a credential from
/// the environment, a JSON body and an output schema.
fn http_tool(port: u16) -> toolreg_core::Tool {
    let yaml = format!(
        "name: open_issue\nversion: '1.0.0'\ndescription: Open an issue.\nparameters:\n  owner:\n    type: string\n    required: true\n    description: Owner.\n  title:\n    type: string\n    required: true\n    description: Title.\nexecution:\n  type: http\n  method: POST\n  url: 'http://127.0.0.1:{port}/repos/{{owner}}/issues'\n  headers:\n    Authorization: 'Bearer {{BENCH_TOKEN}}'\n  body:\n    title: '{{title}}'\noutput_schema:\n  type: object\n  properties:\n    number: {{ type: integer }}\n  required: [number]\n"
    );
    let mut files = toolreg_core::ToolFiles::new();
    files.insert("definition.yaml", yaml);
    toolreg_core::load(&files).unwrap().tool
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let tools = corpus_tools();
    let settings = Settings {
        log: Log::silent(),
        env: Arc::new(|name: &str| (name == "BENCH_TOKEN").then(|| "t0ken".to_string())),
        ..Settings::default()
    };
    let catalog = Catalog::new(pins(&tools, TOOLS), settings.clone()).unwrap();
    let mut session = rt.block_on(Session::open(ServeHandler::new(Arc::new(catalog))));
    let listed: Value =
        serde_json::from_str(rt.block_on(session.request(r#""method":"tools/list""#))).unwrap();
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), TOOLS);

    let mut group = c.benchmark_group("mcp");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function(format!("tools/list of {TOOLS} tools"), |b| {
        b.iter(|| {
            rt.block_on(session.request(r#""method":"tools/list""#))
                .len()
        })
    });

    let port = rt.block_on(upstream());
    let mut pin = pins(&tools, 1).remove(0);
    pin.tool = http_tool(port);
    let catalog = Catalog::new(vec![pin], settings).unwrap();
    let mut session = rt.block_on(Session::open(ServeHandler::new(Arc::new(catalog))));
    let call = r#""method":"tools/call","params":{"name":"open_issue","arguments":{"owner":"acme","title":"Bench"}}"#;
    let answer = rt.block_on(session.request(call)).to_string();
    assert!(
        answer.contains("\"structuredContent\":{\"number\":7"),
        "{answer}"
    );
    group.bench_function("http tool call through the server", |b| {
        b.iter(|| rt.block_on(session.request(call)).len())
    });
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/repos/acme/issues");
    group.bench_function("the same request straight to the upstream", |b| {
        b.iter(|| {
            rt.block_on(async {
                client
                    .post(&url)
                    .header("Authorization", "Bearer t0ken")
                    .header("Content-Type", "application/json")
                    .body(r#"{"title":"Bench"}"#)
                    .send()
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap()
                    .len()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
