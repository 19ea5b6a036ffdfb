//! What the web index reads: the [`Catalog`] trait (search, tool summary,
//! version detail) and the plain data it answers with. The pages are built
//! from these structs only, so the templates never see the store's rows or
//! the search index's types; the store-backed implementation lives in
//! `web::store_catalog`.

use toolreg_core::lint::Finding;
use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::{Format, Tool};

use crate::error::AppResult;
use crate::web::html::SafeHtml;

/// How search results are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogSort {
    #[default]
    Relevance,
    Downloads,
    Recent,
}

impl CatalogSort {
    pub const ALL: [CatalogSort; 3] = [
        CatalogSort::Relevance,
        CatalogSort::Downloads,
        CatalogSort::Recent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CatalogSort::Relevance => "relevance",
            CatalogSort::Downloads => "downloads",
            CatalogSort::Recent => "recent",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CatalogSort::Relevance => "Best match",
            CatalogSort::Downloads => "Most downloaded",
            CatalogSort::Recent => "Recently updated",
        }
    }
}

/// A search as the home page's form asks for it (already validated).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CatalogQuery {
    pub q: String,
    pub keyword: Option<String>,
    pub license: Option<String>,
    pub format: Option<Format>,
    pub execution: Option<ExecutionKind>,
    pub tier: Option<Tier>,
    /// `Some(true)`: only tools whose listed version carries lint findings;
    /// `Some(false)`: only clean ones.
    pub flagged: Option<bool>,
    pub sort: CatalogSort,
    /// 1-based.
    pub page: u32,
    pub per_page: u32,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub description: String,
    pub license: Option<String>,
    pub format: Format,
    pub execution: ExecutionKind,
    pub tier: Tier,
    pub downloads: u64,
    pub blocked: bool,
    /// How many lint findings the listed version carries (0: clean).
    pub findings: u32,
    /// The search module's highlighted name: text HTML-escaped, matches in `<mark>`.
    pub name_highlight: Option<String>,
    /// The search module's highlighted description snippet, same form.
    pub description_highlight: Option<String>,
}

/// Facet counts: `(value, count)` pairs, in the order to show them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CatalogFacets {
    pub license: Vec<(String, u64)>,
    pub keyword: Vec<(String, u64)>,
    pub execution: Vec<(String, u64)>,
    pub tier: Vec<(String, u64)>,
    pub format: Vec<(String, u64)>,
}

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchPage {
    pub total: u64,
    pub hits: Vec<Hit>,
    pub facets: CatalogFacets,
}

/// A publisher (owner or the publisher of a version) and their tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    pub login: String,
    pub tier: Tier,
}

/// One row of a tool's versions table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionListRow {
    pub version: semver::Version,
    pub sha256: String,
    pub size: u64,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    /// The quarantine's reason while the version is quarantined.
    pub quarantine_reason: Option<String>,
    pub execution: ExecutionKind,
    pub format: Format,
    /// RFC 3339.
    pub published_at: String,
    pub publisher: String,
    pub downloads: u64,
}

impl VersionListRow {
    /// The version's state, which decides what the pages show of it.
    pub fn state(&self) -> crate::models::VersionState {
        crate::models::VersionState::from_columns(
            self.yanked,
            self.blocked,
            self.blocked_reason.as_deref(),
            self.quarantine_reason.is_some(),
            self.quarantine_reason.as_deref(),
        )
    }
}

/// A tool and every version of it, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSummary {
    pub name: String,
    pub downloads: u64,
    pub owners: Vec<Publisher>,
    /// The newest versions by SemVer (at most `TOOL_VERSIONS_LISTED`).
    pub versions: Vec<VersionListRow>,
    /// How many versions the tool has in all.
    pub versions_total: u64,
    /// The version the summary shows: highest neither yanked nor blocked, else the highest.
    pub latest_version: String,
}

/// One version in full: the canonical manifest, the original definition, the README.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionDetail {
    pub row: VersionListRow,
    pub publisher: Publisher,
    /// The canonical model; `manifest.original` holds the original definition bytes.
    pub manifest: Tool,
    /// The README, rendered (empty without one).
    pub readme: SafeHtml,
    /// What the definition lint flagged when the version was published.
    pub findings: Vec<Finding>,
    /// The CI run that published it (trusted publishing), if one did.
    pub provenance: Option<toolreg_api::Provenance>,
    /// The stored definition fingerprint (`sha256:` + hex), if it has one.
    pub definition_sha256: Option<String>,
}

/// Where the web pages get their data. Implementations are synchronous (the
/// handlers call them on the blocking pool).
pub trait Catalog: Send + Sync + 'static {
    /// One page of results for `query`.
    fn search(&self, query: &CatalogQuery) -> AppResult<SearchPage>;
    /// The tool named `name` (normalized lookup), or `None`.
    fn tool(&self, name: &str) -> AppResult<Option<ToolSummary>>;
    /// One version of a tool, or `None` if the tool or the version is unknown.
    fn version(&self, name: &str, version: &semver::Version) -> AppResult<Option<VersionDetail>>;
    /// The lowest publisher tier the server's policy allows to publish `kind`.
    fn required_tier(&self, kind: ExecutionKind) -> Tier;
}
