//! The `search_query` fuzz target's inputs replayed as ordinary tests
//! (issue 10): every file under `fuzz/seeds/search_query/` and
//! `server/tests/search_fuzz_regressions/search_query/` goes through the very
//! function the libFuzzer target calls (included from `fuzz/src/search.rs`):
//! query string → actix-web's `web::Query<SearchRequest>` → `SearchRequest::parse`
//! → `SearchIndex::query`. Plus the explicit limits on the query path: those
//! of the parameters answer with an error that names the parameter and the
//! limit; the query text is read only as far as the engine reads it.

#[path = "../../fuzz/src/search.rs"]
mod search_target;

use std::fs;
use std::path::{Path, PathBuf};

use actix_web::web;
use toolreg_search::{SearchError, SearchRequest, MAX_ANALYZED_CHARS, MAX_TERMS};

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
fn a_ten_megabyte_query_is_read_only_as_far_as_the_engine_reads() {
    // No 400 for length: the engine reads the first MAX_ANALYZED_CHARS
    // characters, of them at most MAX_TERMS words, quickly.
    let words: String = (0..2_000_000).map(|i| format!("w{} ", i % 997)).collect();
    for q in ["x".repeat(10 * 1024 * 1024), words] {
        let qs = format!("q={q}");
        let start = std::time::Instant::now();
        let params = parse(&qs).unwrap();
        let answer = search_target::index().query(&params).unwrap();
        assert!(answer.words.len() <= MAX_TERMS, "{:?}", answer.words.len());
        let joined = answer.words.join(" ");
        assert!(joined.chars().count() <= MAX_ANALYZED_CHARS, "{joined}");
        assert!(start.elapsed().as_secs() < 2, "took {:?}", start.elapsed());
    }
    // Percent-encoded characters are decoded before they are read.
    let encoded = format!("q={}", "%C3%A9t%C3%A9%20".repeat(MAX_ANALYZED_CHARS));
    let params = parse(&encoded).unwrap();
    assert!(params.q.starts_with("été été"));
    assert_eq!(
        search_target::index().query(&params).unwrap().words,
        ["été"]
    );
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
