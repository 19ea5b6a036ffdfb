//! Keeping the index current: [`SearchSource`] is the database's view of the
//! ordered change log, and the [`Tailer`] applies it to a [`SearchIndex`].
//!
//! Each change names a tool; applying it re-reads that tool's current
//! [`SearchDoc`] (or removes the tool), so applying a change twice or late is
//! harmless. The one hazard is order: PostgreSQL hands out sequence numbers
//! when a transaction inserts, not when it commits, so change 6 can be visible
//! before change 5. A reader asking only for `seq > last` would skip 5
//! forever. The tailer therefore remembers every number it jumped over as a
//! gap and asks for those again on every poll until they appear or are older
//! than [`TailerOptions::gap_timeout`] (a rolled-back transaction leaves a
//! hole that never fills). The position written with each index commit is
//! just below the oldest open gap, so a restart re-reads those too.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::{SearchDoc, SearchError, SearchIndex};

/// How many sequence numbers below the head a rebuild waits for, in case
/// their transactions had not committed when the tools were read.
const REINDEX_WINDOW: usize = 100;

/// One entry of the change log: something about `tool` changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexChange {
    pub seq: i64,
    pub tool: String,
}

/// What the search index needs from the database.
pub trait SearchSource: Send + Sync {
    /// Up to `limit` changes with `seq` greater than the given one, in
    /// ascending `seq` order (only committed ones, naturally).
    fn changes_after(&self, seq: i64, limit: usize) -> Result<Vec<IndexChange>, SearchError>;
    /// The changes among `seqs` that are visible now.
    fn changes_at(&self, seqs: &[i64]) -> Result<Vec<IndexChange>, SearchError>;
    /// The highest `seq` in the change log (0 when it is empty).
    fn latest_seq(&self) -> Result<i64, SearchError>;
    /// The document for a tool now; `None` when the tool is gone or every
    /// version is yanked (it leaves the index).
    fn search_doc(&self, tool_name: &str) -> Result<Option<SearchDoc>, SearchError>;
    /// Every tool that should be searchable (for a full rebuild).
    fn all_tool_names(&self) -> Result<Vec<String>, SearchError>;
    /// Every downloaded tool's count, by name (tools left out count 0).
    /// Downloads are counted without a change-log entry, so the tailer
    /// refreshes them from this now and then. The default (no counts) leaves
    /// the indexed counts.
    fn all_downloads(&self) -> Result<Vec<(String, u64)>, SearchError> {
        Ok(Vec::new())
    }
    /// The documents of the tools named (canonical names), skipping those
    /// that are gone or not searchable. The default asks
    /// [`search_doc`](Self::search_doc) per tool; a database source should
    /// answer in a few bulk queries.
    fn search_docs(&self, names: &[String]) -> Result<Vec<SearchDoc>, SearchError> {
        let mut docs = Vec::with_capacity(names.len());
        for name in names {
            docs.extend(self.search_doc(name)?);
        }
        Ok(docs)
    }
    /// The documents of every searchable tool (for a full rebuild). The
    /// default reads [`search_docs`](Self::search_docs) of every name; a
    /// database source should answer in a few bulk queries.
    fn all_docs(&self) -> Result<Vec<SearchDoc>, SearchError> {
        self.search_docs(&self.all_tool_names()?)
    }
}

/// Tailer settings.
#[derive(Debug, Clone)]
pub struct TailerOptions {
    /// How often the change log is polled while it is quiet.
    pub poll_interval: Duration,
    /// How long the tailer waits after a busy poll (one that applied at
    /// least [`busy_changes`](Self::busy_changes) tools) before it polls
    /// again; a nudge still polls at once. Every poll that applies changes
    /// commits the index: a segment written and synced, and later merged,
    /// at a cost that hardly depends on how many tools it holds. So under a
    /// stream of publishes the index commits about this often, in larger
    /// batches, instead of every `poll_interval`, and search lags by about
    /// this much; a few changes at a time are still applied within
    /// `poll_interval`.
    pub busy_interval: Duration,
    /// How many tools a poll must apply to count as busy.
    pub busy_changes: usize,
    /// How long a skipped sequence number is waited for.
    pub gap_timeout: Duration,
    /// Changes read per query.
    pub batch: usize,
    /// Most gaps remembered at once (the oldest are dropped beyond it).
    pub max_gaps: usize,
    /// How often download counts are brought up to date (they change
    /// without a change-log entry).
    pub downloads_interval: Duration,
    /// How long the index may go without changes before its writer (and
    /// the memory it holds) is released ([`SearchIndex::release_writer`]).
    pub release_writer_after: Duration,
}

impl Default for TailerOptions {
    fn default() -> Self {
        TailerOptions {
            poll_interval: Duration::from_millis(100),
            busy_interval: Duration::from_millis(500),
            busy_changes: 32,
            downloads_interval: Duration::from_secs(60),
            release_writer_after: Duration::from_secs(5),
            gap_timeout: Duration::from_secs(30),
            batch: 1000,
            max_gaps: 1000,
        }
    }
}

/// Applies the change log to the index.
pub struct Tailer {
    index: Arc<SearchIndex>,
    source: Arc<dyn SearchSource>,
    opts: TailerOptions,
    /// The highest sequence number seen.
    last_seen: i64,
    /// Sequence numbers jumped over and still awaited, with when first missed.
    gaps: BTreeMap<i64, Instant>,
}

impl Tailer {
    /// A tailer that continues from the position the index recorded.
    pub fn new(
        index: Arc<SearchIndex>,
        source: Arc<dyn SearchSource>,
        opts: TailerOptions,
    ) -> Self {
        let last_seen = index.applied_seq().unwrap_or(0);
        Tailer {
            index,
            source,
            opts,
            last_seen,
            gaps: BTreeMap::new(),
        }
    }

    /// The index this tailer writes.
    pub fn index(&self) -> &Arc<SearchIndex> {
        &self.index
    }

    /// The position that is safe to resume from: below every open gap.
    fn resume_seq(&self) -> i64 {
        match self.gaps.keys().next() {
            Some(first) => (first - 1).min(self.last_seen),
            None => self.last_seen,
        }
    }

    /// Rebuilds the whole index from [`SearchSource::all_docs`].
    /// Returns how many tools are indexed.
    pub fn reindex(&mut self) -> Result<usize, SearchError> {
        let head = self.source.latest_seq()?;
        let docs = self.source.all_docs()?;
        let result = (|| {
            self.index.clear()?;
            for doc in &docs {
                self.index.upsert(doc)?;
            }
            Ok(docs.len())
        })();
        let indexed = match result {
            Ok(n) => n,
            Err(e) => {
                let _ = self.index.rollback();
                return Err(e);
            }
        };
        // Changes just below `head` may belong to transactions that had not
        // committed when the tools were read: wait for them like gaps.
        let now = Instant::now();
        self.gaps.clear();
        let window = REINDEX_WINDOW.min(self.opts.max_gaps) as i64;
        for seq in (head - window + 1).max(1)..=head {
            self.gaps.insert(seq, now);
        }
        self.last_seen = head;
        self.index.commit_at(Some(self.resume_seq()))?;
        tracing::info!(tools = indexed, seq = head, "search index rebuilt");
        Ok(indexed)
    }

    /// Reads and applies what is new in the change log, plus any awaited
    /// gaps that have appeared. Returns how many tools were re-indexed.
    ///
    /// On an error nothing is applied and the position is left where it
    /// was, so the next poll reads the same changes again.
    pub fn poll(&mut self) -> Result<usize, SearchError> {
        let (last_seen, gaps) = (self.last_seen, self.gaps.clone());
        let result = self.poll_once();
        if result.is_err() {
            let _ = self.index.rollback();
            self.last_seen = last_seen;
            self.gaps = gaps;
        }
        result
    }

    fn poll_once(&mut self) -> Result<usize, SearchError> {
        let mut touched: BTreeSet<String> = BTreeSet::new();
        let before = self.resume_seq();
        let now = Instant::now();

        if !self.gaps.is_empty() {
            let seqs: Vec<i64> = self.gaps.keys().copied().collect();
            for change in self.source.changes_at(&seqs)? {
                if self.gaps.remove(&change.seq).is_some() {
                    touched.insert(change.tool);
                }
            }
        }
        loop {
            let changes = self.source.changes_after(self.last_seen, self.opts.batch)?;
            let full = changes.len() >= self.opts.batch;
            for change in changes {
                if change.seq <= self.last_seen {
                    continue;
                }
                let from = (self.last_seen + 1).max(change.seq - self.opts.max_gaps as i64);
                for missing in from..change.seq {
                    self.gaps.insert(missing, now);
                }
                self.last_seen = change.seq;
                touched.insert(change.tool);
            }
            if !full {
                break;
            }
        }
        let timeout = self.opts.gap_timeout;
        self.gaps
            .retain(|_, since| now.duration_since(*since) < timeout);
        while self.gaps.len() > self.opts.max_gaps {
            self.gaps.pop_first();
        }

        // The documents of every touched tool in a few bulk reads; a tool
        // without one (gone, or no version left to list) leaves the index.
        let names: Vec<String> = touched.into_iter().collect();
        let docs = if names.is_empty() {
            Vec::new()
        } else {
            self.source.search_docs(&names)?
        };
        for doc in &docs {
            self.index.upsert(doc)?;
        }
        let found: HashSet<&str> = docs.iter().map(|d| d.name.as_str()).collect();
        for name in names.iter().filter(|n| !found.contains(n.as_str())) {
            self.index.remove(name)?;
        }
        let after = self.resume_seq();
        if !names.is_empty() || after != before {
            self.index.commit_at(Some(after))?;
        }
        Ok(names.len())
    }

    /// Brings the download counts searches sort by and show up to date:
    /// every tool's count is read and laid over the index
    /// ([`SearchIndex::set_downloads`]); no tool is re-indexed. Returns how
    /// many tools' counts changed since the last refresh. A failure leaves
    /// the counts of the last refresh in place.
    pub fn refresh_downloads(&mut self) -> Result<usize, SearchError> {
        let current = self.source.all_downloads()?;
        self.index.set_downloads(current)
    }

    /// Runs the tailer on its own thread: rebuilds first if the index needs
    /// it, then polls every [`TailerOptions::poll_interval`], or
    /// [`TailerOptions::busy_interval`] after a busy poll (or at once when
    /// nudged), until the handle is dropped or stopped.
    pub fn spawn(mut self) -> std::io::Result<TailerHandle> {
        let (tx, rx) = mpsc::channel::<()>();
        let (quiet, busy) = (self.opts.poll_interval, self.opts.busy_interval);
        let busy_changes = self.opts.busy_changes.max(1);
        let thread = std::thread::Builder::new()
            .name("search-tailer".into())
            .spawn(move || {
                let mut rebuilt = !self.index.needs_rebuild();
                let mut downloads_at = Instant::now();
                let mut changed_at = Instant::now();
                loop {
                    let mut interval = quiet;
                    if !rebuilt {
                        match self.reindex() {
                            Ok(_) => {
                                rebuilt = true;
                                changed_at = Instant::now();
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "search index rebuild failed; retrying")
                            }
                        }
                    }
                    if rebuilt {
                        match self.poll() {
                            Ok(0) => {}
                            Ok(n) => {
                                changed_at = Instant::now();
                                if n >= busy_changes {
                                    interval = busy;
                                }
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "search index update failed; retrying")
                            }
                        }
                        if downloads_at.elapsed() >= self.opts.downloads_interval {
                            downloads_at = Instant::now();
                            // The index itself is not written: the
                            // writer's idle clock runs on.
                            match self.refresh_downloads() {
                                Ok(_) => {}
                                Err(e) => tracing::warn!(
                                    error = %e,
                                    "search download counts not refreshed"
                                ),
                            }
                        }
                        // Idle: give back the writer's memory (it is made
                        // again by the next change).
                        if changed_at.elapsed() >= self.opts.release_writer_after {
                            match self.index.release_writer() {
                                Ok(true) => tracing::debug!("search index writer released"),
                                Ok(false) => {}
                                Err(e) => {
                                    tracing::warn!(error = %e, "search index writer not released")
                                }
                            }
                        }
                        // Build the tables of new segments now rather than
                        // in the first query that needs them.
                        if let Err(e) = self.index.warm() {
                            tracing::warn!(error = %e, "search tables not built");
                        }
                    }
                    match rx.recv_timeout(interval) {
                        Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            })?;
        Ok(TailerHandle {
            tx: Some(tx),
            thread: Some(thread),
        })
    }
}

/// Controls a running tailer; dropping it stops the tailer.
#[derive(Debug)]
pub struct TailerHandle {
    tx: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TailerHandle {
    /// Polls now instead of at the next tick (e.g. right after a publish).
    pub fn nudge(&self) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(());
        }
    }

    /// Stops the tailer and waits for its thread to finish.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for TailerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}
