//! [`QueryWords`]: the words of a query that the search uses, and how.
//!
//! A query is split into words by the index's own word analyzer, so query
//! syntax is never parsed. Then there are two kinds of query:
//!
//! * **Short** (at most [`SHORT_QUERY_WORDS`] words): names and name-like
//!   words (`slack`, `calc`, `pasword generator`). Every word is kept; the
//!   query builder matches them by prefix and with typos and asks for all of
//!   them first.
//! * **Natural language** (longer): a need in a sentence ("find the weather
//!   forecast for a city for the next five days"). Stopwords (English ones
//!   and the words of a polite request: "could you please…") and bare
//!   numbers are left out, a repeated word counts once, and when more than
//!   [`MAX_TERMS`] distinct words remain the rarest ones in the index are
//!   kept (a word that occurs in fewer tools tells more about the need, and
//!   costs less to look up).
//!
//! The limits that protect the engine are applied here, not by refusing the
//! query: at most [`MAX_ANALYZED_CHARS`] characters are read, at most
//! [`MAX_TERMS`] words are searched, and their postings (how many tools
//! each word occurs in, summed) are bounded by [`MAX_POSTINGS`].

use std::collections::HashSet;

use tantivy::schema::Field;
use tantivy::{Index, Searcher, Term};

use crate::schema::{self, Fields};
use crate::stopwords::is_stopword;
use crate::SearchError;

/// A query of more words than this is read as natural language.
pub(crate) const SHORT_QUERY_WORDS: usize = 4;
/// At most this many characters of a query are read; the rest is ignored.
pub const MAX_ANALYZED_CHARS: usize = 4_096;
/// At most this many distinct words of a query are searched.
pub const MAX_TERMS: usize = 32;
/// The searched words of a natural-language query occur in at most this
/// many tools together (counting a tool once per word), beyond the rarest
/// word: a bound on the work of one query whatever the size of the
/// registry.
pub(crate) const MAX_POSTINGS: u64 = 50_000;

/// One searched word.
#[derive(Debug, Clone)]
pub(crate) struct QueryWord {
    /// As typed, lowercased (matched against name words).
    pub text: String,
    /// Stemmed (matched against titles, keywords and descriptions).
    pub stem: String,
    /// Does the index know it as typed (or its stem)? Only unknown words
    /// are matched with a typo: a known word is most likely meant.
    pub known: bool,
    /// In how many tools it occurs (natural-language queries only).
    postings: u64,
}

/// The analyzed words of a query.
#[derive(Debug, Clone)]
pub(crate) struct QueryWords {
    pub words: Vec<QueryWord>,
    /// Natural language rather than a short, name-like query.
    pub natural: bool,
}

impl QueryWords {
    /// The words of `q`; `searcher` says which words the index knows and how
    /// common they are.
    pub(crate) fn analyze(
        index: &Index,
        searcher: &Searcher,
        f: &Fields,
        q: &str,
    ) -> Result<Self, SearchError> {
        let read = match q.char_indices().nth(MAX_ANALYZED_CHARS) {
            Some((end, _)) => &q[..end],
            None => q,
        };
        let raw = schema::tokens(index, schema::WORDS, read);
        let natural = raw.len() > SHORT_QUERY_WORDS;
        let kept: Vec<&String> = if natural {
            let content: Vec<&String> = raw
                .iter()
                .filter(|w| !is_stopword(w) && !is_number(w))
                .collect();
            if content.is_empty() {
                raw.iter().filter(|w| !is_number(w)).collect()
            } else {
                content
            }
        } else {
            raw.iter().collect()
        };
        let mut words: Vec<QueryWord> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for w in kept {
            if !seen.insert(w) {
                continue;
            }
            let stem = schema::tokens(index, schema::STEM, w)
                .into_iter()
                .next()
                .unwrap_or_else(|| w.clone());
            words.push(QueryWord {
                text: w.clone(),
                stem,
                known: false,
                postings: 0,
            });
        }
        for word in &mut words {
            if natural {
                // Natural-language queries are scored on the one text field.
                word.postings = doc_freq(searcher, f.text, &word.stem)?;
                word.known = word.postings > 0;
                continue;
            }
            let mut known = doc_freq(searcher, f.name_words, &word.text)? > 0;
            for field in [f.title, f.keywords_text, f.description] {
                if known {
                    break;
                }
                known = doc_freq(searcher, field, &word.stem)? > 0;
            }
            word.known = known;
        }
        if natural {
            words = choose(words);
        }
        Ok(QueryWords { words, natural })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

fn doc_freq(searcher: &Searcher, field: Field, text: &str) -> tantivy::Result<u64> {
    searcher.doc_freq(&Term::from_field_text(field, text))
}

/// A bare number (`10`, `2024`): says nothing about the tool a need asks for.
fn is_number(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_digit())
}

/// The words of a natural-language query worth searching: known words
/// first, rarest first, up to [`MAX_TERMS`] and [`MAX_POSTINGS`]; then the
/// unknown ones (they match nothing: a long query tries no typos) in what
/// room is left. The query's order is kept.
fn choose(words: Vec<QueryWord>) -> Vec<QueryWord> {
    let mut order: Vec<usize> = (0..words.len()).collect();
    order.sort_by_key(|&i| (!words[i].known, words[i].postings, i));
    let mut keep = vec![false; words.len()];
    let (mut terms, mut postings) = (0, 0u64);
    for i in order {
        let word = &words[i];
        if terms == MAX_TERMS {
            break;
        }
        if terms > 0 && postings + word.postings > MAX_POSTINGS {
            continue;
        }
        keep[i] = true;
        terms += 1;
        postings += word.postings;
    }
    words
        .into_iter()
        .zip(keep)
        .filter_map(|(w, k)| k.then_some(w))
        .collect()
}
