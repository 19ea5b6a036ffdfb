//! Highlights of a hit: the registry name with the query words marked, and
//! a snippet of the description (tantivy's [`SnippetGenerator`]: the best
//! fragment of at most 200 characters, matched words in `<mark>`), or the
//! clipped description when nothing in it matches.
//!
//! [`Highlighter`] builds tantivy's generator itself rather than with
//! `SnippetGenerator::create`, to make it cheaper without changing what it
//! marks:
//!
//! * when the query has no description term that occurs in the index,
//!   nothing can be marked, and the description is not tokenized at all;
//! * the generator tokenizes each description with the description field's
//!   analyzer (`en_stem`: words, at most 40 bytes, lowercased, English
//!   stemming), except that only words that can stem to a query term are
//!   stemmed: a word's stem keeps its first letter (the Snowball English
//!   stemmer only rewrites suffixes; `stemming_keeps_the_first_letter`
//!   checks it), so a word whose first letter starts no query term is
//!   given an empty text, which is never a term. Stemming was a sixth of
//!   the time of a page.

use std::collections::{BTreeMap, BTreeSet};

use tantivy::query::Query;
use tantivy::schema::Field;
use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
    Token, TokenFilter, TokenStream, Tokenizer,
};
use tantivy::{Score, Searcher, Term};

use super::query::QueryWords;
use super::results::Highlights;
use super::{SearchDoc, SearchError};

/// Longest description snippet, in characters.
const SNIPPET_CHARS: usize = 200;

/// Makes the highlights of one query's hits.
pub(crate) struct Highlighter<'q> {
    words: &'q QueryWords,
    /// `None` when no description term of the query is in the index.
    snippets: Option<SnippetGenerator>,
}

impl<'q> Highlighter<'q> {
    /// The highlighter of `query` (whose description terms are marked) and
    /// its `words` (marked in names).
    pub(crate) fn new(
        searcher: &Searcher,
        query: &dyn Query,
        description: Field,
        words: &'q QueryWords,
    ) -> Result<Self, SearchError> {
        // As `SnippetGenerator::create`: the query's terms of the field that
        // occur in the index, each weighing 1 / (1 + document frequency).
        let mut terms: BTreeSet<&Term> = BTreeSet::new();
        query.query_terms(&mut |term, _| {
            if term.field() == description {
                terms.insert(term);
            }
        });
        let mut terms_text: BTreeMap<String, Score> = BTreeMap::new();
        for term in terms {
            let value = term.value();
            let Some(text) = value.as_str() else {
                continue;
            };
            let doc_freq = searcher.doc_freq(term)?;
            if doc_freq > 0 {
                terms_text.insert(text.to_string(), 1.0 / (1.0 + doc_freq as Score));
            }
        }
        let snippets = if terms_text.is_empty() {
            None
        } else {
            let firsts: Vec<char> = terms_text.keys().filter_map(|t| t.chars().next()).collect();
            let analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(RemoveLongFilter::limit(40))
                .filter(LowerCaser)
                .filter(StemCandidates { firsts })
                .build();
            Some(SnippetGenerator::new(
                terms_text,
                analyzer,
                description,
                SNIPPET_CHARS,
            ))
        };
        Ok(Highlighter { words, snippets })
    }

    /// The highlights of one hit.
    pub(crate) fn highlights(&self, doc: &SearchDoc) -> Highlights {
        let snippet = self.snippets.as_ref().map(|g| {
            let mut snippet = g.snippet(&doc.description);
            snippet.set_snippet_prefix_postfix("<mark>", "</mark>");
            snippet
        });
        let description = match snippet {
            Some(snippet) if !snippet.highlighted().is_empty() => {
                snippet_html(&snippet, &doc.description)
            }
            _ => escape_html(&clip_chars(&doc.description, SNIPPET_CHARS)),
        };
        Highlights {
            name: highlight_name(&doc.name, self.words),
            description,
        }
    }
}

/// The English stemmer applied only to words whose first letter starts a
/// query term; other words become empty (see the module docs).
#[derive(Clone)]
struct StemCandidates {
    firsts: Vec<char>,
}

impl TokenFilter for StemCandidates {
    type Tokenizer<T: Tokenizer> = StemCandidatesFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> StemCandidatesFilter<T> {
        StemCandidatesFilter {
            inner: tokenizer,
            firsts: self.firsts,
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
        }
    }
}

#[derive(Clone)]
struct StemCandidatesFilter<T> {
    inner: T,
    firsts: Vec<char>,
    /// Stems one word (the whole text is one token).
    stemmer: TextAnalyzer,
}

impl<T: Tokenizer> Tokenizer for StemCandidatesFilter<T> {
    type TokenStream<'a> = StemCandidatesStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        StemCandidatesStream {
            tail: self.inner.token_stream(text),
            firsts: &self.firsts,
            stemmer: &mut self.stemmer,
            word: String::new(),
        }
    }
}

struct StemCandidatesStream<'a, T> {
    tail: T,
    firsts: &'a [char],
    stemmer: &'a mut TextAnalyzer,
    word: String,
}

impl<T: TokenStream> TokenStream for StemCandidatesStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        let candidate = token
            .text
            .chars()
            .next()
            .is_some_and(|c| self.firsts.contains(&c));
        if candidate {
            self.word.clear();
            self.word.push_str(&token.text);
            let mut stream = self.stemmer.token_stream(&self.word);
            if stream.advance() {
                token.text.clear();
                token.text.push_str(&stream.token().text);
            }
        } else {
            token.text.clear();
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The snippet as HTML, with `…` where the description was cut, and any
/// trailing punctuation the fragment left off put back.
fn snippet_html(snippet: &tantivy::snippet::Snippet, text: &str) -> String {
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
}

fn clip_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// The registry name with the longest query word that starts each name word
/// marked (`<mark>calc</mark>ulator`).
fn highlight_name(name: &str, words: &QueryWords) -> String {
    let mut out = String::with_capacity(name.len() + 16);
    let mut rest = name;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        if word.is_empty() {
            let sep_len = tail.chars().next().map_or(1, char::len_utf8);
            out.push_str(&escape_html(&tail[..sep_len]));
            rest = &tail[sep_len..];
            continue;
        }
        let lower = word.to_lowercase();
        let best = words
            .words
            .iter()
            .map(|(w, _)| w.as_str())
            .filter(|w| lower.starts_with(*w) && lower.len() == word.len())
            .map(str::len)
            .max();
        match best {
            Some(n) => {
                out.push_str("<mark>");
                out.push_str(&escape_html(&word[..n]));
                out.push_str("</mark>");
                out.push_str(&escape_html(&word[n..]));
            }
            None => out.push_str(&escape_html(word)),
        }
        rest = tail;
    }
    out
}
