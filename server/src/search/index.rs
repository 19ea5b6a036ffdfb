//! [`SearchIndex`]: the tantivy index in its directory. Opening never fails
//! because of what is on disk: a missing, corrupt or outdated index is
//! replaced by an empty one and [`SearchIndex::needs_rebuild`] says so.
//!
//! A query ([`SearchIndex::query`]) is one pass of a [`PageCollector`] over
//! the matches (total, facet counts and the top `offset + limit`), then the
//! page's hits are rendered from the segments' in-memory hit records (see
//! [`super::table`]) with snippets for those hits only. The tables live in a
//! per-generation [`Snapshot`]; [`SearchIndex::warm`] builds them ahead of
//! the first query (the tailer calls it after each commit). Whole answers
//! are also remembered per generation (the answer cache).
//!
//! # The writer
//!
//! tantivy's `IndexWriter` holds memory for as long as it lives — its
//! document queue alone preallocates 10,000 slots (~5 MB, written at
//! creation and again at every commit), plus its indexing and merge threads
//! — which was a quarter of a small registry's heap while nothing was being
//! indexed. So the writer is created when the first change is staged and
//! released by [`SearchIndex::release_writer`] (the tailer calls it after a
//! few idle seconds), once its merges are done. Exclusive use of the
//! directory does not depend on the writer's lock: an index opened from a
//! directory holds a lock of its own ([`PROCESS_LOCK`]) for its lifetime, so
//! a second server or `reindex` on the same directory is refused as before.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::directory::{Directory, DirectoryLock, Lock, MmapDirectory};
use tantivy::index::SegmentId;
use tantivy::indexer::IndexWriterOptions;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument,
    TantivyError, Term,
};

use super::collector::{merge_top, PageCollector, SegmentPage};
use super::highlight::Highlighter;
use super::params::{SearchParams, Sort};
use super::query::{self, Match, QueryWords};
use super::results::{Highlights, SearchHit, SearchResults};
use super::schema::{self, Fields, SCHEMA_VERSION};
use super::snapshot::{Snapshot, TableCache};
use super::{SearchDoc, SearchError};

/// Memory the index writer may use before it flushes a segment.
const WRITER_MEMORY: usize = 50_000_000;
/// The lock file an index opened from a directory holds while it is open.
pub(crate) const PROCESS_LOCK: &str = ".toolreg-index.lock";
/// Most answers kept per searcher generation.
const DEFAULT_RESULT_CACHE: usize = 1024;
/// Most memory the kept answers of a generation may take, by
/// [`SearchResults::heap_bytes`]. A count alone did not bound it: 1,024
/// distinct queries at `per_page=100` with long descriptions and their
/// highlighted copies could hold hundreds of megabytes.
pub(crate) const RESULT_CACHE_BYTES: usize = 8 * 1024 * 1024;

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
struct Payload {
    schema: u32,
    /// The change-log position everything up to which is applied.
    seq: Option<i64>,
}

/// The search index of one server replica.
pub struct SearchIndex {
    dir: Option<PathBuf>,
    index: Index,
    fields: Fields,
    reader: IndexReader,
    writer: Mutex<WriterSlot>,
    /// This process's hold on the directory (`None` in memory).
    _lock: Option<DirectoryLock>,
    state: OpenState,
    seq: Mutex<Option<i64>>,
    /// Facet ordinals and hit records of each segment (segments are
    /// immutable, so a table is never stale; tables of merged-away segments
    /// are dropped at commit).
    tables: TableCache,
    /// The query-side state of the current searcher generation.
    snapshot: Mutex<Option<Arc<Snapshot>>>,
    /// Whole answers of the current searcher generation, by parameters
    /// (repeated queries such as the front page cost a lookup).
    results: Mutex<ResultCache>,
}

/// The writer, while there is one.
#[derive(Default)]
struct WriterSlot {
    writer: Option<IndexWriter>,
    /// Changes were staged since the last commit or rollback.
    staged: bool,
}

/// The answers of one searcher generation. When the next answer would
/// exceed the count or the byte budget, the cache starts over.
#[derive(Default)]
struct ResultCache {
    generation: u64,
    capacity: usize,
    /// [`SearchResults::heap_bytes`] of the entries plus their keys.
    bytes: usize,
    entries: HashMap<String, SearchResults>,
}

impl ResultCache {
    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("dir", &self.dir)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
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
        let index = match Index::create_in_dir(dir, schema.clone()) {
            Ok(index) => index,
            // Leftovers that are not an index (e.g. a half-written meta.json).
            Err(TantivyError::IndexAlreadyExists) => {
                Self::wipe(dir)?;
                Index::create_in_dir(dir, schema)?
            }
            Err(e) => return Err(e.into()),
        };
        Self::finish(Some(dir.to_path_buf()), index, fields, state, None)
    }

    fn try_open(dir: &Path) -> Result<Self, SearchError> {
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
        schema::register_tokenizers(&index)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
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
            results: Mutex::new(ResultCache {
                capacity: DEFAULT_RESULT_CACHE,
                ..ResultCache::default()
            }),
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
                sort: Sort::Name,
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

    /// What was found on disk at open.
    pub fn state(&self) -> &OpenState {
        &self.state
    }

    /// True when the index must be rebuilt from the database: it was just
    /// created or replaced, or it has never recorded a change-log position.
    pub fn needs_rebuild(&self) -> bool {
        self.state != OpenState::Opened || self.applied_seq().is_none()
    }

    /// The directory of the index (`None` in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The change-log position recorded by the last commit.
    pub fn applied_seq(&self) -> Option<i64> {
        *self.seq.lock().unwrap_or_else(|e| e.into_inner())
    }

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
                        .memory_budget_per_thread(WRITER_MEMORY)
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

    /// Whether a writer exists now (tests).
    pub fn has_writer(&self) -> bool {
        self.slot().writer.is_some()
    }

    fn document(&self, doc: &SearchDoc) -> Result<TantivyDocument, SearchError> {
        let f = &self.fields;
        let mut d = TantivyDocument::new();
        d.add_text(f.name, &doc.name);
        d.add_text(f.name_words, &doc.name);
        for word in doc
            .name
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            d.add_text(f.name_prefix, word);
        }
        if let Some(title) = &doc.title {
            d.add_text(f.title, title);
        }
        for k in &doc.keywords {
            d.add_text(f.keywords_text, k);
            d.add_text(f.keyword, k.to_lowercase());
        }
        if doc.notes.is_empty() {
            d.add_text(f.description, &doc.description);
        } else {
            d.add_text(f.description, format!("{}\n{}", doc.description, doc.notes));
        }
        if let Some(license) = &doc.license {
            d.add_text(f.license, license);
            d.add_text(f.license_key, license.to_lowercase());
        }
        d.add_text(f.format, doc.format.as_str());
        d.add_text(f.execution, doc.execution.as_str());
        d.add_text(f.tier, doc.tier.as_str());
        d.add_u64(f.downloads, doc.downloads);
        d.add_i64(f.updated_at, doc.updated_at.timestamp_micros());
        // The stored form is what hits are rendered from; the notes (up to
        // 8 KiB of README per tool) are only searched, never shown, and
        // kept in the doc store they made it ten times larger (a 100,000-tool
        // registry: 193 MB of store, all of it read — and resident, being
        // mapped — when the hit tables are built).
        let shown = SearchDoc {
            notes: String::new(),
            ..doc.clone()
        };
        let json =
            serde_json::to_string(&shown).map_err(|e| SearchError::Corrupt(e.to_string()))?;
        d.add_text(f.stored, json);
        Ok(d)
    }

    /// Stages `doc`, replacing any earlier document of the same tool.
    /// Visible after [`commit`](Self::commit).
    pub fn upsert(&self, doc: &SearchDoc) -> Result<(), SearchError> {
        let d = self.document(doc)?;
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

    /// The indexed download count of every tool, by name (from fast fields).
    pub fn downloads_by_name(&self) -> Result<HashMap<String, u64>, SearchError> {
        let searcher = self.reader.searcher();
        let mut out = HashMap::new();
        let mut name = String::new();
        for segment in searcher.segment_readers() {
            let fast = segment.fast_fields();
            let (Some(names), downloads) = (fast.str("name")?, fast.u64("downloads")?) else {
                continue;
            };
            let alive = segment.alive_bitset();
            for doc in 0..segment.max_doc() {
                if alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                let Some(ord) = names.term_ords(doc).next() else {
                    continue;
                };
                name.clear();
                if names.ord_to_str(ord, &mut name)? {
                    out.insert(name.clone(), downloads.first(doc).unwrap_or(0));
                }
            }
        }
        Ok(out)
    }

    /// How many tools are searchable.
    pub fn num_tools(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The indexed document of one tool, if any.
    pub fn get(&self, name: &str) -> Result<Option<SearchDoc>, SearchError> {
        let searcher = self.reader.searcher();
        let q = TermQuery::new(
            Term::from_field_text(self.fields.name, name),
            IndexRecordOption::Basic,
        );
        let top = searcher.search(&q, &TopDocs::with_limit(1).order_by_score())?;
        match top.first() {
            Some((_, addr)) => Ok(Some(self.load(&searcher, *addr)?)),
            None => Ok(None),
        }
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

    /// The snapshot of `searcher`'s generation (built on first use).
    fn snapshot(&self, searcher: &Searcher) -> Result<Arc<Snapshot>, SearchError> {
        let generation = searcher.generation().generation_id();
        {
            let current = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = current.as_ref().filter(|s| s.generation == generation) {
                return Ok(s.clone());
            }
        }
        let built = Arc::new(Snapshot::build(searcher, &self.tables)?);
        let mut current = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if current.as_ref().is_none_or(|s| s.generation < generation) {
            *current = Some(built.clone());
        }
        Ok(built)
    }

    /// Builds the current generation's tables, hit records included, so
    /// that the first queries after a commit or a merge do not wait for
    /// them. The tailer calls it after each commit.
    pub fn warm(&self) -> Result<(), SearchError> {
        let searcher = self.reader.searcher();
        let snapshot = self.snapshot(&searcher)?;
        for (segment, table) in searcher.segment_readers().iter().zip(&snapshot.tables) {
            if !table.has_records() {
                table.records(segment, &self.fields)?;
            }
        }
        Ok(())
    }

    /// Heap memory of the in-memory search tables (facet ordinals, facet
    /// values and hit records of every live segment).
    pub fn table_bytes(&self) -> usize {
        self.tables.heap_bytes()
    }

    /// The document at `addr` as a hit shows it: from the segment's hit
    /// record, or from the doc store when the record leaves it out.
    fn hit_doc(
        &self,
        searcher: &Searcher,
        snapshot: &Snapshot,
        addr: DocAddress,
    ) -> Result<SearchDoc, SearchError> {
        let segment = searcher.segment_reader(addr.segment_ord);
        if let Some(table) = snapshot.tables.get(addr.segment_ord as usize) {
            if let Some(doc) = table.records(segment, &self.fields)?.doc(addr.doc_id)? {
                return Ok(doc);
            }
        }
        self.load(searcher, addr)
    }

    /// The registry name of the document at `addr`.
    fn hit_name(
        &self,
        searcher: &Searcher,
        snapshot: &Snapshot,
        addr: DocAddress,
    ) -> Result<String, SearchError> {
        let segment = searcher.segment_reader(addr.segment_ord);
        match snapshot.tables.get(addr.segment_ord as usize) {
            Some(table) => Ok(table
                .records(segment, &self.fields)?
                .name(addr.doc_id)?
                .to_string()),
            None => self.load(searcher, addr).map(|d| d.name),
        }
    }

    fn load(&self, searcher: &Searcher, addr: DocAddress) -> Result<SearchDoc, SearchError> {
        let d: TantivyDocument = searcher.doc(addr)?;
        let json = d
            .get_first(self.fields.stored)
            .and_then(|v| v.as_str())
            .ok_or_else(|| SearchError::Corrupt("a document without its stored form".into()))?;
        serde_json::from_str(json).map_err(|e| SearchError::Corrupt(e.to_string()))
    }

    /// Sets how many answers are remembered until the index changes
    /// (0 turns the cache off; the default is 1024).
    pub fn set_result_cache(&self, capacity: usize) {
        let mut cache = self.results.lock().unwrap_or_else(|e| e.into_inner());
        cache.capacity = capacity;
        cache.clear();
    }

    /// The answers kept for the current generation, and their bytes.
    #[cfg(test)]
    pub(crate) fn result_cache_usage(&self) -> (usize, usize) {
        let cache = self.results.lock().unwrap_or_else(|e| e.into_inner());
        (cache.entries.len(), cache.bytes)
    }

    /// Runs a search. Parameters are validated again here; a bad one is
    /// [`SearchError::BadRequest`] naming it.
    pub fn query(&self, params: &SearchParams) -> Result<SearchResults, SearchError> {
        params.validate()?;
        let searcher = self.reader.searcher();
        let generation = searcher.generation().generation_id();
        let key = format!("{params:?}");
        {
            let mut cache = self.results.lock().unwrap_or_else(|e| e.into_inner());
            if cache.generation != generation {
                cache.generation = generation;
                cache.clear();
            }
            if let Some(hit) = cache.entries.get(&key) {
                return Ok(hit.clone());
            }
        }
        let results = self.run_query(&searcher, params)?;
        let mut cache = self.results.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = key.len() + results.heap_bytes();
        if cache.generation == generation && cache.capacity > 0 && bytes <= RESULT_CACHE_BYTES {
            if cache.entries.len() >= cache.capacity || cache.bytes + bytes > RESULT_CACHE_BYTES {
                cache.clear();
            }
            if cache.entries.insert(key, results.clone()).is_none() {
                cache.bytes += bytes;
            }
        }
        Ok(results)
    }

    fn run_query(
        &self,
        searcher: &Searcher,
        params: &SearchParams,
    ) -> Result<SearchResults, SearchError> {
        let snapshot = self.snapshot(searcher)?;
        let mut words = QueryWords::analyze(&self.index, &params.q)?;
        words.mark_known(searcher, &self.fields)?;
        // Without words or filters every tool matches: the facets are the
        // generation's, counted once.
        let everything = words.is_empty() && params.no_filters();
        let offset = (params.page - 1) * params.per_page;
        let collector = PageCollector {
            tables: Arc::new(snapshot.tables.clone()),
            sort: params.sort,
            k: offset + params.per_page,
            facets: !everything,
        };
        let mut query = query::build(&self.fields, params, &words, Match::All);
        let mut pages: Vec<SegmentPage> = searcher.search(&*query, &collector)?;
        if words.words.len() > 1 && pages.iter().all(|p| p.count == 0) {
            query = query::build(&self.fields, params, &words, Match::Any);
            pages = searcher.search(&*query, &collector)?;
        }
        let total: u64 = pages.iter().map(|p| p.count).sum();
        let facets = if everything {
            snapshot.everything(searcher)
        } else {
            snapshot.facets(pages.iter().map(|p| (p.segment_ord as usize, &p.counts)))
        };
        let addrs = merge_top(&pages, offset, params.per_page, |addr| {
            self.hit_name(searcher, &snapshot, addr)
        })?;

        let mut hits = Vec::with_capacity(addrs.len());
        if !addrs.is_empty() {
            let mut highlighter =
                Highlighter::new(searcher, &*query, self.fields.description, &words)?;
            for addr in addrs {
                let doc = self.hit_doc(searcher, &snapshot, addr)?;
                let highlights = highlighter.highlights(&doc);
                hits.push(hit(doc, highlights));
            }
        }
        Ok(SearchResults {
            total,
            page: params.page,
            per_page: params.per_page,
            hits,
            facets,
        })
    }
}

fn hit(doc: SearchDoc, highlights: Highlights) -> SearchHit {
    SearchHit {
        name: doc.name,
        version: doc.version,
        title: doc.title,
        description: doc.description,
        keywords: doc.keywords,
        license: doc.license,
        format: doc.format,
        execution: doc.execution,
        tier: doc.tier,
        downloads: doc.downloads,
        updated_at: doc.updated_at,
        blocked: doc.blocked,
        blocked_reason: doc.blocked_reason,
        highlights,
    }
}

#[cfg(test)]
impl SearchIndex {
    /// The description highlights of `params`' hits as tantivy's own
    /// `SnippetGenerator` makes them: what [`Highlighter`] must equal.
    pub(crate) fn reference_snippets(&self, params: &SearchParams) -> Vec<String> {
        use super::highlight::{clip_chars, escape_html};
        let searcher = self.reader.searcher();
        let results = self.query(params).expect("query");
        let mut words = QueryWords::analyze(&self.index, &params.q).expect("words");
        words.mark_known(&searcher, &self.fields).expect("known");
        let mut query = query::build(&self.fields, params, &words, Match::All);
        if words.words.len() > 1 && results.total > 0 {
            let all = searcher
                .search(&*query, &tantivy::collector::Count)
                .expect("count");
            if all == 0 {
                query = query::build(&self.fields, params, &words, Match::Any);
            }
        } else if words.words.len() > 1 {
            query = query::build(&self.fields, params, &words, Match::Any);
        }
        let mut generator =
            tantivy::snippet::SnippetGenerator::create(&searcher, &*query, self.fields.description)
                .expect("generator");
        generator.set_max_num_chars(200);
        results
            .hits
            .iter()
            .map(|hit| {
                let text = &hit.description;
                let mut snippet = generator.snippet(text);
                snippet.set_snippet_prefix_postfix("<mark>", "</mark>");
                if snippet.highlighted().is_empty() {
                    return escape_html(&clip_chars(text, 200));
                }
                let range = snippet.fragment_range();
                let mut html = String::new();
                if range.start > 0 {
                    html.push('…');
                }
                html.push_str(&snippet.to_html());
                let tail = text.get(range.end..).unwrap_or("");
                if tail.chars().any(char::is_alphanumeric) {
                    html.push('…');
                } else {
                    html.push_str(&escape_html(tail.trim_end()));
                }
                html
            })
            .collect()
    }
}
