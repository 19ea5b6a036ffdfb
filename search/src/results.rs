//! The answer of a search is the API's own type, [`toolreg_api::SearchAnswer`]:
//! the engine builds it directly, so the JSON the server sends has one
//! definition. This module makes a hit out of an indexed document (the one
//! place where engine data becomes wire data) and weighs an answer for the
//! answer cache.

use chrono::SecondsFormat;
use toolreg_api::{SearchAnswer, SearchFacets, SearchHighlights, SearchHit};

use crate::SearchDoc;

/// The hit of `doc` with its highlights. `updated_at` is written as RFC 3339
/// UTC with as many fractional digits as it needs (none, 3, 6 or 9) — what
/// chrono's own serializer writes for a `DateTime<Utc>`.
pub(crate) fn hit(doc: SearchDoc, highlights: SearchHighlights) -> SearchHit {
    SearchHit {
        name: doc.name,
        version: doc.version,
        definition_sha256: doc.definition_sha256,
        title: doc.title,
        description: doc.description,
        keywords: doc.keywords,
        license: doc.license,
        format: doc.format,
        execution: doc.execution,
        tier: doc.tier,
        downloads: doc.downloads,
        updated_at: doc.updated_at.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        blocked: doc.blocked,
        blocked_reason: doc.blocked_reason,
        deprecated: doc.deprecated,
        findings: doc.findings,
        provenance: doc.provenance,
        highlights,
    }
}

/// Roughly the memory `answer` holds: its structs and the text they own
/// (what the per-generation answer cache weighs it by).
pub(crate) fn heap_bytes(answer: &SearchAnswer) -> usize {
    let hits: usize = answer.hits.iter().map(hit_bytes).sum();
    let words: usize = answer
        .words
        .iter()
        .map(|w| w.len() + std::mem::size_of::<String>())
        .sum();
    std::mem::size_of::<SearchAnswer>() + hits + facet_bytes(&answer.facets) + words
}

fn hit_bytes(hit: &SearchHit) -> usize {
    std::mem::size_of::<SearchHit>()
        + hit.name.len()
        + hit.version.len()
        + hit.definition_sha256.as_ref().map_or(0, String::len)
        + hit.title.as_ref().map_or(0, String::len)
        + hit.description.len()
        + hit
            .keywords
            .iter()
            .map(|k| k.len() + std::mem::size_of::<String>())
            .sum::<usize>()
        + hit.license.as_ref().map_or(0, String::len)
        + hit.updated_at.len()
        + hit.blocked_reason.as_ref().map_or(0, String::len)
        + hit.deprecated.as_ref().map_or(0, |d| {
            d.message.len()
                + d.successor.as_ref().map_or(0, String::len)
                + d.req.as_ref().map_or(0, String::len)
        })
        + hit.highlights.name.len()
        + hit.highlights.description.len()
}

fn facet_bytes(facets: &SearchFacets) -> usize {
    [
        &facets.license,
        &facets.keyword,
        &facets.execution,
        &facets.tier,
    ]
    .iter()
    .flat_map(|f| f.0.iter())
    .map(|(value, _)| value.len() + std::mem::size_of::<(String, u64)>())
    .sum()
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use toolreg_core::{ExecutionKind, Format, Tier};

    use super::*;

    fn doc_at(updated_at: chrono::DateTime<Utc>) -> SearchDoc {
        SearchDoc {
            name: "weather".into(),
            version: "1.0.0".into(),
            definition_sha256: None,
            title: None,
            description: String::new(),
            notes: String::new(),
            keywords: vec![],
            license: None,
            format: Format::Matimo,
            execution: ExecutionKind::Http,
            tier: Tier::Verified,
            downloads: 0,
            updated_at,
            blocked: false,
            blocked_reason: None,
            deprecated: None,
            findings: 0,
            provenance: false,
        }
    }

    #[test]
    fn updated_at_is_written_as_chrono_serializes_it() {
        let whole = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let cases = [
            whole,
            whole + chrono::Duration::milliseconds(250),
            whole + chrono::Duration::microseconds(123_456),
            whole + chrono::Duration::nanoseconds(1),
        ];
        for t in cases {
            let written = hit(doc_at(t), SearchHighlights::default()).updated_at;
            assert_eq!(
                serde_json::to_value(&written).unwrap(),
                serde_json::to_value(t).unwrap()
            );
        }
        assert_eq!(
            hit(doc_at(whole), SearchHighlights::default()).updated_at,
            "2026-01-01T00:00:00Z"
        );
    }
}
