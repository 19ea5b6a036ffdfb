//! Tool search: a tantivy index of the latest usable version of every tool,
//! kept current by tailing the store's ordered change log (issue 4).
//!
//! * [`SearchDoc`] — what is indexed for one tool.
//! * [`SearchIndex`] — the index in a directory: open-or-rebuild, upsert,
//!   remove, commit, and [`SearchIndex::query`].
//! * [`SearchQuery`] / [`SearchParams`] — the raw and the validated
//!   `GET /api/v1/search` parameters; [`SearchResults`] — the answer.
//! * [`SearchSource`] and [`Tailer`] — the database side's view of the change
//!   log, and the background loop that applies it to the index;
//!   [`StoreSource`] implements it over the registry's database.
//! * [`SearchService`] — index + tailer as the server's shared service;
//!   [`route`] — `GET /api/v1/search`; [`reindex`] — the subcommand.
//!
//! The query path (issue 4, point 6: a page in well under a millisecond at
//! 100,000 tools): `table` keeps compact per-segment tables (facet values
//! of every document, hit records), `snapshot` the per-generation view of
//! them, `collector` counts, counts facets and keeps the top matches in one
//! pass, and `highlight` makes the name and snippet highlights of the
//! page's hits. `cargo bench -p toolreg-server --bench search` measures it.

mod collector;
mod doc;
mod highlight;
mod index;
mod params;
mod query;
mod results;
pub mod route;
mod schema;
mod service;
mod snapshot;
mod source;
mod table;
mod tailer;

pub use doc::SearchDoc;
pub use index::{OpenState, SearchIndex};
pub use params::{SearchParams, SearchQuery, Sort, MAX_PAGE_DEPTH, MAX_PER_PAGE, MAX_QUERY_CHARS};
pub use results::{FacetCounts, Facets, Highlights, SearchHit, SearchResults};
pub use service::{index_dir, reindex, reindex_command, start_for, SearchService};
pub use source::{all_docs_on, search_doc_on, StoreSource};
pub use tailer::{Change, SearchSource, Tailer, TailerHandle, TailerOptions};

/// Everything that can go wrong in search.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// A search parameter is invalid; the message names the parameter.
    #[error("{0}")]
    BadRequest(String),
    /// The tantivy index failed.
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    /// A tantivy directory could not be opened.
    #[error("search index directory: {0}")]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    /// Reading or writing the index directory failed.
    #[error("search index I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The change log source (the database) failed.
    #[error("search source: {0}")]
    Source(String),
    /// Search is not running on this server (yet).
    #[error("search is not available on this server right now")]
    NotRunning,
    /// A stored document could not be decoded (an index from another build).
    #[error("search index document: {0}")]
    Corrupt(String),
}

impl SearchError {
    /// A `BadRequest` naming `param`.
    pub(crate) fn bad(param: &str, message: impl std::fmt::Display) -> Self {
        SearchError::BadRequest(format!("{param}: {message}"))
    }
}

/// Result alias for this module.
pub type Result<T, E = SearchError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests;
