//! The canonical tool model: what every format reads into (each format
//! module under `formats/` describes its field mapping). One [`Tool`] is one
//! version of one tool.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::policy::ExecutionKind;

/// The five definition formats, by the id used in the API (`format` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Matimo tool YAML, `definition.yaml` / `definition.yml`.
    Matimo,
    /// Shinkai metadata JSON, `metadata.json` (code in `tool.ts` / `tool.py`).
    Shinkai,
    /// MCP `Tool` JSON, `tool.json`.
    Mcp,
    /// "JSON Format for LLM Tools", `prompt.json`.
    Prompt,
    /// An Agent Skill, `SKILL.md` (YAML frontmatter, then Markdown).
    Skill,
}

impl Format {
    /// Every format, in detection order.
    pub const ALL: [Format; 5] = [
        Format::Matimo,
        Format::Shinkai,
        Format::Mcp,
        Format::Prompt,
        Format::Skill,
    ];

    /// The format id used in the API (`matimo`, `shinkai`, `mcp`, `prompt`, `skill`).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Matimo => "matimo",
            Format::Shinkai => "shinkai",
            Format::Mcp => "mcp",
            Format::Prompt => "prompt",
            Format::Skill => "skill",
        }
    }

    /// The definition file names this format is recognized by, preferred first.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Format::Matimo => &["definition.yaml", "definition.yml"],
            Format::Shinkai => &["metadata.json"],
            Format::Mcp => &["tool.json"],
            Format::Prompt => &["prompt.json"],
            Format::Skill => &["SKILL.md"],
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                format!("unknown format `{s}` (expected one of matimo, shinkai, mcp, prompt)")
            })
    }
}

/// An author or creator of a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Author {
    /// Display name.
    pub name: String,
    /// Contact email.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub email: Option<String>,
    /// Organization the author acts for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub organization: Option<String>,
}

/// What running the tool does, and the format-specific details of how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// What running the tool does (decides the tier needed to publish it).
    pub kind: ExecutionKind,
    /// Format-specific detail: Matimo http {method,url,...}, command
    /// {command,args,...}, function {code,timeout}; Shinkai {runner,
    /// operating_system, tool_set, code_file}; `null` for prompt/schema.
    #[serde(default)]
    pub detail: Value,
}

/// Behaviour hints (advisory, as in MCP annotations).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hints {
    /// The tool does not change its environment.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read_only: Option<bool>,
    /// The tool may destroy data or state.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub idempotent: Option<bool>,
    /// The tool talks to an open world (the internet), not a closed set of entities.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub open_world: Option<bool>,
    /// Matimo `requires_approval`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub requires_approval: Option<bool>,
}

/// One version of one tool, in the canonical model.
///
/// `registry_name` is the tool's identity in the registry (kebab-case);
/// `call_name` is exactly what an agent calls, exported unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The definition format it was published in.
    pub format: Format,
    /// File name of the definition inside the bundle (`definition.yaml`, ...).
    pub definition_file: String,
    /// The tool's identity in the registry (lowercase kebab-case).
    pub registry_name: String,
    /// Exactly what an agent calls (exported unchanged).
    pub call_name: String,
    /// Strict SemVer 2.0 version.
    pub version: semver::Version,
    /// Human-readable title.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    /// What the tool does (may be empty; a warning says so).
    #[serde(default)]
    pub description: String,
    /// Search keywords.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// SPDX license expression.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub license: Option<String>,
    /// Authors or creators.
    #[serde(default)]
    pub authors: Vec<Author>,
    /// Homepage URL.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub homepage: Option<String>,
    /// Source repository URL.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub repository: Option<String>,
    /// Input parameters as a JSON Schema of `type: object`.
    pub parameters: Value,
    /// Result as a JSON Schema, when the format has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<Value>,
    /// Configuration (secrets, settings) as a JSON Schema (Shinkai `configurations`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub config_schema: Option<Value>,
    /// Execution kind and format-specific detail.
    pub execution: Execution,
    /// Authentication the tool needs (Matimo `authentication`, Shinkai `oauth[]`).
    #[serde(default)]
    pub auth: Vec<Value>,
    /// Behaviour hints.
    #[serde(default)]
    pub hints: Hints,
    /// Prompt template (`{{var}}` placeholders), prompt format only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub template: Option<String>,
    /// Model parameters (temperature, max_tokens, ...), prompt format only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model_params: Option<Value>,
    /// Other tools this one calls (Shinkai `tools[]`).
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Icons (MCP icon objects with at least `src`).
    #[serde(default)]
    pub icons: Vec<Value>,
    /// Usage examples (Matimo `examples`).
    #[serde(default)]
    pub examples: Vec<Value>,
    /// Every key of the source document the model does not name, kept as is.
    #[serde(default)]
    pub extensions: Map<String, Value>,
    /// The definition file exactly as published.
    #[serde(skip)]
    pub original: Vec<u8>,
}

impl Tool {
    /// The original definition as text (definitions are UTF-8 documents).
    pub fn original_text(&self) -> String {
        String::from_utf8_lossy(&self.original).into_owned()
    }

    /// The registry name in its normalized (uniqueness) form.
    pub fn normalized_name(&self) -> String {
        crate::name::normalize(&self.registry_name)
    }
}
