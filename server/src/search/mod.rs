//! The server's glue to the search engine (crate `toolreg-search`): the
//! engine is fed from the registry's database and run as a shared service.
//!
//! * [`StoreSource`] — the engine's [`toolreg_search::SearchSource`] over the
//!   database: the `changes` table as the change log, and per tool its listed
//!   version as the [`toolreg_search::SearchDoc`].
//! * [`SearchService`] — index + tailer as the server's shared service
//!   (`AppState::search`), started by `serve` in [`index_dir`].
//! * [`reindex`] — a rebuild from the database alone (the `reindex`
//!   subcommand, `ops::reindex`).
//!
//! The HTTP route is `controllers::search`; a [`toolreg_search::SearchError`]
//! becomes an [`crate::error::AppError`] through the one `From` impl in
//! `error.rs`.

mod service;
mod source;

pub use service::{index_dir, reindex, SearchMemory, SearchService};

/// The default of `--search-cache-mib`.
pub const DEFAULT_SEARCH_CACHE_MIB: u64 = (toolreg_search::ANSWER_CACHE_BYTES >> 20) as u64;
/// The default of `--search-records-mib`.
pub const DEFAULT_SEARCH_RECORDS_MIB: u64 = (toolreg_search::DEFAULT_RECORDS_MEMORY >> 20) as u64;
/// The default of `--index-writer-mib`.
pub const DEFAULT_INDEX_WRITER_MIB: u64 = (toolreg_search::DEFAULT_WRITER_MEMORY >> 20) as u64;
/// The default of `--stem-cache-kib`.
pub const DEFAULT_STEM_CACHE_KIB: u64 = (toolreg_search::DEFAULT_STEM_CACHE_BYTES >> 10) as u64;
/// The least `--index-writer-mib` (tantivy's writer needs 15 MB).
pub const MIN_INDEX_WRITER_MIB: u64 = (toolreg_search::MIN_WRITER_MEMORY >> 20) as u64;
/// The most `--index-writer-mib`.
pub const MAX_INDEX_WRITER_MIB: u64 = (toolreg_search::MAX_WRITER_MEMORY >> 20) as u64;
pub use source::{all_docs_on, search_doc_on, StoreSource};
