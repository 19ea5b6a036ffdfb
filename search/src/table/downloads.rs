//! Download counts laid over the indexed ones, so that a new count never
//! re-indexes a tool.
//!
//! Downloads are counted without a change-log entry, so the tailer brings
//! them up to date now and then ([`crate::SearchIndex::set_downloads`]).
//! Re-indexing each tool whose count moved would rewrite the document of
//! every tool downloaded since the last refresh: under downloads spread over
//! the whole registry that is the whole index, every refresh, and the
//! writer's buffers, the new segments and the merges after them become the
//! server's peak memory. Instead:
//!
//! * [`LatestCounts`] holds every downloaded tool's latest count, keyed by a
//!   64-bit hash of its name (16 bytes a tool, whatever the name's length).
//!   A tool never downloaded has no entry.
//! * Each segment's table lays them over its indexed column
//!   ([`DocCounts`]): per document, the larger of the indexed count and the
//!   latest one. Counts only grow, so the larger is the newer one: a merged
//!   segment carries counts as old as its documents, and a document indexed
//!   after the last refresh (a publish) already carries a newer count than
//!   the refresh read. A segment is laid over when its table is built and
//!   again at every refresh.
//!
//! Search answers show the laid-over count and sort by it; the stored
//! documents keep the count they were indexed with.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::sync::Arc;

use tantivy::columnar::{Column, StrColumn};
use tantivy::DocId;

use crate::SearchError;

/// The hash a tool name is keyed by: SipHash with fixed keys, so the latest
/// counts (from the database's names) and a segment's name dictionary
/// (bytes) agree.
fn name_key(name: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(name);
    h.finish()
}

/// The latest download count of every downloaded tool.
#[derive(Debug, Default)]
pub(crate) struct LatestCounts {
    by_name: HashMap<u64, u64>,
}

impl LatestCounts {
    /// The counts of `(name, downloads)` pairs; tools without downloads are
    /// left out (an absent tool counts 0).
    pub(crate) fn new(counts: impl IntoIterator<Item = (String, u64)>) -> Self {
        LatestCounts {
            by_name: counts
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(|(name, n)| (name_key(name.as_bytes()), n))
                .collect(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// How many tools' counts differ between `self` and `before`.
    pub(crate) fn changed_since(&self, before: &LatestCounts) -> usize {
        let moved = self
            .by_name
            .iter()
            .filter(|(k, n)| before.by_name.get(k) != Some(n))
            .count();
        let dropped = before
            .by_name
            .keys()
            .filter(|k| !self.by_name.contains_key(k))
            .count();
        moved + dropped
    }

    /// Each document's count in a segment: the larger of its indexed count
    /// and its name's latest one. `None` when there are no latest counts
    /// (the indexed ones stand).
    pub(crate) fn lay_over(
        &self,
        names: Option<&StrColumn>,
        indexed: &Column<u64>,
        max_doc: DocId,
    ) -> Result<Option<Arc<[u64]>>, SearchError> {
        let Some(names) = names.filter(|_| !self.is_empty()) else {
            return Ok(None);
        };
        // The latest count of each name ordinal, read in one pass over the
        // segment's name dictionary.
        let mut by_ord = vec![0u64; names.num_terms()];
        let mut terms = names.dictionary().stream()?;
        while terms.advance() {
            if let Some(slot) = usize::try_from(terms.term_ord())
                .ok()
                .and_then(|ord| by_ord.get_mut(ord))
            {
                *slot = self
                    .by_name
                    .get(&name_key(terms.key()))
                    .copied()
                    .unwrap_or(0);
            }
        }
        let counts = (0..max_doc)
            .map(|doc| {
                let latest = names
                    .ords()
                    .first(doc)
                    .and_then(|ord| by_ord.get(ord as usize).copied())
                    .unwrap_or(0);
                latest.max(indexed.first(doc).unwrap_or(0))
            })
            .collect();
        Ok(Some(counts))
    }
}

/// One segment's download counts as a query reads them: laid over, or the
/// indexed column when nothing is.
#[derive(Clone)]
pub(crate) struct DocCounts {
    pub(crate) latest: Option<Arc<[u64]>>,
    pub(crate) indexed: Column<u64>,
}

impl DocCounts {
    #[inline]
    pub(crate) fn get(&self, doc: DocId) -> Option<u64> {
        match &self.latest {
            Some(latest) => latest.get(doc as usize).copied(),
            None => self.indexed.first(doc),
        }
    }

    /// The counts of a block of documents into `out` (as long as `docs`).
    pub(crate) fn get_block(&self, docs: &[DocId], out: &mut [Option<u64>]) {
        match &self.latest {
            Some(latest) => {
                for (v, &doc) in out.iter_mut().zip(docs) {
                    *v = latest.get(doc as usize).copied();
                }
            }
            None => self.indexed.first_vals(docs, out),
        }
    }
}
