//! The publish load generator: replays pre-built bundles as
//! `POST /api/v1/tools` with C client threads, one keep-alive connection
//! each, and prints one JSON line like `publish.py`'s:
//! `{"ok", "errors", "seconds", "per_second", "statuses", "failures"}`.
//!
//! It is plain `std` (built by `publish.py` with `rustc -O`, no crates) and
//! costs a few microseconds of CPU per request, so on a machine where the
//! clients share the cores with the server the figure is the server's rate,
//! not the clients'. The Python clients (`publish.py --client python`) cost
//! about 0.6 ms per publish.
//!
//!     publisher URL TOKEN BODIES CLIENTS
//!
//! BODIES holds the bundles in order: for each, a little-endian u32 length
//! and the tool's name, then a u32 length and the gzip body. Client k sends
//! bundles k, k + C, k + 2C, ...

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::Instant;

struct Outcome {
    ok: u64,
    errors: u64,
    started: Instant,
    finished: Instant,
    statuses: BTreeMap<String, u64>,
    failures: Vec<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: publisher URL TOKEN BODIES CLIENTS");
        std::process::exit(2);
    }
    let host = args[1]
        .strip_prefix("http://")
        .unwrap_or(&args[1])
        .trim_end_matches('/')
        .to_string();
    let token = args[2].clone();
    let bundles = Arc::new(read_bodies(&args[3]));
    let clients: usize = args[4].parse().expect("CLIENTS is a number");
    let barrier = Arc::new(Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|k| {
            let (host, token, bundles, barrier) =
                (host.clone(), token.clone(), bundles.clone(), barrier.clone());
            std::thread::spawn(move || client(&host, &token, &bundles, k, clients, &barrier))
        })
        .collect();
    let parts: Vec<Outcome> = threads
        .into_iter()
        .map(|t| t.join().expect("a client thread"))
        .collect();
    let started = parts.iter().map(|p| p.started).min().expect("a client");
    let finished = parts.iter().map(|p| p.finished).max().expect("a client");
    let seconds = (finished - started).as_secs_f64();
    let ok: u64 = parts.iter().map(|p| p.ok).sum();
    let errors: u64 = parts.iter().map(|p| p.errors).sum();
    let mut statuses = BTreeMap::new();
    for p in &parts {
        for (k, v) in &p.statuses {
            *statuses.entry(k.clone()).or_insert(0) += v;
        }
    }
    let statuses: Vec<String> = statuses
        .iter()
        .map(|(k, v)| format!("{}: {v}", json_string(k)))
        .collect();
    let failures: Vec<String> = parts
        .iter()
        .flat_map(|p| p.failures.iter())
        .take(5)
        .map(|f| json_string(f))
        .collect();
    let per_second = if seconds > 0.0 {
        ok as f64 / seconds
    } else {
        0.0
    };
    println!(
        "{{\"ok\": {ok}, \"errors\": {errors}, \"seconds\": {seconds:.3}, \"per_second\": {per_second:.1}, \"statuses\": {{{}}}, \"failures\": [{}]}}",
        statuses.join(", "),
        failures.join(", ")
    );
    std::process::exit(if errors == 0 { 0 } else { 1 });
}

/// The (name, body) pairs of the BODIES file.
fn read_bodies(path: &str) -> Vec<(String, Vec<u8>)> {
    let data = std::fs::read(path).expect("read the BODIES file");
    let mut at = 0;
    let take = |at: &mut usize| -> Vec<u8> {
        let len = u32::from_le_bytes(data[*at..*at + 4].try_into().expect("4 bytes")) as usize;
        let part = data[*at + 4..*at + 4 + len].to_vec();
        *at += 4 + len;
        part
    };
    let mut out = Vec::new();
    while at < data.len() {
        let name = String::from_utf8(take(&mut at)).expect("a UTF-8 name");
        let body = take(&mut at);
        out.push((name, body));
    }
    out
}

fn client(
    host: &str,
    token: &str,
    bundles: &[(String, Vec<u8>)],
    k: usize,
    clients: usize,
    barrier: &Barrier,
) -> Outcome {
    // Every request is built before the clock starts.
    let requests: Vec<(&str, Vec<u8>)> = bundles
        .iter()
        .skip(k)
        .step_by(clients)
        .map(|(name, body)| {
            let mut req = format!(
                "POST /api/v1/tools HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: application/gzip\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            req.extend_from_slice(body);
            (name.as_str(), req)
        })
        .collect();
    let mut out = Outcome {
        ok: 0,
        errors: 0,
        started: Instant::now(),
        finished: Instant::now(),
        statuses: BTreeMap::new(),
        failures: Vec::new(),
    };
    let mut conn = None;
    barrier.wait();
    out.started = Instant::now();
    for (name, req) in &requests {
        let reply = match conn.take() {
            Some(c) => Ok(c),
            None => connect(host),
        }
        .and_then(|mut c| exchange(&mut c, req).map(|r| (c, r)));
        let (status, text) = match reply {
            Ok((c, (status, text, keep))) => {
                if keep {
                    conn = Some(c);
                }
                (status.to_string(), text)
            }
            Err(e) => (format!("connection: {:?}", e.kind()), String::new()),
        };
        *out.statuses.entry(status.clone()).or_insert(0) += 1;
        if status == "201" {
            out.ok += 1;
        } else {
            out.errors += 1;
            if out.failures.len() < 3 {
                let text: String = text.chars().take(200).collect();
                out.failures.push(format!("{name}: {status} {text}"));
            }
        }
    }
    out.finished = Instant::now();
    out
}

fn connect(host: &str) -> std::io::Result<BufReader<TcpStream>> {
    let stream = TcpStream::connect(host)?;
    stream.set_nodelay(true)?;
    Ok(BufReader::new(stream))
}

/// Send one request and read its answer: (status, body, keep the connection).
fn exchange(conn: &mut BufReader<TcpStream>, req: &[u8]) -> std::io::Result<(u16, String, bool)> {
    conn.get_mut().write_all(req)?;
    let mut line = String::new();
    conn.read_line(&mut line)?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut length = None;
    let mut keep = true;
    loop {
        line.clear();
        if conn.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "content-length" {
                length = v.parse::<usize>().ok();
            } else if k == "connection" && v.eq_ignore_ascii_case("close") {
                keep = false;
            } else if k == "transfer-encoding" {
                return Err(std::io::Error::other("chunked answers are not read"));
            }
        }
    }
    let mut body = vec![0; length.unwrap_or(0)];
    conn.read_exact(&mut body)?;
    Ok((status, String::from_utf8_lossy(&body).into_owned(), keep))
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
