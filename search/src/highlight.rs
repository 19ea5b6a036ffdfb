//! Highlights of a hit: the registry name with the query words marked, and
//! a snippet of the description — the best fragment of at most 200
//! characters with the matched words in `<mark>` — or the clipped
//! description when nothing in it matches.
//!
//! The snippet is exactly what tantivy's `SnippetGenerator` (created for
//! the query and the field the query matches descriptions through — the
//! description field, or the stemmed text field of a natural-language
//! query — 200 characters) makes, computed here in a cheaper way:
//!
//! * the terms and their weights are the generator's: the query's
//!   terms of that field that occur in the index, each weighing
//!   1 / (1 + document frequency); a query without any marks nothing, and
//!   the description is not tokenized at all;
//! * the description is split into tokens as the field's `en_stem`
//!   analyzer splits it (runs of letters and digits, tokens of 40 bytes or
//!   more dropped), and fragments are cut, scored and chosen by the same
//!   rules ([`best_fragment`]), then rendered with the same escaping as
//!   `Snippet::to_html` ([`fragment_html`]);
//! * but a token is lowercased and stemmed (tantivy's `LowerCaser` and
//!   English `Stemmer`) only if it can match: a word's stem keeps its first
//!   letter (the Snowball English stemmer only rewrites suffixes; the unit
//!   test `stemming_keeps_the_first_letter` checks it on every suffix rule
//!   and 200,000 pseudo-random words), so a word whose lowercased first
//!   letter starts no term is skipped without stemming it or looking it up.
//!
//! Stemming and looking up every word of a page's descriptions would be a
//! large part of the cost of a page. The snippet tests (and the benchmark's
//! `BENCH_DUMP` comparison of two builds) check that the output is the
//! generator's.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use tantivy::query::Query;
use tantivy::schema::Field;
use tantivy::tokenizer::{Language, RawTokenizer, Stemmer, TextAnalyzer, TokenStream};
use tantivy::{Score, Searcher, Term};
use toolreg_api::SearchHighlights;

use crate::words::QueryWords;
use crate::{SearchDoc, SearchError};

/// Longest description snippet, in characters (tantivy counts bytes).
const SNIPPET_CHARS: usize = 200;
/// Tokens this long (bytes) or longer are dropped (`RemoveLongFilter`).
const LONG_TOKEN: usize = 40;

/// Makes the highlights of one query's hits.
pub(crate) struct Highlighter<'q> {
    words: &'q QueryWords,
    /// The description terms and their weights (empty: nothing to mark).
    terms: BTreeMap<String, Score>,
    /// The first letter of each term.
    firsts: Vec<char>,
    /// Stems one lowercased word (the whole text is one token).
    stemmer: TextAnalyzer,
    lowercased: String,
}

/// A candidate fragment (tantivy's `FragmentCandidate`).
struct Fragment {
    score: Score,
    start: usize,
    stop: usize,
    highlighted: Vec<Range<usize>>,
}

impl Fragment {
    fn new(start: usize) -> Self {
        Fragment {
            score: 0.0,
            start,
            stop: start,
            highlighted: Vec::new(),
        }
    }
}

impl<'q> Highlighter<'q> {
    /// The highlighter of `query` (whose terms in `fields` are marked in
    /// descriptions: the description field's, and the stemmed text field's
    /// of a natural-language query) and its `words` (marked in names).
    pub(crate) fn new(
        searcher: &Searcher,
        query: &dyn Query,
        fields: &[Field],
        words: &'q QueryWords,
    ) -> Result<Self, SearchError> {
        // As `SnippetGenerator::create`.
        let mut terms: BTreeSet<&Term> = BTreeSet::new();
        query.query_terms(&mut |term, _| {
            if fields.contains(&term.field()) {
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
        let firsts = terms_text.keys().filter_map(|t| t.chars().next()).collect();
        Ok(Highlighter {
            words,
            terms: terms_text,
            firsts,
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
            lowercased: String::new(),
        })
    }

    /// The highlights of one hit.
    pub(crate) fn highlights(&mut self, doc: &SearchDoc) -> SearchHighlights {
        let text = &doc.description;
        let description = match self.best_fragment(text) {
            Some(fragment) => snippet_html(&fragment, text),
            None => escape_html(&clip_chars(text, SNIPPET_CHARS)),
        };
        SearchHighlights {
            name: highlight_name(&doc.name, self.words),
            description,
        }
    }

    /// The weight of `word` if its analyzed form is a term: lowercased as
    /// `LowerCaser` does, stemmed, then lowercased again as tantivy's
    /// fragment search does before the lookup.
    fn weight(&mut self, word: &str) -> Option<Score> {
        let first = word.chars().next()?.to_lowercase().next()?;
        if !self.firsts.contains(&first) {
            return None;
        }
        self.lowercased.clear();
        if word.is_ascii() {
            self.lowercased.push_str(word);
            self.lowercased.make_ascii_lowercase();
        } else {
            for c in word.chars() {
                self.lowercased.extend(c.to_lowercase());
            }
        }
        let mut stream = self.stemmer.token_stream(&self.lowercased);
        if !stream.advance() {
            return None;
        }
        self.terms.get(&stream.token().text.to_lowercase()).copied()
    }

    /// tantivy's `search_fragments` and `select_best_fragment_combination`:
    /// the best-scoring fragment, `None` when no word matches.
    fn best_fragment(&mut self, text: &str) -> Option<Fragment> {
        if self.terms.is_empty() {
            return None;
        }
        let mut fragments: Vec<Fragment> = Vec::new();
        let mut fragment = Fragment::new(0);
        let mut chars = text.char_indices();
        // Tokens as `SimpleTokenizer` cuts them.
        while let Some((from, _)) = chars.by_ref().find(|(_, c)| c.is_alphanumeric()) {
            let to = chars
                .by_ref()
                .find(|(_, c)| !c.is_alphanumeric())
                .map_or(text.len(), |(offset, _)| offset);
            if to - from >= LONG_TOKEN {
                continue;
            }
            if to - fragment.start > SNIPPET_CHARS {
                if fragment.score > 0.0 {
                    fragments.push(fragment);
                }
                fragment = Fragment::new(from);
            }
            fragment.stop = to;
            if let Some(weight) = self.weight(&text[from..to]) {
                fragment.score += weight;
                fragment.highlighted.push(from..to);
            }
        }
        if fragment.score > 0.0 {
            fragments.push(fragment);
        }
        let best = fragments.iter().enumerate().max_by(|(_, l), (_, r)| {
            match l
                .score
                .partial_cmp(&r.score)
                .unwrap_or(std::cmp::Ordering::Equal)
            {
                std::cmp::Ordering::Equal => (r.start, r.stop).cmp(&(l.start, l.stop)),
                other => other,
            }
        });
        let index = best.map(|(i, _)| i)?;
        Some(fragments.swap_remove(index))
    }
}

/// `Snippet::to_html` of a fragment with `<mark>` around the matches:
/// overlapping ranges merged, everything else escaped as `htmlescape`'s
/// `encode_minimal` does.
fn fragment_html(fragment: &Fragment, text: &str) -> String {
    let body = &text[fragment.start..fragment.stop];
    let mut ranges: Vec<Range<usize>> = fragment
        .highlighted
        .iter()
        .map(|r| r.start - fragment.start..r.end - fragment.start)
        .collect();
    ranges.sort_by_key(|r| (r.start, r.end));
    ranges.dedup();
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if last.end > range.start => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    let mut html = String::with_capacity(body.len() + 16 * merged.len());
    let mut from = 0;
    for range in merged {
        encode_minimal(&body[from..range.start], &mut html);
        html.push_str("<mark>");
        encode_minimal(&body[range.clone()], &mut html);
        html.push_str("</mark>");
        from = range.end;
    }
    encode_minimal(&body[from..], &mut html);
    html
}

/// `htmlescape::encode_minimal`, appending to `out`.
fn encode_minimal(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#x27;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
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
fn snippet_html(fragment: &Fragment, text: &str) -> String {
    let mut html = String::new();
    if fragment.start > 0 {
        html.push('…');
    }
    html.push_str(&fragment_html(fragment, text));
    let tail = text.get(fragment.stop..).unwrap_or("");
    if tail.chars().any(char::is_alphanumeric) {
        html.push('…');
    } else {
        html.push_str(&escape_html(tail.trim_end()));
    }
    html
}

pub(crate) fn clip_chars(s: &str, max: usize) -> String {
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
            .map(|w| w.text.as_str())
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
