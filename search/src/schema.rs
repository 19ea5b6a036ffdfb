//! The index schema and its tokenizers: which fields exist, how each is
//! analyzed, and which are fast fields for sorting and facets.

use std::sync::Arc;

use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};
use tantivy::tokenizer::{
    LowerCaser, NgramTokenizer, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
};
use tantivy::Index;

use crate::stems::{CachedStemmer, StemCache};

/// Words of names, lowercased, split on anything that is not a letter or digit.
pub(crate) const WORDS: &str = "toolreg_words";
/// Edge n-grams (prefixes of 2..=20 chars) of each name word.
pub(crate) const PREFIX: &str = "toolreg_prefix";
/// English text: lowercased and stemmed (tantivy's built-in `en_stem`, its
/// stems remembered by a [`StemCache`]).
pub(crate) const STEM: &str = "en_stem";

/// Shortest and longest prefix indexed for search-as-you-type.
pub(crate) const PREFIX_MIN: usize = 2;
pub(crate) const PREFIX_MAX: usize = 20;

/// Bump when the schema, the analysis or the stored form changes: an index
/// written by another schema version is rebuilt at open. (2: stored
/// documents without their usage notes; 3: the findings filter field and
/// the findings count in stored documents, the definition fingerprint; 4:
/// the provenance filter field and flag; 5: the `text` field of
/// natural-language queries, text fields without positions; 6: the
/// `deprecated` filter and rank column, and the deprecation in stored
/// documents.)
pub(crate) const SCHEMA_VERSION: u32 = 6;

/// The fields of the index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// Registry name, exact (raw); the document's identity, exact-name boost, sort.
    pub name: Field,
    /// Registry name split into words on `-`.
    pub name_words: Field,
    /// Edge n-grams of each name word.
    pub name_prefix: Field,
    pub title: Field,
    /// Keywords as text (stemmed) for matching.
    pub keywords_text: Field,
    /// Keywords lowercased and exact, for the filter and facet.
    pub keyword: Field,
    /// Description and usage notes.
    pub description: Field,
    /// Everything searchable as one stemmed text — name words, title,
    /// keywords, description and notes: what natural-language queries are
    /// scored on (frequencies only; no phrase is ever asked for).
    pub text: Field,
    /// License as published (facet).
    pub license: Field,
    /// License lowercased (filter, case-insensitive).
    pub license_key: Field,
    pub format: Field,
    pub execution: Field,
    pub tier: Field,
    /// `none` or `flagged`: whether the version carries lint findings.
    pub findings: Field,
    /// `true` or `false`: whether the version carries CI provenance.
    pub provenance: Field,
    /// 1 when the version is deprecated, else 0: the filter, and the column
    /// that ranks deprecated tools below equal matches.
    pub deprecated: Field,
    pub downloads: Field,
    /// Microseconds since the Unix epoch.
    pub updated_at: Field,
    /// The [`crate::SearchDoc`] as JSON, for rendering hits.
    pub stored: Field,
}

fn text(tokenizer: &str, record: IndexRecordOption) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(record),
    )
}

pub(crate) fn build() -> (Schema, Fields) {
    let mut b = Schema::builder();
    // Frequencies for BM25, no positions: no query asks for a phrase, and
    // snippets find their words by tokenizing the description again.
    let freqs = IndexRecordOption::WithFreqs;
    let fields = Fields {
        name: b.add_text_field("name", STRING | FAST),
        name_words: b.add_text_field("name_words", text(WORDS, freqs)),
        name_prefix: b.add_text_field("name_prefix", text(PREFIX, IndexRecordOption::Basic)),
        title: b.add_text_field("title", text(STEM, freqs)),
        keywords_text: b.add_text_field("keywords_text", text(STEM, freqs)),
        keyword: b.add_text_field("keyword", STRING | FAST),
        description: b.add_text_field("description", text(STEM, freqs)),
        text: b.add_text_field("text", text(STEM, freqs)),
        license: b.add_text_field("license", STRING | FAST),
        license_key: b.add_text_field("license_key", STRING),
        format: b.add_text_field("format", STRING | FAST),
        execution: b.add_text_field("execution", STRING | FAST),
        tier: b.add_text_field("tier", STRING | FAST),
        findings: b.add_text_field("findings", STRING),
        provenance: b.add_text_field("provenance", STRING),
        deprecated: b.add_u64_field("deprecated", FAST | INDEXED),
        downloads: b.add_u64_field("downloads", FAST),
        updated_at: b.add_i64_field("updated_at", FAST),
        stored: b.add_text_field("doc", STORED),
    };
    (b.build(), fields)
}

/// Registers the custom tokenizers on an index (needed after every open),
/// `en_stem` through `stems`.
pub(crate) fn register_tokenizers(index: &Index, stems: Arc<StemCache>) -> tantivy::Result<()> {
    let words = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .build();
    let prefix = TextAnalyzer::builder(NgramTokenizer::prefix_only(PREFIX_MIN, PREFIX_MAX)?)
        .filter(LowerCaser)
        .build();
    let stemmed = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(CachedStemmer(stems))
        .build();
    index.tokenizers().register(WORDS, words);
    index.tokenizers().register(PREFIX, prefix);
    index.tokenizers().register(STEM, stemmed);
    Ok(())
}

/// The tokens of `text` under the analyzer `name` (registered on `index`).
pub(crate) fn tokens(index: &Index, name: &str, text: &str) -> Vec<String> {
    let Some(mut analyzer) = index.tokenizers().get(name) else {
        return Vec::new();
    };
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}
