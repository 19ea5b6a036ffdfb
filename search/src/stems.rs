//! The English stemming of the stemmed text fields, with a memo of the
//! stems already worked out.
//!
//! Every indexed tool has its title, keywords and description analyzed
//! twice (their own fields and the combined `text` field), and tool
//! descriptions share most of their words, so the Snowball stemmer kept
//! working out the same stems. [`StemCache`] remembers word → stem within a
//! budget of bytes; when the next word would go over it, the memo is
//! emptied and fills again, so it follows the vocabulary of what is being
//! indexed. A word that is its own stem (most are) is stored once; a number
//! is not stored.
//!
//! The `en_stem` analyzer registered by [`crate::schema::register_tokenizers`]
//! is tantivy's built-in one (`SimpleTokenizer`, `RemoveLongFilter(40)`,
//! `LowerCaser`, `Stemmer(English)`) with [`CachedStemmer`] in the place of
//! `Stemmer`: the tokens are the same, which the tests check on real tool
//! definitions, and an index written before it reads the same.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tantivy::tokenizer::{
    Language, RawTokenizer, Stemmer, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// The default budget of [`StemCache`], in bytes (`--stem-cache-kib`).
pub const DEFAULT_STEM_CACHE_BYTES: usize = 1 << 20;

/// What one remembered word costs beyond its text and its stem's: the hash
/// table's slot (two boxed strings) and the allocations' rounding.
const ENTRY_OVERHEAD: usize = 64;

/// Words and their stems, within a budget of bytes.
pub(crate) struct StemCache {
    budget: AtomicUsize,
    memo: Mutex<Memo>,
}

struct Memo {
    /// Word → its stem, `None` when the word is its own stem.
    stems: HashMap<Box<str>, Option<Box<str>>>,
    /// What [`StemCache::budget`] counts of `stems`.
    bytes: usize,
    /// The Snowball stemmer, for words not remembered.
    stemmer: TextAnalyzer,
}

impl StemCache {
    pub(crate) fn new(budget: usize) -> StemCache {
        StemCache {
            budget: AtomicUsize::new(budget),
            memo: Mutex::new(Memo {
                stems: HashMap::new(),
                bytes: 0,
                stemmer: TextAnalyzer::builder(RawTokenizer::default())
                    .filter(Stemmer::new(Language::English))
                    .build(),
            }),
        }
    }

    /// Changes the budget (0 turns the memo off); what is remembered is
    /// dropped.
    pub(crate) fn set_budget(&self, bytes: usize) {
        self.budget.store(bytes, Ordering::Relaxed);
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        memo.stems = HashMap::new();
        memo.bytes = 0;
    }

    /// The bytes remembered now, as the budget counts them.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }

    /// Replaces `word` (lowercased) by its English stem.
    pub(crate) fn stem(&self, word: &mut String) {
        // Numbers (version parts, the digits of names) are their own stems:
        // every Snowball rule rewrites letters. Each is often seen once, so
        // remembering them would only push words out.
        if word.bytes().all(|b| b.is_ascii_digit()) {
            return;
        }
        let budget = self.budget.load(Ordering::Relaxed);
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        match memo.stems.get(word.as_str()) {
            Some(None) => return,
            Some(Some(stem)) => {
                word.clear();
                word.push_str(stem);
                return;
            }
            None => {}
        }
        let stem = memo.stem(word);
        if budget == 0 {
            if let Some(stem) = stem {
                *word = stem;
            }
            return;
        }
        let cost = word.len() + stem.as_ref().map_or(0, String::len) + ENTRY_OVERHEAD;
        if memo.bytes + cost > budget {
            memo.stems.clear();
            memo.bytes = 0;
        }
        let remembered = stem.as_deref().map(Box::from);
        if cost <= budget {
            memo.stems.insert(Box::from(word.as_str()), remembered);
            memo.bytes += cost;
        }
        if let Some(stem) = stem {
            *word = stem;
        }
    }
}

impl Memo {
    /// The stem of `word`, `None` when it is the word itself.
    fn stem(&mut self, word: &str) -> Option<String> {
        let mut stream = self.stemmer.token_stream(word);
        let stem = if stream.advance() {
            std::mem::take(&mut stream.token_mut().text)
        } else {
            return None;
        };
        (stem != word).then_some(stem)
    }
}

/// The token filter: [`Stemmer`] for English, through a [`StemCache`].
#[derive(Clone)]
pub(crate) struct CachedStemmer(pub(crate) Arc<StemCache>);

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter {
            cache: self.0,
            inner: tokenizer,
        }
    }
}

#[derive(Clone)]
pub(crate) struct CachedStemmerFilter<T> {
    cache: Arc<StemCache>,
    inner: T,
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
            cache: &self.cache,
        }
    }
}

pub(crate) struct CachedStemmerStream<'a, T> {
    tail: T,
    cache: &'a StemCache,
}

impl<T: TokenStream> TokenStream for CachedStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        self.cache.stem(&mut self.tail.token_mut().text);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, SimpleTokenizer, TokenizerManager};

    use super::*;

    fn analyzer(cache: Arc<StemCache>) -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(40))
            .filter(LowerCaser)
            .filter(CachedStemmer(cache))
            .build()
    }

    fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut out = Vec::new();
        let mut stream = analyzer.token_stream(text);
        while stream.advance() {
            let t = stream.token();
            out.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
        }
        out
    }

    /// The text of every file under `dir`, one string per file.
    fn definitions(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                definitions(&path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push(text);
            }
        }
    }

    #[test]
    fn tokens_are_those_of_tantivys_en_stem_at_any_budget() {
        // Real tool definitions, and this repository's documentation for a
        // larger English vocabulary.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut texts = Vec::new();
        definitions(&root.join("core/tests/fixtures"), &mut texts);
        definitions(&root.join("docs"), &mut texts);
        texts.push(
            "Dogs are the bests! Running runners ran; generously generalized 2024s 0x1f 42.".into(),
        );
        let words: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
        assert!(words > 20_000, "only {words} words of fixtures read");
        let mut builtin = TokenizerManager::default()
            .get("en_stem")
            .expect("tantivy registers en_stem");
        // Off, smaller than most words (every word is a miss and a clear),
        // a few hundred words (cleared often), and room for everything.
        for budget in [0, 70, 16 << 10, DEFAULT_STEM_CACHE_BYTES] {
            let cache = Arc::new(StemCache::new(budget));
            let mut cached = analyzer(cache.clone());
            // Twice: the second pass answers from the memo.
            for _ in 0..2 {
                for text in &texts {
                    assert_eq!(
                        tokens(&mut cached, text),
                        tokens(&mut builtin, text),
                        "budget {budget}"
                    );
                }
            }
            assert!(
                cache.bytes() <= budget,
                "budget {budget}: {}",
                cache.bytes()
            );
        }
    }

    #[test]
    fn the_memo_stays_within_its_budget_and_can_be_turned_off() {
        let cache = StemCache::new(4 << 10);
        for i in 0..10_000 {
            let mut word = format!("running{i}s");
            cache.stem(&mut word);
            assert!(cache.bytes() <= 4 << 10);
        }
        let mut word = "generalizations".to_string();
        cache.stem(&mut word);
        assert_eq!(word, "general");
        cache.set_budget(0);
        let mut word = "dogs".to_string();
        cache.stem(&mut word);
        assert_eq!((word.as_str(), cache.bytes()), ("dog", 0));
    }
}
