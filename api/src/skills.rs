//! Agent Skills: a skill version's frontmatter in the version JSON
//! ([`SkillFrontmatter`]), and the discovery index real skill clients read
//! at `/.well-known/agent-skills/index.json` ([`SkillIndex`], the Agent
//! Skills discovery format v0.2.0).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `$schema` of a discovery index in format v0.2.0.
pub const DISCOVERY_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// The frontmatter of a skill version's `SKILL.md`, under `skill` in
/// `GET /api/v1/tools/{name}/{version}` (null for other formats and while
/// the version's contents are withheld).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkillFrontmatter {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub license: Option<String>,
    #[serde(default)]
    pub compatibility: Option<String>,
    /// The `metadata` mapping as written (values are usually strings).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: Map<String, Value>,
    /// The tools the skill may use, space-separated, as written.
    #[serde(default, rename = "allowed-tools")]
    pub allowed_tools: Option<String>,
}

impl SkillFrontmatter {
    /// Read the fields the specification lists from a parsed frontmatter
    /// mapping; `None` unless `name` and `description` are strings.
    pub fn from_value(frontmatter: &Value) -> Option<SkillFrontmatter> {
        let text = |key: &str| {
            frontmatter
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Some(SkillFrontmatter {
            name: text("name")?,
            description: text("description")?,
            license: text("license"),
            compatibility: text("compatibility"),
            metadata: frontmatter
                .get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            allowed_tools: text("allowed-tools"),
        })
    }
}

/// `GET /.well-known/agent-skills/index.json`: every skill's latest usable
/// version, in the Agent Skills discovery format v0.2.0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkillIndex {
    /// Always [`DISCOVERY_SCHEMA`].
    #[serde(rename = "$schema")]
    pub schema: String,
    pub skills: Vec<SkillIndexEntry>,
}

/// One skill of the discovery index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkillIndexEntry {
    pub name: String,
    /// Always `archive`: a `.tar.gz` with `SKILL.md` at its root.
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
    /// Where the archive is downloaded (absolute).
    pub url: String,
    /// `sha256:` + the hex SHA-256 of exactly the bytes at `url`.
    pub digest: String,
    /// The registry's extension: the version listed, and the lint findings
    /// of a flagged version.
    #[serde(rename = "x-toolreg")]
    pub toolreg: SkillIndexExtension,
}

/// The registry's own fields of a discovery entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkillIndexExtension {
    pub version: String,
    /// What the definition lint flagged (`[]` when clean).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub findings: Vec<toolreg_core::lint::Finding>,
}
