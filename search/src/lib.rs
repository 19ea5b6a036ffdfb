//! toolreg-search: the registry's tool search — a tantivy index of the
//! latest usable version of every tool, kept current by following an ordered
//! change log. The crate knows nothing of HTTP or of the database: the server
//! feeds it through [`SearchSource`] and serves [`SearchIndex::query`].
//!
//! * [`SearchDoc`] — what is indexed for one tool.
//! * [`SearchIndex`] — the index in a directory: open-or-rebuild, upsert,
//!   remove, commit, and [`SearchIndex::query`].
//! * [`SearchRequest`] / [`SearchParams`] — the raw and the validated
//!   `GET /api/v1/search` parameters; the answer is the API's
//!   [`toolreg_api::SearchAnswer`], built by the engine directly.
//! * [`SearchSource`] and [`Tailer`] — the database side's view of the change
//!   log ([`IndexChange`]s), and the background loop that applies it to the
//!   index.
//!
//! The query path is built to answer a page in well under a millisecond at
//! 100,000 tools: `table` keeps compact per-segment tables (facet values of
//! every document, hit records), `snapshot` the per-generation view of them,
//! `collector` counts, counts facets and keeps the top matches in one pass,
//! and `highlight` makes the name and snippet highlights of the page's hits.
//! `cargo bench -p toolreg-search --bench search` measures it.

mod collector;
mod doc;
mod error;
mod highlight;
mod index;
mod params;
#[cfg(unix)]
mod positioned;
mod query;
mod results;
mod schema;
mod snapshot;
mod stems;
mod stopwords;
mod table;
mod tailer;
mod words;

pub use doc::SearchDoc;
pub use error::{Result, SearchError};
pub use index::{
    OpenState, SearchIndex, ANSWER_CACHE_BYTES, DEFAULT_RECORDS_MEMORY, DEFAULT_STEM_CACHE_BYTES,
    DEFAULT_WRITER_MEMORY, MAX_WRITER_MEMORY, MIN_WRITER_MEMORY,
};
pub use params::{
    FindingsFilter, SearchParams, SearchRequest, SearchSort, MAX_PAGE_DEPTH, MAX_PER_PAGE,
};
pub use tailer::{IndexChange, SearchSource, Tailer, TailerHandle, TailerOptions};
pub use words::{MAX_ANALYZED_CHARS, MAX_TERMS};

#[cfg(test)]
mod tests;
