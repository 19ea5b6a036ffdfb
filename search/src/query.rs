//! Turns validated [`SearchParams`] into a tantivy query. The user's text is
//! never parsed as query syntax: it is split into words by the same analyzers
//! the index uses, so `"unclosed`, `a:b:c` or `((` are just words.
//!
//! The words are those of [`QueryWords`]: every word of a short query, the
//! telling words of a natural-language one.
//!
//! A short query: per word, any of these matches (the best fields weigh
//! most): a name word (boost 6), a title word (3), a keyword (3), a
//! name-word prefix for search-as-you-type (2), a description word (1);
//! words of 5+ letters that occur nowhere in the index as typed (likely
//! typos) also match at edit distance 1. Every word must match somewhere;
//! only when no tool matches every word, tools matching some of them are
//! listed, weighed as below.
//!
//! A natural-language query: any word may match, each scored (BM25) on the
//! `text` field that holds name words, title, keywords and description
//! together, plus a fifth of that for a name word; tools with more and rarer
//! words of the need score higher, and no single field decides.
//!
//! Either way the whole query equal to the registry name adds a large
//! exact-name boost.

use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::Term;

use crate::params::SearchParams;
use crate::schema::{Fields, PREFIX_MAX, PREFIX_MIN};
use crate::words::{QueryWord, QueryWords};

const BOOST_EXACT_NAME: f32 = 20.0;
const BOOST_NAME_WORD: f32 = 6.0;
const BOOST_TITLE: f32 = 3.0;
const BOOST_KEYWORD: f32 = 3.0;
const BOOST_PREFIX: f32 = 2.0;
const BOOST_DESCRIPTION: f32 = 1.0;
const BOOST_FUZZY_NAME: f32 = 2.0;
const BOOST_FUZZY_OTHER: f32 = 0.5;
/// Natural-language queries: the text field, and name words on top.
const BOOST_NEED_TEXT: f32 = 1.0;
const BOOST_NEED_NAME: f32 = 0.2;
/// Words at least this long (in characters) also match with one typo,
/// when the index doesn't know them as typed.
pub(crate) const FUZZY_MIN_CHARS: usize = 5;

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

/// The query for one word of a short query: a union over the fields. When
/// every word must match ([`Match::All`]) the name weighs most; in the
/// fallback ([`Match::Any`]) the fields weigh as in a natural-language
/// query, so that one shared name word does not decide the order.
fn word_query(f: &Fields, word: &QueryWord, mode: Match) -> Box<dyn Query> {
    let (text, stem) = (word.text.as_str(), word.stem.as_str());
    let mut should: Vec<(Occur, Box<dyn Query>)> = match mode {
        Match::All => vec![
            (Occur::Should, term(f.name_words, text, BOOST_NAME_WORD)),
            (Occur::Should, term(f.title, stem, BOOST_TITLE)),
            (Occur::Should, term(f.keywords_text, stem, BOOST_KEYWORD)),
            (Occur::Should, term(f.description, stem, BOOST_DESCRIPTION)),
        ],
        Match::Any => need_terms(f, word),
    };
    let chars = text.chars().count();
    if (PREFIX_MIN..=PREFIX_MAX).contains(&chars) {
        should.push((Occur::Should, term(f.name_prefix, text, BOOST_PREFIX)));
    }
    if !word.known && chars >= FUZZY_MIN_CHARS && text.chars().all(char::is_alphabetic) {
        should.push((Occur::Should, fuzzy(f.name_words, text, BOOST_FUZZY_NAME)));
        should.push((Occur::Should, fuzzy(f.title, stem, BOOST_FUZZY_OTHER)));
        should.push((
            Occur::Should,
            fuzzy(f.keywords_text, stem, BOOST_FUZZY_OTHER),
        ));
        should.push((Occur::Should, fuzzy(f.description, stem, BOOST_FUZZY_OTHER)));
    }
    Box::new(BooleanQuery::new(should))
}

/// The terms of one word of a natural-language query: the one text field of
/// every searchable part, plus a little for a name word. A shared name word
/// alone weighs about as much as a description word, so a description that
/// matches the need is not beaten by a name that has one of its words.
fn need_terms(f: &Fields, word: &QueryWord) -> Vec<(Occur, Box<dyn Query>)> {
    vec![
        (Occur::Should, term(f.text, &word.stem, BOOST_NEED_TEXT)),
        (
            Occur::Should,
            term(f.name_words, &word.text, BOOST_NEED_NAME),
        ),
    ]
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
        Match::All if !words.natural => Occur::Must,
        _ => Occur::Should,
    };
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = words
        .words
        .iter()
        .map(|w| {
            let q: Box<dyn Query> = if words.natural {
                Box::new(BooleanQuery::new(need_terms(f, w)))
            } else {
                word_query(f, w, mode)
            };
            (occur, q)
        })
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
    if let Some(v) = params.deprecated {
        let q = TermQuery::new(
            Term::from_field_u64(f.deprecated, u64::from(v)),
            IndexRecordOption::Basic,
        );
        clauses.push((
            Occur::Must,
            Box::new(ConstScoreQuery::new(Box::new(q), 0.0)),
        ));
    }
    if clauses.len() == 1 {
        return clauses
            .pop()
            .map(|(_, q)| q)
            .unwrap_or_else(|| Box::new(AllQuery));
    }
    Box::new(BooleanQuery::new(clauses))
}
