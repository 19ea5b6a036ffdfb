//! [`Catalog`] over the running server: tools and versions from the store
//! (the same model functions the metadata API uses), search from the tantivy
//! index (`SearchIndex::query`), tier requirements from the server's policy.

use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::{Format, Tool};
use toolreg_search::{SearchParams, SearchResults, SearchSort};

use super::catalog::{
    Catalog, Facets, Hit, Publisher, SearchPage, SearchQuery, Sort, ToolSummary, VersionDetail,
    VersionRow,
};
use crate::app::AppState;
use crate::error::{internal, AppError, AppResult};
use crate::models::version::{list_for_tool, VersionContent, VersionSummary};
use crate::models::{owner, ToolRow, User};
use crate::views::rfc3339;

impl Catalog for AppState {
    fn search(&self, query: &SearchQuery) -> AppResult<SearchPage> {
        let params = search_params(query);
        let results = self.search.query(&params)?;
        Ok(search_page(results))
    }

    fn tool(&self, name: &str) -> AppResult<Option<ToolSummary>> {
        let mut conn = self.db.conn()?;
        let conn = &mut *conn;
        let Some(tool) = ToolRow::by_name(conn, name)? else {
            return Ok(None);
        };
        let owners = owner::list(conn, tool.id)?
            .iter()
            .map(|u| Publisher {
                login: u.login.clone(),
                tier: u.tier(),
            })
            .collect();
        let mut versions = Vec::new();
        for (v, login) in list_for_tool(conn, tool.id)? {
            versions.push(summary_row(v, login)?);
        }
        // Latest: the highest version neither yanked nor blocked, else the highest
        // (the same rule as `GET /api/v1/tools/{name}`).
        let latest_version = versions
            .iter()
            .find(|v| !v.yanked && !v.blocked)
            .or_else(|| versions.first())
            .map(|v| v.version.to_string())
            .unwrap_or_default();
        Ok(Some(ToolSummary {
            name: tool.name,
            downloads: count(tool.downloads),
            owners,
            versions,
            latest_version,
        }))
    }

    fn version(&self, name: &str, version: &semver::Version) -> AppResult<Option<VersionDetail>> {
        let mut conn = self.db.conn()?;
        let conn = &mut *conn;
        let Some(tool) = ToolRow::by_name(conn, name)? else {
            return Ok(None);
        };
        let Some(v) = crate::models::VersionRow::find(conn, tool.id, &version.to_string())? else {
            return Ok(None);
        };
        let user = User::find(conn, v.publisher_id)?;
        let content = VersionContent::of(conn, v.id)?;
        let mut manifest: Tool = serde_json::from_str(&content.manifest).map_err(|e| {
            internal(format!(
                "stored manifest of {} {} does not parse: {e}",
                tool.name, v.version
            ))
        })?;
        manifest.original = content.definition.into_bytes();
        let row = VersionRow {
            version: parse_version(&v.version)?,
            sha256: v.sha256,
            size: count(v.size),
            yanked: v.yanked,
            blocked: v.blocked,
            blocked_reason: v.blocked_reason,
            execution: parse_kind(&v.execution)?,
            format: parse_format(&v.format)?,
            published_at: rfc3339(&v.published_at),
            publisher: user.login.clone(),
            downloads: count(v.downloads),
        };
        // The tier the version was published with (what the API shows too).
        let tier = v.publisher_tier.parse::<Tier>().unwrap_or(Tier::Untrusted);
        Ok(Some(VersionDetail {
            row,
            publisher: Publisher {
                login: user.login,
                tier,
            },
            manifest,
            readme: content.readme,
        }))
    }

    fn required_tier(&self, kind: ExecutionKind) -> Tier {
        self.policy.required_tier(kind)
    }
}

fn summary_row(v: VersionSummary, login: String) -> AppResult<VersionRow> {
    Ok(VersionRow {
        version: parse_version(&v.version)?,
        sha256: v.sha256,
        size: count(v.size),
        yanked: v.yanked,
        blocked: v.blocked,
        blocked_reason: v.blocked_reason,
        execution: parse_kind(&v.execution)?,
        format: parse_format(&v.format)?,
        published_at: rfc3339(&v.published_at),
        publisher: login,
        downloads: count(v.downloads),
    })
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn parse_version(s: &str) -> AppResult<semver::Version> {
    semver::Version::parse(s)
        .map_err(|e| internal(format!("stored version `{s}` is not SemVer: {e}")))
}

fn parse_kind(s: &str) -> AppResult<ExecutionKind> {
    s.parse()
        .map_err(|e: String| AppError::Internal(format!("stored execution kind: {e}")))
}

fn parse_format(s: &str) -> AppResult<Format> {
    s.parse()
        .map_err(|e: String| AppError::Internal(format!("stored format: {e}")))
}

/// The web form's query as the search module's parameters.
fn search_params(q: &SearchQuery) -> SearchParams {
    SearchParams {
        q: q.q.clone(),
        keyword: q.keyword.clone(),
        license: q.license.clone(),
        format: q.format,
        execution: q.execution,
        tier: q.tier,
        sort: match q.sort {
            Sort::Relevance => SearchSort::Relevance,
            Sort::Downloads => SearchSort::Downloads,
            Sort::Recent => SearchSort::Recent,
        },
        page: q.page as usize,
        per_page: q.per_page as usize,
    }
}

fn search_page(r: SearchResults) -> SearchPage {
    SearchPage {
        total: r.total,
        hits: r
            .hits
            .into_iter()
            .map(|h| Hit {
                name: h.name,
                version: h.version,
                title: h.title,
                description: h.description,
                license: h.license,
                format: h.format,
                execution: h.execution,
                tier: h.tier,
                downloads: h.downloads,
                blocked: h.blocked,
                name_highlight: Some(h.highlights.name),
                description_highlight: Some(h.highlights.description),
            })
            .collect(),
        facets: Facets {
            license: r.facets.license.0,
            keyword: r.facets.keyword.0,
            execution: r.facets.execution.0,
            tier: r.facets.tier.0,
            format: Vec::new(),
        },
    }
}
