//! The lint of an Agent Skill reads all of it: the frontmatter (walked like
//! any definition, at JSON pointers such as `/description` and
//! `/metadata/author`), the Markdown body of `SKILL.md`, and every other
//! text file an agent may read — anything under `references/` or
//! `assets/`, and any `.md`, `.markdown`, `.txt`, `.json`, `.yaml` or
//! `.yml` file elsewhere — unless it is code ([`is_code_path`]: a skill's
//! code is run, not read, and its kind and the tier policy already cover
//! it). A finding in a file names it and the line: `/SKILL.md:42` (lines
//! of the whole `SKILL.md`, frontmatter counted), `/references/api.md:7`,
//! with character offsets in that line.
//!
//! The rules of a definition run on that text — `U1`–`U4` and `S1` block,
//! the `P` rules flag — but for the ones that flag text for addressing the
//! agent ([`Rule::is_voice`]: `P5`, `P6`, `P10`, `P11`, `P13`): a skill's
//! visible text is written to instruct the agent ("Always run the tests
//! first", "use the Bash tool"), so those would flag every skill. What no
//! honest skill needs stays: overriding the agent's rules (`P2`), hiding
//! from the user (`P3`), sensitive files (`P4`), sending data away (`P7`),
//! encoded payloads (`P9`), commands piped from the network (`P14`),
//! posing as the user or system (`P15`), instruction tags (`P1`). The
//! frontmatter, which an agent reads to choose the skill, gets every rule.
//!
//! The text is read a paragraph at a time (a blank line, or 100 lines,
//! ends one), so a phrase split over two lines is still one phrase; a
//! fenced code block is its own paragraph, linted like prose, since an
//! agent told "run this:" runs it (`curl … | sh` in one is `P14`).
//! Code files (`scripts/`, `.py`, `.sh`, ...) are not read as prose, only
//! for live credentials (`S1`, as in every tool's files).
//!
//! **What Markdown hides** ([`super::markdown`]): HTML comments,
//! link titles, link reference definitions and hidden HTML are read as
//! text too, each on its own, and the rule `H1` flags one that holds
//! instructions — text an agent reads and obeys but a person reading the
//! rendered page never sees. A hidden part is an instruction when another
//! rule finds something in it, or when it speaks like one: the agent
//! addressed with a directive ("you must", "the assistant should", "Claude
//! will"), or a sentence that opens with a command to act (`Run`, `Send`,
//! `Ignore`, `Always`, `Do not`, ...). A tooltip — a link title, or the
//! title of a reference definition of a real link — commonly says "Read
//! the docs" or "Run in Colab", so there only the agent addressed or an
//! override (`Ignore`, `Always`, `Never`, `Do not`, `Pretend`, `Act as`,
//! `Obey`) counts. A note for the author
//! (`<!-- TODO: add examples -->`, `<!-- Primary technology -->`) and
//! license boilerplate are not instructions, unless another rule finds
//! something in them. The comment markers themselves are not `P1`'s
//! instruction tag, nor is `<script` in code `P14`'s: in Markdown the one
//! is syntax and the other an example shown as written.

use regex::bytes::Regex;
use serde_json::Value;

use super::automata::Compiled;
use super::collect::Findings;
use super::markdown::{self, HiddenKind, HiddenPart};
use super::prose::compile;
use super::secrets::tokens;
use super::text::{excerpt, Normalized};
use super::walk::{Lines, Site};
use super::{prose, secrets, unicode, Context, Rule, Severity};
use crate::bundle::contents::is_code_path;
use crate::bundle::names::fold_key;
use crate::files::ToolFiles;

/// Extensions of the text files read wherever they are.
const TEXT_EXTENSIONS: &[&str] = &["md", "markdown", "txt", "json", "yaml", "yml"];
/// Top-level folders whose every non-code text file is read.
const TEXT_DIRS: &[&str] = &["references/", "assets/"];
/// Lines at most in one paragraph.
const MAX_PARAGRAPH_LINES: usize = 100;

/// How a stretch of text is linted.
#[derive(Clone, Copy)]
struct How {
    /// Run `S1` on it (for `SKILL.md`, whose text the scan of all files
    /// leaves to the lint of the definition).
    secrets: bool,
    /// It is visible text of the skill, written to instruct the agent.
    visible: bool,
}

/// True if the skill lint reads the file at `path` (besides `SKILL.md`).
pub fn reads_file(path: &str) -> bool {
    if path == crate::formats::skill::FILE_NAME
        || path == crate::manifest::FILE_NAME
        || is_code_path(path)
    {
        return false;
    }
    let lower = fold_key(path);
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    TEXT_EXTENSIONS.contains(&ext) || TEXT_DIRS.iter().any(|d| lower.starts_with(d))
}

fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// Lint a skill's Markdown body; `body_line` is the line of `SKILL.md` it
/// starts on.
pub(crate) fn check_body(ctx: &Context, body: &str, body_line: usize, out: &mut Findings) {
    check_markdown(
        ctx,
        crate::formats::skill::FILE_NAME,
        body,
        body_line,
        true,
        out,
    );
}

/// Lint every file of the skill the lint reads ([`reads_file`]). `S1` in
/// them is left to the scan of all files ([`files`](super::files)).
pub(crate) fn check_files(ctx: &Context, files: &ToolFiles, out: &mut Findings) {
    for (path, bytes) in files.iter().filter(|(p, _)| reads_file(p)) {
        if bytes.contains(&0) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        // A byte order mark starts the file; it is not hidden text.
        let skip = if text.starts_with('\u{feff}') { 3 } else { 0 };
        if is_markdown(path) {
            check_markdown(ctx, path, text, 1, false, out);
        } else {
            let lines = Lines {
                file: path,
                whole: text,
                offset: 0,
                first_line: 1,
            };
            let how = How {
                secrets: false,
                visible: true,
            };
            let ranges = paragraphs(text, skip..text.len());
            lint_stretches(ctx, text, ranges, lines, how, out);
        }
    }
}

/// Lint each of `ranges` of `text` as a stretch of its own, pointed at by
/// its line.
fn lint_stretches(
    ctx: &Context,
    text: &str,
    ranges: Vec<std::ops::Range<usize>>,
    lines: Lines<'_>,
    how: How,
    out: &mut Findings,
) {
    for range in ranges {
        let at = Lines {
            offset: range.start,
            ..lines
        };
        lint_stretch(ctx, &text[range], at, how, out);
    }
}

/// Lint one Markdown text: its visible paragraphs (hidden parts blanked
/// out), its code blocks, and each hidden part on its own, with `H1` for
/// the ones that instruct.
fn check_markdown(
    ctx: &Context,
    file: &str,
    text: &str,
    first_line: usize,
    secrets: bool,
    out: &mut Findings,
) {
    let scan = markdown::scan(text);
    let lines = Lines {
        file,
        whole: text,
        offset: 0,
        first_line,
    };
    let visible = blank_out(text, &scan);
    let how = How {
        secrets,
        visible: true,
    };
    let skip = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut fences = scan.fences.iter().peekable();
    let mut at = skip;
    while at < text.len() {
        let next_fence = fences.peek().map(|f| f.content.clone());
        let until = next_fence.as_ref().map_or(text.len(), |f| f.start.max(at));
        let ranges = paragraphs(&visible, at..until);
        lint_stretches(ctx, &visible, ranges, lines, how, out);
        match next_fence {
            Some(f) => {
                let ranges = paragraphs_all(&visible, f.clone());
                lint_stretches(ctx, &visible, ranges, lines, how, out);
                fences.next();
                at = f.end.max(until);
            }
            None => at = text.len(),
        }
    }
    for part in &scan.hidden {
        hidden(ctx, text, part, lines, secrets, out);
    }
}

/// `text` with every hidden part blanked out (byte for byte, newlines
/// kept, so offsets stay) and the comment markers in code blanked too:
/// what the page shows, for the `P` rules.
fn blank_out(text: &str, scan: &markdown::Scan) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let mut blank = |r: std::ops::Range<usize>| {
        for b in &mut bytes[r] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    };
    for part in &scan.hidden {
        blank(part.range.clone());
    }
    let code = scan
        .fences
        .iter()
        .map(|f| f.content.clone())
        .chain(scan.code_spans.iter().cloned());
    // In code, HTML is an example shown as written: its comment and
    // script tags are not `P1`'s or `P14`'s.
    for r in code {
        let lower = text[r.clone()].to_ascii_lowercase();
        for marker in ["<!--", "<script"] {
            for (i, m) in lower.match_indices(marker) {
                blank(r.start + i..r.start + i + m.len());
            }
        }
    }
    // Whole characters were replaced by ASCII spaces, so this is UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

/// The paragraphs of `text` within `range`: runs of non-blank lines, at
/// most [`MAX_PARAGRAPH_LINES`] each.
fn paragraphs(text: &str, range: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    split_lines(text, range, true)
}

/// Like [`paragraphs`], but blank lines don't end one (a code block).
fn paragraphs_all(text: &str, range: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    split_lines(text, range, false)
}

fn split_lines(
    text: &str,
    range: std::ops::Range<usize>,
    blank_ends: bool,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut count = 0;
    let mut at = range.start;
    for line in text[range.clone()].split_inclusive('\n') {
        let blank = line.trim().is_empty();
        if blank && blank_ends {
            if let Some(s) = start.take() {
                out.push(s..at);
            }
            count = 0;
        } else {
            start.get_or_insert(at);
            count += 1;
            if count >= MAX_PARAGRAPH_LINES {
                if let Some(s) = start.take() {
                    out.push(s..at + line.len());
                }
                count = 0;
            }
        }
        at += line.len();
    }
    if let Some(s) = start {
        out.push(s..range.end);
    }
    out.retain(|r| !text[r.clone()].trim().is_empty());
    out
}

/// Run the rules on one stretch of a file. With `secrets`, `S1` too (and
/// a stretch holding a credential gets no other finding, which would
/// repeat it); without, a stretch holding one is left to the file scan.
fn lint_stretch(ctx: &Context, text: &str, lines: Lines<'_>, how: How, out: &mut Findings) {
    out.begin_string();
    let mut site = Site::in_file(text, lines);
    site.instructs_agent = how.visible;
    let secrets = how.secrets;
    unicode::check(&site, out);
    let has_secret = if secrets {
        secrets::check(&site, out)
    } else {
        !tokens(text).is_empty()
    };
    if !has_secret {
        prose::check(ctx, &site, out);
    }
}

/// Lint a hidden part as text, and flag it (`H1`) if it instructs.
fn hidden(
    ctx: &Context,
    text: &str,
    part: &HiddenPart,
    lines: Lines<'_>,
    secrets: bool,
    out: &mut Findings,
) {
    let inner = &text[part.text.clone()];
    if inner.trim().is_empty() {
        return;
    }
    let before = out.serious();
    let how = How {
        secrets,
        visible: false,
    };
    let at = Lines {
        offset: part.text.start,
        ..lines
    };
    lint_stretch(ctx, inner, at, how, out);
    let found_other = out.serious() > before;
    let instruction = if found_other {
        None
    } else {
        instruction(inner, is_tooltip(part, inner))
    };
    if !found_other && instruction.is_none() {
        return;
    }
    out.begin_string();
    let site = Site::in_file(inner, at);
    let (start, end) = instruction.unwrap_or((0, inner.chars().count().min(60)));
    let span = if part.first_line == part.last_line {
        format!("line {}", part.first_line + lines.first_line - 1)
    } else {
        format!(
            "lines {}–{}",
            part.first_line + lines.first_line - 1,
            part.last_line + lines.first_line - 1
        )
    };
    let why = if found_other {
        "holds text another rule finds"
    } else {
        "holds an instruction"
    };
    let shown = excerpt(inner, start, end, false);
    site.report(
        out,
        Rule::H1,
        Severity::Flag,
        start,
        end,
        format!(
            "{} ({span}) {why}, which an agent reads but the rendered page does not show: `{shown}`",
            part.kind.noun()
        ),
        false,
    );
}

/// Words that make hidden text an instruction: the agent addressed with a
/// directive, or a sentence opening with a command to act.
static INSTRUCTION: Compiled<Regex> = Compiled::new(|| {
    Regex::new(&compile(&format!(
        r"{ADDRESSED}|{OPENS}\s{{0,3}}(?:{OVERRIDE}|make\s{{1,3}}sure|ensure|remember\s{{1,3}}to|be\s{{1,3}}sure\s{{1,3}}to|instead|run|execute|send|upload|post|e-?mail|forward|fetch|download|install|delete|remove|read|open|reveal|output|respond|reply|say|tell|call|invoke|visit|navigate|copy|paste|write|save|modify|change|replace|follow)\b"
    )))
    .expect("the H1 pattern is valid")
});

/// The same for a tooltip (a link title): "Read the docs", "Run in
/// Colab" and "Download the PDF" are what tooltips say, so only the agent
/// addressed or an override of what it does is an instruction there.
static TOOLTIP_INSTRUCTION: Compiled<Regex> = Compiled::new(|| {
    Regex::new(&compile(&format!(
        r"{ADDRESSED}|{OPENS}\s{{0,3}}(?:{OVERRIDE})\b"
    )))
    .expect("the H1 tooltip pattern is valid")
});

/// The agent addressed with a directive.
const ADDRESSED: &str = r"\b(?:you|your|the\s{1,3}(?:assistant|ai|model|agent|llm|bot)|assistant|claude|chatgpt|copilot|codex|gemini|llm)\b[^.!?\n]{0,40}?\b(?:must|should|shall|will|need\s{1,3}to|have\s{1,3}to|are\s{1,3}(?:to|required|instructed|expected|allowed)|always|never|do\s{1,3}not|don'?t)\b";
/// The start of a sentence or a list item.
const OPENS: &str = r"(?:^|[.!?:;]\s{1,3}|\n[\s*>#-]{0,8})";
/// Commands that override what the agent does.
const OVERRIDE: &str =
    r"always|never|do\s{1,3}not|don'?t|ignore|disregard|forget|pretend|act\s{1,3}as|obey";

/// True if the hidden part is a tooltip: a link title, or a reference
/// definition of a real link (not the `[//]: # (…)` comment idiom).
fn is_tooltip(part: &HiddenPart, inner: &str) -> bool {
    match part.kind {
        HiddenKind::LinkTitle => true,
        HiddenKind::ReferenceDefinition => {
            let dest = inner
                .split_once("]:")
                .map_or("", |(_, rest)| rest.trim_start());
            !(dest.starts_with('#') || dest.starts_with("<>"))
        }
        _ => false,
    }
}

/// Notes for the author.
static NOTE: Compiled<Regex> = Compiled::new(|| {
    Regex::new(&compile(
        r"^\s{0,8}(?:todo|fixme|xxx|hack|note\s{0,3}to\s{1,3}self)\b",
    ))
    .expect("the note pattern is valid")
});

/// License boilerplate.
static LICENSE: Compiled<Regex> = Compiled::new(|| {
    Regex::new(&compile(
        r"\b(?:licensed\s{1,3}under|spdx-license-identifier|gnu\s{1,3}(?:general|lesser|affero)|without\s{1,3}warrant(?:y|ies)|copyright\s{1,3}(?:\(c\)|©|\d{4}))",
    ))
    .expect("the license pattern is valid")
});

/// Where hidden text speaks as an instruction (char offsets in it), if
/// it does and is neither a note for the author nor license boilerplate.
fn instruction(text: &str, tooltip: bool) -> Option<(usize, usize)> {
    let norm = Normalized::new(text);
    let bytes = norm.text.as_bytes();
    if NOTE.get().is_match(bytes) || LICENSE.get().is_match(bytes) {
        return None;
    }
    let pattern = if tooltip {
        TOOLTIP_INSTRUCTION.get()
    } else {
        INSTRUCTION.get()
    };
    let m = pattern.find(bytes)?;
    // Leave out the punctuation and space a sentence start matched.
    let lead = bytes[m.start()..m.end()]
        .iter()
        .take_while(|b| !b.is_ascii_alphabetic())
        .count();
    Some(norm.orig_range(m.start() + lead, m.end()))
}

/// The body and its first line, if `doc` is a skill's document (see
/// [`crate::formats::skill::document_value`]); the frontmatter without
/// the body.
pub(crate) fn split_document(doc: &Value) -> (Value, Option<&str>) {
    let mut front = doc.clone();
    let body = doc.get("body").and_then(Value::as_str);
    if let Value::Object(map) = &mut front {
        map.remove("body");
    }
    (front, body)
}
