//! The body of the `search_query` fuzz target: a query string exactly as
//! `GET /api/v1/search?...` receives it — decoded by actix-web's
//! `web::Query<SearchRequest>` extractor, validated by `SearchRequest::parse`,
//! then run by `SearchIndex::query` against a small in-memory index (no
//! server, no database). `server/tests/search_fuzz_regressions.rs` includes
//! this file (`#[path]`) and replays the seeds through the same code.
//!
//! Invariants besides "no panic, no hang": bad parameters are a
//! `BadRequest` naming the parameter; a validated query never fails inside
//! the index; a page never holds more hits than `per_page`.

use std::sync::OnceLock;

use actix_web::web;
use chrono::{TimeZone, Utc};
use toolreg_core::{ExecutionKind, Format, Tier};
use toolreg_search::{SearchDoc, SearchError, SearchIndex, SearchRequest};

/// The parameters `GET /api/v1/search` knows; a bad-request message starts with one.
const PARAMS: &[&str] = &[
    "q",
    "keyword",
    "license",
    "format",
    "execution",
    "tier",
    "sort",
    "page",
    "per_page",
];

fn doc(
    name: &str,
    title: Option<&str>,
    description: &str,
    keywords: &[&str],
    execution: ExecutionKind,
) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        version: "1.0.0".into(),
        definition_sha256: None,
        title: title.map(Into::into),
        description: description.into(),
        notes: String::new(),
        keywords: keywords.iter().map(|k| k.to_string()).collect(),
        license: Some("MIT".into()),
        format: Format::Matimo,
        execution,
        tier: Tier::Verified,
        downloads: 7,
        updated_at: Utc
            .timestamp_opt(1_767_225_600, 0)
            .single()
            .unwrap_or_default(),
        blocked: false,
        blocked_reason: None,
        deprecated: None,
        findings: 0,
        provenance: false,
    }
}

/// A few tools to search, built once per process.
pub fn index() -> &'static SearchIndex {
    static INDEX: OnceLock<SearchIndex> = OnceLock::new();
    INDEX.get_or_init(|| {
        let index = SearchIndex::in_memory().expect("an in-memory index");
        let docs = [
            doc(
                "web-search",
                Some("Web Search"),
                "Search the web for pages",
                &["search", "web"],
                ExecutionKind::Http,
            ),
            doc(
                "github-create-issue",
                None,
                "Create an issue in a GitHub repository",
                &["github"],
                ExecutionKind::Http,
            ),
            doc(
                "calculator",
                Some("Calculator"),
                "Évaluer des expressions: 1+2*3 — 计算器",
                &["math"],
                ExecutionKind::Function,
            ),
            doc(
                "summarize-text",
                Some("Summarize"),
                "Summarize <b>text</b> & \"quote\"",
                &[],
                ExecutionKind::Prompt,
            ),
        ];
        for d in &docs {
            index.upsert(d).expect("upsert");
        }
        index.commit().expect("commit");
        index
    })
}

/// One query string (the part after `?`).
pub fn search_query(data: &[u8]) {
    let Ok(qs) = std::str::from_utf8(data) else {
        return;
    };
    // What the actix extractor refuses is a 400 before our code runs.
    let Ok(query) = web::Query::<SearchRequest>::from_query(qs) else {
        return;
    };
    let params = match query.parse() {
        Ok(p) => p,
        Err(SearchError::BadRequest(m)) => {
            assert!(
                PARAMS.iter().any(|p| m.starts_with(&format!("{p}:"))),
                "a bad request must name its parameter: {m}"
            );
            return;
        }
        Err(e) => panic!("parsing parameters can only be a bad request, got {e}"),
    };
    match index().query(&params) {
        Ok(results) => assert!(
            results.hits.len() <= params.per_page,
            "more hits than per_page"
        ),
        Err(SearchError::BadRequest(m)) => assert!(
            PARAMS.iter().any(|p| m.starts_with(&format!("{p}:"))),
            "a bad request must name its parameter: {m}"
        ),
        Err(e) => panic!("a validated query must not fail in the index: {e} (query string {qs:?})"),
    }
}
