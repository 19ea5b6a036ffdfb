//! Turns validated [`SearchParams`] into a tantivy query. The user's text is
//! never parsed as query syntax: it is split into words by the same analyzers
//! the index uses, so `"unclosed`, `a:b:c` or `((` are just words.
//!
//! Per word, any of these matches (the best fields weigh most): a name word
//! (boost 6), a title word (3), a keyword (3), a name-word prefix for
//! search-as-you-type (2), a description word (1); words of 5+ letters that
//! occur nowhere in the index as typed (likely typos) also
//! match at edit distance 1 (typos). Every word must match somewhere; only
//! when no tool matches every word, tools matching some of them are listed
//! (more words matched score higher). The whole query equal to the registry
//! name adds a large exact-name boost.

use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{Index, Searcher, Term};

use crate::params::{SearchParams, MAX_QUERY_WORDS};
use crate::schema::{self, Fields, PREFIX_MAX, PREFIX_MIN};
use crate::SearchError;

const BOOST_EXACT_NAME: f32 = 20.0;
const BOOST_NAME_WORD: f32 = 6.0;
const BOOST_TITLE: f32 = 3.0;
const BOOST_KEYWORD: f32 = 3.0;
const BOOST_PREFIX: f32 = 2.0;
const BOOST_DESCRIPTION: f32 = 1.0;
const BOOST_FUZZY_NAME: f32 = 2.0;
const BOOST_FUZZY_OTHER: f32 = 0.5;
/// Words at least this long (in characters) also match with one typo,
/// when the index doesn't know them as typed.
pub(crate) const FUZZY_MIN_CHARS: usize = 5;

/// The analyzed words of a query: each word as typed (lowercased) and stemmed.
#[derive(Debug, Clone)]
pub(crate) struct QueryWords {
    pub words: Vec<(String, String)>,
    /// Per word: does it occur in the index as typed? Only unknown words
    /// are matched with a typo (a known word is most likely meant).
    known: Vec<bool>,
}

impl QueryWords {
    pub(crate) fn analyze(index: &Index, q: &str) -> Result<Self, SearchError> {
        let raw = schema::tokens(index, schema::WORDS, q);
        if raw.len() > MAX_QUERY_WORDS {
            return Err(SearchError::bad(
                "q",
                format!(
                    "the query has {} words; the limit is {MAX_QUERY_WORDS}",
                    raw.len()
                ),
            ));
        }
        let words = raw
            .into_iter()
            .map(|w| {
                let stem = schema::tokens(index, schema::STEM, &w)
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| w.clone());
                (w, stem)
            })
            .collect();
        let words: Vec<(String, String)> = words;
        Ok(QueryWords {
            known: vec![false; words.len()],
            words,
        })
    }

    /// Marks the words the index knows in any text field.
    pub(crate) fn mark_known(&mut self, searcher: &Searcher, f: &Fields) -> tantivy::Result<()> {
        for (i, (word, stem)) in self.words.iter().enumerate() {
            let mut found = searcher.doc_freq(&Term::from_field_text(f.name_words, word))? > 0;
            for field in [f.title, f.keywords_text, f.description] {
                if found {
                    break;
                }
                found = searcher.doc_freq(&Term::from_field_text(field, stem))? > 0;
            }
            self.known[i] = found;
        }
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

fn term(field: Field, text: &str, boost: f32) -> Box<dyn Query> {
    let q = TermQuery::new(
        Term::from_field_text(field, text),
        IndexRecordOption::WithFreqs,
    );
    Box::new(BoostQuery::new(Box::new(q), boost))
}

fn fuzzy(field: Field, text: &str, boost: f32) -> Box<dyn Query> {
    let q = FuzzyTermQuery::new(Term::from_field_text(field, text), 1, true);
    Box::new(BoostQuery::new(Box::new(q), boost))
}

fn filter(field: Field, value: &str) -> (Occur, Box<dyn Query>) {
    let q = TermQuery::new(
        Term::from_field_text(field, value),
        IndexRecordOption::Basic,
    );
    (
        Occur::Must,
        Box::new(ConstScoreQuery::new(Box::new(q), 0.0)),
    )
}

/// The query for one word: a union over the fields.
fn word_query(f: &Fields, word: &str, stem: &str, known: bool) -> Box<dyn Query> {
    let mut should: Vec<(Occur, Box<dyn Query>)> = vec![
        (Occur::Should, term(f.name_words, word, BOOST_NAME_WORD)),
        (Occur::Should, term(f.title, stem, BOOST_TITLE)),
        (Occur::Should, term(f.keywords_text, stem, BOOST_KEYWORD)),
        (Occur::Should, term(f.description, stem, BOOST_DESCRIPTION)),
    ];
    let chars = word.chars().count();
    if (PREFIX_MIN..=PREFIX_MAX).contains(&chars) {
        should.push((Occur::Should, term(f.name_prefix, word, BOOST_PREFIX)));
    }
    if !known && chars >= FUZZY_MIN_CHARS && word.chars().all(char::is_alphabetic) {
        should.push((Occur::Should, fuzzy(f.name_words, word, BOOST_FUZZY_NAME)));
        should.push((Occur::Should, fuzzy(f.title, stem, BOOST_FUZZY_OTHER)));
        should.push((
            Occur::Should,
            fuzzy(f.keywords_text, stem, BOOST_FUZZY_OTHER),
        ));
        should.push((Occur::Should, fuzzy(f.description, stem, BOOST_FUZZY_OTHER)));
    }
    Box::new(BooleanQuery::new(should))
}

/// The registry name a query would be if it named a tool exactly.
pub(crate) fn as_registry_name(q: &str) -> String {
    q.trim()
        .to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// How the words of a query combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// Every word must match somewhere (tried first).
    All,
    /// Any word may match; tools matching more words score higher (the
    /// fallback when no tool matches every word).
    Any,
}

/// The text part of the search (scored), without filters.
pub(crate) fn text_query(f: &Fields, q: &str, words: &QueryWords, mode: Match) -> Box<dyn Query> {
    if words.is_empty() {
        return Box::new(AllQuery);
    }
    let occur = match mode {
        Match::All => Occur::Must,
        Match::Any => Occur::Should,
    };
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = words
        .words
        .iter()
        .zip(&words.known)
        .map(|((w, s), known)| (occur, word_query(f, w, s, *known)))
        .collect();
    let exact = as_registry_name(q);
    if !exact.is_empty() {
        clauses.push((Occur::Should, term(f.name, &exact, BOOST_EXACT_NAME)));
    }
    Box::new(BooleanQuery::new(clauses))
}

/// The full query: the text part plus every filter (all must hold).
pub(crate) fn build(
    f: &Fields,
    params: &SearchParams,
    words: &QueryWords,
    mode: Match,
) -> Box<dyn Query> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> =
        vec![(Occur::Must, text_query(f, &params.q, words, mode))];
    if let Some(k) = &params.keyword {
        clauses.push(filter(f.keyword, k));
    }
    if let Some(l) = &params.license {
        clauses.push(filter(f.license_key, &l.to_lowercase()));
    }
    if let Some(v) = params.format {
        clauses.push(filter(f.format, v.as_str()));
    }
    if let Some(v) = params.execution {
        clauses.push(filter(f.execution, v.as_str()));
    }
    if let Some(v) = params.tier {
        clauses.push(filter(f.tier, v.as_str()));
    }
    if let Some(v) = params.findings {
        clauses.push(filter(f.findings, v.as_str()));
    }
    if let Some(v) = params.provenance {
        clauses.push(filter(f.provenance, if v { "true" } else { "false" }));
    }
    if clauses.len() == 1 {
        return clauses
            .pop()
            .map(|(_, q)| q)
            .unwrap_or_else(|| Box::new(AllQuery));
    }
    Box::new(BooleanQuery::new(clauses))
}
