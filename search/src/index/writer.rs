//! The writer's lifetime and the changes made through it: staging upserts
//! and removals, committing them with their change-log position, rolling
//! them back.
//!
//! tantivy's `IndexWriter` holds memory for as long as it lives (a document
//! queue preallocated at creation and again at every commit, plus its
//! indexing and merge threads), most of a small registry's heap while
//! nothing is being indexed. So the writer is created when the first change
//! is staged and released by [`SearchIndex::release_writer`] (the tailer
//! calls it after a few idle seconds), once its merges are done. Exclusive
//! use of the directory does not depend on the writer's lock: the open index
//! holds a lock of its own ([`super::open::PROCESS_LOCK`]), so a second
//! server or `reindex` on the same directory is refused even while there is
//! no writer.

use std::collections::HashSet;

use tantivy::index::SegmentId;
use tantivy::indexer::IndexWriterOptions;
use tantivy::{IndexWriter, Term};

use super::open::Payload;
use crate::schema::SCHEMA_VERSION;
use crate::SearchIndex;
use crate::{SearchDoc, SearchError};

/// Memory the index writer may use before it flushes a segment, by default
/// ([`SearchIndex::set_writer_memory`] changes it). Its arena grows as
/// documents are staged, up to this.
pub const DEFAULT_WRITER_MEMORY: usize = 48 * 1024 * 1024;
/// The least memory budget tantivy's writer accepts (its
/// `MEMORY_BUDGET_NUM_BYTES_MIN`, 15 MB, rounded up to whole MiB).
pub const MIN_WRITER_MEMORY: usize = 15 * 1024 * 1024;
/// The largest memory budget allowed here (tantivy's limit is just under
/// 4 GiB).
pub const MAX_WRITER_MEMORY: usize = 4000 * 1024 * 1024;

/// The writer, while there is one.
#[derive(Default)]
pub(super) struct WriterSlot {
    writer: Option<IndexWriter>,
    /// Changes were staged since the last commit or rollback.
    staged: bool,
}

impl SearchIndex {
    fn slot(&self) -> std::sync::MutexGuard<'_, WriterSlot> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the writer, creating it if there is none. `stage` says
    /// whether `f` stages changes (then the writer is kept until a commit
    /// or rollback).
    fn with_writer<T>(
        &self,
        stage: bool,
        f: impl FnOnce(&mut IndexWriter) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let mut slot = self.slot();
        let writer = match &mut slot.writer {
            Some(writer) => writer,
            none => none.insert(
                self.index.writer_with_options(
                    IndexWriterOptions::builder()
                        .memory_budget_per_thread(
                            self.writer_memory
                                .load(std::sync::atomic::Ordering::Relaxed)
                                .clamp(MIN_WRITER_MEMORY, MAX_WRITER_MEMORY),
                        )
                        .num_worker_threads(1)
                        .num_merge_threads(1)
                        .build(),
                )?,
            ),
        };
        let out = f(writer)?;
        if stage {
            slot.staged = true;
        }
        Ok(out)
    }

    /// Releases the writer and the memory it holds, after waiting for its
    /// merges, unless changes are staged. Returns whether there was one to
    /// release. The next staged change creates a new writer.
    pub fn release_writer(&self) -> Result<bool, SearchError> {
        let writer = {
            let mut slot = self.slot();
            if slot.staged {
                return Ok(false);
            }
            match slot.writer.take() {
                Some(writer) => writer,
                None => return Ok(false),
            }
        };
        writer.wait_merging_threads()?;
        Ok(true)
    }

    /// Sets the memory budget of the index writer, in bytes (clamped to
    /// what tantivy accepts, [`MIN_WRITER_MEMORY`]..=[`MAX_WRITER_MEMORY`]);
    /// the next writer created uses it.
    pub fn set_writer_memory(&self, bytes: usize) {
        self.writer_memory
            .store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a writer exists now (tests).
    pub fn has_writer(&self) -> bool {
        self.slot().writer.is_some()
    }

    /// Stages `doc`, replacing any earlier document of the same tool.
    /// Visible after [`commit`](Self::commit).
    pub fn upsert(&self, doc: &SearchDoc) -> Result<(), SearchError> {
        let d = super::document::build(&self.fields, doc)?;
        self.with_writer(true, |writer| {
            writer.delete_term(Term::from_field_text(self.fields.name, &doc.name));
            writer.add_document(d)?;
            Ok(())
        })
    }

    /// Stages the removal of a tool. Visible after [`commit`](Self::commit).
    pub fn remove(&self, name: &str) -> Result<(), SearchError> {
        self.with_writer(true, |writer| {
            writer.delete_term(Term::from_field_text(self.fields.name, name));
            Ok(())
        })
    }

    /// Stages the removal of every tool (before a full rebuild).
    pub fn clear(&self) -> Result<(), SearchError> {
        self.with_writer(true, |writer| {
            writer.delete_all_documents()?;
            Ok(())
        })
    }

    /// Commits staged changes and makes them searchable now.
    pub fn commit(&self) -> Result<(), SearchError> {
        let seq = self.applied_seq();
        self.commit_at(seq)
    }

    /// Commits staged changes together with the change-log position they
    /// bring the index up to (atomically: both or neither are on disk).
    pub fn commit_at(&self, seq: Option<i64>) -> Result<(), SearchError> {
        let payload = serde_json::to_string(&Payload {
            schema: SCHEMA_VERSION,
            seq,
        })
        .map_err(|e| SearchError::Corrupt(e.to_string()))?;
        self.with_writer(false, |writer| {
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload(&payload);
            prepared.commit()?;
            Ok(())
        })?;
        self.slot().staged = false;
        *self.seq.lock().unwrap_or_else(|e| e.into_inner()) = seq;
        self.reader.reload()?;
        self.prune_tables();
        Ok(())
    }

    /// Discards staged, uncommitted changes.
    pub fn rollback(&self) -> Result<(), SearchError> {
        let mut slot = self.slot();
        if let Some(writer) = &mut slot.writer {
            writer.rollback()?;
        }
        slot.staged = false;
        Ok(())
    }

    /// Drops the tables of segments the current searcher no longer uses.
    fn prune_tables(&self) {
        let live: HashSet<SegmentId> = self
            .reader
            .searcher()
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .collect();
        self.tables.retain(&live);
    }
}
