//! `toolreg mcp serve` with 100 installed pins: how long from starting the
//! process until it answers an MCP client's first request (`initialize`).
//! That span holds the whole start: reading toolreg.toml and toolreg.lock,
//! the offline checks of every pin (each file hashed against its manifest,
//! each definition loaded, linted and fingerprinted), and preparing every
//! tool's export, input-schema validator and plan. The pins are the same
//! real corpus definitions the `verify` bench installs, each with a call
//! name of its own.

mod pins;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

const PINS: usize = 100;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

fn bench(c: &mut Criterion) {
    let project = pins::project(PINS);
    let root = project.path();
    let exe = env!("CARGO_BIN_EXE_toolreg");
    let mut group = c.benchmark_group("mcp serve");
    group.sample_size(20);
    group.bench_function(
        format!("ready: start to the initialize answer, {PINS} pins"),
        |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    let mut child = Command::new(exe)
                        .args(["mcp", "serve", "--project"])
                        .arg(root)
                        .env("TOOLREG_CONFIG_DIR", root.join(".config"))
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap();
                    let mut stdin = child.stdin.take().unwrap();
                    writeln!(stdin, "{INITIALIZE}").unwrap();
                    let mut line = String::new();
                    BufReader::new(child.stdout.take().unwrap())
                        .read_line(&mut line)
                        .unwrap();
                    total += started.elapsed();
                    assert!(
                        line.contains("\"serverInfo\""),
                        "no initialize answer: {line}"
                    );
                    drop(stdin);
                    assert!(child.wait().unwrap().success());
                }
                total
            })
        },
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
