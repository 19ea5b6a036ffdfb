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

pub use service::{index_dir, reindex, SearchService};
pub use source::{all_docs_on, search_doc_on, StoreSource};
