//! Word-level diffs of two texts (descriptions, titles), for showing what
//! changed — bounded, because the texts come from anyone who publishes.
//!
//! A minimal diff (Myers) costs time proportional to the texts' length
//! times the number of differences, so two unrelated texts of a megabyte
//! each would cost minutes. Two bounds keep every diff cheap, whatever the
//! texts:
//!
//! * **size**: texts of more than [`MAX_WORD_DIFF_WORDS`] words on either
//!   side are compared line by line instead of word by word;
//! * **time**: the comparison stops refining after [`WORD_DIFF_DEADLINE`]
//!   and finishes with a coarser diff (larger runs marked deleted and
//!   inserted).
//!
//! Either way the result is still a correct diff: the equal and deleted
//! runs give the old text, the equal and inserted runs the new one. Only
//! how finely it points at the changes differs, and [`WordDiff::granularity`]
//! says which bound applied so that a page can say so.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use similar::{Algorithm, ChangeTag, TextDiff, TextDiffConfig};

/// Beyond this many words on either side, texts are diffed by lines.
pub const MAX_WORD_DIFF_WORDS: usize = 20_000;

/// How long a diff may refine before it settles for a coarser result.
pub const WORD_DIFF_DEADLINE: Duration = Duration::from_millis(100);

/// Whether a word-diff segment is in both texts, only the new one or only the old one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SegmentOp {
    /// In both texts.
    Equal,
    /// Only in the new text.
    Insert,
    /// Only in the old text.
    Delete,
}

/// A run of words (with the whitespace between them) of a word-level diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// In both, inserted or deleted.
    pub op: SegmentOp,
    /// The text of the run.
    pub text: String,
}

/// How finely a [`WordDiff`] points at the changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    /// Word by word, minimal.
    Words,
    /// Line by line: a text had more than [`MAX_WORD_DIFF_WORDS`] words.
    Lines,
    /// Coarser than asked: the comparison ran out of time
    /// ([`WORD_DIFF_DEADLINE`]) and marked larger runs as changed.
    Approximate,
}

/// A bounded diff of two texts: its runs, and how fine they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordDiff {
    /// The runs, in order (see [`words`]).
    pub segments: Vec<Segment>,
    /// Word by word, or which bound made it coarser.
    pub granularity: Granularity,
}

/// A word-level diff of two texts: the runs of equal, inserted and deleted
/// words in order. Concatenating the equal and delete runs gives `old`;
/// the equal and insert runs give `new`. Bounded as the module says.
pub fn words(old: &str, new: &str) -> Vec<Segment> {
    bounded_words(old, new).segments
}

/// [`words`], saying which bound (if any) made it coarser.
pub fn bounded_words(old: &str, new: &str) -> WordDiff {
    let by_lines = [old, new]
        .iter()
        .any(|t| t.split_whitespace().nth(MAX_WORD_DIFF_WORDS).is_some());
    let started = Instant::now();
    let deadline = started + WORD_DIFF_DEADLINE;
    let mut config: TextDiffConfig = TextDiff::configure();
    config.algorithm(Algorithm::Myers).deadline(deadline);
    let diff = if by_lines {
        config.diff_lines(old, new)
    } else {
        config.diff_words(old, new)
    };
    let mut segments: Vec<Segment> = Vec::new();
    for change in diff.iter_all_changes() {
        let op = match change.tag() {
            ChangeTag::Equal => SegmentOp::Equal,
            ChangeTag::Insert => SegmentOp::Insert,
            ChangeTag::Delete => SegmentOp::Delete,
        };
        match segments.last_mut() {
            Some(last) if last.op == op => last.text.push_str(change.value()),
            _ => segments.push(Segment {
                op,
                text: change.value().to_string(),
            }),
        }
    }
    let granularity = if Instant::now() >= deadline {
        Granularity::Approximate
    } else if by_lines {
        Granularity::Lines
    } else {
        Granularity::Words
    };
    WordDiff {
        segments,
        granularity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebuild(segments: &[Segment], skip: SegmentOp) -> String {
        segments
            .iter()
            .filter(|s| s.op != skip)
            .map(|s| s.text.as_str())
            .collect()
    }

    /// Two unrelated texts of the largest definition's size: a minimal diff
    /// of them would take minutes; the bounded one is still a correct diff.
    #[test]
    fn huge_unrelated_texts_give_a_correct_coarse_diff() {
        let old: String = (0..90_000).map(|i| format!("a{} ", i % 977)).collect();
        let new: String = (0..90_000).map(|i| format!("a{} ", i % 983)).collect();
        let d = bounded_words(&old, &new);
        assert_ne!(d.granularity, Granularity::Words);
        assert_eq!(rebuild(&d.segments, SegmentOp::Insert), old);
        assert_eq!(rebuild(&d.segments, SegmentOp::Delete), new);
    }

    /// Under the word limit but sharing no word: refined until the time
    /// budget runs out, then finished coarser, still correct.
    #[test]
    fn unrelated_texts_under_the_word_limit_stop_at_the_deadline() {
        let old: String = (0..19_000).map(|i| format!("a{} ", i % 997)).collect();
        let new: String = (0..19_000).map(|i| format!("b{} ", i % 991)).collect();
        let d = bounded_words(&old, &new);
        assert_eq!(d.granularity, Granularity::Approximate);
        assert_eq!(rebuild(&d.segments, SegmentOp::Insert), old);
        assert_eq!(rebuild(&d.segments, SegmentOp::Delete), new);
    }

    #[test]
    fn ordinary_texts_are_diffed_word_by_word() {
        let d = bounded_words("Read the file", "Delete the file");
        assert_eq!(d.granularity, Granularity::Words);
        assert_eq!(d.segments[0].op, SegmentOp::Delete);
        assert_eq!(d.segments[0].text, "Read");
    }
}
