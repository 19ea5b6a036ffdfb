//! Search benchmark (issue 4, point 6) — not a timed test; run with
//! `cargo bench -p toolreg-server --bench search` (BENCH_TOOLS=N to change
//! the 100,000 default, BENCH_SECONDS for the HTTP phase).
//!
//! 1. N synthetic tools with realistic descriptions are written to a SQLite
//!    registry database (tools + versions, as publish writes them).
//! 2. `reindex` from that database: tools/s, and the index size on disk.
//! 3. In-process query latency p50/p99 over a mix of queries (one word,
//!    two words, prefix, typo, filters, empty query sorted by downloads) —
//!    the server-side cost of a search page (top 20 + total + facets +
//!    highlights), and pages/s on 2 threads.
//!    Then the HTTP phase's distinct queries in-process on 2 threads.
//! 4. The real HTTP server on loopback with 32 concurrent clients sending
//!    distinct queries, the answer cache off: queries/s and client-side
//!    latency (the load generator shares the 2 cores).
//!
//! The benchmark uses mimalloc with the server binary's settings, as the
//! server does. `BENCH_DATA_DIR=dir` keeps the registry (database, index)
//! in `dir`. `BENCH_DUMP=file` instead writes the answers to a fixed set
//! of queries (see [`dump`]), to compare two builds with `diff`.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::web;
use diesel::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use toolreg_server::app::{self, AppState};
use toolreg_server::blobs::BlobStore;
use toolreg_server::db::{Db, DbConnection};
use toolreg_server::schema::{tools, users, version_contents, versions};
use toolreg_server::search::{SearchIndex, SearchParams, StoreSource};

/// The server binary's allocator (`server/src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc as `server/src/main.rs` sets it up: arena memory committed as
/// used, freed pages returned at once (options 4 and 15 of `mi_option_e`).
fn allocator_like_the_server() {
    for (option, value) in [(4, 0), (15, 0)] {
        // SAFETY: sets one process-wide option; no memory is touched.
        unsafe { libmimalloc_sys::mi_option_set(option, value) };
    }
}

const SERVICES: &[&str] = &[
    "slack",
    "github",
    "gitlab",
    "jira",
    "notion",
    "gmail",
    "outlook",
    "discord",
    "telegram",
    "twilio",
    "stripe",
    "shopify",
    "hubspot",
    "salesforce",
    "zendesk",
    "postgres",
    "mysql",
    "redis",
    "mongo",
    "s3",
    "dropbox",
    "drive",
    "calendar",
    "weather",
    "maps",
    "youtube",
    "spotify",
    "twitter",
    "reddit",
    "linear",
    "asana",
    "trello",
    "airtable",
    "sheets",
    "docs",
    "figma",
    "sentry",
    "datadog",
    "pagerduty",
    "openai",
];
const VERBS: &[&str] = &[
    "send",
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "fetch",
    "post",
    "upload",
    "download",
    "sync",
    "export",
    "import",
    "convert",
    "summarize",
    "translate",
    "analyze",
    "monitor",
    "notify",
];
const OBJECTS: &[&str] = &[
    "message",
    "issue",
    "page",
    "email",
    "event",
    "file",
    "record",
    "contact",
    "ticket",
    "order",
    "invoice",
    "report",
    "channel",
    "user",
    "repository",
    "comment",
    "task",
    "forecast",
    "playlist",
    "query",
];
const COMMON: &[&str] = &[
    "the",
    "a",
    "to",
    "from",
    "with",
    "for",
    "and",
    "of",
    "in",
    "by",
    "using",
    "your",
    "an",
    "on",
    "or",
    "data",
    "api",
    "account",
    "team",
    "workspace",
    "project",
    "results",
    "text",
    "json",
    "list",
    "returns",
    "optional",
    "filter",
    "date",
    "status",
    "name",
    "id",
    "token",
    "access",
    "quickly",
];
const KEYWORDS: &[&str] = &[
    "chat",
    "email",
    "crm",
    "devops",
    "database",
    "storage",
    "calendar",
    "weather",
    "finance",
    "ai",
    "search",
    "productivity",
    "social",
    "monitoring",
    "analytics",
    "documents",
    "media",
    "git",
    "sales",
    "support",
];
const LICENSES: &[&str] = &[
    "MIT",
    "Apache-2.0",
    "BSD-3-Clause",
    "MPL-2.0",
    "GPL-3.0-only",
    "ISC",
];
const EXECUTIONS: &[&str] = &[
    "http", "http", "http", "schema", "schema", "prompt", "command", "function", "script",
];
const FORMATS: &[(&str, &str)] = &[
    ("http", "matimo"),
    ("schema", "mcp"),
    ("prompt", "prompt"),
    ("command", "matimo"),
    ("function", "shinkai"),
    ("script", "matimo"),
];
const TIERS: &[&str] = &["untrusted", "verified", "trusted"];

/// A long tail of pseudo-words, so the vocabulary is realistic in size.
fn tail_word(rng: &mut StdRng) -> String {
    const SYL: &[&str] = &[
        "ka", "lo", "mi", "ra", "te", "vo", "zu", "pen", "dor", "al", "ex", "ion", "ur", "sa", "ti",
    ];
    let n = rng.random_range(2..4);
    (0..n)
        .map(|_| SYL[rng.random_range(0..SYL.len())])
        .collect()
}

struct Tool {
    name: String,
    description: String,
    keywords: Vec<String>,
    license: String,
    execution: String,
    format: String,
    tier: String,
    downloads: i64,
}

fn pick<'a>(rng: &mut StdRng, xs: &[&'a str]) -> &'a str {
    // Skewed: earlier entries are more frequent, like real registries.
    let r: f64 = rng.random();
    xs[((r * r) * xs.len() as f64) as usize % xs.len()]
}

fn synthetic(n: usize) -> Vec<Tool> {
    let mut rng = StdRng::seed_from_u64(42);
    (0..n)
        .map(|i| {
            let (s, v, o) = (
                pick(&mut rng, SERVICES),
                pick(&mut rng, VERBS),
                pick(&mut rng, OBJECTS),
            );
            let name = format!("{s}-{v}-{o}-{i}");
            let mut words = vec![
                format!(
                    "{}{} a {o} {}",
                    v[..1].to_uppercase(),
                    &v[1..],
                    if rng.random_bool(0.5) { "in" } else { "with" }
                ),
                s.to_string(),
            ];
            for _ in 0..rng.random_range(12..28) {
                let w = if rng.random_bool(0.6) {
                    pick(&mut rng, COMMON).to_string()
                } else if rng.random_bool(0.5) {
                    let list = if rng.random_bool(0.5) { OBJECTS } else { VERBS };
                    pick(&mut rng, list).to_string()
                } else {
                    tail_word(&mut rng)
                };
                words.push(w);
            }
            let execution = pick(&mut rng, EXECUTIONS).to_string();
            let format = FORMATS
                .iter()
                .find(|(e, _)| *e == execution)
                .map(|(_, f)| f.to_string())
                .unwrap_or_default();
            Tool {
                name,
                description: format!("{}.", words.join(" ")),
                keywords: (0..rng.random_range(1..4))
                    .map(|_| pick(&mut rng, KEYWORDS).to_string())
                    .collect(),
                license: pick(&mut rng, LICENSES).to_string(),
                execution,
                format,
                tier: pick(&mut rng, TIERS).to_string(),
                downloads: (rng.random::<f64>().powi(4) * 100_000.0) as i64,
            }
        })
        .collect()
}

fn fill_database(db: &Db, tools_in: &[Tool]) {
    let mut pooled = db.conn().expect("conn");
    let DbConnection::Sqlite(conn) = &mut *pooled else {
        panic!("the benchmark database is SQLite");
    };
    let at = chrono::DateTime::from_timestamp(1_760_000_000, 0)
        .expect("time")
        .naive_utc();
    diesel::insert_into(users::table)
        .values((
            users::id.eq(1i64),
            users::login.eq("bench"),
            users::tier.eq("trusted"),
            users::is_admin.eq(false),
            users::created_at.eq(at),
        ))
        .execute(conn)
        .expect("user");
    for (chunk_no, chunk) in tools_in.chunks(1000).enumerate() {
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            let base = chunk_no * 1000;
            let rows: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(j, t)| {
                    let id = (base + j + 1) as i64;
                    (
                        tools::id.eq(id),
                        tools::name.eq(t.name.clone()),
                        tools::normalized_name.eq(t.name.clone()),
                        tools::created_at.eq(at),
                        tools::updated_at.eq(at + chrono::TimeDelta::seconds(id)),
                        tools::downloads.eq(t.downloads),
                    )
                })
                .collect();
            for part in rows.chunks(200) {
                diesel::insert_into(tools::table).values(part).execute(conn)?;
            }
            let rows: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(j, t)| {
                    let id = (base + j + 1) as i64;
                    let summary = serde_json::json!({"description": t.description, "keywords": t.keywords, "license": t.license, "title": null}).to_string();
                    (
                        versions::id.eq(id),
                        versions::tool_id.eq(id),
                        versions::version.eq("1.0.0"),
                        versions::version_key.eq("1.0.0"),
                        versions::sha256.eq(format!("{id:064x}")),
                        versions::size.eq(1000i64),
                        versions::format.eq(t.format.clone()),
                        versions::execution.eq(t.execution.clone()),
                        versions::summary.eq(summary),
                        versions::publisher_id.eq(1i64),
                        versions::publisher_tier.eq(t.tier.clone()),
                        versions::downloads.eq(t.downloads),
                        versions::published_at.eq(at),
                    )
                })
                .collect();
            for part in rows.chunks(200) {
                diesel::insert_into(versions::table).values(part).execute(conn)?;
            }
            let contents: Vec<_> = (0..chunk.len())
                .map(|j| {
                    (
                        version_contents::version_id.eq((base + j + 1) as i64),
                        version_contents::manifest.eq("{}"),
                        version_contents::definition_file.eq("definition.yaml"),
                        version_contents::definition.eq(""),
                    )
                })
                .collect();
            for part in contents.chunks(200) {
                diesel::insert_into(version_contents::table)
                    .values(part)
                    .execute(conn)?;
            }
            Ok(())
        })
        .expect("insert tools");
    }
}

fn dir_size(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        dir_size(&p)
                    } else {
                        e.metadata().map(|m| m.len()).unwrap_or(0)
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn query_mix() -> Vec<(&'static str, SearchParams)> {
    let q = |s: &str| SearchParams::q(s);
    vec![
        ("one common word", q("slack")),
        ("one rare word", q("playlist")),
        ("two words", q("send message")),
        ("three words", q("create jira ticket")),
        ("prefix", q("calen")),
        ("typo", q("forcast")),
        (
            "word + filters",
            SearchParams {
                license: Some("MIT".into()),
                execution: Some(toolreg_core::ExecutionKind::Http),
                ..q("github")
            },
        ),
        (
            "keyword filter only",
            SearchParams {
                keyword: Some("finance".into()),
                ..SearchParams::default()
            },
        ),
        (
            "everything by downloads",
            SearchParams {
                sort: toolreg_server::search::Sort::Downloads,
                ..SearchParams::default()
            },
        ),
    ]
}

/// The answers to a fixed set of queries, one JSON line each, before and
/// after some upserts and removals (more segments, deleted documents), so
/// that two builds can be compared with `diff` (`BENCH_DUMP=file`).
fn dump(index: &SearchIndex, path: &str) {
    use std::io::Write;
    use toolreg_server::search::Sort;
    let mut rng = StdRng::seed_from_u64(99);
    let mut queries: Vec<SearchParams> = vec![];
    for i in 0..400 {
        let mut words: Vec<String> = vec![];
        for _ in 0..rng.random_range(0..4) {
            let w = match rng.random_range(0..8) {
                0 => pick(&mut rng, SERVICES).to_string(),
                1 => pick(&mut rng, VERBS).to_string(),
                2 => pick(&mut rng, OBJECTS).to_string(),
                3 => pick(&mut rng, COMMON).to_string(),
                4 => pick(&mut rng, KEYWORDS).to_string(),
                5 => tail_word(&mut rng),
                6 => {
                    let w = pick(&mut rng, SERVICES);
                    w[..w.len().min(rng.random_range(2..6))].to_string()
                }
                _ => {
                    // A typo: one letter dropped.
                    let w = pick(&mut rng, OBJECTS);
                    let at = rng.random_range(0..w.len());
                    format!("{}{}", &w[..at], &w[at + 1..])
                }
            };
            words.push(w);
        }
        let mut p = SearchParams::q(words.join(" "));
        if i % 7 == 0 {
            p.q = format!(
                "{}-{}-{}-{}",
                pick(&mut rng, SERVICES),
                pick(&mut rng, VERBS),
                pick(&mut rng, OBJECTS),
                rng.random_range(0..2000)
            );
        }
        if rng.random_bool(0.2) {
            p.keyword = Some(pick(&mut rng, KEYWORDS).to_string());
        }
        if rng.random_bool(0.2) {
            let l = pick(&mut rng, LICENSES);
            p.license = Some(if rng.random_bool(0.5) {
                l.to_lowercase()
            } else {
                l.to_string()
            });
        }
        if rng.random_bool(0.15) {
            p.execution = Some(pick(&mut rng, EXECUTIONS).parse().expect("execution"));
        }
        if rng.random_bool(0.1) {
            p.format = Some(
                FORMATS[rng.random_range(0..FORMATS.len())]
                    .1
                    .parse()
                    .expect("format"),
            );
        }
        if rng.random_bool(0.15) {
            p.tier = Some(pick(&mut rng, TIERS).parse().expect("tier"));
        }
        p.sort = [
            Sort::Relevance,
            Sort::Relevance,
            Sort::Downloads,
            Sort::Recent,
            Sort::Name,
        ][rng.random_range(0..5)];
        p.per_page = [1, 20, 20, 20, 100][rng.random_range(0..5)];
        p.page = rng.random_range(1..4);
        if rng.random_bool(0.05) {
            p.page = 10_000 / p.per_page;
        }
        queries.push(p);
    }
    index.set_result_cache(0);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("dump file"));
    let mut write_all = |index: &SearchIndex, round: &str| {
        for p in &queries {
            let r = index.query(p).expect("query");
            writeln!(
                out,
                "{round} {p:?}\n{}",
                serde_json::to_string(&r).expect("json")
            )
            .expect("write");
        }
    };
    write_all(index, "first");
    // Change some tools (new segment, deleted docs) and remove others.
    let names: Vec<String> = index
        .query(&SearchParams {
            sort: Sort::Name,
            per_page: 100,
            ..SearchParams::default()
        })
        .expect("names")
        .hits
        .into_iter()
        .map(|h| h.name)
        .collect();
    for (i, name) in names.iter().enumerate() {
        if i % 3 == 0 {
            index.remove(name).expect("remove");
        } else if let Some(mut d) = index.get(name).expect("get") {
            d.downloads += 1_000_000;
            d.keywords.push("Extra-Word".into());
            d.license = None;
            index.upsert(&d).expect("upsert");
        }
    }
    index.commit().expect("commit");
    write_all(index, "second");
}

/// The HTTP phase's queries, in four kinds (as query string and as
/// parameters): a rare word; a service and an object (pages 1–3); a
/// three-letter prefix with a license filter; a verb and a rare word.
fn http_queries() -> Vec<(usize, String, SearchParams)> {
    let mut rng = StdRng::seed_from_u64(7);
    (0..20_000)
        .map(|i| {
            let kind = i % 4;
            let (query, params) = match kind {
                0 => {
                    let w = tail_word(&mut rng);
                    (format!("q={w}"), SearchParams::q(w))
                }
                1 => {
                    let (s, o, page) = (
                        pick(&mut rng, SERVICES),
                        pick(&mut rng, OBJECTS),
                        rng.random_range(1..4),
                    );
                    (
                        format!("q={s}%20{o}&page={page}"),
                        SearchParams {
                            page,
                            ..SearchParams::q(format!("{s} {o}"))
                        },
                    )
                }
                2 => {
                    let (w, l) = (tail_word(&mut rng), pick(&mut rng, LICENSES));
                    (
                        format!("q={}&license={l}", &w[..3]),
                        SearchParams {
                            license: Some(l.to_string()),
                            ..SearchParams::q(&w[..3])
                        },
                    )
                }
                _ => {
                    let (v, w) = (pick(&mut rng, VERBS), tail_word(&mut rng));
                    (format!("q={v}%20{w}"), SearchParams::q(format!("{v} {w}")))
                }
            };
            (kind, query, params)
        })
        .collect()
}

fn main() {
    allocator_like_the_server();
    let n: usize = std::env::var("BENCH_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let tmp = tempfile::tempdir().expect("tempdir");
    // BENCH_DATA_DIR=dir: build the registry there and keep it (a data
    // directory a real `toolreg-server serve --data dir` can use).
    let kept = std::env::var_os("BENCH_DATA_DIR").map(std::path::PathBuf::from);
    let data: &std::path::Path = match &kept {
        Some(dir) => {
            std::fs::create_dir_all(dir).expect("data dir");
            dir
        }
        None => tmp.path(),
    };
    println!(
        "search benchmark: {n} synthetic tools, {} CPUs",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );

    let start = Instant::now();
    let tools_in = synthetic(n);
    let db = Db::connect(&format!("sqlite://{}", data.join("toolreg.db").display())).expect("db");
    db.migrate().expect("migrate");
    fill_database(&db, &tools_in);
    println!("  database filled in {:.1?}", start.elapsed());
    drop(tools_in);

    // Rebuild from the database.
    let index_dir = data.join("index");
    let start = Instant::now();
    let count = toolreg_server::search::reindex(&index_dir, Arc::new(StoreSource::new(db.clone())))
        .expect("reindex");
    let took = start.elapsed();
    println!(
        "  reindex from the database: {count} tools in {took:.2?} = {:.0} tools/s",
        count as f64 / took.as_secs_f64()
    );
    println!(
        "  index size on disk: {:.1} MiB",
        dir_size(&index_dir) as f64 / (1024.0 * 1024.0)
    );
    println!(
        "  segments: {}",
        std::fs::read_dir(&index_dir)
            .map(|d| d
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "store"))
                .count())
            .unwrap_or(0)
    );

    // In-process, server-side latency.
    let start = Instant::now();
    let index = Arc::new(SearchIndex::open(&index_dir).expect("open"));
    println!(
        "  open the index (checks it, reads the facet tables): {:.1?}",
        start.elapsed()
    );
    if let Ok(path) = std::env::var("BENCH_DUMP") {
        dump(&index, &path);
        return;
    }
    let start = Instant::now();
    index.warm().expect("warm");
    println!(
        "  search tables (facet ordinals + hit records) built in {:.0?}: {:.1} MiB",
        start.elapsed(),
        index.table_bytes() as f64 / (1024.0 * 1024.0)
    );
    // Cold: every query computed (the answer cache is measured separately).
    index.set_result_cache(0);
    let mix = query_mix();
    for (_, p) in &mix {
        index.query(p).expect("warm up");
    }
    let mut all = vec![];
    println!("  in-process page (top 20 + total + facets + highlights), 200 runs each:");
    for (label, p) in &mix {
        let mut lat = vec![];
        let mut total = 0;
        for _ in 0..200 {
            let t = Instant::now();
            total = index.query(p).expect("query").total;
            lat.push(t.elapsed());
        }
        lat.sort();
        println!(
            "    {label:<24} {total:>6} hits  p50 {:>9.3?}  p99 {:>9.3?}",
            percentile(&lat, 0.5),
            percentile(&lat, 0.99)
        );
        all.extend(lat);
    }
    all.sort();
    println!(
        "    all queries: p50 {:.3?}  p99 {:.3?}",
        percentile(&all, 0.5),
        percentile(&all, 0.99)
    );
    let threads = 2;
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (index, done, stop, mix) = (index.clone(), done.clone(), stop.clone(), query_mix());
            std::thread::spawn(move || {
                let mut i = t;
                while !stop.load(Ordering::Relaxed) {
                    index.query(&mix[i % mix.len()].1).expect("query");
                    done.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    println!(
        "    {threads} threads in-process, no answer cache: {:.0} pages/s",
        done.load(Ordering::Relaxed) as f64 / 3.0
    );
    // The HTTP phase's distinct queries, in-process.
    let queries = Arc::new(http_queries());
    for (kind, label) in [
        "rare word",
        "service + object, pages 1-3",
        "3-letter prefix + license",
        "verb + rare word",
    ]
    .iter()
    .enumerate()
    {
        let mut lat = vec![];
        let mut hits = 0;
        for (_, _, p) in queries.iter().filter(|q| q.0 == kind).take(500) {
            let t = Instant::now();
            hits += index.query(p).expect("query").total;
            lat.push(t.elapsed());
        }
        lat.sort();
        println!(
            "    distinct: {label:<28} {:>6} hits avg  p50 {:>9.3?}  p99 {:>9.3?}",
            hits / lat.len() as u64,
            percentile(&lat, 0.5),
            percentile(&lat, 0.99)
        );
    }
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (index, done, stop, queries) =
                (index.clone(), done.clone(), stop.clone(), queries.clone());
            std::thread::spawn(move || {
                let mut i = 2000 + t * queries.len() / threads;
                while !stop.load(Ordering::Relaxed) {
                    index.query(&queries[i % queries.len()].2).expect("query");
                    done.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    println!(
        "    {threads} threads in-process, the HTTP phase's distinct queries: {:.0} pages/s",
        done.load(Ordering::Relaxed) as f64 / 3.0
    );
    index.set_result_cache(1024);
    let mut lat = vec![];
    for _ in 0..20 {
        for (_, p) in &mix {
            let t = Instant::now();
            index.query(p).expect("query");
            lat.push(t.elapsed());
        }
    }
    lat.sort();
    println!(
        "    repeated queries from the answer cache: p50 {:.3?}  p99 {:.3?}",
        percentile(&lat, 0.5),
        percentile(&lat, 0.99)
    );
    drop(index);

    // The HTTP server with 32 concurrent clients.
    let blobs =
        BlobStore::open(&format!("file://{}", data.join("objects").display())).expect("blobs");
    let state = web::Data::new(AppState::new(
        db.clone(),
        blobs,
        toolreg_core::Policy::default(),
    ));
    state
        .search
        .start(&index_dir, Arc::new(StoreSource::new(db)))
        .expect("start search");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let server_state = state.clone();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = app::server(server_state, listener, Some(2)).expect("server");
            let _ = server.await;
        })
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // The answer cache off: every answer is computed.
    if let Some(index) = state.search.index() {
        index.set_result_cache(0);
    }
    let queries: Vec<String> = http_queries().into_iter().map(|(_, q, _)| q).collect();
    let queries = Arc::new(queries);
    let (count, mut lat) = rt.block_on(async move {
        let client = reqwest::Client::new();
        // Wait for the server.
        for _ in 0..100 {
            if client
                .get(format!("{url}/api/v1/search?q=x"))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let end = Instant::now() + Duration::from_secs(seconds);
        let tasks: Vec<_> = (0..32)
            .map(|c| {
                let (client, url, queries) = (client.clone(), url.clone(), queries.clone());
                tokio::spawn(async move {
                    let mut lat = vec![];
                    let mut i = c * (queries.len() / 32);
                    while Instant::now() < end {
                        let t = Instant::now();
                        let res = client
                            .get(format!(
                                "{url}/api/v1/search?{}",
                                queries[i % queries.len()]
                            ))
                            .send()
                            .await
                            .expect("request");
                        assert_eq!(res.status(), 200);
                        let _ = res.bytes().await.expect("body");
                        lat.push(t.elapsed());
                        i += 1;
                    }
                    lat
                })
            })
            .collect();
        let mut lat = vec![];
        for t in tasks {
            lat.extend(t.await.expect("client task"));
        }
        (lat.len(), lat)
    });
    lat.sort();
    println!(
        "  HTTP, 32 concurrent clients, {seconds} s (clients share the 2 cores): {:.0} queries/s, client-side p50 {:.2?} p99 {:.2?}",
        count as f64 / seconds as f64,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99)
    );
    state.search.stop();
}
