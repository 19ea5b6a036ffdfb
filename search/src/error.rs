//! [`SearchError`], the crate's one error type.

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

    /// True when the index could not be opened because another process (or
    /// another [`crate::SearchIndex`] in this one) holds its directory.
    pub fn is_lock_failure(&self) -> bool {
        matches!(
            self,
            SearchError::Index(tantivy::TantivyError::LockFailure(..))
        )
    }
}

/// Result alias for this crate.
pub type Result<T, E = SearchError> = std::result::Result<T, E>;
