//! `GET /api/v1/search`: one page of hits with highlights, the total, and
//! facet counts over every matching tool.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toolreg_core::{ExecutionKind, Format, Tier};

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchAnswer {
    /// How many tools match (all pages).
    pub total: u64,
    pub page: usize,
    pub per_page: usize,
    pub hits: Vec<SearchHit>,
    pub facets: SearchFacets,
    /// The words of `q` the search used, lowercased, in the query's order:
    /// every word of a short query; of a natural-language one (more than
    /// four words) those left after stopwords, bare numbers and the limit on
    /// words per query. Empty when `q` is.
    #[serde(default)]
    pub words: Vec<String>,
}

/// One tool in the results: the version it is listed under and its fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchHit {
    pub name: String,
    pub version: String,
    /// The listed version's definition fingerprint (`sha256:` + hex).
    #[serde(default)]
    pub definition_sha256: Option<String>,
    pub title: Option<String>,
    pub description: String,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub format: Format,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub execution: ExecutionKind,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub tier: Tier,
    pub downloads: u64,
    /// RFC 3339.
    pub updated_at: String,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    /// The listed version's deprecation (null when it is not deprecated).
    #[serde(default)]
    pub deprecated: Option<crate::EncodableDeprecation>,
    /// How many definition lint findings the listed version carries (0:
    /// clean; more: flagged).
    #[serde(default)]
    pub findings: u32,
    /// The listed version was published through trusted publishing and
    /// carries the provenance of the CI run that built it.
    #[serde(default)]
    pub provenance: bool,
    pub highlights: SearchHighlights,
}

/// HTML fragments with the matched parts in `<mark>`; everything else is
/// HTML-escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchHighlights {
    pub name: String,
    pub description: String,
}

/// Counts per value for each facet, over every matching tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchFacets {
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub license: FacetCounts,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub keyword: FacetCounts,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub execution: FacetCounts,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub tier: FacetCounts,
}

/// `(value, count)` pairs, most frequent first (then by value); a JSON
/// object in that order.
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

impl<'de> Deserialize<'de> for FacetCounts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Counts;

        impl<'de> Visitor<'de> for Counts {
            type Value = FacetCounts;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of counts")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FacetCounts, A::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(pair) = map.next_entry::<String, u64>()? {
                    pairs.push(pair);
                }
                Ok(FacetCounts(pairs))
            }
        }

        deserializer.deserialize_map(Counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facet_counts_keep_their_order_both_ways() {
        let json = r#"{"MIT":3,"Apache-2.0":5}"#;
        let counts: FacetCounts = serde_json::from_str(json).unwrap();
        assert_eq!(counts.get("Apache-2.0"), 5);
        assert_eq!(counts.0[0].0, "MIT");
        assert_eq!(serde_json::to_string(&counts).unwrap(), json);
    }
}
