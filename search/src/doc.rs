//! [`SearchDoc`]: what the index holds for one tool — its latest usable
//! version's metadata plus the registry facts (tier, downloads, blocked,
//! how many lint findings the version carries).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolreg_core::{ExecutionKind, Format, Tier};

/// One tool as the search index sees it: the latest version that is neither
/// yanked nor blocked (else the highest version, shown as blocked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchDoc {
    /// Registry name (kebab-case identity).
    pub name: String,
    /// The indexed version.
    pub version: String,
    /// The indexed version's definition fingerprint (`sha256:` + hex).
    #[serde(default)]
    pub definition_sha256: Option<String>,
    pub title: Option<String>,
    pub description: String,
    /// Extra searchable text (usage notes, README excerpt); indexed with the
    /// description but not shown in hits.
    #[serde(default)]
    pub notes: String,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub format: Format,
    pub execution: ExecutionKind,
    /// The publisher tier of the indexed version.
    pub tier: Tier,
    /// Downloads of every version of the tool.
    pub downloads: u64,
    pub updated_at: DateTime<Utc>,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    /// The indexed version's deprecation by its owners: shown in hits,
    /// filtered on (`deprecated=true|false`), and ranked below equal matches.
    #[serde(default)]
    pub deprecated: Option<toolreg_api::EncodableDeprecation>,
    /// How many definition lint findings the indexed version carries (0:
    /// clean; more: flagged).
    #[serde(default)]
    pub findings: u32,
    /// The indexed version came from trusted publishing (it records its CI
    /// run's provenance).
    #[serde(default)]
    pub provenance: bool,
}

impl SearchDoc {
    /// A document for a tool version loaded by `toolreg_core::load`, with the
    /// registry facts given as defaults (`tier`, no downloads, not blocked,
    /// no findings).
    pub fn from_tool(tool: &toolreg_core::Tool, tier: Tier, updated_at: DateTime<Utc>) -> Self {
        SearchDoc {
            name: tool.registry_name.clone(),
            version: tool.version.to_string(),
            definition_sha256: Some(toolreg_core::fingerprint::of_tool(tool)),
            title: tool.title.clone(),
            description: tool.description.clone(),
            notes: String::new(),
            keywords: tool.keywords.clone(),
            license: tool.license.clone(),
            format: tool.format,
            execution: tool.execution.kind,
            tier,
            downloads: 0,
            updated_at,
            blocked: false,
            blocked_reason: None,
            deprecated: None,
            findings: 0,
            provenance: false,
        }
    }
}
