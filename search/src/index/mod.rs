//! [`SearchIndex`]: the tantivy index in its directory, and the query path.
//! Opening never fails because of what is on disk: a missing, corrupt or
//! outdated index is replaced by an empty one and
//! [`SearchIndex::needs_rebuild`] says so.
//!
//! A query ([`SearchIndex::query`]) is one pass of a [`PageCollector`] over
//! the matches (total, facet counts and the top `offset + limit`), then the
//! page's hits are rendered from the segments' in-memory hit records (see
//! [`crate::table`]) with snippets for those hits only. The tables live in a
//! per-generation [`Snapshot`]; [`SearchIndex::warm`] builds them ahead of
//! the first query (the tailer calls it after each commit). Whole answers
//! are also remembered per generation ([`AnswerCache`]).
//!
//! * `open` — opening, creating and recovering the index directory;
//! * `writer` — the writer's lifetime, staging and committing changes;
//! * `document` — a [`SearchDoc`] as a tantivy document;
//! * `answers` — the answer cache.

mod answers;
#[cfg(unix)]
mod directory;
mod document;
mod open;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tantivy::collector::TopDocs;
use tantivy::directory::DirectoryLock;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, Index, IndexReader, Searcher, TantivyDocument, Term};
use toolreg_api::SearchAnswer;

use crate::collector::{merge_top, PageCollector, SegmentPage};
use crate::highlight::Highlighter;
use crate::query::{self, Match};
use crate::results;
use crate::schema::Fields;
use crate::snapshot::{Snapshot, TableCache};
use crate::table::LatestCounts;
use crate::words::QueryWords;
use crate::{SearchDoc, SearchError, SearchParams};
use answers::AnswerCache;
use writer::WriterSlot;

pub use crate::stems::DEFAULT_STEM_CACHE_BYTES;
pub use crate::table::DEFAULT_RECORDS_MEMORY;
pub use answers::MAX_BYTES as ANSWER_CACHE_BYTES;
pub use open::OpenState;
pub use writer::{DEFAULT_WRITER_MEMORY, MAX_WRITER_MEMORY, MIN_WRITER_MEMORY};

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
    /// Whole answers of the current searcher generation, by parameters.
    answers: AnswerCache,
    /// The memory budget of the index writer, in bytes.
    writer_memory: std::sync::atomic::AtomicUsize,
    /// The stems `en_stem` has worked out, within a budget.
    stems: Arc<crate::stems::StemCache>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("dir", &self.dir)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl SearchIndex {
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

    /// Lays the latest download counts (`(name, downloads)` of every tool)
    /// over the indexed ones: searches sort by them and show them from now
    /// on, without re-indexing a tool (see [`crate::table`]'s `downloads`).
    /// Returns how many tools' counts changed since the last call.
    pub fn set_downloads(
        &self,
        counts: impl IntoIterator<Item = (String, u64)>,
    ) -> Result<usize, SearchError> {
        self.tables.set_downloads(LatestCounts::new(counts))
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
        let Some((_, addr)) = top.first() else {
            return Ok(None);
        };
        let mut doc = self.load(&searcher, *addr)?;
        let table = self
            .tables
            .table(searcher.segment_reader(addr.segment_ord))?;
        doc.downloads = table.downloads().get(addr.doc_id).unwrap_or(doc.downloads);
        Ok(Some(doc))
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
                table.records(
                    segment,
                    &self.fields,
                    self.tables.records_budget(),
                    self.dir.as_deref(),
                )?;
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
        let Some(table) = snapshot.tables.get(addr.segment_ord as usize) else {
            return self.load(searcher, addr);
        };
        let budget = self.tables.records_budget();
        let recorded = match table.records(segment, &self.fields, budget, self.dir.as_deref())? {
            Some(records) => records.doc(addr.doc_id)?,
            None => None,
        };
        let mut doc = match recorded {
            Some(doc) => doc,
            None => self.load(searcher, addr)?,
        };
        doc.downloads = table.downloads().get(addr.doc_id).unwrap_or(doc.downloads);
        Ok(doc)
    }

    /// The registry name of the document at `addr`.
    fn hit_name(
        &self,
        searcher: &Searcher,
        snapshot: &Snapshot,
        addr: DocAddress,
    ) -> Result<String, SearchError> {
        let segment = searcher.segment_reader(addr.segment_ord);
        if let Some(table) = snapshot.tables.get(addr.segment_ord as usize) {
            let budget = self.tables.records_budget();
            if let Some(records) =
                table.records(segment, &self.fields, budget, self.dir.as_deref())?
            {
                return Ok(records.name(addr.doc_id)?.to_string());
            }
        }
        self.load(searcher, addr).map(|d| d.name)
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
        self.answers.set_capacity(capacity);
    }

    /// Sets the most memory the segments' hit records may take, in bytes
    /// (0: none; every hit is read from the doc store). The default is
    /// [`DEFAULT_RECORDS_MEMORY`]. Records already built stay until their
    /// segment is merged away.
    pub fn set_records_memory(&self, bytes: usize) {
        self.tables.records_budget().set_limit(bytes);
    }

    /// Bytes held by the hit records of the live segments.
    #[cfg(test)]
    pub(crate) fn records_bytes(&self) -> usize {
        self.tables.records_budget().used()
    }

    /// Sets the most memory the remembered answers may take, in bytes
    /// (0 turns the cache off; the default is [`ANSWER_CACHE_BYTES`]).
    pub fn set_result_cache_bytes(&self, bytes: usize) {
        self.answers.set_max_bytes(bytes);
    }

    /// Sets the most memory the remembered English stems may take, in bytes
    /// (0 turns the memo off; the default is [`DEFAULT_STEM_CACHE_BYTES`]).
    pub fn set_stem_cache_bytes(&self, bytes: usize) {
        self.stems.set_budget(bytes);
    }

    /// The answers kept for the current generation, and their bytes.
    #[cfg(test)]
    pub(crate) fn result_cache_usage(&self) -> (usize, usize) {
        self.answers.usage()
    }

    /// How many answers were served from the answer cache.
    #[cfg(test)]
    pub(crate) fn result_cache_hits(&self) -> u64 {
        self.answers.hits()
    }

    /// Runs a search. Parameters are validated again here; a bad one is
    /// [`SearchError::BadRequest`] naming it.
    pub fn query(&self, params: &SearchParams) -> Result<SearchAnswer, SearchError> {
        params.validate()?;
        let searcher = self.reader.searcher();
        // Answers are remembered per generation and per download counts
        // laid over it (read before the query: the query sees these counts
        // or newer ones).
        let stamp = (
            searcher.generation().generation_id(),
            self.tables.counts_epoch(),
        );
        let key = format!("{params:?}");
        if let Some(hit) = self.answers.get(stamp, &key) {
            return Ok(hit);
        }
        let results = self.run_query(&searcher, params)?;
        self.answers.insert(stamp, key, &results);
        Ok(results)
    }

    fn run_query(
        &self,
        searcher: &Searcher,
        params: &SearchParams,
    ) -> Result<SearchAnswer, SearchError> {
        let snapshot = self.snapshot(searcher)?;
        let words = QueryWords::analyze(&self.index, searcher, &self.fields, &params.q)?;
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
        if !words.natural && words.words.len() > 1 && pages.iter().all(|p| p.count == 0) {
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
            let fields = [self.fields.description, self.fields.text];
            let mut highlighter = Highlighter::new(searcher, &*query, &fields, &words)?;
            for addr in addrs {
                let doc = self.hit_doc(searcher, &snapshot, addr)?;
                let highlights = highlighter.highlights(&doc);
                hits.push(results::hit(doc, highlights));
            }
        }
        Ok(SearchAnswer {
            total,
            page: params.page,
            per_page: params.per_page,
            hits,
            facets,
            words: words.words.iter().map(|w| w.text.clone()).collect(),
        })
    }
}

#[cfg(test)]
impl SearchIndex {
    /// The description highlights of `params`' hits as tantivy's own
    /// `SnippetGenerator` makes them: what [`Highlighter`] must equal.
    pub(crate) fn reference_snippets(&self, params: &SearchParams) -> Vec<String> {
        use crate::highlight::{clip_chars, escape_html};
        let searcher = self.reader.searcher();
        let results = self.query(params).expect("query");
        let words =
            QueryWords::analyze(&self.index, &searcher, &self.fields, &params.q).expect("words");
        let mut mode = Match::All;
        if words.words.len() > 1 && results.total > 0 {
            let query = query::build(&self.fields, params, &words, Match::All);
            let all = searcher
                .search(&*query, &tantivy::collector::Count)
                .expect("count");
            if all == 0 {
                mode = Match::Any;
            }
        } else if words.words.len() > 1 {
            mode = Match::Any;
        }
        let query = query::build(&self.fields, params, &words, mode);
        // Descriptions are matched through the description field when every
        // word must match, else through the text field.
        let field = if words.natural || mode == Match::Any {
            self.fields.text
        } else {
            self.fields.description
        };
        let mut generator = tantivy::snippet::SnippetGenerator::create(&searcher, &*query, field)
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
