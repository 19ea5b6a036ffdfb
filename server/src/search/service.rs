//! [`SearchService`]: the search index and its tailer as one shared service
//! of the server (`AppState::search`), and [`reindex`], the rebuild behind
//! the `reindex` subcommand.

use std::path::Path;
use std::sync::{Arc, RwLock};

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
#[derive(Default)]
pub struct SearchService {
    running: RwLock<Option<Running>>,
}

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
    /// Opens (or rebuilds) the index in `dir`, within `memory`, and starts
    /// tailing `source` into it. A running service is stopped first.
    pub fn start(
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

    /// Runs a search (blocking: call off the async executor).
    pub fn query(&self, params: &SearchParams) -> Result<SearchAnswer, SearchError> {
        match self.index() {
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
