//! [`PageCollector`]: one pass over the matches of a query that counts them,
//! counts their facet values and keeps the best `offset + limit` of them in
//! the requested order — instead of a tuple of tantivy's `Count`, a facet
//! collector and `TopDocs`, each doing its own per-match lookups.
//!
//! * Facets are counted from the segment's [`SegmentTable`] (one memory
//!   read per match, one increment per value), not from fast-field string
//!   columns.
//! * The order is a 128-bit rank per match — the sort value (the score,
//!   downloads or update time, mapped so that larger is better) above one
//!   bit that is set for a tool that is not deprecated, above the inverted
//!   name ordinal — so the top-k test is one integer comparison,
//!   and the name column is read only for matches that reach the current
//!   k-th value. Name ordinals follow the name order within a segment;
//!   across segments the merge ([`merge_top`]) compares names, read from the
//!   hit records of the few candidates.
//! * The ordering is tantivy's `order_by((key, Desc), (name, Asc))` that it
//!   replaced, except that among matches of an equal sort value deprecated
//!   tools come last (sorted by name, the order is the name's alone): scores
//!   come from the same `Weight::for_each`, and registry names are unique
//!   among live documents, so there are no ties.

use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use crate::params::SearchSort;
use crate::table::{DocCounts, SegmentTable};

/// The per-segment result of a [`PageCollector`].
pub(crate) struct SegmentPage {
    pub(crate) segment_ord: SegmentOrdinal,
    pub(crate) count: u64,
    /// Per facet field, the count of each local value ordinal (empty when
    /// facets were not asked for).
    pub(crate) counts: [Vec<u32>; 4],
    /// The best matches, best first: `(rank, doc)`.
    pub(crate) top: Vec<(u128, DocId)>,
}

/// Counts, facet counts and the top `k` matches in one pass.
pub(crate) struct PageCollector {
    /// The generation's tables, by segment ordinal.
    pub(crate) tables: Arc<Vec<Arc<SegmentTable>>>,
    pub(crate) sort: SearchSort,
    /// How many of the best matches to keep (`offset + limit`).
    pub(crate) k: usize,
    /// Count facet values (off when they are known in advance).
    pub(crate) facets: bool,
}

/// The most matches tantivy hands to `collect_block` at once.
const BLOCK: usize = tantivy::COLLECT_BLOCK_BUFFER_LEN;

/// Bit of the rank that says the sort value exists (tantivy puts documents
/// without one last in a descending order).
const PRESENT: u128 = 1 << 97;
/// Where the sort value sits in the rank (a 64-bit value below [`PRESENT`]).
const VALUE_SHIFT: u32 = 33;
/// Bit of the rank set for a tool that is not deprecated: below the sort
/// value, above the name, so a deprecated tool comes after every equal match.
const NOT_DEPRECATED: u128 = 1 << 32;
/// Everything of a rank below the sort value (the deprecation bit and the
/// name): the best rank a match of a given sort value can reach.
const BELOW_VALUE: u128 = (1 << VALUE_SHIFT) - 1;

pub(crate) struct PageSegmentCollector {
    segment_ord: SegmentOrdinal,
    table: Arc<SegmentTable>,
    /// The segment's download counts, read once per query.
    downloads: DocCounts,
    facets: bool,
    count: u64,
    /// See [`SegmentTable::count`].
    combos: Vec<u32>,
    counts: [Vec<u32>; 4],
    sort: SearchSort,
    top: TopK,
}

impl Collector for PageCollector {
    type Fruit = Vec<SegmentPage>;
    type Child = PageSegmentCollector;

    fn for_segment(
        &self,
        segment_ord: SegmentOrdinal,
        _segment: &SegmentReader,
    ) -> tantivy::Result<Self::Child> {
        let table = self
            .tables
            .get(segment_ord as usize)
            .cloned()
            .ok_or_else(|| {
                tantivy::TantivyError::InternalError(format!(
                    "no search table for segment {segment_ord}"
                ))
            })?;
        let (combos, counts) = if self.facets {
            table.facet_counts()
        } else {
            Default::default()
        };
        Ok(PageSegmentCollector {
            segment_ord,
            downloads: table.downloads(),
            table,
            facets: self.facets,
            count: 0,
            combos,
            counts,
            sort: self.sort,
            top: TopK::new(self.k),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.sort == SearchSort::Relevance
    }

    fn merge_fruits(&self, segment_fruits: Vec<SegmentPage>) -> tantivy::Result<Vec<SegmentPage>> {
        Ok(segment_fruits)
    }
}

/// A score as an integer of the same order (larger is better; -0 is 0).
#[inline]
fn score_bits(score: Score) -> u64 {
    let score = if score == 0.0 { 0.0 } else { score };
    let bits = score.to_bits();
    u64::from(if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    })
}

impl PageSegmentCollector {
    /// [`NOT_DEPRECATED`] for a tool that is not deprecated; sorted by name
    /// the bit is left out, so the order is the names'.
    #[inline]
    fn standing(&self, doc: DocId) -> u128 {
        if self.sort == SearchSort::Name || self.table.deprecated.first(doc) == Some(1) {
            0
        } else {
            NOT_DEPRECATED
        }
    }

    #[inline]
    fn name_rank(&self, doc: DocId) -> u128 {
        // Smaller ordinals (names) first; a document without a name first,
        // as tantivy orders `None` before any string.
        match self.table.name_ord(doc) {
            Some(ord) => u128::from(u32::MAX - ord.min(u64::from(u32::MAX - 1)) as u32 - 1),
            None => u128::from(u32::MAX),
        }
    }
}

impl SegmentCollector for PageSegmentCollector {
    type Fruit = SegmentPage;

    #[inline]
    fn collect(&mut self, doc: DocId, score: Score) {
        self.count += 1;
        if self.facets {
            self.table.count(doc, &mut self.combos, &mut self.counts);
        }
        if self.top.k == 0 {
            return;
        }
        let high = match self.sort {
            SearchSort::Relevance => PRESENT | u128::from(score_bits(score)) << VALUE_SHIFT,
            SearchSort::Downloads => self
                .downloads
                .get(doc)
                .map_or(0, |v| PRESENT | u128::from(v) << VALUE_SHIFT),
            SearchSort::Recent => self.table.updated_at.first(doc).map_or(0, |v| {
                PRESENT | u128::from((v as u64) ^ (1 << 63)) << VALUE_SHIFT
            }),
            SearchSort::Name => 0,
        };
        if self.top.threshold.is_some_and(|t| high | BELOW_VALUE <= t) {
            return;
        }
        let rank = high | self.standing(doc) | self.name_rank(doc);
        self.top.push(rank, doc);
    }

    /// Without scores (every order but relevance), on a segment without
    /// deletions: blocks of matches, sort values read a block at a time.
    fn collect_block(&mut self, docs: &[DocId]) {
        if self.sort == SearchSort::Relevance || docs.len() > BLOCK {
            for &doc in docs {
                self.collect(doc, 0.0);
            }
            return;
        }
        self.count += docs.len() as u64;
        if self.facets {
            for &doc in docs {
                self.table.count(doc, &mut self.combos, &mut self.counts);
            }
        }
        if self.top.k == 0 {
            return;
        }
        let mut highs = [0u128; BLOCK];
        match self.sort {
            SearchSort::Downloads => {
                let mut values = [None; BLOCK];
                self.downloads.get_block(docs, &mut values[..docs.len()]);
                for (high, v) in highs.iter_mut().zip(values) {
                    *high = v.map_or(0, |v| PRESENT | u128::from(v) << VALUE_SHIFT);
                }
            }
            SearchSort::Recent => {
                let mut values = [None; BLOCK];
                self.table
                    .updated_at
                    .first_vals(docs, &mut values[..docs.len()]);
                for (high, v) in highs.iter_mut().zip(values) {
                    *high = v.map_or(0, |v| {
                        PRESENT | u128::from((v as u64) ^ (1 << 63)) << VALUE_SHIFT
                    });
                }
            }
            SearchSort::Name | SearchSort::Relevance => {}
        }
        for (&doc, &high) in docs.iter().zip(&highs) {
            if self.top.threshold.is_some_and(|t| high | BELOW_VALUE <= t) {
                continue;
            }
            let rank = high | self.standing(doc) | self.name_rank(doc);
            self.top.push(rank, doc);
        }
    }

    fn harvest(mut self) -> SegmentPage {
        if self.facets {
            self.table.expand(&self.combos, &mut self.counts);
        }
        SegmentPage {
            segment_ord: self.segment_ord,
            count: self.count,
            counts: self.counts,
            top: self.top.into_sorted(),
        }
    }
}

/// The `k` largest ranks seen: candidates are buffered and cut back to `k`
/// when the buffer holds `2k`; after that, anything not above the k-th rank
/// is skipped.
struct TopK {
    k: usize,
    buffer: Vec<(u128, DocId)>,
    threshold: Option<u128>,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK {
            k,
            buffer: Vec::with_capacity(k.min(1024) * 2),
            threshold: None,
        }
    }

    #[inline]
    fn push(&mut self, rank: u128, doc: DocId) {
        if self.threshold.is_some_and(|t| rank <= t) {
            return;
        }
        self.buffer.push((rank, doc));
        if self.buffer.len() >= 2 * self.k {
            self.cut();
        }
    }

    fn cut(&mut self) {
        let k = self.k;
        if self.buffer.len() > k {
            self.buffer
                .select_nth_unstable_by(k - 1, |a, b| b.0.cmp(&a.0));
            self.buffer.truncate(k);
        }
        if self.buffer.len() == k {
            self.threshold = self.buffer.iter().map(|(r, _)| *r).min();
        }
    }

    fn into_sorted(mut self) -> Vec<(u128, DocId)> {
        self.buffer
            .sort_unstable_by_key(|&(rank, _)| std::cmp::Reverse(rank));
        self.buffer.truncate(self.k);
        self.buffer
    }
}

/// The matches `offset..offset + limit` over every segment, best first.
/// `name` gives a candidate's registry name; it is asked only for
/// candidates of different segments with the same sort value (for
/// relevance, downloads or recency that is rare; sorted by name it is
/// every candidate).
pub(crate) fn merge_top<E>(
    pages: &[SegmentPage],
    offset: usize,
    limit: usize,
    mut name: impl FnMut(DocAddress) -> Result<String, E>,
) -> Result<Vec<DocAddress>, E> {
    let end = offset + limit;
    // Only the best `offset + limit` of each segment can be on the page.
    let mut candidates: Vec<(u128, DocAddress)> = pages
        .iter()
        .flat_map(|p| {
            p.top.iter().take(end).map(|&(rank, doc)| {
                (
                    rank,
                    DocAddress {
                        segment_ord: p.segment_ord,
                        doc_id: doc,
                    },
                )
            })
        })
        .collect();
    // By rank, which is the order within a segment; then each run of equal
    // sort values from more than one segment is ordered by name.
    candidates.sort_unstable_by_key(|&(rank, _)| std::cmp::Reverse(rank));
    let mut start = 0;
    while start < candidates.len().min(end) {
        let high = candidates[start].0 >> 32;
        let run = candidates[start..]
            .iter()
            .take_while(|(rank, _)| rank >> 32 == high)
            .count();
        let slice = &mut candidates[start..start + run];
        if slice
            .iter()
            .any(|(_, a)| a.segment_ord != slice[0].1.segment_ord)
        {
            let mut named = Vec::with_capacity(run);
            for &(rank, addr) in slice.iter() {
                named.push((name(addr)?, rank, addr));
            }
            named.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            for (slot, (_, rank, addr)) in slice.iter_mut().zip(named) {
                *slot = (rank, addr);
            }
        }
        start += run;
    }
    Ok(candidates
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(_, addr)| addr)
        .collect())
}
