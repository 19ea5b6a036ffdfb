//! Unit tests of the search engine and the tailer, over an in-memory fake
//! change log, one file per part: queries, natural-language queries, the
//! index on disk, the tailer, highlights, the answer cache and the hit
//! records' budget.
//! Request-level tests live in the server's `tests/search_*.rs`.

mod answer_cache;
mod highlights;
mod natural;
mod on_disk;
mod queries;
mod records_budget;
mod tailer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeZone, Utc};
use toolreg_api::SearchAnswer;
use toolreg_core::{ExecutionKind, Format, Tier};

use crate::*;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        version: "1.0.0".into(),
        definition_sha256: None,
        title: None,
        description: description.into(),
        notes: String::new(),
        keywords: vec![],
        license: Some("MIT".into()),
        format: Format::Matimo,
        execution: ExecutionKind::Http,
        tier: Tier::Verified,
        downloads: 0,
        updated_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        blocked: false,
        blocked_reason: None,
        deprecated: None,
        findings: 0,
        provenance: false,
    }
}

fn index_of(docs: &[SearchDoc]) -> SearchIndex {
    let index = SearchIndex::in_memory().unwrap();
    for d in docs {
        index.upsert(d).unwrap();
    }
    index.commit().unwrap();
    index
}

fn names(r: &SearchAnswer) -> Vec<&str> {
    r.hits.iter().map(|h| h.name.as_str()).collect()
}

/// Waits (up to 5 s) until `done` holds; a spawned tailer works on its own thread.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(5), "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn search(index: &SearchIndex, q: &str) -> SearchAnswer {
    index.query(&SearchParams::q(q)).unwrap()
}

fn sample() -> Vec<SearchDoc> {
    let mut slack = doc("slack-send-message", "Post a message to a Slack channel.");
    slack.keywords = vec!["chat".into(), "slack".into()];
    let notify = doc(
        "notify-team",
        "Notify your team on Slack, Teams or email when a build fails.",
    );
    let mut weather = doc("weather-forecast", "Five-day weather forecast for a city.");
    weather.keywords = vec!["weather".into()];
    weather.license = Some("Apache-2.0".into());
    let mut calc = doc("calculator", "Evaluate arithmetic expressions.");
    calc.keywords = vec!["math".into()];
    calc.execution = ExecutionKind::Function;
    calc.tier = Tier::Trusted;
    calc.downloads = 50;
    let mut calendar = doc("calendar-events", "List events from a calendar.");
    calendar.downloads = 10;
    calendar.format = Format::Mcp;
    calendar.execution = ExecutionKind::Schema;
    vec![slack, notify, weather, calc, calendar]
}
