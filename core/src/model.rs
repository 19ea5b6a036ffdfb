//! The canonical tool model: what every format reads into (DESIGN §2,
//! FORMATS.md). One [`Tool`] is one version of one tool.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::policy::ExecutionKind;

/// The four definition formats, by the id used in the API (`format` field).
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
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Matimo, Format::Shinkai, Format::Mcp, Format::Prompt];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Matimo => "matimo",
            Format::Shinkai => "shinkai",
            Format::Mcp => "mcp",
            Format::Prompt => "prompt",
        }
    }

    /// The definition file names this format is recognized by, preferred first.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Format::Matimo => &["definition.yaml", "definition.yml"],
            Format::Shinkai => &["metadata.json"],
            Format::Mcp => &["tool.json"],
            Format::Prompt => &["prompt.json"],
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
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub organization: Option<String>,
}

/// What running the tool does, and the format-specific details of how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
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
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub destructive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub idempotent: Option<bool>,
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
    pub format: Format,
    /// File name of the definition inside the bundle (`definition.yaml`, ...).
    pub definition_file: String,
    pub registry_name: String,
    pub call_name: String,
    pub version: semver::Version,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub license: Option<String>,
    #[serde(default)]
    pub authors: Vec<Author>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub homepage: Option<String>,
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
    pub execution: Execution,
    /// Authentication the tool needs (Matimo `authentication`, Shinkai `oauth[]`).
    #[serde(default)]
    pub auth: Vec<Value>,
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
    #[serde(default)]
    pub icons: Vec<Value>,
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
