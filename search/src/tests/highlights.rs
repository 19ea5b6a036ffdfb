//! Highlights: the stemming assumption the snippet path relies on, and
//! snippets equal to tantivy's own `SnippetGenerator`'s.

use super::*;
use crate::*;

/// The snippet path stems only words whose first letter starts a query term
/// (`highlight.rs`), which is exact only if English stemming never changes a
/// word's first letter. Checked on every Snowball English suffix and
/// exceptional form after many stems, and on 200,000 pseudo-random words.
#[test]
fn stemming_keeps_the_first_letter() {
    use tantivy::tokenizer::{
        Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
    };
    let mut en_stem = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build();
    let mut check = |word: &str| {
        let mut stream = en_stem.token_stream(word);
        while let Some(token) = stream.next() {
            let first = word[token.offset_from..token.offset_to]
                .chars()
                .flat_map(char::to_lowercase)
                .next();
            assert_eq!(
                token.text.chars().next(),
                first,
                "{word:?} stems to {:?}",
                token.text
            );
        }
    };
    let stems = [
        "", "a", "e", "i", "o", "u", "y", "ya", "ye", "yo", "eye", "aye", "ab", "be", "by", "sky",
        "dy", "ly", "ty", "id", "gent", "ug", "ear", "on", "sing", "hop", "gener", "commun",
        "arsen", "past", "univers", "news", "how", "atlas", "cosmos", "bias", "and", "ski", "qu",
        "str", "x", "1", "é", "über", "Éc", "Y", "Yell", "İs", "ß",
    ];
    let suffixes = [
        "", "'", "'s", "'s'", "s", "ss", "sses", "ied", "ies", "us", "eed", "eedly", "ed", "edly",
        "ing", "ingly", "at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt",
        "y", "Y", "tional", "enci", "anci", "abli", "entli", "izer", "ization", "ational", "ation",
        "ator", "alism", "aliti", "alli", "fulness", "ousli", "ousness", "iveness", "iviti",
        "biliti", "bli", "ogi", "fulli", "lessli", "li", "alize", "icate", "iciti", "ical", "ful",
        "ness", "ative", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
        "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion", "sion", "tion", "e", "l", "ll",
        "ying", "ly", "lies", "ied", "ying", "ies", "is", "y", "ys", "yed",
    ];
    for stem in stems {
        for suffix in suffixes {
            for middle in ["", "a", "e", "y", "l", "at", "ing", "ed"] {
                check(&format!("{stem}{middle}{suffix}"));
            }
        }
    }
    for exceptional in [
        "skis",
        "skies",
        "dying",
        "lying",
        "tying",
        "idly",
        "gently",
        "ugly",
        "early",
        "only",
        "singly",
        "sky",
        "news",
        "howe",
        "atlas",
        "cosmos",
        "bias",
        "andes",
        "inning",
        "outing",
        "canning",
        "herring",
        "earring",
        "proceed",
        "exceed",
        "succeed",
        "generate",
        "communism",
        "arsenal",
        "past",
        "universe",
    ] {
        check(exceptional);
    }
    let alphabet: Vec<char> = "abcdeilnorstuyzgmphfé".chars().collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..200_000 {
        let mut word = String::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = 1 + (seed % 12) as usize;
        for i in 0..len {
            word.push(alphabet[((seed >> (4 * i)) % alphabet.len() as u64) as usize]);
        }
        check(&word);
    }
}

/// The snippets of `highlight.rs` equal tantivy's `SnippetGenerator`'s on
/// text with markup, quotes, non-ASCII letters, long tokens, several
/// fragments, stems and digits.
#[test]
fn snippets_equal_tantivys() {
    let texts = [
        "Removes <script> tags & \"quotes\" from HTML — it's <b>bold</b> & 'single'. Script!",
        &format!(
            "{} the needle is here, needles and NEEDLE. {} needle {} a needle at the end",
            "Padding words go here. ".repeat(12),
            "More padding; ".repeat(20),
            "filler ".repeat(40)
        ),
        "Übersetzt Texte; ÉCOLE école Straße STRASSE naïve café ΣΊΣΥΦΟΣ Σίσυφος running runner runs RUNNING ran.",
        &format!(
            "{} needle {} needles, {} search",
            "a".repeat(45),
            "b".repeat(39),
            "c".repeat(40)
        ),
        "Connection connections connected connecting connects CONNECTED connective",
        "2fa codes for 2FA login; 10x faster searching, searches: search!!!",
        "don't can't it's the user's files' names; users' files",
        "搜索 工具 search 🔍 tool searching tools, searched",
        "Find the needle!!!",
        "A tool with nothing to find in it at all, just words and more words.",
    ];
    let docs: Vec<SearchDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| doc(&format!("tool-{i}"), t))
        .collect();
    let index = index_of(&docs);
    let queries = [
        "needle",
        "needles",
        "script",
        "quotes",
        "bold",
        "single",
        "connect",
        "connections",
        "running",
        "run",
        "école",
        "ecole",
        "strasse",
        "straße",
        "2fa",
        "10x",
        "user",
        "users",
        "files",
        "search",
        "searching",
        "tool",
        "σίσυφος",
        "übersetzt",
        "cafe",
        "café",
        "the",
        "needle search",
        "connection tool",
        "nothing words",
        "zebra needle",
        "搜索",
        "b",
        "a",
        "tool-1",
        "find",
        "html script",
    ];
    let mut marked = 0;
    for q in queries {
        let p = SearchParams {
            per_page: 100,
            ..SearchParams::q(q)
        };
        let ours: Vec<String> = index
            .query(&p)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.highlights.description)
            .collect();
        marked += ours.iter().filter(|d| d.contains("<mark>")).count();
        assert_eq!(ours, index.reference_snippets(&p), "query {q:?}");
    }
    assert!(marked >= 30, "only {marked} snippets with a match");
}
