//! Document building: a [`SearchDoc`] as the tantivy document the schema
//! indexes — the name three ways (exact, words, word prefixes), keywords as
//! text and as exact facet values, description plus usage notes, all of
//! these as one text, the facet, filter and sort fields, and the stored form
//! hits are rendered from.

use tantivy::TantivyDocument;

use crate::schema::Fields;
use crate::{FindingsFilter, SearchDoc, SearchError};

/// The tantivy document of `doc`.
pub(super) fn build(f: &Fields, doc: &SearchDoc) -> Result<TantivyDocument, SearchError> {
    let mut d = TantivyDocument::new();
    d.add_text(f.name, &doc.name);
    d.add_text(f.name_words, &doc.name);
    d.add_text(f.text, &doc.name);
    for word in doc
        .name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        d.add_text(f.name_prefix, word);
    }
    if let Some(title) = &doc.title {
        d.add_text(f.title, title);
        d.add_text(f.text, title);
    }
    for k in &doc.keywords {
        d.add_text(f.keywords_text, k);
        d.add_text(f.text, k);
        d.add_text(f.keyword, k.to_lowercase());
    }
    d.add_text(f.text, &doc.description);
    if doc.notes.is_empty() {
        d.add_text(f.description, &doc.description);
    } else {
        d.add_text(f.description, format!("{}\n{}", doc.description, doc.notes));
        d.add_text(f.text, &doc.notes);
    }
    if let Some(license) = &doc.license {
        d.add_text(f.license, license);
        d.add_text(f.license_key, license.to_lowercase());
    }
    d.add_text(f.format, doc.format.as_str());
    d.add_text(f.execution, doc.execution.as_str());
    d.add_text(f.tier, doc.tier.as_str());
    d.add_text(f.findings, FindingsFilter::of(doc.findings).as_str());
    d.add_text(f.provenance, if doc.provenance { "true" } else { "false" });
    d.add_u64(f.deprecated, u64::from(doc.deprecated.is_some()));
    d.add_u64(f.downloads, doc.downloads);
    d.add_i64(f.updated_at, doc.updated_at.timestamp_micros());
    // The stored form is what hits are rendered from. The notes (up to
    // 8 KiB of README per tool) are only searched, never shown, so they are
    // left out of it: they would make the doc store many times larger, and
    // the whole store is read (and, being mapped, resident) when the hit
    // tables are built.
    let shown = SearchDoc {
        notes: String::new(),
        ..doc.clone()
    };
    let json = serde_json::to_string(&shown).map_err(|e| SearchError::Corrupt(e.to_string()))?;
    d.add_text(f.stored, json);
    Ok(d)
}
