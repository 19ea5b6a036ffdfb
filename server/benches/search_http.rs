//! Search over HTTP and from the database — not a timed test; run with
//! `cargo bench -p toolreg-server --bench search_http` (BENCH_TOOLS=N to
//! change the 100,000 default, BENCH_SECONDS for the HTTP phase).
//!
//! 1. N synthetic tools (the generator of the search crate's benchmark) are
//!    written to a SQLite registry database (tools + versions, as publish
//!    writes them).
//! 2. `reindex` from that database: tools/s, and the index size on disk.
//! 3. The real HTTP server on loopback with 32 concurrent clients sending
//!    distinct queries, the answer cache off: queries/s and client-side
//!    latency (the load generator shares the 2 cores).
//!
//! The engine alone (query latency in-process) is
//! `cargo bench -p toolreg-search --bench search`. The benchmark uses
//! mimalloc with the server binary's settings, as the server does.
//! `BENCH_DATA_DIR=dir` keeps the registry (database, index) in `dir`, a
//! data directory a real `toolreg-server serve --data dir` can use.

#[path = "../../search/benches/support/synthetic.rs"]
mod synthetic;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::web;
use diesel::prelude::*;
use synthetic::{http_queries, percentile, synthetic, Tool};
use toolreg_server::app::{self, AppState};
use toolreg_server::blobs::BlobStore;
use toolreg_server::db::{Db, DbConnection};
use toolreg_server::schema::{tools, users, version_contents, versions};
use toolreg_server::search::StoreSource;

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

fn fill_database(db: &Db, tools_in: &[Tool]) {
    let mut pooled = db.conn().expect("conn");
    let DbConnection::Sqlite(conn) = &mut **pooled else {
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
        "search HTTP benchmark: {n} synthetic tools, {} CPUs",
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
    synthetic::print_index_size(&index_dir);

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
        .start(
            &index_dir,
            Arc::new(StoreSource::new(db)),
            toolreg_server::search::SearchMemory::default(),
        )
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
