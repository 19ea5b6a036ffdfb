//! [`Catalog`] over the running server: tool summaries and versions from the
//! store through the same model functions the API answers with
//! (`tool_summary::load`, `version::encode`), search from the tantivy index
//! (`SearchIndex::query`), tier requirements from the server's policy.

use toolreg_api::{EncodableTool, SearchAnswer};
use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::{Format, Tool};
use toolreg_search::SearchParams;

use super::catalog::{Catalog, SkillDetail, VersionDetail};
use crate::app::AppState;
use crate::error::{internal, AppResult};
use crate::models::skill_archive::SkillArchive;
use crate::models::version::{self, HasState, VersionContent, MAX_README};
use crate::models::{tool_summary, ToolRow, VersionRow};
use crate::web::html::{self, SafeHtml};

impl Catalog for AppState {
    fn search(&self, params: &SearchParams) -> AppResult<SearchAnswer> {
        Ok(self.search.query(params)?)
    }

    fn tool(&self, name: &str) -> AppResult<Option<EncodableTool>> {
        let mut conn = self.db.conn()?;
        let conn = &mut **conn;
        let Some(tool) = ToolRow::by_name(conn, name)? else {
            return Ok(None);
        };
        tool_summary::load(conn, &tool).map(Some)
    }

    fn version(&self, name: &str, wanted: &semver::Version) -> AppResult<Option<VersionDetail>> {
        let mut conn = self.db.conn()?;
        let conn = &mut **conn;
        let Some(tool) = ToolRow::by_name(conn, name)? else {
            return Ok(None);
        };
        let Some(v) = VersionRow::find(conn, tool.id, &wanted.to_string())? else {
            return Ok(None);
        };
        let content = VersionContent::of(conn, v.id)?;
        let encoded = version::encode(conn, &tool.name, &v, &content)?;
        let mut model: Tool = serde_json::from_str(&content.manifest).map_err(|e| {
            internal(format!(
                "stored manifest of {} {} does not parse: {e}",
                tool.name, v.version
            ))
        })?;
        model.original = content.definition.into_bytes();
        let readme = if v.state().texts_shown() {
            readme_html(content.readme_html, content.readme.as_deref())
        } else {
            SafeHtml::default()
        };
        let skill = if v.format == Format::Skill && v.state().contents_served() {
            Some(SkillDetail {
                rendered: skill_body_html(&model.original_text()),
                files: SkillArchive::of(conn, v.id)?.map(|a| a.file_list()),
            })
        } else {
            None
        };
        Ok(Some(VersionDetail {
            version: encoded,
            tool: model,
            readme,
            skill,
        }))
    }

    fn required_tier(&self, kind: ExecutionKind) -> Tier {
        self.policy.required_tier(kind)
    }
}

/// The Markdown body of `SKILL.md` (what follows its frontmatter) rendered
/// like a README, from at most the README's limit of text. Rendered on
/// each view, off the workers; what Markdown hides (comments, link titles)
/// is on the page's raw source beside it.
fn skill_body_html(text: &str) -> SafeHtml {
    let body = toolreg_core::formats::skill::split(text)
        .map(|s| s.body)
        .unwrap_or(text);
    let mut end = body.len().min(MAX_README);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    html::markdown(&body[..end])
}

/// The README's HTML: as rendered at publish, or — for a version published
/// before that was stored — rendered now (the catalog runs on the blocking
/// pool, never on a worker), from at most the first 512 KiB of the text so
/// an old, oversized README costs no more than a new one.
fn readme_html(stored: Option<String>, text: Option<&str>) -> SafeHtml {
    if let Some(rendered) = stored {
        return SafeHtml::stored(rendered);
    }
    let Some(text) = text else {
        return SafeHtml::default();
    };
    let mut end = text.len().min(MAX_README);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    html::markdown(&text[..end])
}
