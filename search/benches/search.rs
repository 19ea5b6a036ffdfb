//! Search engine benchmark — not a timed test; run with
//! `cargo bench -p toolreg-search --bench search` (BENCH_TOOLS=N to change
//! the 100,000 default).
//!
//! 1. N synthetic tools with realistic descriptions (`support/synthetic.rs`)
//!    are the documents of an in-memory [`SearchSource`].
//! 2. A rebuild through that source into an index directory (what
//!    `reindex` does, without the database): tools/s, and the index size on
//!    disk.
//! 3. In-process query latency p50/p99 over a mix of queries (one word,
//!    two words, prefix, typo, filters, empty query sorted by downloads) —
//!    the cost of a search page (top 20 + total + facets + highlights), and
//!    pages/s on 2 threads; natural-language needs of 200, 1,000 and 4,000
//!    characters (300 distinct queries each). Then the HTTP phase's distinct
//!    queries in-process on 2 threads, and repeated queries from the answer
//!    cache.
//!
//! The database and HTTP side (a rebuild from SQLite, 32 concurrent HTTP
//! clients) is `cargo bench -p toolreg-server --bench search_http`.
//!
//! The benchmark uses mimalloc with the server binary's settings, as the
//! server does. `BENCH_DUMP=file` instead writes the answers to a fixed set
//! of queries (see [`dump`]), to compare two builds with `diff`.

#[path = "support/synthetic.rs"]
mod synthetic;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use synthetic::{
    http_queries, need_queries, percentile, pick, synthetic, tail_word, Tool, COMMON, EXECUTIONS,
    FORMATS, KEYWORDS, LICENSES, OBJECTS, SERVICES, TIERS, VERBS,
};
use toolreg_search::{
    IndexChange, SearchDoc, SearchError, SearchIndex, SearchParams, SearchSort, SearchSource,
    Tailer, TailerOptions,
};

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

/// The synthetic tools as the documents the server's database source would
/// make of them (tool `i` updated `i` seconds after a fixed time), by name.
fn documents(tools: &[Tool]) -> Vec<SearchDoc> {
    let at = DateTime::<Utc>::from_timestamp(1_760_000_000, 0).expect("time");
    let mut docs: Vec<SearchDoc> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| SearchDoc {
            name: t.name.clone(),
            version: "1.0.0".into(),
            definition_sha256: None,
            title: None,
            description: t.description.clone(),
            notes: String::new(),
            keywords: t.keywords.clone(),
            license: Some(t.license.clone()),
            format: t.format.parse().expect("format"),
            execution: t.execution.parse().expect("execution"),
            tier: t.tier.parse().expect("tier"),
            downloads: t.downloads as u64,
            updated_at: at + TimeDelta::seconds(i as i64 + 1),
            blocked: false,
            blocked_reason: None,
            deprecated: None,
            findings: 0,
            provenance: false,
        })
        .collect();
    docs.sort_by(|a, b| a.name.cmp(&b.name));
    docs
}

/// A change log without changes over a fixed set of documents: what a
/// rebuild reads.
struct Documents(Vec<SearchDoc>);

impl SearchSource for Documents {
    fn changes_after(&self, _: i64, _: usize) -> Result<Vec<IndexChange>, SearchError> {
        Ok(Vec::new())
    }
    fn changes_at(&self, _: &[i64]) -> Result<Vec<IndexChange>, SearchError> {
        Ok(Vec::new())
    }
    fn latest_seq(&self) -> Result<i64, SearchError> {
        Ok(0)
    }
    fn search_doc(&self, tool_name: &str) -> Result<Option<SearchDoc>, SearchError> {
        Ok(self.0.iter().find(|d| d.name == tool_name).cloned())
    }
    fn all_tool_names(&self) -> Result<Vec<String>, SearchError> {
        Ok(self.0.iter().map(|d| d.name.clone()).collect())
    }
    fn all_docs(&self) -> Result<Vec<SearchDoc>, SearchError> {
        Ok(self.0.clone())
    }
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
                sort: SearchSort::Downloads,
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
            SearchSort::Relevance,
            SearchSort::Relevance,
            SearchSort::Downloads,
            SearchSort::Recent,
            SearchSort::Name,
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
            sort: SearchSort::Name,
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

fn main() {
    allocator_like_the_server();
    let n: usize = std::env::var("BENCH_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let tmp = tempfile::tempdir().expect("tempdir");
    println!(
        "search engine benchmark: {n} synthetic tools, {} CPUs",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );

    let source = Arc::new(Documents(documents(&synthetic(n))));

    // Rebuild through the source, as `reindex` does from the database.
    let index_dir = tmp.path().join("index");
    let start = Instant::now();
    let index = Arc::new(SearchIndex::open(&index_dir).expect("create the index"));
    let count = Tailer::new(index, source, TailerOptions::default())
        .reindex()
        .expect("reindex");
    let took = start.elapsed();
    println!(
        "  rebuild through the source: {count} tools in {took:.2?} = {:.0} tools/s",
        count as f64 / took.as_secs_f64()
    );
    synthetic::print_index_size(&index_dir);

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
    // Natural-language needs: distinct queries (no answer is repeated).
    for chars in [200, 1_000, 4_000] {
        let needs = need_queries(300, chars);
        for q in needs.iter().take(20) {
            index.query(&SearchParams::q(q.as_str())).expect("warm up");
        }
        let mut lat = vec![];
        let mut hits = 0;
        for q in &needs {
            let t = Instant::now();
            hits += index
                .query(&SearchParams::q(q.as_str()))
                .expect("query")
                .total;
            lat.push(t.elapsed());
        }
        lat.sort();
        println!(
            "    {:<24} {:>6} hits avg  p50 {:>9.3?}  p99 {:>9.3?}",
            format!("{chars}-character need"),
            hits / lat.len() as u64,
            percentile(&lat, 0.5),
            percentile(&lat, 0.99)
        );
    }
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
}
