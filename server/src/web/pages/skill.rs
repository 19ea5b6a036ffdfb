//! The part of a tool page about an Agent Skill: its `SKILL.md` rendered
//! (by the README renderer, sanitized) beside its raw source — Markdown
//! hides text (HTML comments, link titles, raw HTML) that an agent still
//! reads, so the page shows every byte the agent gets, escaped — and its
//! files, the ones that make it run code marked.

use toolreg_core::bundle::contents::is_code_path;

use super::size_label;
use crate::web::catalog::VersionDetail;
use crate::web::html::SafeHtml;

/// A skill as its tool page shows it.
pub struct SkillView {
    pub rendered: SafeHtml,
    /// `SKILL.md` exactly as published (escaped by the template).
    pub source: String,
    /// `None` when the file list is not stored (an old version).
    pub files: Option<Vec<SkillFileLine>>,
    /// How many files are code.
    pub code_files: usize,
}

/// One file of a skill.
pub struct SkillFileLine {
    pub path: String,
    pub size: String,
    /// A code file: what makes the skill a `script` skill.
    pub code: bool,
}

impl SkillView {
    /// The view of `detail`, if it is a skill whose contents are served.
    pub fn of(detail: &VersionDetail) -> Option<SkillView> {
        let skill = detail.skill.as_ref()?;
        let files: Option<Vec<SkillFileLine>> = skill.files.as_ref().map(|files| {
            files
                .iter()
                .map(|(path, size)| SkillFileLine {
                    code: is_code_path(path),
                    size: size_label(*size),
                    path: path.clone(),
                })
                .collect()
        });
        Some(SkillView {
            rendered: skill.rendered.clone(),
            source: detail.tool.original_text(),
            code_files: files.iter().flatten().filter(|f| f.code).count(),
            files,
        })
    }
}
