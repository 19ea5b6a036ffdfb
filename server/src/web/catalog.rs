//! What the web index reads: the [`Catalog`] trait, answered in the API's
//! own types (`toolreg-api`): the search answer, the tool summary, and for
//! one version its API answer together with the canonical model and the
//! rendered README ([`VersionDetail`]). The pages are built from these only,
//! so they show what the API shows, and the templates never see the store's
//! rows; the store-backed implementation lives in `web::store_catalog`.

use toolreg_api::{EncodableTool, EncodableVersion, SearchAnswer};
use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::Tool;
use toolreg_search::SearchParams;

use crate::error::AppResult;
use crate::models::version::HasState;
use crate::models::VersionState;
use crate::web::html::SafeHtml;

/// One version in full, as a page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionDetail {
    /// The version as the API answers it: its state, publisher, digests,
    /// findings (their excerpts withheld with the contents) and provenance.
    pub version: EncodableVersion,
    /// The canonical model, for the page's texts (description, parameters)
    /// and, when the state serves the contents, its definition, exports and
    /// code; `tool.original` holds the original definition bytes.
    pub tool: Tool,
    /// The README, rendered (empty without one).
    pub readme: SafeHtml,
    /// An Agent Skill's `SKILL.md` rendered and its files (`None` for other
    /// formats, and while the version's contents are withheld).
    pub skill: Option<SkillDetail>,
}

/// What a skill's page shows beyond other tools'.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDetail {
    /// The Markdown body of `SKILL.md` (after the frontmatter), rendered by
    /// the README renderer within the README's limit.
    pub rendered: SafeHtml,
    /// The skill's files, `(path, size)` in path order (`None` for a skill
    /// published before its file list was stored).
    pub files: Option<Vec<(String, u64)>>,
}

impl VersionDetail {
    /// The version's state, which decides what the pages show of it.
    pub fn state(&self) -> VersionState {
        self.version.state()
    }

    /// The version, parsed (stored versions are SemVer).
    pub fn semver(&self) -> Option<semver::Version> {
        semver::Version::parse(&self.version.version).ok()
    }
}

/// Where the web pages get their data. Implementations are synchronous (the
/// handlers call them on the blocking pool).
pub trait Catalog: Send + Sync + 'static {
    /// One page of results for `params` (parsed by the search crate's parser).
    fn search(&self, params: &SearchParams) -> AppResult<SearchAnswer>;
    /// The summary of the tool named `name` (normalized lookup), or `None`.
    fn tool(&self, name: &str) -> AppResult<Option<EncodableTool>>;
    /// One version of a tool, or `None` if the tool or the version is unknown.
    fn version(&self, name: &str, version: &semver::Version) -> AppResult<Option<VersionDetail>>;
    /// The lowest publisher tier the server's policy allows to publish `kind`.
    fn required_tier(&self, kind: ExecutionKind) -> Tier;
}
