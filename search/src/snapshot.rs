//! What the query path keeps per searcher generation, on top of the
//! per-segment [`SegmentTable`]s:
//!
//! * [`TableCache`] — the tables by segment id. A segment's table is built
//!   once (under one lock, so two queries never build the same table) and
//!   reused by every later generation that still has the segment; tables of
//!   merged-away segments are dropped at commit. It also holds the latest
//!   download counts and lays them over every table (see
//!   [`crate::table`]'s `downloads`).
//! * [`Snapshot`] — one generation: its tables by segment ordinal, a global
//!   numbering of each facet field's values across the segments (so that
//!   per-segment counts are added up by index, not by hashing strings), and,
//!   computed on first use, the facet counts of the whole index (the answer
//!   of every query without words or filters, whatever its sort or page).
//!
//! A generation changes at every commit; building its snapshot costs a walk
//! over the facet values (not the documents) plus any new segment's table.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use tantivy::index::SegmentId;
use tantivy::{Searcher, SegmentReader};
use toolreg_api::{FacetCounts, SearchFacets};

use crate::table::{LatestCounts, RecordsBudget, SegmentTable};
use crate::SearchError;

/// Most values reported per facet.
const MAX_VALUES: usize = 50;

/// Segment tables by segment id.
#[derive(Default)]
pub(crate) struct TableCache {
    tables: RwLock<HashMap<SegmentId, Arc<SegmentTable>>>,
    building: Mutex<()>,
    /// The byte budget of the tables' hit records.
    records: Arc<RecordsBudget>,
    /// The latest download counts, laid over each table as it is built.
    latest: RwLock<Arc<LatestCounts>>,
    /// Bumped each time new counts are laid over the tables (answers
    /// remembered before show the old counts).
    counts_epoch: AtomicU64,
}

impl TableCache {
    /// The budget the hit records are built within.
    pub(crate) fn records_budget(&self) -> &Arc<RecordsBudget> {
        &self.records
    }

    /// The table of `segment`, built if this is the first time it is seen.
    pub(crate) fn table(&self, segment: &SegmentReader) -> Result<Arc<SegmentTable>, SearchError> {
        let id = segment.segment_id();
        if let Some(t) = self.read().get(&id) {
            return Ok(t.clone());
        }
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = self.read().get(&id) {
            return Ok(t.clone());
        }
        let table = Arc::new(SegmentTable::build(segment)?);
        let latest = self
            .latest
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        table.lay_downloads(&latest)?;
        self.tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, table.clone());
        Ok(table)
    }

    /// Lays `latest` over every table held (and every table built from now
    /// on), unless the counts are the ones laid already. Returns how many
    /// tools' counts changed.
    pub(crate) fn set_downloads(&self, latest: LatestCounts) -> Result<usize, SearchError> {
        // Under the build lock, so no table is built with the old counts
        // after the loop below. The counts are kept only once every table
        // has them: after a failure the next call lays them again.
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let changed = {
            let current = self.latest.read().unwrap_or_else(|e| e.into_inner());
            latest.changed_since(&current)
        };
        if changed == 0 {
            return Ok(0);
        }
        let tables: Vec<Arc<SegmentTable>> = self.read().values().cloned().collect();
        for table in tables {
            table.lay_downloads(&latest)?;
        }
        *self.latest.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(latest);
        self.counts_epoch.fetch_add(1, Ordering::SeqCst);
        Ok(changed)
    }

    /// Changes each time new download counts are laid over the tables.
    pub(crate) fn counts_epoch(&self) -> u64 {
        self.counts_epoch.load(Ordering::SeqCst)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<SegmentId, Arc<SegmentTable>>> {
        self.tables.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops the tables of segments not in `live`.
    pub(crate) fn retain(&self, live: &HashSet<SegmentId>) {
        self.tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|id, _| live.contains(id));
    }

    /// Heap memory of every table held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.read().values().map(|t| t.heap_bytes()).sum()
    }
}

/// One facet field's values numbered across the segments of a generation.
struct Global {
    values: Vec<Box<str>>,
    /// Per segment ordinal: local value ordinal → global number.
    maps: Vec<Vec<u32>>,
}

/// The query-side state of one searcher generation.
pub(crate) struct Snapshot {
    pub(crate) generation: u64,
    /// By segment ordinal.
    pub(crate) tables: Vec<Arc<SegmentTable>>,
    globals: [Global; 4],
    everything: OnceLock<SearchFacets>,
}

impl Snapshot {
    /// The snapshot of `searcher`'s generation.
    pub(crate) fn build(searcher: &Searcher, cache: &TableCache) -> Result<Self, SearchError> {
        let tables = searcher
            .segment_readers()
            .iter()
            .map(|s| cache.table(s))
            .collect::<Result<Vec<_>, _>>()?;
        let globals = std::array::from_fn(|f| {
            let mut index: HashMap<&str, u32> = HashMap::new();
            let mut values: Vec<Box<str>> = Vec::new();
            let maps = tables
                .iter()
                .map(|t| {
                    let column = t.facet(f);
                    (0..column.num_values())
                        .map(|ord| {
                            let value = column.value(ord);
                            *index.entry(value).or_insert_with(|| {
                                values.push(value.into());
                                (values.len() - 1) as u32
                            })
                        })
                        .collect()
                })
                .collect();
            Global { values, maps }
        });
        Ok(Snapshot {
            generation: searcher.generation().generation_id(),
            tables,
            globals,
            everything: OnceLock::new(),
        })
    }

    /// Adds up per-segment counts (`(segment ordinal, counts per facet
    /// field by local ordinal)`) into the facets of the answer: per field
    /// the most frequent values first, then by value, at most 50.
    pub(crate) fn facets<'a>(
        &self,
        segments: impl Iterator<Item = (usize, &'a [Vec<u32>; 4])> + Clone,
    ) -> SearchFacets {
        let mut fields = self.globals.iter().enumerate().map(|(f, global)| {
            let mut totals = vec![0u64; global.values.len()];
            for (seg, counts) in segments.clone() {
                let Some(map) = global.maps.get(seg) else {
                    continue;
                };
                for (ord, &c) in counts[f].iter().enumerate() {
                    if c > 0 {
                        if let Some(t) = map.get(ord).and_then(|&g| totals.get_mut(g as usize)) {
                            *t += u64::from(c);
                        }
                    }
                }
            }
            let mut pairs: Vec<(&str, u64)> = totals
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(g, &c)| (global.values[g].as_ref(), c))
                .collect();
            pairs.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            pairs.truncate(MAX_VALUES);
            FacetCounts(pairs.into_iter().map(|(v, c)| (v.to_string(), c)).collect())
        });
        SearchFacets {
            license: fields.next().unwrap_or_default(),
            keyword: fields.next().unwrap_or_default(),
            execution: fields.next().unwrap_or_default(),
            tier: fields.next().unwrap_or_default(),
        }
    }

    /// The facets of every searchable tool (computed once per generation).
    pub(crate) fn everything(&self, searcher: &Searcher) -> SearchFacets {
        self.everything
            .get_or_init(|| {
                let counts: Vec<[Vec<u32>; 4]> = searcher
                    .segment_readers()
                    .iter()
                    .zip(&self.tables)
                    .map(|(segment, table)| {
                        let (mut combos, mut counts) = table.facet_counts();
                        let alive = segment.alive_bitset();
                        for doc in 0..segment.max_doc() {
                            if alive.is_some_and(|a| !a.is_alive(doc)) {
                                continue;
                            }
                            table.count(doc, &mut combos, &mut counts);
                        }
                        table.expand(&combos, &mut counts);
                        counts
                    })
                    .collect();
                self.facets(counts.iter().enumerate())
            })
            .clone()
    }
}
