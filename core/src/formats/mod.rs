//! Format detection and the one entry point, [`load`]: from a tool directory
//! to a validated canonical [`Tool`].
//!
//! Each format module reads its document into a `Draft` (the model plus
//! where the registry name and version came from), reporting problems as it
//! goes; [`load`] then checks that the directory carries only the files the
//! tool's execution kind allows ([`crate::bundle::contents`]), applies
//! `toolreg.toml`, checks the name and version, and returns the tool or
//! every problem at once.

pub mod document;
pub mod matimo;
pub mod mcp;
pub mod prompt;
pub mod shinkai;
pub mod skill;

use serde_json::{Map, Value};

use crate::bundle;
use crate::error::{Error, Problem};
use crate::files::ToolFiles;
use crate::lint::{self, Finding};
use crate::manifest::{self, ToolToml};
use crate::model::{Author, Execution, Format, Hints, Tool};
use crate::name;
use crate::policy::ExecutionKind;
use crate::validate;

/// Largest definition document accepted (1 MiB).
pub const MAX_DEFINITION_BYTES: usize = 1024 * 1024;

/// A successfully loaded tool and the warnings found on the way.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The canonical tool.
    pub tool: Tool,
    /// Non-fatal findings (missing description, missing license, ...).
    pub warnings: Vec<Problem>,
    /// What the definition lint found ([`crate::lint::check`]), in document
    /// order. Block findings must refuse a publish
    /// ([`Loaded::refuse_blocks`]); flags are carried by the version.
    pub findings: Vec<Finding>,
}

impl Loaded {
    /// True if any lint finding blocks publishing.
    pub fn has_blocks(&self) -> bool {
        self.findings.iter().any(Finding::is_block)
    }

    /// [`Error::Invalid`] naming every block finding (rule, pointer,
    /// excerpt), or `Ok` when there is none: the refusal at publish.
    pub fn refuse_blocks(&self) -> Result<(), Error> {
        crate::lint::refuse_blocks(&self.findings)
    }
}

/// Problems (fatal) and warnings found while reading one definition.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl Report {
    pub fn error(&mut self, p: Problem) {
        self.problems.push(p);
    }
    pub fn warn(&mut self, p: Problem) {
        self.warnings.push(p);
    }
    pub fn extend(&mut self, ps: Vec<Problem>) {
        self.problems.extend(ps);
    }
}

/// Where a registry name candidate came from in the definition.
#[derive(Debug, Clone)]
pub(crate) struct NameSource {
    pub value: String,
    /// Field path, e.g. `name`, `id`, `metadata.prompt_name`.
    pub path: &'static str,
}

/// A definition read by a format module, before `toolreg.toml` is applied.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    pub name: Option<NameSource>,
    pub call_name: String,
    /// The version as written and its field path; `None` if the format has none.
    pub version: Option<(Value, &'static str)>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub authors: Vec<Author>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
    pub parameters: Value,
    pub result: Option<Value>,
    pub config_schema: Option<Value>,
    pub execution: Execution,
    pub auth: Vec<Value>,
    pub hints: Hints,
    pub template: Option<String>,
    pub model_params: Option<Value>,
    pub dependencies: Vec<String>,
    pub icons: Vec<Value>,
    pub examples: Vec<Value>,
    pub extensions: Map<String, Value>,
    /// The whole document as read (its JSON form), for the lint.
    pub document: Option<Value>,
}

impl Draft {
    /// An empty draft of the given execution kind, filled in by a format module.
    pub fn new(kind: ExecutionKind) -> Self {
        Draft {
            name: None,
            call_name: String::new(),
            version: None,
            title: None,
            description: None,
            keywords: Vec::new(),
            license: None,
            authors: Vec::new(),
            homepage: None,
            repository: None,
            parameters: empty_object_schema(),
            result: None,
            config_schema: None,
            execution: Execution {
                kind,
                detail: Value::Null,
            },
            auth: Vec::new(),
            hints: Hints::default(),
            template: None,
            model_params: None,
            dependencies: Vec::new(),
            icons: Vec::new(),
            examples: Vec::new(),
            extensions: Map::new(),
            document: None,
        }
    }
}

/// `{"type": "object", "properties": {}}`.
pub(crate) fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// A non-empty string, trimmed of nothing, or `None` for null/empty/non-strings.
pub(crate) fn opt_string(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// Read a JSON definition file's text into its value, or `None` with the
/// reason in `report`: not JSON, or a key repeated in one object (each
/// named by its JSON pointer, see [`document`]).
pub(crate) fn read_json(file: &str, text: &str, report: &mut Report) -> Option<Value> {
    match document::json(text) {
        Err(e) => {
            report.error(Problem::new("", format!("{file} is not valid JSON: {e}")));
            None
        }
        Ok(doc) if !doc.key_problems.is_empty() => {
            report.extend(doc.key_problems);
            None
        }
        Ok(doc) => Some(doc.value),
    }
}

/// Every definition file name of every format, in detection order.
pub fn definition_file_names() -> Vec<&'static str> {
    Format::ALL
        .iter()
        .flat_map(|f| f.file_names().iter().copied())
        .collect()
}

/// Find the one definition file at the root of a tool directory.
///
/// Errors: none found ([`Error::Invalid`] listing the accepted names), or
/// more than one (naming both).
pub fn detect(files: &ToolFiles) -> Result<(Format, &'static str), Error> {
    let mut found: Vec<(Format, &'static str)> = Vec::new();
    for format in Format::ALL {
        for file in format.file_names() {
            if files.contains(file) {
                found.push((format, file));
            }
        }
    }
    match found.as_slice() {
        [] if skill_in_other_case(files).is_some() => {
            let other = skill_in_other_case(files).unwrap_or_default();
            Err(Error::Invalid(vec![Problem::new(
                other,
                format!("an Agent Skill's definition must be named `{}` exactly, in capitals", skill::FILE_NAME),
            )
            .with_fix(format!("rename `{other}` to `{}`", skill::FILE_NAME))]))
        }
        [] => {
            let names = definition_file_names().iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            Err(Error::Invalid(vec![Problem::new(
                "",
                format!("no tool definition found at the root of the tool directory; expected one of {names}"),
            )
            .with_fix("add a definition file (`toolreg init` writes one)")]))
        }
        [one] => Ok(*one),
        [a, b, ..] => Err(Error::Invalid(vec![Problem::new(
            b.1,
            format!("more than one tool definition: found both `{}` and `{}`; a tool directory holds exactly one", a.1, b.1),
        )
        .with_fix("keep one definition file per tool directory")])),
    }
}

/// A root file called `SKILL.md` in another letter case (`skill.md`).
fn skill_in_other_case(files: &ToolFiles) -> Option<&str> {
    files
        .paths()
        .find(|p| !p.contains('/') && p.eq_ignore_ascii_case(skill::FILE_NAME))
}

/// Detect the format of the tool directory, parse its definition, check the
/// directory's other files against the execution kind, apply `toolreg.toml`,
/// validate, lint, and return the canonical tool with its lint findings — or
/// [`Error::Invalid`] with every problem found.
///
/// Lint findings never make `load` fail (a stored version must stay
/// loadable after a rules update); publishing refuses block findings with
/// [`Loaded::refuse_blocks`].
pub fn load(files: &ToolFiles) -> Result<Loaded, Error> {
    let (format, file) = detect(files)?;
    let bytes = files.get(file).unwrap_or_default();
    let mut report = Report::default();

    let manifest = match files.get(manifest::FILE_NAME) {
        None => None,
        Some(raw) if raw.len() > manifest::MAX_MANIFEST_BYTES => {
            report.error(Problem::new(
                manifest::FILE_NAME,
                format!(
                    "is {} bytes; toolreg.toml may be at most {} bytes",
                    raw.len(),
                    manifest::MAX_MANIFEST_BYTES
                ),
            ));
            None
        }
        Some(raw) => match std::str::from_utf8(raw) {
            Err(_) => {
                report.error(Problem::new(manifest::FILE_NAME, "is not UTF-8 text"));
                None
            }
            Ok(text) => match ToolToml::parse(text) {
                Ok(m) => Some(m),
                Err(ps) => {
                    report.extend(ps);
                    None
                }
            },
        },
    };

    if bytes.len() > MAX_DEFINITION_BYTES {
        report.error(Problem::new(
            file,
            format!(
                "is {} bytes; definitions may be at most {MAX_DEFINITION_BYTES} bytes (1 MiB)",
                bytes.len()
            ),
        ));
        return Err(Error::Invalid(report.problems));
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        report.error(Problem::new(file, "is not UTF-8 text"));
        return Err(Error::Invalid(report.problems));
    };

    let draft = match format {
        Format::Matimo => matimo::parse(text, files, &mut report),
        Format::Shinkai => shinkai::parse(text, files, &mut report),
        Format::Mcp => mcp::parse(text, &mut report),
        Format::Prompt => prompt::parse(text, &mut report),
        Format::Skill => skill::parse(text, files, manifest.as_ref(), &mut report),
    };
    let Some(mut draft) = draft else {
        return Err(Error::Invalid(report.problems));
    };
    let document = draft.document.take();
    // A skill's kind follows from whether it carries code, so its files
    // can't disagree with its kind.
    if format != Format::Skill {
        report.extend(bundle::contents::check(draft.execution.kind, file, files));
    }
    let tool = finish(format, file, bytes, draft, manifest.as_ref(), &mut report);
    match tool {
        Some(tool) if report.problems.is_empty() => {
            // The lint reads the document already parsed above, and every
            // other text file raw.
            let findings =
                lint::check_directory(&lint::Context::of(&tool), document.as_ref(), files);
            Ok(Loaded {
                tool,
                warnings: report.warnings,
                findings,
            })
        }
        _ => Err(Error::Invalid(report.problems)),
    }
}

/// Load a single definition file given by name (`tool.json`, ...) and bytes,
/// as if it were the only file in its tool directory. Code files a definition
/// refers to are then missing, so function tools fail; use [`load`] for them.
pub fn load_file(file_name: &str, bytes: &[u8]) -> Result<Loaded, Error> {
    let mut files = ToolFiles::new();
    files.insert(file_name, bytes.to_vec());
    load(&files)
}

/// Apply `toolreg.toml`, check the registry name and version, and build the tool.
fn finish(
    format: Format,
    file: &str,
    original: &[u8],
    draft: Draft,
    manifest: Option<&ToolToml>,
    report: &mut Report,
) -> Option<Tool> {
    let m = manifest.cloned().unwrap_or_default();
    for key in &m.unknown_keys {
        report.warn(
            Problem::new(
                format!("toolreg.toml: tool.{key}"),
                "is not a known key and is ignored",
            )
            .with_fix(format!("use one of {}", manifest::KNOWN_KEYS.join(", "))),
        );
    }

    // Registry name.
    let registry_name = match (&m.name, &draft.name) {
        (Some(n), _) => match name::validate(n) {
            Ok(()) => Some(n.clone()),
            Err(why) => {
                report.error(
                    Problem::new("toolreg.toml: tool.name", format!("`{n}` {why}"))
                        .with_fix(name_fix(&name::suggest(n))),
                );
                None
            }
        },
        (None, Some(src)) => {
            let derived = name::derive(&src.value);
            match name::validate(&derived) {
                Ok(()) => Some(derived),
                Err(why) => {
                    let msg = if derived == src.value {
                        format!("`{}` is not a valid registry name: it {why}", src.value)
                    } else {
                        format!(
                            "`{}` gives the registry name `{derived}`, which {why}",
                            src.value
                        )
                    };
                    report.error(
                        Problem::new(src.path, msg).with_fix(name_fix(&name::suggest(&src.value))),
                    );
                    None
                }
            }
        }
        (None, None) => {
            report.error(
                Problem::new(
                    "toolreg.toml: tool.name",
                    "the definition gives no name to derive a registry name from",
                )
                .with_fix(name_fix("my-tool")),
            );
            None
        }
    };

    // Version.
    let version = match (&m.version, &draft.version) {
        (Some(v), _) => match validate::version(v) {
            Ok(v) => Some(v),
            Err(why) => {
                report.error(
                    Problem::new("toolreg.toml: tool.version", why)
                        .with_fix("use a SemVer 2.0 version like `1.0.0`"),
                );
                None
            }
        },
        (None, Some((raw, path))) => match validate::version_value(path, raw) {
            Ok(v) => Some(v),
            Err(p) => {
                report.error(p);
                None
            }
        },
        // A skill's `metadata.version` that can't be read is already named.
        (None, None) if report.problems.iter().any(|p| p.path == "metadata.version") => None,
        (None, None) => {
            let msg = match format {
                Format::Mcp => {
                    "an MCP tool definition has no version; toolreg.toml must supply one"
                }
                Format::Skill => {
                    "an Agent Skill has no version field; toolreg.toml or the frontmatter's `metadata.version` must supply one"
                }
                _ => "is missing",
            };
            report.error(
                Problem::new("version", msg)
                    .with_fix("set `[tool].version = \"1.0.0\"` in toolreg.toml"),
            );
            None
        }
    };

    let description = m
        .description
        .clone()
        .or(draft.description.clone())
        .unwrap_or_default();
    if description.trim().is_empty() {
        report.warn(
            Problem::new(
                "description",
                "is missing; people and agents choose tools by their description",
            )
            .with_fix("add a one-sentence description"),
        );
    }
    let license = m.license.clone().or(draft.license.clone());
    if license.is_none() {
        report.warn(
            Problem::new(
                "license",
                "no license given; others may not be allowed to use the tool",
            )
            .with_fix("set `[tool].license` in toolreg.toml to an SPDX expression such as `MIT`"),
        );
    }

    let registry_name = registry_name?;
    let version = version?;
    Some(Tool {
        format,
        definition_file: file.to_string(),
        registry_name,
        call_name: draft.call_name,
        version,
        title: draft.title,
        description,
        keywords: m.keywords.clone().unwrap_or(draft.keywords),
        license,
        authors: m.authors.clone().unwrap_or(draft.authors),
        homepage: m.homepage.clone().or(draft.homepage),
        repository: m.repository.clone().or(draft.repository),
        parameters: draft.parameters,
        result: draft.result,
        config_schema: draft.config_schema,
        execution: draft.execution,
        auth: draft.auth,
        hints: draft.hints,
        template: draft.template,
        model_params: draft.model_params,
        dependencies: draft.dependencies,
        icons: draft.icons,
        examples: draft.examples,
        extensions: draft.extensions,
        original: original.to_vec(),
    })
}

fn name_fix(suggestion: &str) -> String {
    let suggestion = if name::is_valid(suggestion) {
        suggestion
    } else {
        "my-tool"
    };
    format!("set `[tool].name` in toolreg.toml to a lowercase kebab-case name, e.g. `name = \"{suggestion}\"`")
}

/// True for a valid call name: 1–128 of `A-Za-z0-9_.-`.
pub fn is_call_name(call_name: &str) -> bool {
    !call_name.is_empty()
        && call_name.len() <= 128
        && call_name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Check a call name (what an agent calls): 1–128 of `A-Za-z0-9_.-` (the
/// MCP rule, which the other formats' names also follow).
pub(crate) fn check_call_name(path: &str, call_name: &str, report: &mut Report) {
    if !is_call_name(call_name) {
        report.error(
            Problem::new(path, format!("`{call_name}` is not a valid tool call name"))
                .with_fix("use 1–128 characters of letters, digits, `_`, `.` and `-`"),
        );
    }
}
