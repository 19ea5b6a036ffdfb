//! Agent Skills: a directory with `SKILL.md` — YAML frontmatter between
//! `---` lines, then Markdown instructions — and any other files
//! (`scripts/`, `references/`, `assets/`, ...).
//!
//! Field mapping: `name` (1–64 of `a-z0-9-`, no leading, trailing or
//! doubled `-`; the skill's directory name) is the registry and call name;
//! `description` (1–1024 characters) the description; `license` the
//! license; `metadata.version` the version (toolreg.toml may supply one
//! instead, as real skills often write `"1.3"`); `metadata.author` the
//! author. `compatibility` (≤ 500 characters), `allowed-tools` and the
//! whole `metadata` are kept under the `skill` extension. Keys the
//! specification doesn't list, and `metadata` values that are not strings,
//! are warnings: real skills carry both.
//!
//! The execution kind is `script` when the directory holds any code file
//! (a code extension, an archive, or anything under `scripts/`), else
//! `prompt`. Since the kind follows from the files, a skill carries any
//! files; the tier policy decides who may publish one with code.

use serde_json::{json, Map, Value};

use super::{opt_string, Draft, NameSource, Report};
use crate::bundle::contents::is_code_path;
use crate::error::Problem;
use crate::files::ToolFiles;
use crate::model::{Author, Hints};
use crate::policy::ExecutionKind;
use crate::validate;

/// The definition file of a skill.
pub const FILE_NAME: &str = "SKILL.md";

/// The frontmatter keys the Agent Skills specification lists.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Longest skill name.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest `compatibility` text.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        merge_keys: serde_saphyr::MergeKeyPolicy::AsOrdinary,
        budget: serde_saphyr::budget! {
            max_events: 20_000,
            max_aliases: 100,
            max_anchors: 100,
            max_depth: 32,
            max_documents: 1,
            max_nodes: 10_000,
            max_total_scalar_bytes: 256 * 1024,
            max_recorded_anchor_events: 10_000,
            max_recorded_anchor_bytes: 256 * 1024,
            max_merge_keys: 100,
        },
    }
}

/// `SKILL.md` split into its frontmatter text and its Markdown body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the `---` lines.
    pub frontmatter: &'a str,
    /// Everything after the closing `---` line.
    pub body: &'a str,
    /// The 1-based line the body starts on.
    pub body_line: usize,
}

/// Split `SKILL.md` text (a leading byte order mark is skipped) into
/// frontmatter and body; `Err` says what is missing.
pub fn split(text: &str) -> Result<Split<'_>, &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end_matches(['\r', '\n']) != "---" {
        return Err("does not start with a `---` line opening the YAML frontmatter");
    }
    let start = first.len();
    let mut offset = start;
    let mut line_no = 1;
    for line in lines {
        line_no += 1;
        if line.trim_end_matches(['\r', '\n']).trim_end() == "---" {
            return Ok(Split {
                frontmatter: &text[start..offset],
                body: &text[offset + line.len()..],
                body_line: line_no + 1,
            });
        }
        offset += line.len();
    }
    Err("has no closing `---` line after its YAML frontmatter")
}

/// The frontmatter of `SKILL.md` text as a JSON value, `Err` with the reason.
pub fn parse_frontmatter(text: &str) -> Result<Value, String> {
    let split = split(text).map_err(str::to_string)?;
    super::document::yaml(split.frontmatter, yaml_options())
        .map(|d| d.value)
        .map_err(|e| e.lines().next().unwrap_or("").to_string())
}

/// The document the lint reads: the frontmatter's keys, and the Markdown
/// body under `body`.
pub fn document_value(text: &str) -> Option<Value> {
    let split = split(text).ok()?;
    let mut fm = match parse_frontmatter(text).ok()? {
        Value::Object(m) => m,
        _ => return None,
    };
    fm.insert("body".into(), Value::String(split.body.to_string()));
    Some(Value::Object(fm))
}

/// True when a skill directory holds code: its kind is then `script`.
pub fn has_code(files: &ToolFiles) -> bool {
    files.paths().any(is_code_path)
}

/// True for a valid skill name: 1–64 of `a-z0-9-`, not starting or ending
/// with `-`, no `--`.
pub fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

pub(crate) fn parse(text: &str, files: &ToolFiles, report: &mut Report) -> Option<Draft> {
    let split = match split(text) {
        Ok(s) => s,
        Err(why) => {
            report.error(Problem::new(FILE_NAME, why).with_fix(
                "begin SKILL.md with `---`, the `name` and `description` keys, and `---`",
            ));
            return None;
        }
    };
    let fm = match super::document::yaml(split.frontmatter, yaml_options()) {
        Ok(d) if !d.key_problems.is_empty() => {
            report.extend(d.key_problems);
            return None;
        }
        Ok(d) => d.value,
        Err(e) => {
            let first = e.lines().next().unwrap_or("");
            report.error(Problem::new(
                FILE_NAME,
                format!("the frontmatter is not valid YAML: {first}"),
            ));
            return None;
        }
    };
    let Value::Object(fm) = fm else {
        report.error(Problem::new(
            FILE_NAME,
            format!(
                "the frontmatter must be a YAML mapping, not {}",
                validate::type_name(&fm)
            ),
        ));
        return None;
    };

    let kind = if has_code(files) {
        ExecutionKind::Script
    } else {
        ExecutionKind::Prompt
    };
    let mut draft = Draft::new(kind);
    draft.hints = Hints::default();

    for key in fm.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        report.warn(
            Problem::new(
                key.as_str(),
                "is not a key of the Agent Skills specification; it is kept",
            )
            .with_fix(format!(
                "use one of {}, or put it under `metadata`",
                KNOWN_KEYS.join(", ")
            )),
        );
    }

    match fm.get("name") {
        Some(Value::String(n)) => {
            if is_skill_name(n) {
                draft.name = Some(NameSource {
                    value: n.clone(),
                    path: "name",
                });
                draft.call_name = n.clone();
            } else {
                report.error(
                    Problem::new("name", format!("`{n}` is not a valid skill name"))
                        .with_fix("use 1–64 lowercase letters, digits and single `-` (not first or last), the same as the skill's directory name"),
                );
            }
        }
        Some(other) => report.error(Problem::new(
            "name",
            format!("must be a string, not {}", validate::type_name(other)),
        )),
        None => report.error(
            Problem::new("name", "is missing")
                .with_fix("add `name:` with the skill's directory name"),
        ),
    }

    match fm.get("description") {
        Some(Value::String(d)) if d.trim().is_empty() => {
            report.error(Problem::new("description", "is empty"))
        }
        Some(Value::String(d)) if d.chars().count() > MAX_DESCRIPTION_CHARS => {
            report.error(Problem::new(
                "description",
                format!(
                    "is {} characters; a skill description may be at most {MAX_DESCRIPTION_CHARS}",
                    d.chars().count()
                ),
            ))
        }
        Some(Value::String(d)) => draft.description = Some(d.clone()),
        Some(other) => report.error(Problem::new(
            "description",
            format!("must be a string, not {}", validate::type_name(other)),
        )),
        None => report.error(
            Problem::new("description", "is missing")
                .with_fix("add `description:` saying what the skill does and when to use it"),
        ),
    }

    match fm.get("license") {
        None | Some(Value::Null) => {}
        Some(Value::String(l)) => draft.license = opt_string(Some(&Value::String(l.clone()))),
        Some(other) => report.error(Problem::new(
            "license",
            format!("must be a string, not {}", validate::type_name(other)),
        )),
    }

    match fm.get("compatibility") {
        None | Some(Value::Null) => {}
        Some(Value::String(c)) if c.chars().count() > MAX_COMPATIBILITY_CHARS => {
            report.error(Problem::new(
                "compatibility",
                format!(
                    "is {} characters; it may be at most {MAX_COMPATIBILITY_CHARS}",
                    c.chars().count()
                ),
            ))
        }
        Some(Value::String(_)) => {}
        Some(other) => report.error(Problem::new(
            "compatibility",
            format!("must be a string, not {}", validate::type_name(other)),
        )),
    }

    match fm.get("allowed-tools") {
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(other) => report.error(
            Problem::new(
                "allowed-tools",
                format!("must be a string, not {}", validate::type_name(other)),
            )
            .with_fix("list the tools separated by spaces, e.g. `allowed-tools: Bash Read`"),
        ),
    }

    match fm.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(meta)) => {
            for (key, value) in meta {
                if !value.is_string() {
                    report.warn(Problem::new(
                        format!("metadata.{key}"),
                        format!(
                            "is {}; the specification maps metadata keys to strings; it is kept",
                            validate::type_name(value)
                        ),
                    ));
                }
            }
            if let Some(v) = meta.get("version") {
                draft.version = Some((v.clone(), "metadata.version"));
            }
            if let Some(name) = opt_string(meta.get("author")) {
                draft.authors.push(Author {
                    name,
                    email: None,
                    organization: None,
                });
            }
        }
        Some(other) => report.error(Problem::new(
            "metadata",
            format!("must be a mapping, not {}", validate::type_name(other)),
        )),
    }

    draft.extensions.insert(
        "skill".into(),
        json!({ "frontmatter": Value::Object(fm.clone()), "body_line": split.body_line }),
    );
    let mut document = Map::from_iter(fm);
    document.insert("body".into(), Value::String(split.body.to_string()));
    draft.document = Some(Value::Object(document));
    Some(draft)
}
