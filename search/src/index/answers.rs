//! [`AnswerCache`]: whole answers of the current searcher generation, by
//! their parameters, so that a repeated query (the front page, a popular
//! word) costs a lookup. Every commit makes a new generation, and every
//! download-count refresh a new [`Stamp`]; the cache then starts over. It is
//! bounded by a count and by the bytes its answers hold.

use std::collections::HashMap;
use std::sync::Mutex;

use toolreg_api::SearchAnswer;

use crate::results::heap_bytes;

/// Most answers kept per searcher generation.
pub(crate) const DEFAULT_CAPACITY: usize = 1024;
/// Most memory the kept answers of a generation may take by default, by
/// [`heap_bytes`] ([`crate::SearchIndex::set_result_cache_bytes`] changes
/// it). A count alone does not bound it: 1,024 distinct queries at
/// `per_page=100` with long descriptions and their highlighted copies could
/// hold hundreds of megabytes.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;

/// What the kept answers were computed from: the searcher generation and
/// the epoch of the download counts laid over it.
pub(crate) type Stamp = (u64, u64);

/// The answers of one searcher generation. When the next answer would
/// exceed the count or the byte budget, the cache starts over.
pub(crate) struct AnswerCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    generation: Stamp,
    capacity: usize,
    /// Most [`heap_bytes`] the entries may take.
    max_bytes: usize,
    /// [`heap_bytes`] of the entries plus their keys.
    bytes: usize,
    entries: HashMap<String, SearchAnswer>,
    /// Answers served from the cache since it was made.
    hits: u64,
}

impl Inner {
    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Starts over when `generation` is not the one the entries belong to.
    fn enter(&mut self, generation: Stamp) {
        if self.generation != generation {
            self.generation = generation;
            self.clear();
        }
    }
}

impl Default for AnswerCache {
    fn default() -> Self {
        AnswerCache {
            inner: Mutex::new(Inner {
                capacity: DEFAULT_CAPACITY,
                max_bytes: MAX_BYTES,
                ..Inner::default()
            }),
        }
    }
}

impl AnswerCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets how many answers are kept (0 turns the cache off) and empties it.
    pub(crate) fn set_capacity(&self, capacity: usize) {
        let mut inner = self.lock();
        inner.capacity = capacity;
        inner.clear();
    }

    /// Sets the most bytes the kept answers may take (0 turns the cache
    /// off) and empties it.
    pub(crate) fn set_max_bytes(&self, max_bytes: usize) {
        let mut inner = self.lock();
        inner.max_bytes = max_bytes;
        inner.clear();
    }

    /// The answer kept for `key` in `generation`, if any.
    pub(crate) fn get(&self, generation: Stamp, key: &str) -> Option<SearchAnswer> {
        let mut inner = self.lock();
        inner.enter(generation);
        let found = inner.entries.get(key).cloned();
        if found.is_some() {
            inner.hits += 1;
        }
        found
    }

    /// Keeps `results` as the answer to `key` in `generation`, unless a newer
    /// generation has started meanwhile, the cache is off, or the answer alone
    /// is over the byte budget.
    pub(crate) fn insert(&self, generation: Stamp, key: String, results: &SearchAnswer) {
        let mut inner = self.lock();
        let bytes = key.len() + heap_bytes(results);
        if inner.generation != generation || inner.capacity == 0 || bytes > inner.max_bytes {
            return;
        }
        if inner.entries.len() >= inner.capacity || inner.bytes + bytes > inner.max_bytes {
            inner.clear();
        }
        if inner.entries.insert(key, results.clone()).is_none() {
            inner.bytes += bytes;
        }
    }

    /// The answers kept now, and their bytes.
    #[cfg(test)]
    pub(crate) fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.entries.len(), inner.bytes)
    }

    /// How many answers were served from the cache.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> u64 {
        self.lock().hits
    }
}
