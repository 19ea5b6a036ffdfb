//! Opening an index: from a directory (created when missing, replaced when
//! unreadable or of another schema version) or in memory, and the lock that
//! keeps a directory to one open index at a time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tantivy::directory::Lock;
use tantivy::directory::{Directory, MmapDirectory};
use tantivy::{Index, ReloadPolicy, TantivyError};

use super::answers::AnswerCache;
#[cfg(unix)]
use super::directory::IndexDirectory;
use super::writer::WriterSlot;
use crate::collector::{merge_top, PageCollector};
use crate::schema::{self, Fields, SCHEMA_VERSION};
use crate::snapshot::TableCache;
use crate::stems::{StemCache, DEFAULT_STEM_CACHE_BYTES};
use crate::SearchIndex;
use crate::{SearchError, SearchSort};

/// The lock file an index opened from a directory holds while it is open.
pub(crate) const PROCESS_LOCK: &str = ".toolreg-index.lock";

/// What [`SearchIndex::open`] found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenState {
    /// An existing, readable index of this schema was opened.
    Opened,
    /// There was no index; an empty one was created.
    Created,
    /// The index was unreadable or of another schema version; it was deleted
    /// and an empty one created. The reason says what was wrong.
    Rebuilt { reason: String },
}

/// What the index records with each commit (tantivy commit payload).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(super) struct Payload {
    pub(super) schema: u32,
    /// The change-log position everything up to which is applied.
    pub(super) seq: Option<i64>,
}

fn lock_error(e: &TantivyError) -> bool {
    matches!(e, TantivyError::LockFailure(..))
}

impl SearchIndex {
    /// Opens the index in `dir`, creating it if missing and replacing it if it
    /// cannot be read. Fails only if the directory can't be written, or if
    /// another process holds the index's writer lock.
    pub fn open(dir: &Path) -> Result<Self, SearchError> {
        std::fs::create_dir_all(dir)?;
        let exists = Index::exists(&MmapDirectory::open(dir)?).unwrap_or(false);
        if !exists {
            return Self::create(dir, OpenState::Created);
        }
        match Self::try_open(dir) {
            Ok(index) => Ok(index),
            Err(SearchError::Index(e)) if lock_error(&e) => Err(SearchError::Index(e)),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "search index unreadable; rebuilding it");
                Self::wipe(dir)?;
                Self::create(
                    dir,
                    OpenState::Rebuilt {
                        reason: e.to_string(),
                    },
                )
            }
        }
    }

    /// An index held in memory (tests, benchmarks).
    pub fn in_memory() -> Result<Self, SearchError> {
        let (schema, fields) = schema::build();
        let index = Index::create_in_ram(schema);
        Self::finish(None, index, fields, OpenState::Created, None)
    }

    fn wipe(dir: &Path) -> Result<(), SearchError> {
        if dir.is_dir() {
            std::fs::remove_dir_all(dir)?;
        } else if dir.exists() {
            std::fs::remove_file(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        Ok(())
    }

    fn create(dir: &Path, state: OpenState) -> Result<Self, SearchError> {
        let (schema, fields) = schema::build();
        let index = match Self::create_in(dir, schema.clone()) {
            Ok(index) => index,
            // Leftovers that are not an index (e.g. a half-written meta.json).
            Err(TantivyError::IndexAlreadyExists) => {
                Self::wipe(dir)?;
                Self::create_in(dir, schema)?
            }
            Err(e) => return Err(e.into()),
        };
        Self::finish(Some(dir.to_path_buf()), index, fields, state, None)
    }

    /// A new index in `dir`, read through [`IndexDirectory`] on Unix.
    fn create_in(dir: &Path, schema: tantivy::schema::Schema) -> tantivy::Result<Index> {
        #[cfg(unix)]
        {
            let directory = IndexDirectory::open(dir)?;
            if Index::exists(&directory)? {
                return Err(TantivyError::IndexAlreadyExists);
            }
            Index::create(directory, schema, tantivy::IndexSettings::default())
        }
        #[cfg(not(unix))]
        Index::create_in_dir(dir, schema)
    }

    fn try_open(dir: &Path) -> Result<Self, SearchError> {
        #[cfg(unix)]
        let index = Index::open(IndexDirectory::open(dir)?)?;
        #[cfg(not(unix))]
        let index = Index::open_in_dir(dir)?;
        let (schema, fields) = schema::build();
        if index.schema() != schema {
            return Err(SearchError::Corrupt("the index has another schema".into()));
        }
        let metas = index.load_metas()?;
        let payload: Payload = match metas.payload.as_deref() {
            Some(p) => serde_json::from_str(p)
                .map_err(|e| SearchError::Corrupt(format!("commit payload: {e}")))?,
            None => Payload {
                schema: SCHEMA_VERSION,
                seq: None,
            },
        };
        if payload.schema != SCHEMA_VERSION {
            return Err(SearchError::Corrupt(format!(
                "schema version {} (this build writes {SCHEMA_VERSION})",
                payload.schema
            )));
        }
        let opened = Self::finish(
            Some(dir.to_path_buf()),
            index,
            fields,
            OpenState::Opened,
            payload.seq,
        )?;
        opened.check_readable()?;
        Ok(opened)
    }

    fn finish(
        dir: Option<PathBuf>,
        index: Index,
        fields: Fields,
        state: OpenState,
        seq: Option<i64>,
    ) -> Result<Self, SearchError> {
        let stems = Arc::new(StemCache::new(DEFAULT_STEM_CACHE_BYTES));
        schema::register_tokenizers(&index, stems.clone())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        // Exclusive use of the directory does not depend on the writer's
        // lock (the writer comes and goes): the open index holds a lock of
        // its own for its lifetime.
        let lock = match dir {
            Some(_) => Some(
                index
                    .directory()
                    .acquire_lock(&Lock {
                        filepath: PathBuf::from(PROCESS_LOCK),
                        is_blocking: false,
                    })
                    .map_err(|e| {
                        TantivyError::LockFailure(
                            e,
                            Some("another process has this search index open".into()),
                        )
                    })?,
            ),
            None => None,
        };
        Ok(SearchIndex {
            dir,
            index,
            fields,
            reader,
            writer: Mutex::new(WriterSlot::default()),
            _lock: lock,
            state,
            seq: Mutex::new(seq),
            tables: TableCache::default(),
            snapshot: Mutex::new(None),
            answers: AnswerCache::default(),
            writer_memory: std::sync::atomic::AtomicUsize::new(super::DEFAULT_WRITER_MEMORY),
            stems,
        })
    }

    /// Reads every segment's postings, fast fields and one stored document,
    /// so that a damaged index is detected at open rather than at query time.
    fn check_readable(&self) -> Result<(), SearchError> {
        let searcher = self.reader.searcher();
        let snapshot = self.snapshot(&searcher)?;
        let pages = searcher.search(
            &tantivy::query::AllQuery,
            &PageCollector {
                tables: Arc::new(snapshot.tables.clone()),
                sort: SearchSort::Name,
                k: 1,
                facets: true,
            },
        )?;
        let count: u64 = pages.iter().map(|p| p.count).sum();
        let top = merge_top(&pages, 0, 1, |addr| {
            self.load(&searcher, addr).map(|d| d.name)
        })?;
        if let Some(addr) = top.first() {
            self.load(&searcher, *addr)?;
        } else if count > 0 {
            return Err(SearchError::Corrupt("documents without a name".into()));
        }
        Ok(())
    }
}
