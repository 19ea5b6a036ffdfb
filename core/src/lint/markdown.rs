//! What Markdown hides: the parts of a Markdown text that an agent reads
//! but a person reading the rendered page does not see. [`hidden_parts`]
//! lists them with their line ranges; the skill lint
//! ([`skill`](super::skill)) lints each as text and flags the ones that
//! instruct (rule `H1`).
//!
//! | kind | what | hidden text |
//! |---|---|---|
//! | [`HiddenKind::Comment`] | `<!-- … -->` (unclosed: to the end) | between the markers |
//! | [`HiddenKind::LinkTitle`] | `[a](url "title")`, `'title'`, `(title)`; images too | the title (a tooltip at most) |
//! | [`HiddenKind::ReferenceDefinition`] | a line `[id]: url "title"` (`[//]: # (…)` is the usual "comment") | the whole line: label, URL, title |
//! | [`HiddenKind::HiddenHtml`] | an element with the `hidden` attribute (or `type="hidden"`) or a style that hides it: `display:none`, `visibility:hidden`, `font-size:0`, `opacity:0`, zero `height`/`width`, off-screen `text-indent`/`left`/`top`, `color:transparent`; and `<script>`, `<style>`, `<template>`, whose content never shows | the element's content (for a void or self-closing tag, the tag) |
//!
//! Code is not hidden: nothing in a fenced code block (```` ``` ```` or
//! `~~~`) or an inline code span is a hidden part, since it is shown as
//! written. The scanner reads the CommonMark constructs above line by line,
//! with bounded look-ahead; it is not a full Markdown parser (indented code
//! blocks, for one, are read as text), and errs on the side of listing.

use std::collections::HashMap;
use std::ops::Range;

use regex::Regex;

use super::automata::Compiled;

/// The kind of a hidden part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HiddenKind {
    /// An HTML comment.
    Comment,
    /// The title of an inline link or image.
    LinkTitle,
    /// A link reference definition, which never renders.
    ReferenceDefinition,
    /// An HTML element hidden by an attribute or its style.
    HiddenHtml,
}

impl HiddenKind {
    /// The kind in words, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            HiddenKind::Comment => "an HTML comment",
            HiddenKind::LinkTitle => "a link title",
            HiddenKind::ReferenceDefinition => "a link reference definition",
            HiddenKind::HiddenHtml => "hidden HTML",
        }
    }
}

/// One part of a Markdown text that does not render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenPart {
    /// What hides it.
    pub kind: HiddenKind,
    /// Byte range of the whole construct (markers included) in the text.
    pub range: Range<usize>,
    /// Byte range of the hidden text itself.
    pub text: Range<usize>,
    /// 1-based line of the text the construct starts on.
    pub first_line: usize,
    /// 1-based line it ends on.
    pub last_line: usize,
}

/// A fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    /// Byte range of its content lines.
    pub content: Range<usize>,
}

/// What [`scan`] finds.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub hidden: Vec<HiddenPart>,
    pub fences: Vec<Fence>,
    /// Inline code spans (backticks included).
    pub code_spans: Vec<Range<usize>>,
}

/// Every hidden part of `markdown`, in order, with 1-based line ranges.
pub fn hidden_parts(markdown: &str) -> Vec<HiddenPart> {
    scan(markdown).hidden
}

/// The longest stretch looked at for the end of a construct.
const LOOK_AHEAD: usize = 64 * 1024;

static HIDING_STYLE: Compiled<Regex> = Compiled::new(|| {
    Regex::new(
        r"(?i)display:none|visibility:hidden|font-size:0(?:\.0*)?(?:px|pt|em|rem|%)?(?:[;!]|$)|opacity:0(?:\.0*)?(?:[;!]|$)|(?:max-)?(?:height|width):0(?:px|em|rem|%)?(?:[;!]|$)|text-indent:-\d{3,}|(?:left|top):-\d{3,}|color:transparent",
    )
    .expect("the hiding-style pattern is valid")
});

static HIDDEN_ATTR: Compiled<Regex> = Compiled::new(|| {
    Regex::new(r#"(?i)(?:^|\s)hidden(?:\s|=|/|$)|type\s*=\s*["']?hidden"#)
        .expect("the hidden-attribute pattern is valid")
});

static STYLE_ATTR: Compiled<Regex> = Compiled::new(|| {
    Regex::new(r#"(?i)\bstyle\s*=\s*(?:"([^"]*)"|'([^']*)')"#).expect("the style pattern is valid")
});

/// Elements whose content a page never shows as text.
const NEVER_SHOWN: &[&str] = &["script", "style", "template"];

/// The largest char boundary of `s` at or below `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

const VOID_TAGS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// Scan `text` for hidden parts, fenced code blocks and code spans.
pub(crate) fn scan(text: &str) -> Scan {
    let line_starts = line_starts(text);
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        out: Scan::default(),
        span_closers: span_closers(text, &line_starts),
        titles: link_titles(text),
        lower: text.to_ascii_lowercase(),
        tags: HashMap::new(),
        next_gt: None,
        line_starts,
    };
    s.run();
    s.out
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    out: Scan,
    line_starts: Vec<usize>,
    /// Where each backtick run that opens a code span closes (the byte
    /// after its closing run), by the opener's position.
    span_closers: HashMap<usize, usize>,
    /// Inline link titles by the position of their `](`: (title text,
    /// the byte after the closing `)`).
    titles: HashMap<usize, (Range<usize>, usize)>,
    /// The text in ASCII lower case, for finding tags.
    lower: String,
    /// Positions of `<name` and `</name` for each tag name looked for.
    tags: HashMap<String, (Vec<usize>, Vec<usize>)>,
    /// The next `>` at or after some position (a cursor that only moves
    /// forward, so finding it costs linear time over the scan).
    next_gt: Option<(usize, Option<usize>)>,
}

impl Scanner<'_> {
    /// 1-based line of byte `b`.
    fn line_of(&self, b: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= b)
    }

    fn line_end(&self, from: usize) -> usize {
        self.text[from..]
            .find('\n')
            .map_or(self.text.len(), |i| from + i)
    }

    fn hide(&mut self, kind: HiddenKind, range: Range<usize>, text: Range<usize>) {
        let first_line = self.line_of(range.start);
        let last_line = self.line_of(range.end.saturating_sub(1).max(range.start));
        self.out.hidden.push(HiddenPart {
            kind,
            range,
            text,
            first_line,
            last_line,
        });
    }

    fn run(&mut self) {
        let mut pos = 0;
        while pos < self.bytes.len() {
            let at_line_start = pos == 0 || self.bytes[pos - 1] == b'\n';
            if at_line_start {
                if let Some(next) = self.fence(pos) {
                    pos = next;
                    continue;
                }
                if let Some(next) = self.reference_definition(pos) {
                    pos = next;
                    continue;
                }
            }
            let next = match self.bytes[pos] {
                b'\\' => pos + 2,
                b'`' => self.code_span(pos),
                b'<' if self.text[pos..].starts_with("<!--") => self.comment(pos),
                b'<' => self.html(pos),
                b']' if self.bytes.get(pos + 1) == Some(&b'(') => self.link_title(pos),
                _ => pos + 1,
            };
            pos = next.max(pos + 1);
            while pos < self.bytes.len() && !self.text.is_char_boundary(pos) {
                pos += 1;
            }
        }
    }

    /// A fenced code block opening at `pos`: its end (after the closing
    /// fence, or the end of the text).
    fn fence(&mut self, pos: usize) -> Option<usize> {
        let line = &self.text[pos..self.line_end(pos)];
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            return None;
        }
        let rest = &line[indent..];
        let marker = rest.bytes().next().filter(|b| *b == b'`' || *b == b'~')?;
        let len = rest.bytes().take_while(|b| *b == marker).count();
        if len < 3 || (marker == b'`' && rest[len..].contains('`')) {
            return None;
        }
        let content_start = (self.line_end(pos) + 1).min(self.text.len());
        let mut at = content_start;
        while at < self.text.len() {
            let end = self.line_end(at);
            let l = self.text[at..end].trim_end_matches('\r');
            let t = l.trim_start_matches(' ');
            if l.len() - t.len() <= 3
                && t.bytes().take_while(|b| *b == marker).count() >= len
                && t.trim_start_matches(marker as char).trim().is_empty()
            {
                self.out.fences.push(Fence {
                    content: content_start..at,
                });
                return Some((end + 1).min(self.text.len()));
            }
            at = end + 1;
        }
        self.out.fences.push(Fence {
            content: content_start..self.text.len(),
        });
        Some(self.text.len())
    }

    /// A link reference definition starting the line at `pos`: the line
    /// after it.
    fn reference_definition(&mut self, pos: usize) -> Option<usize> {
        let end = self.line_end(pos);
        let line = &self.text[pos..end];
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 || !line[indent..].starts_with('[') {
            return None;
        }
        let label_end = line[indent + 1..].find(']')? + indent + 1;
        let label = &line[indent + 1..label_end];
        if label.trim().is_empty() || label.contains('[') || !line[label_end..].starts_with("]:") {
            return None;
        }
        let rest = line[label_end + 2..].trim();
        // A destination, then at most a title, then nothing.
        let (dest, after) = destination(rest)?;
        if dest.is_empty() && !rest.starts_with("<>") {
            return None;
        }
        let after = after.trim();
        if !after.is_empty() && title(after).is_none_or(|(_, tail)| !tail.trim().is_empty()) {
            return None;
        }
        let text_end = pos + line.trim_end().len();
        self.hide(
            HiddenKind::ReferenceDefinition,
            pos + indent..text_end,
            pos + indent..text_end,
        );
        Some((end + 1).min(self.text.len()))
    }

    /// An inline code span opening at `pos`: the byte after it, or after
    /// the opening backticks when it does not close.
    fn code_span(&mut self, pos: usize) -> usize {
        let n = self.bytes[pos..].iter().take_while(|b| **b == b'`').count();
        match self.span_closers.get(&pos) {
            Some(&end) => {
                self.out.code_spans.push(pos..end);
                end
            }
            None => pos + n,
        }
    }

    /// The end of the paragraph holding `pos` (the next blank line),
    /// within the look-ahead.
    fn paragraph_end(&self, pos: usize) -> usize {
        let limit = floor_boundary(self.text, pos + LOOK_AHEAD);
        let window = &self.text[pos.min(limit)..limit];
        let mut offset = 0;
        for line in window.split_inclusive('\n') {
            if offset > 0 && line.trim().is_empty() {
                return pos + offset;
            }
            offset += line.len();
        }
        limit
    }

    /// An HTML comment opening at `pos`: the byte after `-->`, or the end
    /// of the text when it does not close (the rest is then hidden).
    fn comment(&mut self, pos: usize) -> usize {
        let inner = pos + 4;
        let (text_end, end) = match self.text[inner..].find("-->") {
            Some(i) => (inner + i, inner + i + 3),
            None => (self.text.len(), self.text.len()),
        };
        self.hide(HiddenKind::Comment, pos..end, inner..text_end);
        end
    }

    /// An HTML tag opening at `pos`: past the element when it is hidden.
    fn html(&mut self, pos: usize) -> usize {
        let rest = &self.text[pos + 1..];
        let name_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .count();
        if name_len == 0 || !rest.as_bytes()[0].is_ascii_alphabetic() {
            return pos + 1;
        }
        let name = rest[..name_len].to_ascii_lowercase();
        let Some(gt) = self.gt_after(pos + 1 + name_len) else {
            return pos + 1;
        };
        if gt - pos > 2000 {
            return pos + 1;
        }
        let close = gt - (pos + 1);
        let attrs = &rest[name_len..close];
        if !(NEVER_SHOWN.contains(&name.as_str())
            || is_hiding_style(attrs)
            || HIDDEN_ATTR.get().is_match(attrs))
        {
            return pos + 1;
        }
        let tag_end = pos + 1 + close + 1;
        if attrs.trim_end().ends_with('/') || VOID_TAGS.contains(&name.as_str()) {
            self.hide(HiddenKind::HiddenHtml, pos..tag_end, pos..tag_end);
            return tag_end;
        }
        let (content_end, end) = self.closing_tag(&name, tag_end);
        self.hide(HiddenKind::HiddenHtml, pos..end, tag_end..content_end);
        end
    }

    /// The next `>` at or after `from`.
    fn gt_after(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.next_gt {
            if searched <= from && found.is_none_or(|g| g >= from) {
                return found;
            }
        }
        let found = self.text[from..].find('>').map(|i| from + i);
        self.next_gt = Some((from, found));
        found
    }

    /// The closing tag of the element `name` whose content starts at
    /// `from` (same-name elements nested in it counted): (where the
    /// content ends, where the closing tag ends). Without one, the
    /// paragraph is the content.
    fn closing_tag(&mut self, name: &str, from: usize) -> (usize, usize) {
        let lower = &self.lower;
        let (opens, closes) = self.tags.entry(name.to_string()).or_insert_with(|| {
            let is_end = |at: usize| {
                lower
                    .as_bytes()
                    .get(at)
                    .is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'-')
            };
            let open = format!("<{name}");
            let close = format!("</{name}");
            let opens = lower
                .match_indices(&open)
                .map(|(i, _)| i)
                .filter(|&i| is_end(i + open.len()))
                .collect();
            let closes = lower
                .match_indices(&close)
                .map(|(i, _)| i)
                .filter(|&i| is_end(i + close.len()))
                .collect();
            (opens, closes)
        });
        let first_open = opens.partition_point(|&o| o < from);
        let first_close = closes.partition_point(|&c| c < from);
        for (k, &c) in closes[first_close..].iter().enumerate() {
            // Elements opened inside, before this close, that are still open.
            let opened = opens.partition_point(|&o| o < c) - first_open;
            if opened <= k {
                let end = self.text[c..]
                    .find('>')
                    .map_or(self.text.len(), |j| c + j + 1);
                return (c, end);
            }
        }
        let end = self.paragraph_end(from);
        (end, end)
    }

    /// An inline link's title after the `](` at `pos`: the byte after
    /// the closing `)`.
    fn link_title(&mut self, pos: usize) -> usize {
        let Some((title, end)) = self.titles.get(&pos).cloned() else {
            return pos + 2;
        };
        self.hide(HiddenKind::LinkTitle, title.start - 1..title.end + 1, title);
        end
    }
}

/// For every run of backticks that opens a code span, where the span
/// ends: the next run of the same length in the same paragraph (found
/// right to left in one pass, so in linear time).
fn span_closers(text: &str, line_starts: &[usize]) -> HashMap<usize, usize> {
    // Paragraph number of each line: blank lines separate them.
    let mut para_of_line = Vec::with_capacity(line_starts.len());
    let mut para = 0;
    for (i, &start) in line_starts.iter().enumerate() {
        let end = line_starts.get(i + 1).copied().unwrap_or(text.len());
        if text[start..end].trim().is_empty() {
            para += 1;
        }
        para_of_line.push(para);
    }
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let n = bytes[i..].iter().take_while(|b| **b == b'`').count();
            let line = line_starts.partition_point(|&s| s <= i) - 1;
            runs.push((i, n, para_of_line[line]));
            i += n;
        } else {
            i += 1;
        }
    }
    let mut out = HashMap::new();
    let mut next: HashMap<(usize, usize), usize> = HashMap::new();
    for &(pos, n, para) in runs.iter().rev() {
        if let Some(&closer) = next.get(&(n, para)) {
            out.insert(pos, closer + n);
        }
        next.insert((n, para), pos);
    }
    out
}

/// An inline link's `](`, destination and title, then `)`: the title is
/// group 1 (with its quotes).
static LINK_TITLE: Compiled<Regex> = Compiled::new(|| {
    Regex::new(
        r#"\]\([ \t]*(?:\r?\n[ \t]*)?(?:<[^<>\n]*>|[^\s<>()]+(?:\([^\s()]*\)[^\s<>()]*)*)(?:[ \t]*\r?\n[ \t]*|[ \t]+)("(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*'|\((?:[^()\\]|\\[\s\S])*\))[ \t]*(?:\r?\n[ \t]*)?\)"#,
    )
    .expect("the link title pattern is valid")
});

/// Every inline link title, by the position of its `](` (the regex runs
/// in linear time; the ones inside code are never looked up).
fn link_titles(text: &str) -> HashMap<usize, (Range<usize>, usize)> {
    LINK_TITLE
        .get()
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let t = c.get(1)?;
            let inner = t.start() + 1..t.end() - 1;
            // No blank line inside a title.
            let body = &text[inner.clone()];
            (!body.contains("\n\n") && !body.contains("\n\r\n"))
                .then(|| (whole.start(), (inner, whole.end())))
        })
        .collect()
}

fn is_hiding_style(attrs: &str) -> bool {
    STYLE_ATTR.get().captures_iter(attrs).any(|c| {
        let style: String = c
            .get(1)
            .or_else(|| c.get(2))
            .map_or("", |m| m.as_str())
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        HIDING_STYLE.get().is_match(&style)
    })
}

/// A link destination at the start of `s` (`<…>` or a run without spaces
/// and with balanced parentheses): (it, the rest).
fn destination(s: &str) -> Option<(&str, &str)> {
    if let Some(rest) = s.strip_prefix('<') {
        let end = rest.find(['>', '\n'])?;
        return (rest.as_bytes()[end] == b'>').then(|| (&rest[..end], &rest[end + 1..]));
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some((&s[..i], &s[i..])),
            ')' => depth -= 1,
            c if c.is_whitespace() || c.is_control() => return Some((&s[..i], &s[i..])),
            _ => {}
        }
    }
    Some((s, ""))
}

/// A link title at the start of `s` (`"…"`, `'…'` or `(…)`, no blank
/// line inside): (its text, the rest after the closing quote).
fn title(s: &str) -> Option<(&str, &str)> {
    let close = match s.bytes().next()? {
        b'"' => '"',
        b'\'' => '\'',
        b'(' => ')',
        _ => return None,
    };
    let body = &s[1..];
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == close {
            let t = &body[..i];
            return (!t.contains("\n\n") && !t.contains("\n\r\n")).then(|| (t, &body[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests;
