//! [`SearchService`]: the search index and its tailer as one shared service
//! of the server (`AppState::search`), and [`reindex`], the rebuild behind
//! the `reindex` subcommand.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use toolreg_search::{
    OpenState, SearchError, SearchIndex, SearchParams, SearchSource, Tailer, TailerHandle,
    TailerOptions,
};

use crate::views::SearchAnswer;

struct Running {
    index: Arc<SearchIndex>,
    tailer: TailerHandle,
}

/// The replica's search: not running until [`SearchService::start`].
///
/// `serve` opens the index after the server is listening, so that a
/// restart answers everything but searches without waiting for the index
/// files (on a cold page cache, most of a restart's time). Between
/// [`SearchService::begin_opening`] and the end of `start`, a query that
/// finds no index waits for it, at most [`OPEN_WAIT`].
#[derive(Default)]
pub struct SearchService {
    running: RwLock<Option<Running>>,
    /// Whether the index is being opened.
    opening: Mutex<bool>,
    /// Signalled when an opening ends, opened or not.
    opened: Condvar,
}

/// The longest a query waits for an index that is being opened before it
/// is answered 503 (opening a 100,000-tool index took 15–140 ms, the most
/// with its files not in the page cache).
pub const OPEN_WAIT: Duration = Duration::from_secs(30);

/// The memory bounds of the search index (`--search-cache-mib`,
/// `--index-writer-mib`), applied when it is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchMemory {
    /// Most bytes of remembered answers.
    pub answer_bytes: usize,
    /// Most bytes of the segments' hit records.
    pub records_bytes: usize,
    /// The index writer's memory budget, in bytes.
    pub writer_bytes: usize,
    /// Most bytes of remembered English stems.
    pub stem_bytes: usize,
}

impl Default for SearchMemory {
    fn default() -> Self {
        SearchMemory {
            answer_bytes: toolreg_search::ANSWER_CACHE_BYTES,
            records_bytes: toolreg_search::DEFAULT_RECORDS_MEMORY,
            writer_bytes: toolreg_search::DEFAULT_WRITER_MEMORY,
            stem_bytes: toolreg_search::DEFAULT_STEM_CACHE_BYTES,
        }
    }
}

impl SearchMemory {
    /// From the flags' MiB (and the stems' KiB).
    pub fn from_flags(
        answers_mib: u64,
        records_mib: u64,
        writer_mib: u64,
        stems_kib: u64,
    ) -> SearchMemory {
        let bytes =
            |n: u64, unit: u64| usize::try_from(n.saturating_mul(unit)).unwrap_or(usize::MAX);
        SearchMemory {
            answer_bytes: bytes(answers_mib, 1 << 20),
            records_bytes: bytes(records_mib, 1 << 20),
            writer_bytes: bytes(writer_mib, 1 << 20),
            stem_bytes: bytes(stems_kib, 1 << 10),
        }
    }
}

impl std::fmt::Debug for SearchService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchService")
            .field("running", &self.index().is_some())
            .finish()
    }
}

impl SearchService {
    /// From now until [`SearchService::start`] returns, queries wait for
    /// the index instead of failing without one.
    pub fn begin_opening(&self) {
        *self.opening.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// Opens (or rebuilds) the index in `dir`, within `memory`, and starts
    /// tailing `source` into it. A running service is stopped first. Ends
    /// an opening begun with [`SearchService::begin_opening`], whatever the
    /// outcome, and wakes the queries waiting for it.
    pub fn start(
        &self,
        dir: &Path,
        source: Arc<dyn SearchSource>,
        memory: SearchMemory,
    ) -> Result<(), SearchError> {
        let started = self.open(dir, source, memory);
        *self.opening.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.opened.notify_all();
        started
    }

    fn open(
        &self,
        dir: &Path,
        source: Arc<dyn SearchSource>,
        memory: SearchMemory,
    ) -> Result<(), SearchError> {
        self.stop();
        let index = Arc::new(SearchIndex::open(dir)?);
        index.set_result_cache_bytes(memory.answer_bytes);
        index.set_records_memory(memory.records_bytes);
        index.set_writer_memory(memory.writer_bytes);
        index.set_stem_cache_bytes(memory.stem_bytes);
        match index.state() {
            OpenState::Rebuilt { reason } => {
                tracing::warn!(dir = %dir.display(), %reason, "search index was unreadable; rebuilding it from the database")
            }
            OpenState::Created => {
                tracing::info!(dir = %dir.display(), "no search index yet; building it from the database")
            }
            OpenState::Opened => {}
        }
        let tailer = Tailer::new(index.clone(), source, TailerOptions::default()).spawn()?;
        let mut running = self.running.write().unwrap_or_else(|e| e.into_inner());
        *running = Some(Running { index, tailer });
        Ok(())
    }

    /// Stops the tailer and closes the index (if running).
    pub fn stop(&self) {
        let running = self
            .running
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(r) = running {
            r.tailer.stop();
            drop(r.index);
        }
    }

    /// The index, when running.
    pub fn index(&self) -> Option<Arc<SearchIndex>> {
        let running = self.running.read().unwrap_or_else(|e| e.into_inner());
        running.as_ref().map(|r| r.index.clone())
    }

    /// Asks the tailer to poll now (e.g. right after a publish or yank).
    pub fn nudge(&self) {
        let running = self.running.read().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = running.as_ref() {
            r.tailer.nudge();
        }
    }

    /// The index, once an opening in progress has ended (at most
    /// [`OPEN_WAIT`] from now).
    fn index_when_open(&self) -> Option<Arc<SearchIndex>> {
        let deadline = Instant::now() + OPEN_WAIT;
        let mut opening = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        while *opening {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            opening = match self.opened.wait_timeout(opening, left) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
        drop(opening);
        self.index()
    }

    /// Runs a search (blocking: call off the async executor). While the
    /// index is being opened, waits for it.
    pub fn query(&self, params: &SearchParams) -> Result<SearchAnswer, SearchError> {
        match self.index().or_else(|| self.index_when_open()) {
            Some(index) => index.query(params),
            None => Err(SearchError::NotRunning),
        }
    }
}

/// Rebuilds the index in `dir` from `source` alone (the `reindex`
/// subcommand). Fails if a running server holds the index.
pub fn reindex(dir: &Path, source: Arc<dyn SearchSource>) -> Result<usize, SearchError> {
    let index = Arc::new(SearchIndex::open(dir).map_err(|e| {
        if e.is_lock_failure() {
            SearchError::Source(format!(
                "the search index in {} is in use by a running server; stop that server first, or rebuild into another directory with --index",
                dir.display()
            ))
        } else {
            e
        }
    })?);
    Tailer::new(index, source, TailerOptions::default()).reindex()
}

/// The index directory of a data directory: `<data>/index`.
pub fn index_dir(store: &crate::config::StoreOptions) -> std::path::PathBuf {
    store.data_dir.join("index")
}
