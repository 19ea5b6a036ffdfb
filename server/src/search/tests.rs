//! Unit tests of the search engine and the tailer, over an in-memory fake
//! change log. Request-level tests live in `server/tests/search_*.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeZone, Utc};
use toolreg_core::{ExecutionKind, Format, Tier};

use super::*;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        version: "1.0.0".into(),
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

fn names(r: &SearchResults) -> Vec<&str> {
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

fn search(index: &SearchIndex, q: &str) -> SearchResults {
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

#[test]
fn exact_name_words_rank_first() {
    let index = index_of(&sample());
    let r = search(&index, "slack");
    assert_eq!(names(&r), ["slack-send-message", "notify-team"]);
    assert_eq!(r.total, 2);
    assert_eq!(r.hits[0].highlights.name, "<mark>slack</mark>-send-message");
}

#[test]
fn exact_registry_name_wins() {
    let mut docs = sample();
    docs.push(doc("slack", "The plain one."));
    let index = index_of(&docs);
    assert_eq!(names(&search(&index, "slack"))[0], "slack");
    assert_eq!(
        names(&search(&index, "slack send message"))[0],
        "slack-send-message"
    );
    assert_eq!(
        names(&search(&index, "slack_send_message"))[0],
        "slack-send-message"
    );
}

#[test]
fn typos_in_long_words_are_forgiven() {
    let index = index_of(&sample());
    assert_eq!(names(&search(&index, "forcast")), ["weather-forecast"]);
    assert_eq!(names(&search(&index, "wether")), ["weather-forecast"]);
    // Short words must match exactly: "mth" is not "math".
    assert_eq!(search(&index, "mth").total, 0);
}

#[test]
fn prefixes_match_as_you_type() {
    let index = index_of(&sample());
    let r = search(&index, "calc");
    assert_eq!(names(&r), ["calculator"]);
    assert_eq!(r.hits[0].highlights.name, "<mark>calc</mark>ulator");
    let r = search(&index, "cal");
    assert_eq!(names(&r), ["calculator", "calendar-events"]);
    assert_eq!(
        search(&index, "c").total,
        0,
        "one letter is not a prefix query"
    );
}

#[test]
fn every_word_must_match_somewhere_if_any_tool_has_them_all() {
    let index = index_of(&sample());
    assert_eq!(
        names(&search(&index, "slack channel")),
        ["slack-send-message"]
    );
    // No tool has every word: tools with some of them, most words first.
    assert_eq!(
        names(&search(&index, "slack channel zebra")),
        ["slack-send-message", "notify-team"]
    );
    assert_eq!(search(&index, "zebra okapi").total, 0);
}

#[test]
fn filters_combine_and_facets_count_the_matching_set() {
    let index = index_of(&sample());
    let all = index
        .query(&SearchParams {
            per_page: 1,
            ..SearchParams::default()
        })
        .unwrap();
    assert_eq!(all.total, 5);
    assert_eq!(all.hits.len(), 1);
    // Facets cover every match, not the page.
    assert_eq!(all.facets.license.get("MIT"), 4);
    assert_eq!(all.facets.license.get("Apache-2.0"), 1);
    assert_eq!(all.facets.execution.get("http"), 3);
    assert_eq!(all.facets.tier.get("verified"), 4);
    assert_eq!(all.facets.keyword.get("slack"), 1);
    assert_eq!(
        all.facets.license.0[0],
        ("MIT".to_string(), 4),
        "most frequent first"
    );

    let p = SearchParams {
        license: Some("mit".into()),
        execution: Some(ExecutionKind::Http),
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    assert_eq!(names(&r), ["notify-team", "slack-send-message"]);
    assert_eq!(r.facets.license.0, vec![("MIT".to_string(), 2)]);

    let p = SearchParams {
        keyword: Some("math".into()),
        tier: Some(Tier::Trusted),
        ..SearchParams::q("calc")
    };
    assert_eq!(names(&index.query(&p).unwrap()), ["calculator"]);
    let p = SearchParams {
        keyword: Some("math".into()),
        tier: Some(Tier::Untrusted),
        ..SearchParams::q("calc")
    };
    assert_eq!(index.query(&p).unwrap().total, 0);
    let p = SearchParams {
        format: Some(Format::Mcp),
        ..SearchParams::default()
    };
    assert_eq!(names(&index.query(&p).unwrap()), ["calendar-events"]);
}

#[test]
fn sorts_and_pages_are_stable() {
    let mut docs: Vec<SearchDoc> = (0..25)
        .map(|i| {
            let mut d = doc(
                &format!("tool-{:02}", (i * 7) % 25),
                "Same words in every tool.",
            );
            d.downloads = (i % 3) as u64;
            d.updated_at = Utc
                .with_ymd_and_hms(2026, 1, 1 + (i % 5) as u32, 0, 0, 0)
                .unwrap();
            d
        })
        .collect();
    docs.reverse();
    let index = SearchIndex::in_memory().unwrap();
    // Several commits make several segments: ties must still break by name.
    for chunk in docs.chunks(6) {
        for d in chunk {
            index.upsert(d).unwrap();
        }
        index.commit().unwrap();
    }
    let expected: Vec<String> = (0..25).map(|i| format!("tool-{i:02}")).collect();
    for sort in [Sort::Relevance, Sort::Name] {
        let mut seen = vec![];
        for page in 1..=3 {
            let p = SearchParams {
                sort,
                page,
                per_page: 10,
                ..SearchParams::q("same words")
            };
            let r = index.query(&p).unwrap();
            assert_eq!(r.total, 25);
            seen.extend(r.hits.into_iter().map(|h| h.name));
        }
        assert_eq!(seen, expected, "{sort:?}");
    }
    let p = SearchParams {
        sort: Sort::Downloads,
        per_page: 100,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    let keys: Vec<(u64, String)> = r
        .hits
        .iter()
        .map(|h| (h.downloads, h.name.clone()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    assert_eq!(keys, sorted);
    let p = SearchParams {
        sort: Sort::Recent,
        per_page: 100,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    let keys: Vec<_> = r
        .hits
        .iter()
        .map(|h| (h.updated_at, h.name.clone()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    assert_eq!(keys, sorted);
    // A page past the end is empty, not an error.
    let p = SearchParams {
        page: 4,
        per_page: 10,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    assert_eq!((r.total, r.hits.len()), (25, 0));
}

#[test]
fn snippets_mark_matches_and_escape_the_rest() {
    let d = doc(
        "html-cleaner",
        "Removes <script> tags & \"quotes\" from HTML before display.",
    );
    let index = index_of(&[d]);
    let r = search(&index, "script");
    let h = &r.hits[0].highlights;
    assert_eq!(
        h.description,
        "Removes &lt;<mark>script</mark>&gt; tags &amp; &quot;quotes&quot; from HTML before display."
    );
    let long = doc(
        "long-text",
        &format!(
            "{} the needle is here. {}",
            "Padding words. ".repeat(30),
            "More padding. ".repeat(30)
        ),
    );
    let index2 = index_of(&[long]);
    let d = &search(&index2, "needle").hits[0].highlights.description;
    assert!(
        d.starts_with('…') && d.ends_with('…') && d.contains("<mark>needle</mark>"),
        "{d}"
    );
    assert_eq!(h.name, "html-cleaner");
    // No match in the description: the escaped description itself.
    let r = search(&index, "html-cleaner");
    assert!(r.hits[0]
        .highlights
        .description
        .starts_with("Removes &lt;script&gt;"));
    assert_eq!(
        r.hits[0].highlights.name,
        "<mark>html</mark>-<mark>cleaner</mark>"
    );
}

#[test]
fn query_syntax_is_never_an_error() {
    let index = index_of(&sample());
    for q in [
        "\"unclosed",
        "a:b:c",
        "((",
        "*",
        "-",
        "AND OR NOT",
        "slack^2",
        "name:slack",
        "[1 TO 2]",
        "  ",
        "ünïcödé 天气",
        "\\",
        "<mark>",
    ] {
        let r = index.query(&SearchParams::q(q));
        assert!(r.is_ok(), "{q:?}: {r:?}");
    }
    // Syntax characters are separators: `slack^` is the word `slack`.
    assert_eq!(
        names(&search(&index, "(slack^")),
        ["slack-send-message", "notify-team"]
    );
}

#[test]
fn absurd_parameters_are_bad_requests() {
    let index = index_of(&sample());
    let bad = |p: SearchParams, param: &str| match index.query(&p) {
        Err(SearchError::BadRequest(m)) => assert!(m.starts_with(&format!("{param}:")), "{m}"),
        other => panic!("{param}: {other:?}"),
    };
    bad(
        SearchParams {
            page: 0,
            ..SearchParams::default()
        },
        "page",
    );
    bad(
        SearchParams {
            per_page: 1000,
            ..SearchParams::default()
        },
        "per_page",
    );
    bad(
        SearchParams {
            per_page: 0,
            ..SearchParams::default()
        },
        "per_page",
    );
    bad(
        SearchParams {
            page: 1_000_000_000_000,
            ..SearchParams::default()
        },
        "page",
    );
    bad(
        SearchParams {
            page: usize::MAX,
            per_page: 100,
            ..SearchParams::default()
        },
        "page",
    );
    bad(SearchParams::q("y".repeat(513)), "q");
    bad(SearchParams::q("w ".repeat(17)), "q");
}

#[test]
fn upsert_replaces_and_remove_removes() {
    let index = index_of(&sample());
    // Cached from this query: the replacement must still be what is served.
    assert_eq!(search(&index, "calculator").hits[0].version, "1.0.0");
    let mut d = doc("calculator", "Now a unit converter.");
    d.version = "2.0.0".into();
    index.upsert(&d).unwrap();
    index.commit().unwrap();
    assert_eq!(index.num_tools(), 5);
    assert_eq!(search(&index, "arithmetic").total, 0);
    let r = search(&index, "converter");
    assert_eq!(
        (names(&r), r.hits[0].version.as_str()),
        (vec!["calculator"], "2.0.0")
    );
    index.remove("calculator").unwrap();
    index.commit().unwrap();
    assert_eq!(search(&index, "converter").total, 0);
    assert_eq!(index.get("calculator").unwrap(), None);
    assert_eq!(index.num_tools(), 4);
}

#[test]
fn blocked_tools_are_shown_as_blocked() {
    let mut d = doc("shell-runner", "Runs a shell command.");
    d.blocked = true;
    d.blocked_reason = Some("function needs trusted".into());
    let index = index_of(&[d]);
    let r = search(&index, "shell");
    assert!(r.hits[0].blocked);
    assert_eq!(
        r.hits[0].blocked_reason.as_deref(),
        Some("function needs trusted")
    );
}

#[test]
fn results_serialize_as_the_api_shape() {
    let index = index_of(&sample());
    let v = serde_json::to_value(search(&index, "calc")).unwrap();
    assert_eq!(v["total"], 1);
    assert_eq!(v["page"], 1);
    assert_eq!(v["per_page"], 20);
    let hit = &v["hits"][0];
    for key in [
        "name",
        "version",
        "title",
        "description",
        "keywords",
        "license",
        "format",
        "execution",
        "tier",
        "downloads",
        "updated_at",
        "blocked",
        "highlights",
    ] {
        assert!(hit.get(key).is_some(), "hit lacks {key}: {hit}");
    }
    assert_eq!(hit["execution"], "function");
    assert_eq!(hit["tier"], "trusted");
    assert_eq!(hit["format"], "matimo");
    assert_eq!(v["facets"]["license"]["MIT"], 1);
    assert_eq!(v["facets"]["keyword"]["math"], 1);
}

// ---- on disk ----

#[test]
fn open_creates_reopens_and_keeps_position() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    {
        let index = SearchIndex::open(&dir).unwrap();
        assert_eq!(index.state(), &OpenState::Created);
        assert!(index.needs_rebuild());
        index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
        index.commit_at(Some(42)).unwrap();
    }
    let index = SearchIndex::open(&dir).unwrap();
    assert_eq!(index.state(), &OpenState::Opened);
    assert_eq!(index.applied_seq(), Some(42));
    assert!(!index.needs_rebuild());
    assert_eq!(names(&search(&index, "calculator")), ["calculator"]);
}

#[test]
fn a_second_writer_is_refused_without_harm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let first = SearchIndex::open(&dir).unwrap();
    first.upsert(&doc("calculator", "Adds numbers.")).unwrap();
    first.commit_at(Some(1)).unwrap();
    assert!(SearchIndex::open(&dir).is_err());
    assert_eq!(
        search(&first, "calculator").total,
        1,
        "the index was not wiped"
    );
}

#[test]
fn the_writer_is_released_when_idle_and_made_again_for_the_next_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let index = SearchIndex::open(&dir).unwrap();
    assert!(!index.has_writer(), "no writer before the first change");
    index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
    // Staged changes keep the writer: releasing would lose them.
    assert!(!index.release_writer().unwrap());
    assert!(index.has_writer());
    index.commit_at(Some(1)).unwrap();
    assert!(index.release_writer().unwrap());
    assert!(!index.has_writer());
    assert!(!index.release_writer().unwrap(), "nothing left to release");
    // Still searchable, and the directory is still this process's.
    assert_eq!(names(&search(&index, "calculator")), ["calculator"]);
    assert!(
        SearchIndex::open(&dir).is_err(),
        "a second open is refused while the writer is released"
    );
    index
        .upsert(&doc("weather-forecast", "Forecasts."))
        .unwrap();
    index.remove("calculator").unwrap();
    index.commit_at(Some(3)).unwrap();
    assert!(index.has_writer());
    assert_eq!(names(&search(&index, "forecasts")), ["weather-forecast"]);
    assert_eq!(search(&index, "calculator").total, 0);
    // A rollback after a release and a new stage drops only what was staged.
    assert!(index.release_writer().unwrap());
    index.upsert(&doc("abacus", "Counts.")).unwrap();
    index.rollback().unwrap();
    index.commit().unwrap();
    assert_eq!(search(&index, "abacus").total, 0);
    drop(index);
    let reopened = SearchIndex::open(&dir).unwrap();
    assert_eq!(reopened.applied_seq(), Some(3));
    assert_eq!(names(&search(&reopened, "forecasts")), ["weather-forecast"]);
}

fn corrupt_and_reopen(damage: impl Fn(&std::path::Path)) -> SearchIndex {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    {
        let index = SearchIndex::open(&dir).unwrap();
        index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
        index.commit_at(Some(7)).unwrap();
    }
    damage(&dir);
    let index = SearchIndex::open(&dir).unwrap();
    assert!(
        matches!(index.state(), OpenState::Rebuilt { .. }),
        "{:?}",
        index.state()
    );
    assert!(index.needs_rebuild());
    assert_eq!(index.num_tools(), 0);
    // Usable after the rebuild.
    index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
    index.commit_at(Some(8)).unwrap();
    assert_eq!(search(&index, "calculator").total, 1);
    std::mem::forget(tmp);
    index
}

#[test]
fn garbage_meta_is_rebuilt() {
    corrupt_and_reopen(|dir| std::fs::write(dir.join("meta.json"), b"{not json").unwrap());
}

#[test]
fn missing_segment_files_are_rebuilt() {
    corrupt_and_reopen(|dir| {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name != "meta.json" && !name.starts_with('.') {
                std::fs::remove_file(&path).unwrap();
            }
        }
    });
}

#[test]
fn truncated_segment_files_are_rebuilt() {
    corrupt_and_reopen(|dir| {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name != "meta.json" && !name.starts_with('.') {
                std::fs::write(&path, b"xx").unwrap();
            }
        }
    });
}

#[test]
fn an_index_of_another_schema_version_is_rebuilt() {
    corrupt_and_reopen(|dir| {
        let meta = std::fs::read_to_string(dir.join("meta.json")).unwrap();
        let current = format!("\\\"schema\\\":{}", super::schema::SCHEMA_VERSION);
        assert!(meta.contains(&current), "{meta}");
        let meta = meta.replace(&current, "\\\"schema\\\":999");
        assert!(meta.contains("999"), "{meta}");
        std::fs::write(dir.join("meta.json"), meta).unwrap();
    });
}

// ---- the tailer ----

/// An in-memory change log in which changes can be made visible late, the
/// way a slow PostgreSQL transaction commits after a later one.
#[derive(Default)]
struct FakeSource {
    state: Mutex<FakeState>,
}

#[derive(Default)]
struct FakeState {
    /// (change, visible)
    log: Vec<(Change, bool)>,
    tools: HashMap<String, SearchDoc>,
    /// The next `search_doc` fails (a database hiccup).
    fail_next: bool,
}

impl FakeSource {
    /// Records a change to `doc` (None: the tool is gone) and returns its seq.
    fn change(&self, name: &str, doc: Option<SearchDoc>, visible: bool) -> i64 {
        let mut s = self.state.lock().unwrap();
        let seq = s.log.len() as i64 + 1;
        s.log.push((
            Change {
                seq,
                tool: name.into(),
            },
            visible,
        ));
        match doc {
            Some(d) => s.tools.insert(name.into(), d),
            None => s.tools.remove(name),
        };
        seq
    }
    fn publish(&self, d: SearchDoc) -> i64 {
        self.change(&d.name.clone(), Some(d), true)
    }
    fn reveal(&self, seq: i64) {
        self.state.lock().unwrap().log[seq as usize - 1].1 = true;
    }
}

impl SearchSource for FakeSource {
    fn changes_after(&self, seq: i64, limit: usize) -> Result<Vec<Change>> {
        let s = self.state.lock().unwrap();
        Ok(s.log
            .iter()
            .filter(|(c, v)| *v && c.seq > seq)
            .take(limit)
            .map(|(c, _)| c.clone())
            .collect())
    }
    fn changes_at(&self, seqs: &[i64]) -> Result<Vec<Change>> {
        let s = self.state.lock().unwrap();
        Ok(s.log
            .iter()
            .filter(|(c, v)| *v && seqs.contains(&c.seq))
            .map(|(c, _)| c.clone())
            .collect())
    }
    fn latest_seq(&self) -> Result<i64> {
        Ok(self.state.lock().unwrap().log.len() as i64)
    }
    fn search_doc(&self, tool_name: &str) -> Result<Option<SearchDoc>> {
        let mut s = self.state.lock().unwrap();
        if std::mem::take(&mut s.fail_next) {
            return Err(SearchError::Source("connection reset".into()));
        }
        // Only what is committed is visible: a tool whose latest change is
        // still invisible reads as before it (here: as absent if it never was).
        let visible = s.log.iter().any(|(c, v)| *v && c.tool == tool_name);
        Ok(if visible {
            s.tools.get(tool_name).cloned()
        } else {
            None
        })
    }
    fn all_downloads(&self) -> Result<Vec<(String, u64)>> {
        let s = self.state.lock().unwrap();
        Ok(s.tools
            .iter()
            .map(|(n, d)| (n.clone(), d.downloads))
            .collect())
    }
    fn all_tool_names(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self.state.lock().unwrap().tools.keys().cloned().collect();
        names.sort();
        Ok(names)
    }
}

fn tailer(index: Arc<SearchIndex>, source: Arc<FakeSource>) -> Tailer {
    Tailer::new(
        index,
        source,
        TailerOptions {
            batch: 2,
            ..TailerOptions::default()
        },
    )
}

#[test]
fn tailer_applies_publish_yank_and_block() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let mut t = tailer(index.clone(), source.clone());
    for d in sample() {
        source.publish(d);
    }
    assert_eq!(t.poll().unwrap(), 5, "batches of 2 are read until drained");
    assert_eq!(index.num_tools(), 5);
    assert_eq!(index.applied_seq(), Some(5));
    // Every version yanked: the tool leaves the index.
    source.change("calculator", None, true);
    // Its publisher demoted: shown as blocked.
    let mut blocked = sample().remove(0);
    blocked.blocked = true;
    source.publish(blocked);
    assert_eq!(t.poll().unwrap(), 2);
    assert_eq!(search(&index, "calculator").total, 0);
    assert!(search(&index, "slack").hits[0].blocked);
    assert_eq!(t.poll().unwrap(), 0, "nothing new, nothing re-read");
}

#[test]
fn tailer_does_not_skip_a_change_that_commits_late() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let mut t = tailer(index.clone(), source.clone());
    source.publish(doc("alpha-tool", "First."));
    let slow = source.change(
        "slow-tool",
        Some(doc("slow-tool", "Committed late.")),
        false,
    );
    source.publish(doc("gamma-tool", "Third."));
    t.poll().unwrap();
    assert_eq!(index.num_tools(), 2);
    assert_eq!(
        index.applied_seq(),
        Some(slow - 1),
        "the position stays below the gap"
    );
    source.reveal(slow);
    assert_eq!(t.poll().unwrap(), 1);
    assert_eq!(names(&search(&index, "slow")), ["slow-tool"]);
    assert_eq!(index.applied_seq(), Some(3));
}

#[test]
fn tailer_gives_up_on_gaps_after_the_timeout() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let opts = TailerOptions {
        gap_timeout: Duration::from_millis(50),
        ..TailerOptions::default()
    };
    let mut t = Tailer::new(index.clone(), source.clone(), opts);
    source.publish(doc("alpha-tool", "First."));
    source.change("rolled-back", None, false);
    source.publish(doc("gamma-tool", "Third."));
    t.poll().unwrap();
    assert_eq!(index.applied_seq(), Some(1));
    std::thread::sleep(Duration::from_millis(80));
    t.poll().unwrap();
    assert_eq!(index.applied_seq(), Some(3));
}

#[test]
fn a_restarted_tailer_rereads_open_gaps() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let source = Arc::new(FakeSource::default());
    source.publish(doc("alpha-tool", "First."));
    let slow = source.change(
        "slow-tool",
        Some(doc("slow-tool", "Committed late.")),
        false,
    );
    source.publish(doc("gamma-tool", "Third."));
    {
        let index = Arc::new(SearchIndex::open(&dir).unwrap());
        let mut t = tailer(index.clone(), source.clone());
        t.reindex().unwrap();
        t.poll().unwrap();
        assert_eq!(index.num_tools(), 2);
    }
    source.reveal(slow);
    let index = Arc::new(SearchIndex::open(&dir).unwrap());
    assert!(!index.needs_rebuild());
    let mut t = tailer(index.clone(), source.clone());
    t.poll().unwrap();
    assert_eq!(index.num_tools(), 3);
}

#[test]
fn reindex_gives_the_same_results_as_tailing() {
    let source = Arc::new(FakeSource::default());
    for d in sample() {
        source.publish(d);
    }
    source.change("notify-team", None, true);
    let tailed = Arc::new(SearchIndex::in_memory().unwrap());
    tailer(tailed.clone(), source.clone()).poll().unwrap();
    let rebuilt = Arc::new(SearchIndex::in_memory().unwrap());
    rebuilt
        .upsert(&doc("stale-tool", "Not in the database."))
        .unwrap();
    rebuilt.commit().unwrap();
    let n = tailer(rebuilt.clone(), source.clone()).reindex().unwrap();
    assert_eq!(n, 4);
    for q in ["", "slack", "cal", "forcast", "stale"] {
        let a = serde_json::to_value(search(&tailed, q)).unwrap();
        let b = serde_json::to_value(search(&rebuilt, q)).unwrap();
        assert_eq!(a, b, "{q:?}");
    }
}

#[test]
fn a_spawned_tailer_rebuilds_then_follows() {
    let source = Arc::new(FakeSource::default());
    source.publish(doc("alpha-tool", "First."));
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let opts = TailerOptions {
        poll_interval: Duration::from_secs(3600),
        ..TailerOptions::default()
    };
    let handle = Tailer::new(index.clone(), source.clone(), opts)
        .spawn()
        .unwrap();
    wait_until("alpha indexed", || index.num_tools() == 1);
    source.publish(doc("beta-tool", "Second."));
    handle.nudge();
    wait_until("beta indexed", || index.num_tools() == 2);
    handle.stop();
}

#[test]
fn a_spawned_tailer_releases_the_idle_writer_and_follows_on() {
    let source = Arc::new(FakeSource::default());
    source.publish(doc("alpha-tool", "First."));
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let opts = TailerOptions {
        poll_interval: Duration::from_millis(10),
        release_writer_after: Duration::from_millis(50),
        ..TailerOptions::default()
    };
    let handle = Tailer::new(index.clone(), source.clone(), opts)
        .spawn()
        .unwrap();
    wait_until("alpha indexed", || index.num_tools() == 1);
    wait_until("writer released", || !index.has_writer());
    source.publish(doc("beta-tool", "Second."));
    wait_until("beta indexed by a new writer", || index.num_tools() == 2);
    wait_until("writer released again", || !index.has_writer());
    handle.stop();
}

#[test]
fn a_failed_poll_is_retried_in_full() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let mut t = tailer(index.clone(), source.clone());
    source.publish(doc("alpha-tool", "First."));
    source.publish(doc("beta-tool", "Second."));
    source.state.lock().unwrap().fail_next = true;
    assert!(t.poll().is_err());
    assert_eq!(index.num_tools(), 0, "nothing half-applied");
    assert_eq!(index.applied_seq(), None);
    assert_eq!(t.poll().unwrap(), 2);
    assert_eq!(index.num_tools(), 2);
    assert_eq!(index.applied_seq(), Some(2));
}

#[test]
fn download_counts_are_refreshed_without_a_change() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let mut t = tailer(index.clone(), source.clone());
    source.publish(doc("alpha-tool", "First."));
    source.publish(doc("beta-tool", "Second."));
    t.poll().unwrap();
    assert_eq!(t.refresh_downloads().unwrap(), 0);
    source
        .state
        .lock()
        .unwrap()
        .tools
        .get_mut("beta-tool")
        .unwrap()
        .downloads = 7;
    assert_eq!(t.refresh_downloads().unwrap(), 1);
    let p = SearchParams {
        sort: Sort::Downloads,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    assert_eq!(names(&r), ["beta-tool", "alpha-tool"]);
    assert_eq!(r.hits[0].downloads, 7);
    assert_eq!(index.applied_seq(), Some(2), "the position is kept");
}

/// The snippet path stems only words whose first letter starts a query term
/// (`highlight.rs`), which is exact only if English stemming never changes a
/// word's first letter. Checked on every Snowball English suffix and
/// exceptional form after many stems, and on 200,000 pseudo-random words.
#[test]
fn stemming_keeps_the_first_letter() {
    use tantivy::tokenizer::{
        Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
    };
    let mut en_stem = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build();
    let mut check = |word: &str| {
        let mut stream = en_stem.token_stream(word);
        while let Some(token) = stream.next() {
            let first = word[token.offset_from..token.offset_to]
                .chars()
                .flat_map(char::to_lowercase)
                .next();
            assert_eq!(
                token.text.chars().next(),
                first,
                "{word:?} stems to {:?}",
                token.text
            );
        }
    };
    let stems = [
        "", "a", "e", "i", "o", "u", "y", "ya", "ye", "yo", "eye", "aye", "ab", "be", "by", "sky",
        "dy", "ly", "ty", "id", "gent", "ug", "ear", "on", "sing", "hop", "gener", "commun",
        "arsen", "past", "univers", "news", "how", "atlas", "cosmos", "bias", "and", "ski", "qu",
        "str", "x", "1", "é", "über", "Éc", "Y", "Yell", "İs", "ß",
    ];
    let suffixes = [
        "", "'", "'s", "'s'", "s", "ss", "sses", "ied", "ies", "us", "eed", "eedly", "ed", "edly",
        "ing", "ingly", "at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt",
        "y", "Y", "tional", "enci", "anci", "abli", "entli", "izer", "ization", "ational", "ation",
        "ator", "alism", "aliti", "alli", "fulness", "ousli", "ousness", "iveness", "iviti",
        "biliti", "bli", "ogi", "fulli", "lessli", "li", "alize", "icate", "iciti", "ical", "ful",
        "ness", "ative", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
        "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion", "sion", "tion", "e", "l", "ll",
        "ying", "ly", "lies", "ied", "ying", "ies", "is", "y", "ys", "yed",
    ];
    for stem in stems {
        for suffix in suffixes {
            for middle in ["", "a", "e", "y", "l", "at", "ing", "ed"] {
                check(&format!("{stem}{middle}{suffix}"));
            }
        }
    }
    for exceptional in [
        "skis",
        "skies",
        "dying",
        "lying",
        "tying",
        "idly",
        "gently",
        "ugly",
        "early",
        "only",
        "singly",
        "sky",
        "news",
        "howe",
        "atlas",
        "cosmos",
        "bias",
        "andes",
        "inning",
        "outing",
        "canning",
        "herring",
        "earring",
        "proceed",
        "exceed",
        "succeed",
        "generate",
        "communism",
        "arsenal",
        "past",
        "universe",
    ] {
        check(exceptional);
    }
    let alphabet: Vec<char> = "abcdeilnorstuyzgmphfé".chars().collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..200_000 {
        let mut word = String::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = 1 + (seed % 12) as usize;
        for i in 0..len {
            word.push(alphabet[((seed >> (4 * i)) % alphabet.len() as u64) as usize]);
        }
        check(&word);
    }
}

/// The snippets of `highlight.rs` equal tantivy's `SnippetGenerator`'s on
/// text with markup, quotes, non-ASCII letters, long tokens, several
/// fragments, stems and digits.
#[test]
fn snippets_equal_tantivys() {
    let texts = [
        "Removes <script> tags & \"quotes\" from HTML — it's <b>bold</b> & 'single'. Script!",
        &format!(
            "{} the needle is here, needles and NEEDLE. {} needle {} a needle at the end",
            "Padding words go here. ".repeat(12),
            "More padding; ".repeat(20),
            "filler ".repeat(40)
        ),
        "Übersetzt Texte; ÉCOLE école Straße STRASSE naïve café ΣΊΣΥΦΟΣ Σίσυφος running runner runs RUNNING ran.",
        &format!(
            "{} needle {} needles, {} search",
            "a".repeat(45),
            "b".repeat(39),
            "c".repeat(40)
        ),
        "Connection connections connected connecting connects CONNECTED connective",
        "2fa codes for 2FA login; 10x faster searching, searches: search!!!",
        "don't can't it's the user's files' names; users' files",
        "搜索 工具 search 🔍 tool searching tools, searched",
        "Find the needle!!!",
        "A tool with nothing to find in it at all, just words and more words.",
    ];
    let docs: Vec<SearchDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| doc(&format!("tool-{i}"), t))
        .collect();
    let index = index_of(&docs);
    let queries = [
        "needle",
        "needles",
        "script",
        "quotes",
        "bold",
        "single",
        "connect",
        "connections",
        "running",
        "run",
        "école",
        "ecole",
        "strasse",
        "straße",
        "2fa",
        "10x",
        "user",
        "users",
        "files",
        "search",
        "searching",
        "tool",
        "σίσυφος",
        "übersetzt",
        "cafe",
        "café",
        "the",
        "needle search",
        "connection tool",
        "nothing words",
        "zebra needle",
        "搜索",
        "b",
        "a",
        "tool-1",
        "find",
        "html script",
    ];
    let mut marked = 0;
    for q in queries {
        let p = SearchParams {
            per_page: 100,
            ..SearchParams::q(q)
        };
        let ours: Vec<String> = index
            .query(&p)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.highlights.description)
            .collect();
        marked += ours.iter().filter(|d| d.contains("<mark>")).count();
        assert_eq!(ours, index.reference_snippets(&p), "query {q:?}");
    }
    assert!(marked >= 30, "only {marked} snippets with a match");
}

#[test]
fn kept_answers_stay_within_their_byte_budget() {
    // 150 tools whose descriptions are 8 KB each: a page of 100 hits holds
    // ~0.9 MB, and 16 such answers are well over the budget.
    let long = "weather forecast for the city and the region ".repeat(180);
    let docs: Vec<SearchDoc> = (0..150)
        .map(|i| doc(&format!("weather-tool-{i:03}"), &long))
        .collect();
    let index = index_of(&docs);
    let mut largest = 0;
    for q in ["weather", "forecast"] {
        for page in 1..=2 {
            for sort in [Sort::Relevance, Sort::Name, Sort::Downloads, Sort::Recent] {
                let mut params = SearchParams::q(q);
                params.per_page = 100;
                params.page = page;
                params.sort = sort;
                let answer = index.query(&params).unwrap();
                largest = largest.max(answer.heap_bytes());
                let (_, bytes) = index.result_cache_usage();
                assert!(
                    bytes <= super::index::RESULT_CACHE_BYTES,
                    "the cache holds {bytes} bytes, over its budget"
                );
            }
        }
    }
    assert!(
        largest > super::index::RESULT_CACHE_BYTES / 16,
        "the test's answers are too small ({largest} bytes) to fill the budget"
    );
    // Small answers are still kept and served from the cache.
    let small = SearchParams::q("weather");
    let first = index.query(&small).unwrap();
    let (entries, _) = index.result_cache_usage();
    assert!(entries >= 1);
    assert_eq!(names(&index.query(&small).unwrap()), names(&first));
    assert_eq!(index.result_cache_usage().0, entries, "a repeat is a hit");
}
