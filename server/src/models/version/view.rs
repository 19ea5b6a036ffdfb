//! A version as the API answers it ([`encode`]: `GET
//! /api/v1/tools/{name}/{version}`, which the web's version pages render
//! too), with what its state withholds left out.

use serde_json::Value;
use toolreg_api::{EncodablePublisher, EncodableVersion, SkillFrontmatter};

use super::{HasState, VersionContent, VersionRow};
use crate::db::DbConnection;
use crate::encode::rfc3339;
use crate::error::{internal, AppResult};
use crate::models::User;

/// The largest README.md a bundle may carry (it is shown on the tool page);
/// a larger one stored before the limit is left out of the answer.
pub const MAX_README: usize = 512 * 1024;

/// The API answer for version `v` of the tool `tool_name`, with its texts
/// `content`. What the version's state withholds is left out: its contents
/// (the manifest, the definition and the finding excerpts that quote them)
/// and, when its texts are withheld, its README.
pub fn encode(
    conn: &mut DbConnection,
    tool_name: &str,
    v: &VersionRow,
    content: &VersionContent,
) -> AppResult<EncodableVersion> {
    let user = User::find(conn, v.publisher_id)?;
    let log_index = crate::transparency::store::index_of(conn, v.id)?;
    let provenance = VersionRow::provenance(conn, v.id)?;
    let findings = serde_json::from_str(&content.findings).map_err(|e| {
        internal(format!(
            "stored lint findings of version {} are not JSON: {e}",
            v.id
        ))
    })?;
    let state = v.state();
    let contents = state.contents_served();
    let texts = state.texts_shown();
    let manifest: Value = if contents {
        serde_json::from_str(&content.manifest).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let skill = skill_frontmatter(&manifest);
    Ok(EncodableVersion {
        name: tool_name.to_string(),
        version: v.version.clone(),
        sha256: v.sha256.clone(),
        definition_sha256: v.definition_sha256.clone(),
        size: v.size,
        format: v.format,
        execution: v.execution,
        yanked: v.yanked,
        blocked: v.blocked,
        blocked_reason: v.blocked_reason.clone(),
        quarantined: v.quarantined,
        quarantine_reason: v.quarantine_reason.clone(),
        deprecated: v.deprecation(),
        published_at: rfc3339(&v.published_at),
        downloads: v.downloads,
        // The tier the version was published with.
        publisher: EncodablePublisher {
            login: user.login,
            tier: v.publisher_tier,
        },
        manifest,
        definition_file: content.definition_file.clone(),
        definition: contents.then(|| content.definition.clone()),
        readme: content
            .readme
            .clone()
            .filter(|r| texts && r.len() <= MAX_README),
        log_index,
        findings: state.findings(findings),
        provenance,
        skill,
    })
}

/// An Agent Skill's frontmatter, from the canonical manifest's `skill`
/// extension (`None` for other formats and for a withheld manifest).
pub fn skill_frontmatter(manifest: &Value) -> Option<SkillFrontmatter> {
    SkillFrontmatter::from_value(manifest.pointer("/extensions/skill/frontmatter")?)
}
