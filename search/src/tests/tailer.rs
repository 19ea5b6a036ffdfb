//! The tailer over a fake change log in which changes can commit late.

use super::*;
use crate::*;

/// An in-memory change log in which changes can be made visible late, the
/// way a slow PostgreSQL transaction commits after a later one.
#[derive(Default)]
struct FakeSource {
    state: Mutex<FakeState>,
}

#[derive(Default)]
struct FakeState {
    /// (change, visible)
    log: Vec<(IndexChange, bool)>,
    tools: HashMap<String, SearchDoc>,
    /// The next `search_doc` or `all_downloads` fails (a database hiccup).
    fail_next: bool,
}

impl FakeSource {
    /// Records a change to `doc` (None: the tool is gone) and returns its seq.
    fn change(&self, name: &str, doc: Option<SearchDoc>, visible: bool) -> i64 {
        let mut s = self.state.lock().unwrap();
        let seq = s.log.len() as i64 + 1;
        s.log.push((
            IndexChange {
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
    fn changes_after(&self, seq: i64, limit: usize) -> Result<Vec<IndexChange>> {
        let s = self.state.lock().unwrap();
        Ok(s.log
            .iter()
            .filter(|(c, v)| *v && c.seq > seq)
            .take(limit)
            .map(|(c, _)| c.clone())
            .collect())
    }
    fn changes_at(&self, seqs: &[i64]) -> Result<Vec<IndexChange>> {
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
        let mut s = self.state.lock().unwrap();
        if std::mem::take(&mut s.fail_next) {
            return Err(SearchError::Source("connection reset".into()));
        }
        let mut all: Vec<(String, u64)> = s
            .tools
            .iter()
            .map(|(n, d)| (n.clone(), d.downloads))
            .collect();
        all.sort();
        Ok(all)
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
fn a_busy_poll_makes_the_spawned_tailer_wait_the_busy_interval() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let opts = TailerOptions {
        poll_interval: Duration::from_millis(10),
        busy_interval: Duration::from_secs(3600),
        busy_changes: 2,
        ..TailerOptions::default()
    };
    let handle = Tailer::new(index.clone(), source.clone(), opts)
        .spawn()
        .unwrap();
    // One change at a time: quiet polls, each applied within the poll interval.
    source.publish(doc("alpha-tool", "First."));
    wait_until("alpha indexed", || index.num_tools() == 1);
    source.publish(doc("beta-tool", "Second."));
    wait_until("beta indexed", || index.num_tools() == 2);
    // Two changes committed together: one busy poll applies both...
    let gamma = source.change("gamma-tool", Some(doc("gamma-tool", "Third.")), false);
    let delta = source.change("delta-tool", Some(doc("delta-tool", "Fourth.")), false);
    {
        let mut s = source.state.lock().unwrap();
        s.log[gamma as usize - 1].1 = true;
        s.log[delta as usize - 1].1 = true;
    }
    wait_until("gamma and delta indexed", || index.num_tools() == 4);
    // ...after which the next change waits for the busy interval or a nudge.
    source.publish(doc("epsilon-tool", "Fifth."));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(index.num_tools(), 4, "applied before the busy interval");
    handle.nudge();
    wait_until("epsilon indexed after a nudge", || index.num_tools() == 5);
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
        sort: SearchSort::Downloads,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    assert_eq!(names(&r), ["beta-tool", "alpha-tool"]);
    assert_eq!(r.hits[0].downloads, 7);
    assert_eq!(index.applied_seq(), Some(2), "the position is kept");
}

/// The (name, downloads) of the hits sorted by downloads.
fn by_downloads(index: &SearchIndex) -> Vec<(String, u64)> {
    let p = SearchParams {
        sort: SearchSort::Downloads,
        ..SearchParams::default()
    };
    index
        .query(&p)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.name, h.downloads))
        .collect()
}

fn set_downloads(source: &FakeSource, name: &str, n: u64) {
    source
        .state
        .lock()
        .unwrap()
        .tools
        .get_mut(name)
        .unwrap()
        .downloads = n;
}

#[test]
fn download_counts_are_laid_over_without_writing_the_index() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let mut t = tailer(index.clone(), source.clone());
    for name in ["alpha-tool", "beta-tool", "gamma-tool"] {
        source.publish(doc(name, "A tool."));
    }
    t.poll().unwrap();
    index.release_writer().unwrap();
    assert!(by_downloads(&index).iter().all(|(_, d)| *d == 0));
    for (name, n) in [("alpha-tool", 3), ("beta-tool", 7), ("gamma-tool", 5)] {
        set_downloads(&source, name, n);
    }
    assert_eq!(t.refresh_downloads().unwrap(), 3);
    assert!(!index.has_writer(), "a refresh writes nothing to the index");
    let s = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
        v.iter().map(|(n, d)| (n.to_string(), *d)).collect()
    };
    assert_eq!(
        by_downloads(&index),
        s(&[("beta-tool", 7), ("gamma-tool", 5), ("alpha-tool", 3)]),
        "answers remembered before the refresh are not served"
    );
    assert_eq!(index.get("beta-tool").unwrap().unwrap().downloads, 7);

    // A failed read leaves the last counts in place; the next one lays the
    // new counts.
    set_downloads(&source, "alpha-tool", 9);
    source.state.lock().unwrap().fail_next = true;
    assert!(t.refresh_downloads().is_err());
    assert_eq!(by_downloads(&index)[0], ("beta-tool".to_string(), 7));
    assert_eq!(t.refresh_downloads().unwrap(), 1);
    assert_eq!(by_downloads(&index)[0], ("alpha-tool".to_string(), 9));
    assert_eq!(t.refresh_downloads().unwrap(), 0, "nothing changed");
}

#[test]
fn a_new_segment_shows_the_newer_of_its_indexed_and_laid_counts() {
    let source = Arc::new(FakeSource::default());
    let index = Arc::new(SearchIndex::in_memory().unwrap());
    let mut t = tailer(index.clone(), source.clone());
    for name in ["alpha-tool", "beta-tool"] {
        source.publish(doc(name, "A tool."));
    }
    t.poll().unwrap();
    set_downloads(&source, "alpha-tool", 4);
    set_downloads(&source, "beta-tool", 6);
    t.refresh_downloads().unwrap();

    // Re-indexed with an older count than the one laid (as a merge keeps
    // the counts its documents were indexed with): the laid one shows.
    let mut stale = doc("beta-tool", "A tool, again.");
    stale.downloads = 1;
    source.publish(stale);
    // Indexed with a newer count than the one laid (a publish after the
    // refresh): the indexed one shows.
    let mut fresh = doc("alpha-tool", "A tool, again.");
    fresh.downloads = 8;
    source.publish(fresh);
    // A tool indexed after the refresh, never downloaded.
    source.publish(doc("delta-tool", "A tool."));
    t.poll().unwrap();
    assert_eq!(
        by_downloads(&index),
        [
            ("alpha-tool".to_string(), 8),
            ("beta-tool".to_string(), 6),
            ("delta-tool".to_string(), 0),
        ]
    );
}
