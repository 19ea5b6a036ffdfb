//! A collector that counts facet values (license, keyword, execution, tier)
//! over every matching document by reading term ordinals from the fast-field
//! string columns — no stored documents are loaded.

use std::collections::HashMap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::StrColumn;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

use super::results::{FacetCounts, Facets};

/// The facet fields, in [`Facets`] order.
const FIELDS: [&str; 4] = ["license", "keyword", "execution", "tier"];
/// Most values reported per facet.
const MAX_VALUES: usize = 50;

pub(crate) struct FacetCollector;

pub(crate) struct FacetSegmentCollector {
    columns: Vec<Option<(StrColumn, Vec<u32>)>>,
}

/// Per-field value counts of one segment.
pub(crate) type SegmentFacets = Vec<HashMap<String, u64>>;

impl Collector for FacetCollector {
    type Fruit = Facets;
    type Child = FacetSegmentCollector;

    fn for_segment(
        &self,
        _segment_local_id: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<Self::Child> {
        let mut columns = Vec::with_capacity(FIELDS.len());
        for field in FIELDS {
            let column = segment.fast_fields().str(field)?;
            columns.push(column.map(|c| {
                let n = c.num_terms();
                (c, vec![0u32; n])
            }));
        }
        Ok(FacetSegmentCollector { columns })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, segment_fruits: Vec<SegmentFacets>) -> tantivy::Result<Facets> {
        let mut merged: Vec<HashMap<String, u64>> = vec![HashMap::new(); FIELDS.len()];
        for fruit in segment_fruits {
            for (i, counts) in fruit.into_iter().enumerate() {
                for (value, count) in counts {
                    *merged[i].entry(value).or_default() += count;
                }
            }
        }
        let mut sorted = merged.into_iter().map(|m| {
            let mut pairs: Vec<(String, u64)> = m.into_iter().collect();
            pairs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            pairs.truncate(MAX_VALUES);
            FacetCounts(pairs)
        });
        Ok(Facets {
            license: sorted.next().unwrap_or_default(),
            keyword: sorted.next().unwrap_or_default(),
            execution: sorted.next().unwrap_or_default(),
            tier: sorted.next().unwrap_or_default(),
        })
    }
}

impl SegmentCollector for FacetSegmentCollector {
    type Fruit = SegmentFacets;

    fn collect(&mut self, doc: DocId, _score: Score) {
        for (column, counts) in self.columns.iter_mut().flatten() {
            for ord in column.term_ords(doc) {
                if let Some(c) = counts.get_mut(ord as usize) {
                    *c += 1;
                }
            }
        }
    }

    fn harvest(self) -> SegmentFacets {
        self.columns
            .into_iter()
            .map(|column| {
                let mut out = HashMap::new();
                if let Some((column, counts)) = column {
                    let mut value = String::new();
                    for (ord, count) in counts.iter().enumerate() {
                        if *count == 0 {
                            continue;
                        }
                        value.clear();
                        if let Ok(true) = column.ord_to_str(ord as u64, &mut value) {
                            out.insert(value.clone(), u64::from(*count));
                        }
                    }
                }
                out
            })
            .collect()
    }
}
