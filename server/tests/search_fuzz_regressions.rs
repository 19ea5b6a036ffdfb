//! The `search_query` fuzz target's inputs replayed as ordinary tests
//! (issue 10): every file under `fuzz/seeds/search_query/` and
//! `server/tests/search_fuzz_regressions/search_query/` goes through the very
//! function the libFuzzer target calls (included from `fuzz/src/search.rs`):
//! query string → actix-web's `web::Query<SearchRequest>` → `SearchRequest::parse`
//! → `SearchIndex::query`. Plus the explicit limits on the query path, each
//! answering with an error that names the parameter and the limit.

#[path = "../../fuzz/src/search.rs"]
mod search_target;

use std::fs;
use std::path::{Path, PathBuf};

use actix_web::web;
use toolreg_search::{SearchError, SearchRequest, MAX_SEARCH_QUERY_CHARS};

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn every_seed_and_saved_crash_replays_without_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut replayed = 0;
    for dir in [
        root.join("fuzz/seeds/search_query"),
        root.join("server/tests/search_fuzz_regressions/search_query"),
    ] {
        for file in files_under(&dir) {
            let bytes = fs::read(&file).unwrap();
            if std::panic::catch_unwind(|| search_target::search_query(&bytes)).is_err() {
                panic!("fuzz target search_query panics on {}", file.display());
            }
            replayed += 1;
        }
    }
    assert!(
        replayed >= 10,
        "only {replayed} inputs replayed; is fuzz/seeds/search_query there?"
    );
}

fn parse(qs: &str) -> Result<toolreg_search::SearchParams, String> {
    let query =
        web::Query::<SearchRequest>::from_query(qs).map_err(|e| format!("extractor: {e}"))?;
    query.parse().map_err(|e| match e {
        SearchError::BadRequest(m) => m,
        other => panic!("expected a bad request, got {other}"),
    })
}

#[test]
fn a_ten_megabyte_query_is_refused_by_the_length_cap() {
    let qs = format!("q={}", "x".repeat(10 * 1024 * 1024));
    let start = std::time::Instant::now();
    let err = parse(&qs).unwrap_err();
    assert!(
        err.starts_with("q:") && err.contains(&format!("the limit is {MAX_SEARCH_QUERY_CHARS}")),
        "{err}"
    );
    assert!(start.elapsed().as_secs() < 2, "took {:?}", start.elapsed());
    // Percent-encoded characters count once each, after decoding.
    let encoded = format!("q={}", "%C3%A9".repeat(MAX_SEARCH_QUERY_CHARS));
    assert_eq!(
        parse(&encoded).unwrap().q.chars().count(),
        MAX_SEARCH_QUERY_CHARS
    );
    let over = format!("q={}", "%C3%A9".repeat(MAX_SEARCH_QUERY_CHARS + 1));
    assert!(parse(&over).unwrap_err().starts_with("q:"));
}

#[test]
fn huge_numbers_and_giant_filters_are_refused_by_name() {
    let page = parse(&format!("page={}", "9".repeat(400))).unwrap_err();
    assert!(
        page.starts_with("page:") && page.contains("is not a whole number from 1 to"),
        "{page}"
    );
    let per_page = parse("per_page=1e400").unwrap_err();
    assert!(per_page.starts_with("per_page:"), "{per_page}");
    let keyword = parse(&format!("keyword={}", "k".repeat(1024 * 1024))).unwrap_err();
    assert!(
        keyword.starts_with("keyword:") && keyword.contains("longer than"),
        "{keyword}"
    );
}
