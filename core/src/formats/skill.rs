//! Agent Skills: a directory with `SKILL.md` — YAML frontmatter between
//! `---` lines, then Markdown instructions — and any other files
//! (`scripts/`, `references/`, `assets/`, ...).
//!
//! Field mapping: `name` (1–64 of `a-z0-9-`, no leading, trailing or
//! doubled `-`; the skill's directory name) is the registry and call name;
//! `description` (1–1024 characters) the description; `license` the
//! license; `metadata.version` the version (toolreg.toml may supply one
//! instead); `metadata.author` the author. `compatibility` (≤ 500
//! characters), `allowed-tools` and the whole `metadata` are kept under the
//! `skill` extension, with `body_line`, the line of `SKILL.md` the Markdown
//! body starts on.
//!
//! # The directory name
//!
//! An agent loads a skill only when its `name` is the name of the folder
//! holding it, so `name` must equal the skill's directory name, and the
//! error names `name` and both values. Where that name is known:
//!
//! * **A directory on disk** (`toolreg validate`, `pack`, `publish`):
//!   [`ToolFiles::read_dir`] keeps the directory's own name
//!   ([`ToolFiles::dir_name`]).
//! * **A bundle** (the server): its files sit at the archive's root, with no
//!   folder, so the folder a consumer installs the skill in is named by its
//!   registry name: `[tool].name` of `toolreg.toml` must then equal `name`
//!   too. Without either, the registry name is `name` itself.
//!
//! # The version
//!
//! `toolreg.toml`'s `version` wins. Without it, `metadata.version` is the
//! version: as is when it is SemVer 2.0; completed with zeros, with a
//! warning, when it is one to three plain numbers (`"1.3"` → `1.3.0`,
//! `"2"` → `2.0.0`), which is what a skill's author means and what SemVer
//! ordering needs (real skills write such versions, and refusing them would
//! make every one of those skills need a `toolreg.toml` to be published at
//! all). Anything else (`"v1.3-beta"`, a YAML float such as `1.10`, which
//! YAML reads as the number 1.1, so the version written can't be known) is
//! an error naming `metadata.version` and saying to set `[tool].version` in
//! `toolreg.toml`.
//!
//! # Accepted quirks, and what is refused
//!
//! Real skills break the specification in small ways, and each is accepted
//! with a warning naming it: keys the specification doesn't list,
//! `metadata` values that are not strings, a non-SemVer `metadata.version`,
//! a byte order mark before the frontmatter, and a `SKILL.md` of more than
//! [`RECOMMENDED_MAX_LINES`] lines. HTML comments and invisible characters
//! that emoji need (the zero-width joiner in 🧑‍💻) are not parser matters:
//! the lint reads them ([`crate::lint::skill`]).
//!
//! Refused, each problem at once with its path: no `SKILL.md` (a
//! `skill.md` in another letter case is named as such); a second one — a
//! file called `SKILL.md` in any letter case anywhere else in the
//! directory, since a `SKILL.md` in a subfolder is another skill that an
//! agent scanning folders would load on its own; frontmatter that is not at
//! the very top, not closed, not YAML or not a mapping; a `name` that is
//! not a skill name or not the directory's; oversize `name`,
//! `description` or `compatibility`; and a `SKILL.md` over
//! [`MAX_SKILL_BYTES`] (1 MiB; the largest real one is 294 KB). Links out of
//! the directory never reach the parser: bundles and
//! [`ToolFiles::read_dir`] refuse every symbolic link.
//!
//! The execution kind is `script` when the directory holds any code file
//! (a code extension, an archive, or anything under `scripts/`), else
//! `prompt`. Since the kind follows from the files, a skill carries any
//! files; the tier policy decides who may publish one with code.

use serde_json::{json, Map, Value};

use super::{opt_string, Draft, NameSource, Report};
use crate::bundle::contents::is_code_path;
use crate::bundle::names::fold_key;
use crate::error::Problem;
use crate::files::ToolFiles;
use crate::manifest::ToolToml;
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
/// Largest `SKILL.md` accepted (1 MiB): the definition size cap of every
/// format ([`super::MAX_DEFINITION_BYTES`]).
pub const MAX_SKILL_BYTES: usize = super::MAX_DEFINITION_BYTES;
/// Lines of `SKILL.md` past which the specification's advice (keep it
/// short, move detail to `references/`) is given as a warning.
pub const RECOMMENDED_MAX_LINES: usize = 500;

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

/// The parts of a `SKILL.md`'s Markdown body that an agent reads but the
/// rendered page does not show (HTML comments, link titles, reference
/// definitions, hidden HTML; see [`crate::lint::markdown`]), with byte
/// ranges and 1-based line ranges in the whole `SKILL.md` text (a leading
/// byte order mark counted). Empty when the frontmatter can't be split off.
pub fn hidden_parts(text: &str) -> Vec<crate::lint::markdown::HiddenPart> {
    let Ok(split) = split(text) else {
        return Vec::new();
    };
    let offset = text.len() - split.body.len();
    let lines = split.body_line - 1;
    crate::lint::markdown::hidden_parts(split.body)
        .into_iter()
        .map(|mut p| {
            p.range = p.range.start + offset..p.range.end + offset;
            p.text = p.text.start + offset..p.text.end + offset;
            p.first_line += lines;
            p.last_line += lines;
            p
        })
        .collect()
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

/// Every other file called `SKILL.md` (in any letter case) in the skill
/// directory: each is a second skill definition.
pub fn other_skill_files(files: &ToolFiles) -> Vec<&str> {
    let wanted = fold_key(FILE_NAME);
    files
        .paths()
        .filter(|p| *p != FILE_NAME && fold_key(p.rsplit('/').next().unwrap_or(p)) == wanted)
        .collect()
}

/// The version a non-SemVer `metadata.version` stands for: one to three
/// plain numbers completed with zeros (`"1.3"` → `1.3.0`, `"2"` → `2.0.0`);
/// `None` for anything else.
pub fn complete_version(raw: &str) -> Option<semver::Version> {
    let parts: Vec<&str> = raw.trim().split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        || parts.iter().any(|p| p.len() > 1 && p.starts_with('0'))
    {
        return None;
    }
    let n = |i: usize| parts.get(i).map_or(Ok(0), |p| p.parse::<u64>());
    Some(semver::Version::new(n(0).ok()?, n(1).ok()?, n(2).ok()?))
}

/// The version of `metadata.version` as `load` should read it, with the
/// warning or error it gives; `manifest_version` is `toolreg.toml`'s,
/// which wins.
fn metadata_version(
    v: &Value,
    manifest_version: Option<&str>,
    report: &mut Report,
) -> Option<Value> {
    const PATH: &str = "metadata.version";
    const FIX: &str = "set `[tool].version = \"1.0.0\"` in toolreg.toml, or write `metadata.version` as a SemVer 2.0 string such as \"1.0.0\"";
    let written = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_u64() => n.to_string(),
        Value::Number(n) => {
            if manifest_version.is_none() {
                report.error(Problem::new(PATH, format!("is the number {n}, which YAML may have shortened (`1.10` reads as 1.1), so the version written can't be known")).with_fix(FIX));
            }
            return None;
        }
        other => {
            if manifest_version.is_none() {
                report.error(
                    Problem::new(
                        PATH,
                        format!(
                            "must be a version string, not {}",
                            validate::type_name(other)
                        ),
                    )
                    .with_fix(FIX),
                );
            }
            return None;
        }
    };
    if semver::Version::parse(&written).is_ok() {
        return Some(Value::String(written));
    }
    if let Some(m) = manifest_version {
        report.warn(Problem::new(
            PATH,
            format!(
                "`{written}` is not a SemVer 2.0 version; toolreg.toml's version `{m}` is used"
            ),
        ));
        return None;
    }
    match complete_version(&written) {
        Some(version) => {
            report.warn(
                Problem::new(
                    PATH,
                    format!("`{written}` is not a SemVer 2.0 version; it is read as `{version}`"),
                )
                .with_fix(FIX),
            );
            Some(Value::String(version.to_string()))
        }
        None => {
            report.error(
                Problem::new(
                    PATH,
                    format!("`{written}` is not a SemVer 2.0 version, and not one to three numbers that could be completed (`1.3` → `1.3.0`)"),
                )
                .with_fix(FIX),
            );
            None
        }
    }
}

pub(crate) fn parse(
    text: &str,
    files: &ToolFiles,
    manifest: Option<&ToolToml>,
    report: &mut Report,
) -> Option<Draft> {
    for other in other_skill_files(files) {
        report.error(
            Problem::new(
                other,
                format!("is a second `{FILE_NAME}`: a skill directory holds exactly one, at its root (one in a subfolder is another skill, which an agent would load on its own)"),
            )
            .with_fix("publish each skill from its own directory, or rename the file"),
        );
    }
    if text.starts_with('\u{feff}') {
        report.warn(Problem::new(
            FILE_NAME,
            "starts with a byte order mark (U+FEFF), which some agents don't skip before the `---` line; it is read",
        ).with_fix("save SKILL.md as UTF-8 without a byte order mark"));
    }
    let lines = text.lines().count();
    if lines > RECOMMENDED_MAX_LINES {
        report.warn(Problem::new(
            FILE_NAME,
            format!("is {lines} lines; the Agent Skills specification recommends at most {RECOMMENDED_MAX_LINES}, with detail in `references/`, which agents read only when needed; it is accepted"),
        ));
    }
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
            let folders = [
                files.dir_name().map(|d| {
                    (
                        d,
                        "the skill's directory name",
                        format!("set `name: {d}`, or rename the directory to `{n}`"),
                    )
                }),
                manifest.and_then(|m| m.name.as_deref()).map(|d| {
                    (
                        d,
                        "the registry name (`[tool].name` in toolreg.toml), which names the folder the skill is installed in",
                        format!("set `name: {d}`, or `[tool].name = \"{n}\"` in toolreg.toml"),
                    )
                }),
            ];
            for (folder, what, fix) in folders.into_iter().flatten() {
                if folder != n.as_str() {
                    report.error(
                        Problem::new(
                            "name",
                            format!("`{n}` must equal {what}, `{folder}`: agents load a skill only from a folder of its own name"),
                        )
                        .with_fix(fix),
                    );
                }
            }
            if !is_skill_name(n) && n.chars().count() > MAX_NAME_CHARS {
                report.error(Problem::new(
                    "name",
                    format!(
                        "is {} characters; a skill name may be at most {MAX_NAME_CHARS}",
                        n.chars().count()
                    ),
                ));
            } else if is_skill_name(n) {
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
            // `version` gets its own warning (below).
            for (key, value) in meta.iter().filter(|(k, _)| k.as_str() != "version") {
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
                let manifest_version = manifest.and_then(|m| m.version.as_deref());
                draft.version =
                    metadata_version(v, manifest_version, report).map(|v| (v, "metadata.version"));
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
