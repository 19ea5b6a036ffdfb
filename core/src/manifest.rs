//! The `[tool]` table of a tool directory's `toolreg.toml`: registry metadata
//! that a definition format lacks (a version for MCP, a license for the
//! prompt format) or that the publisher wants to override (the registry name).
//!
//! Other tables (`[registry]`, `[tools]`, `[policy]` of an agent project) are
//! ignored here.

use crate::error::Problem;
use crate::model::Author;

/// The file name looked for at the root of a tool directory.
pub const FILE_NAME: &str = "toolreg.toml";

/// Largest accepted `toolreg.toml` (64 KiB): it holds a few short fields.
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024;

/// The `[tool]` table. Every field is optional; a given field supplies or
/// overrides what the definition says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolToml {
    /// Registry name (kebab-case), overriding the one derived from the definition.
    pub name: Option<String>,
    /// SemVer version, as written (validated by [`crate::load`]).
    pub version: Option<String>,
    /// SPDX license expression.
    pub license: Option<String>,
    /// Keywords, replacing the definition's.
    pub keywords: Option<Vec<String>>,
    /// Source repository URL.
    pub repository: Option<String>,
    /// Homepage URL, overriding the definition's.
    pub homepage: Option<String>,
    /// Description, overriding the definition's.
    pub description: Option<String>,
    /// Authors, replacing the definition's.
    pub authors: Option<Vec<Author>>,
    /// The call names of tools published together with this one (`toolreg
    /// import` writes them for the tools of one `tools/list`): the lint
    /// weighs a description naming one of them as a note, not a flag.
    pub siblings: Option<Vec<String>>,
    /// Keys of `[tool]` that toolreg doesn't know (likely typos); [`crate::load`]
    /// warns about each.
    pub unknown_keys: Vec<String>,
}

/// The keys `[tool]` may have.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "version",
    "license",
    "keywords",
    "repository",
    "homepage",
    "description",
    "authors",
    SIBLINGS_KEY,
];

/// The `[tool]` key listing the tools published together with this one.
pub const SIBLINGS_KEY: &str = "siblings";

/// At most this many siblings may be listed.
pub const MAX_SIBLINGS: usize = 1000;

impl ToolToml {
    /// Parse `toolreg.toml` text. Returns the table (absent `[tool]` gives
    /// the default) or every problem found, with paths like
    /// `toolreg.toml: tool.version`.
    pub fn parse(text: &str) -> Result<ToolToml, Vec<Problem>> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            vec![Problem::new(
                FILE_NAME,
                format!("is not valid TOML: {}", e.message().trim()),
            )]
        })?;
        let Some(tool) = doc.get("tool") else {
            return Ok(ToolToml::default());
        };
        let Some(tool) = tool.as_table() else {
            return Err(vec![Problem::new(
                path("tool"),
                "must be a table (`[tool]`)",
            )]);
        };
        let mut problems = Vec::new();
        let mut out = ToolToml {
            name: string(tool, "name", &mut problems),
            version: None,
            license: string(tool, "license", &mut problems),
            keywords: None,
            repository: string(tool, "repository", &mut problems),
            homepage: string(tool, "homepage", &mut problems),
            description: string(tool, "description", &mut problems),
            authors: None,
            siblings: None,
            unknown_keys: tool
                .keys()
                .filter(|k| !KNOWN_KEYS.contains(&k.as_str()))
                .cloned()
                .collect(),
        };
        match tool.get("version") {
            None => {}
            Some(toml::Value::String(s)) => out.version = Some(s.clone()),
            Some(other) => problems.push(
                Problem::new(
                    path("tool.version"),
                    format!("must be a SemVer string, not {}", other.type_str()),
                )
                .with_fix("write it as a quoted SemVer string, like `version = \"1.0.0\"`"),
            ),
        }
        if let Some(v) = tool.get("keywords") {
            match v.as_array() {
                Some(items) => {
                    let mut kws = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        match item.as_str() {
                            Some(s) => kws.push(s.to_string()),
                            None => problems.push(Problem::new(
                                path(&format!("tool.keywords[{i}]")),
                                "must be a string",
                            )),
                        }
                    }
                    out.keywords = Some(kws);
                }
                None => problems.push(Problem::new(
                    path("tool.keywords"),
                    "must be an array of strings",
                )),
            }
        }
        if let Some(v) = tool.get(SIBLINGS_KEY) {
            out.siblings = siblings(v, &mut problems);
        }
        if let Some(v) = tool.get("authors") {
            match v.as_array() {
                Some(items) => {
                    let mut authors = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        match author(item) {
                            Some(a) => authors.push(a),
                            None => problems.push(
                                Problem::new(
                                    path(&format!("tool.authors[{i}]")),
                                    "must be a string (\"Name <email>\") or a table with `name`",
                                )
                                .with_fix("write `authors = [\"Ada Lovelace <ada@example.com>\"]`"),
                            ),
                        }
                    }
                    out.authors = Some(authors);
                }
                None => problems.push(Problem::new(path("tool.authors"), "must be an array")),
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(problems)
        }
    }
}

fn path(field: &str) -> String {
    format!("{FILE_NAME}: {field}")
}

fn string(table: &toml::Table, key: &str, problems: &mut Vec<Problem>) -> Option<String> {
    match table.get(key) {
        None => None,
        Some(toml::Value::String(s)) => Some(s.clone()),
        Some(other) => {
            problems.push(Problem::new(
                path(&format!("tool.{key}")),
                format!("must be a string, not {}", other.type_str()),
            ));
            None
        }
    }
}

/// Parse `"Name <email>"` or `{ name, email?, organization? }`.
fn author(value: &toml::Value) -> Option<Author> {
    match value {
        toml::Value::String(s) => Some(parse_author(s)),
        toml::Value::Table(t) => {
            let name = t.get("name")?.as_str()?.to_string();
            let email = t.get("email").and_then(|v| v.as_str()).map(str::to_string);
            let organization = t
                .get("organization")
                .and_then(|v| v.as_str())
                .map(str::to_string);
            Some(Author {
                name,
                email,
                organization,
            })
        }
        _ => None,
    }
}

/// Parse an author string of the form `Name <email>` (the email part optional).
pub fn parse_author(s: &str) -> Author {
    let s = s.trim();
    if let (Some(open), true) = (s.rfind('<'), s.ends_with('>')) {
        let name = s[..open].trim().to_string();
        let email = s[open + 1..s.len() - 1].trim().to_string();
        return Author {
            name,
            email: (!email.is_empty()).then_some(email),
            organization: None,
        };
    }
    Author {
        name: s.to_string(),
        email: None,
        organization: None,
    }
}

/// `[tool] siblings`: an array of at most [`MAX_SIBLINGS`] call names.
fn siblings(v: &toml::Value, problems: &mut Vec<Problem>) -> Option<Vec<String>> {
    let Some(items) = v.as_array() else {
        problems.push(Problem::new(
            path("tool.siblings"),
            "must be an array of tool call names",
        ));
        return None;
    };
    if items.len() > MAX_SIBLINGS {
        problems.push(Problem::new(
            path("tool.siblings"),
            format!(
                "lists {} tools; at most {MAX_SIBLINGS} may be listed",
                items.len()
            ),
        ));
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let name = item.as_str().unwrap_or_default();
        if crate::formats::is_call_name(name) {
            out.push(name.to_string());
        } else {
            problems.push(
                Problem::new(
                    path(&format!("tool.siblings[{i}]")),
                    "must be a tool call name (1–128 letters, digits, `_`, `.` and `-`)",
                )
                .with_fix("list the call names of the tools published together, e.g. `siblings = [\"read_file\", \"write_file\"]`"),
            );
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_tool_table() {
        let t = ToolToml::parse(
            r#"
[tool]
name = "web-search"
version = "1.2.0"
license = "MIT"
keywords = ["search", "web"]
repository = "https://example.com/repo"
authors = ["Ada <ada@example.com>", { name = "Bob", organization = "B Inc" }]

[registry]
url = "http://x"
"#,
        )
        .unwrap();
        assert_eq!(t.name.as_deref(), Some("web-search"));
        assert_eq!(t.version.as_deref(), Some("1.2.0"));
        assert_eq!(t.keywords.unwrap(), vec!["search", "web"]);
        let authors = t.authors.unwrap();
        assert_eq!(authors[0].email.as_deref(), Some("ada@example.com"));
        assert_eq!(authors[1].organization.as_deref(), Some("B Inc"));
    }

    #[test]
    fn reports_every_bad_field() {
        let problems =
            ToolToml::parse("[tool]\nversion = 3\nname = 1\nkeywords = [1]\n").unwrap_err();
        let paths: Vec<_> = problems.iter().map(|p| p.path.as_str()).collect();
        assert!(paths.contains(&"toolreg.toml: tool.version"), "{paths:?}");
        assert!(paths.contains(&"toolreg.toml: tool.name"));
        assert!(paths.contains(&"toolreg.toml: tool.keywords[0]"));
        assert!(ToolToml::parse("[tool").is_err());
        assert_eq!(ToolToml::parse("").unwrap(), ToolToml::default());
        let t = ToolToml::parse("[tool]\nlicence = \"MIT\"\n").unwrap();
        assert_eq!(t.unknown_keys, vec!["licence"]);
    }

    #[test]
    fn siblings_are_call_names() {
        let m = ToolToml::parse("[tool]\nsiblings = [\"read_file\", \"git.push\"]\n").unwrap();
        assert_eq!(m.siblings.unwrap(), ["read_file", "git.push"]);
        let e = ToolToml::parse("[tool]\nsiblings = [\"a b\", 3]\n").unwrap_err();
        assert_eq!(e[0].path, "toolreg.toml: tool.siblings[0]");
        assert_eq!(e[1].path, "toolreg.toml: tool.siblings[1]");
        assert!(ToolToml::parse("[tool]\nsiblings = \"read_file\"\n").is_err());
    }
}
