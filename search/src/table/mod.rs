//! Compact in-memory tables of one index segment, so that a search page is
//! computed without reading a stored document or a string dictionary per
//! match.
//!
//! A [`SegmentTable`] has three parts:
//!
//! * **Facet values** ([`facets`], built when the segment is first seen):
//!   each facet field's values and every document's value ordinals, and
//!   per document one word that counts its facets in one memory read.
//! * **Sort columns**: the name ordinals, downloads, update times and the
//!   deprecated flag (ranked below equal matches) as
//!   tantivy fast-field columns, opened once instead of once per query.
//!   The latest download counts are laid over the indexed ones
//!   ([`downloads`]).
//! * **Hit records** ([`records`], built on first use or by
//!   [`crate::SearchIndex::warm`]): the fields a hit shows, one compact
//!   binary record per document. They grow with the registry (~350 bytes
//!   a tool), so all segments' records share one byte budget
//!   ([`RecordsBudget`], `--search-records-mib`); a segment whose records
//!   don't fit has none, and its hits are read from the doc store (slower:
//!   a block decompressed and a JSON document parsed per hit). A segment
//!   refused once is not decoded again until the budget has the room its
//!   records needed.
//!
//! Segments are immutable, so a table never goes stale; it is shared by
//! every searcher generation that still has its segment (see
//! [`crate::snapshot`]) and dropped when the segment is merged away.
//! [`SegmentTable::heap_bytes`] says what one costs.

mod downloads;
mod facets;
mod records;
mod store_file;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use tantivy::columnar::{Column, StrColumn};
use tantivy::{DocId, SegmentReader};

use crate::schema::Fields;
use crate::SearchError;
pub(crate) use downloads::{DocCounts, LatestCounts};
pub(crate) use facets::{FacetColumn, FacetTable};
pub(crate) use records::Records;

/// The tables of one segment.
pub(crate) struct SegmentTable {
    /// The facet values of every document.
    pub(crate) facets: FacetTable,
    /// The fast-field columns a query sorts by, opened once (opening one
    /// reads its metadata, a cost per query and segment otherwise): the
    /// name (its term ordinals, and its dictionary to lay the latest
    /// download counts over the indexed ones), downloads, update time.
    names: Option<StrColumn>,
    downloads: Column<u64>,
    pub(crate) updated_at: Column<i64>,
    /// 1 for a deprecated tool (ranked below equal matches).
    pub(crate) deprecated: Column<u64>,
    /// Per document, the download count laid over the indexed one (`None`
    /// until latest counts are given: the indexed column stands).
    latest_downloads: RwLock<Option<Arc<[u64]>>>,
    max_doc: DocId,
    records: OnceLock<Kept>,
    /// The bytes the records needed when they last did not fit (0: never
    /// refused): no new try until the budget has that much room.
    refused: AtomicUsize,
    building: Mutex<()>,
}

/// The default byte budget of the search hit records (`--search-records-mib`):
/// room for ~190,000 tools of ~350 bytes.
pub const DEFAULT_RECORDS_MEMORY: usize = 64 << 20;

/// The byte budget of the hit records of every segment of one index.
#[derive(Debug)]
pub(crate) struct RecordsBudget {
    limit: AtomicUsize,
    used: AtomicUsize,
}

impl Default for RecordsBudget {
    fn default() -> Self {
        RecordsBudget {
            limit: AtomicUsize::new(DEFAULT_RECORDS_MEMORY),
            used: AtomicUsize::new(0),
        }
    }
}

impl RecordsBudget {
    /// Sets the budget; records already built stay until their segment goes.
    pub(crate) fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::SeqCst);
    }

    /// Bytes still free.
    fn room(&self) -> usize {
        self.limit
            .load(Ordering::SeqCst)
            .saturating_sub(self.used.load(Ordering::SeqCst))
    }

    /// Take `bytes` if they fit.
    fn take(&self, bytes: usize) -> bool {
        let limit = self.limit.load(Ordering::SeqCst);
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes).filter(|total| *total <= limit)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::SeqCst);
    }

    /// Bytes held by the records of live segments.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }
}

/// A segment's records, counted against the budget until dropped with the
/// segment's table.
struct Kept {
    records: Records,
    budget: Arc<RecordsBudget>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.budget.give_back(self.records.heap_bytes());
    }
}

impl SegmentTable {
    /// Reads the facet ordinals of every document of `segment`.
    pub(crate) fn build(segment: &SegmentReader) -> Result<Self, SearchError> {
        let fast = segment.fast_fields();
        Ok(SegmentTable {
            facets: FacetTable::build(fast, segment.max_doc())?,
            names: fast.str("name")?,
            downloads: fast.u64("downloads")?,
            updated_at: fast.i64("updated_at")?,
            deprecated: fast.u64("deprecated")?,
            latest_downloads: RwLock::new(None),
            max_doc: segment.max_doc(),
            records: OnceLock::new(),
            refused: AtomicUsize::new(0),
            building: Mutex::new(()),
        })
    }

    /// Lays `latest` over the indexed download counts (replacing what an
    /// earlier call laid).
    pub(crate) fn lay_downloads(&self, latest: &LatestCounts) -> Result<(), SearchError> {
        let laid = latest.lay_over(self.names.as_ref(), &self.downloads, self.max_doc)?;
        *self
            .latest_downloads
            .write()
            .unwrap_or_else(|e| e.into_inner()) = laid;
        Ok(())
    }

    /// The term ordinal of `doc`'s name (names sort as their ordinals
    /// within a segment).
    #[inline]
    pub(crate) fn name_ord(&self, doc: DocId) -> Option<u64> {
        self.names.as_ref().and_then(|n| n.ords().first(doc))
    }

    /// The download counts a query sorts by and a hit shows.
    pub(crate) fn downloads(&self) -> DocCounts {
        DocCounts {
            latest: self
                .latest_downloads
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            indexed: self.downloads.clone(),
        }
    }

    /// The facet column of field `f` (in [`facets::FACETS`] order).
    pub(crate) fn facet(&self, f: usize) -> &FacetColumn {
        &self.facets.columns[f]
    }

    /// The hit records, decoding the segment's stored documents the first
    /// time (concurrent callers wait for that one decoding; the doc store
    /// is read from its file in `dir`, the index's directory, see
    /// `store_file`), or `None` when they don't fit in `budget`: read such
    /// hits from the doc store.
    pub(crate) fn records(
        &self,
        segment: &SegmentReader,
        fields: &Fields,
        budget: &Arc<RecordsBudget>,
        dir: Option<&Path>,
    ) -> Result<Option<&Records>, SearchError> {
        if let Some(kept) = self.records.get() {
            return Ok(Some(&kept.records));
        }
        // Not decoded again while it can't fit: no room at all, or less
        // than the size it needed when last refused.
        let refused = || {
            let room = budget.room();
            room == 0 || self.refused.load(Ordering::SeqCst) > room
        };
        if refused() {
            return Ok(None);
        }
        // OnceLock has no fallible initializer on stable: one builder at a
        // time under the lock, then set.
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = self.records.get() {
            return Ok(Some(&kept.records));
        }
        if refused() {
            return Ok(None);
        }
        let built = Records::build(segment, fields, dir)?;
        let bytes = built.heap_bytes();
        if !budget.take(bytes) {
            self.refused.store(bytes.max(1), Ordering::SeqCst);
            return Ok(None);
        }
        let kept = self.records.get_or_init(|| Kept {
            records: built,
            budget: budget.clone(),
        });
        Ok(Some(&kept.records))
    }

    /// Empty facet counts of this segment (see [`FacetTable::facet_counts`]).
    pub(crate) fn facet_counts(&self) -> (Vec<u32>, [Vec<u32>; 4]) {
        self.facets.facet_counts()
    }

    /// Counts the facet values of `doc` (see [`FacetTable::count`]).
    #[inline]
    pub(crate) fn count(&self, doc: DocId, combos: &mut [u32], values: &mut [Vec<u32>; 4]) {
        self.facets.count(doc, combos, values);
    }

    /// Adds the combination counts to the per-value counts.
    pub(crate) fn expand(&self, combos: &[u32], values: &mut [Vec<u32>; 4]) {
        self.facets.expand(combos, values);
    }

    /// True once the hit records are built.
    pub(crate) fn has_records(&self) -> bool {
        self.records.get().is_some()
    }

    /// Heap memory held by the table (facet ordinals, values, laid-over
    /// download counts and records).
    pub(crate) fn heap_bytes(&self) -> usize {
        let laid = self
            .latest_downloads
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |l| std::mem::size_of_val(&**l));
        self.facets.heap_bytes() + laid + self.records.get().map_or(0, |k| k.records.heap_bytes())
    }
}
