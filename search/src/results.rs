//! The answer of a search: one page of hits with highlights, the total, and
//! facet counts over every matching tool (docs/api.md, "Search").

use chrono::{DateTime, Utc};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use toolreg_core::{ExecutionKind, Format, Tier};

/// One page of search results.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// How many tools match (all pages).
    pub total: u64,
    pub page: usize,
    pub per_page: usize,
    pub hits: Vec<SearchHit>,
    pub facets: SearchFacets,
}

impl SearchResults {
    /// Roughly the memory this answer holds: its structs and the text they
    /// own (what the per-generation answer cache weighs it by).
    pub fn heap_bytes(&self) -> usize {
        let hits: usize = self.hits.iter().map(SearchHit::heap_bytes).sum();
        std::mem::size_of::<SearchResults>() + hits + self.facets.heap_bytes()
    }
}

impl SearchHit {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<SearchHit>()
            + self.name.len()
            + self.version.len()
            + self.title.as_ref().map_or(0, String::len)
            + self.description.len()
            + self
                .keywords
                .iter()
                .map(|k| k.len() + std::mem::size_of::<String>())
                .sum::<usize>()
            + self.license.as_ref().map_or(0, String::len)
            + self.blocked_reason.as_ref().map_or(0, String::len)
            + self.highlights.name.len()
            + self.highlights.description.len()
    }
}

impl SearchFacets {
    fn heap_bytes(&self) -> usize {
        [&self.license, &self.keyword, &self.execution, &self.tier]
            .iter()
            .flat_map(|f| f.0.iter())
            .map(|(value, _)| value.len() + std::mem::size_of::<(String, u64)>())
            .sum()
    }
}

/// One tool in the results.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub description: String,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub format: Format,
    pub execution: ExecutionKind,
    pub tier: Tier,
    pub downloads: u64,
    pub updated_at: DateTime<Utc>,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub highlights: Highlights,
}

/// HTML fragments with the matched parts in `<mark>`; everything else is
/// HTML-escaped, so they can be inserted into a page as they are.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Highlights {
    pub name: String,
    pub description: String,
}

/// Counts per value for each facet, over every matching tool.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchFacets {
    pub license: FacetCounts,
    pub keyword: FacetCounts,
    pub execution: FacetCounts,
    pub tier: FacetCounts,
}

/// `(value, count)` pairs, most frequent first (then by value); serialized as
/// a JSON object in that order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FacetCounts(pub Vec<(String, u64)>);

impl FacetCounts {
    /// The count for `value` (0 when absent).
    pub fn get(&self, value: &str) -> u64 {
        self.0
            .iter()
            .find(|(v, _)| v == value)
            .map_or(0, |(_, c)| *c)
    }
}

impl Serialize for FacetCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (value, count) in &self.0 {
            map.serialize_entry(value, count)?;
        }
        map.end()
    }
}
