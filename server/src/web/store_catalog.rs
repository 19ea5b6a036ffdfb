//! [`Catalog`] over the running server: tools and versions from the store
//! (the same model functions the metadata API uses), search from the tantivy
//! index (`SearchIndex::query`), tier requirements from the server's policy.

use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::Tool;
use toolreg_search::{FindingsFilter, SearchParams, SearchSort};

use super::catalog::{
    Catalog, CatalogFacets, CatalogQuery, CatalogSort, Hit, Publisher, SearchPage, ToolSummary,
    VersionDetail, VersionListRow,
};
use crate::app::AppState;
use crate::controllers::tools::publish::MAX_README;
use crate::encode::rfc3339;
use crate::error::{internal, AppResult};
use crate::models::version::{self, VersionContent, VersionSummary};
use crate::models::VersionRow;
use crate::models::{owner, ToolRow, User};
use crate::views::SearchAnswer;
use crate::web::html::{self, SafeHtml};
use toolreg_api::TOOL_VERSIONS_LISTED;

impl Catalog for AppState {
    fn search(&self, query: &CatalogQuery) -> AppResult<SearchPage> {
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
                tier: u.tier,
            })
            .collect();
        let rows = version::newest(conn, tool.id, 0, TOOL_VERSIONS_LISTED)?;
        let latest_version = crate::models::tool_summary::load(conn, &tool)?
            .latest_version
            .unwrap_or_default();
        let versions_total = count(VersionRow::count(conn, tool.id)?);
        let mut versions = Vec::with_capacity(rows.len());
        for (v, login) in rows {
            versions.push(summary_row(v, login)?);
        }
        Ok(Some(ToolSummary {
            name: tool.name,
            downloads: count(tool.downloads),
            owners,
            versions,
            versions_total,
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
        let findings = serde_json::from_str(&content.findings).map_err(|e| {
            internal(format!(
                "stored lint findings of {} {} are not JSON: {e}",
                tool.name, v.version
            ))
        })?;
        let definition_sha256 = v.definition_sha256.clone();
        let row = VersionListRow {
            version: parse_version(&v.version)?,
            sha256: v.sha256,
            size: count(v.size),
            yanked: v.yanked,
            blocked: v.blocked,
            blocked_reason: v.blocked_reason,
            quarantine_reason: v
                .quarantined
                .then(|| v.quarantine_reason.unwrap_or_default()),
            execution: v.execution,
            format: v.format,
            published_at: rfc3339(&v.published_at),
            publisher: user.login.clone(),
            downloads: count(v.downloads),
        };
        Ok(Some(VersionDetail {
            row,
            // The tier the version was published with (what the API shows too).
            publisher: Publisher {
                login: user.login,
                tier: v.publisher_tier,
            },
            manifest,
            readme: readme_html(content.readme_html, content.readme.as_deref()),
            findings,
            provenance: VersionRow::provenance(conn, v.id)?
                .and_then(|p| serde_json::from_str(&p).ok()),
            definition_sha256,
        }))
    }

    fn required_tier(&self, kind: ExecutionKind) -> Tier {
        self.policy.required_tier(kind)
    }
}

fn summary_row(v: VersionSummary, login: String) -> AppResult<VersionListRow> {
    Ok(VersionListRow {
        version: parse_version(&v.version)?,
        sha256: v.sha256,
        size: count(v.size),
        yanked: v.yanked,
        blocked: v.blocked,
        blocked_reason: v.blocked_reason,
        quarantine_reason: v
            .quarantined
            .then(|| v.quarantine_reason.unwrap_or_default()),
        execution: v.execution,
        format: v.format,
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

/// The web form's query as the search module's parameters.
fn search_params(q: &CatalogQuery) -> SearchParams {
    SearchParams {
        q: q.q.clone(),
        keyword: q.keyword.clone(),
        license: q.license.clone(),
        format: q.format,
        execution: q.execution,
        tier: q.tier,
        findings: q.flagged.map(|f| {
            if f {
                FindingsFilter::Flagged
            } else {
                FindingsFilter::None
            }
        }),
        // The web form has no provenance filter; the API has.
        provenance: None,
        sort: match q.sort {
            CatalogSort::Relevance => SearchSort::Relevance,
            CatalogSort::Downloads => SearchSort::Downloads,
            CatalogSort::Recent => SearchSort::Recent,
        },
        page: q.page as usize,
        per_page: q.per_page as usize,
    }
}

fn search_page(r: SearchAnswer) -> SearchPage {
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
                findings: h.findings,
                name_highlight: Some(h.highlights.name),
                description_highlight: Some(h.highlights.description),
            })
            .collect(),
        facets: CatalogFacets {
            license: r.facets.license.0,
            keyword: r.facets.keyword.0,
            execution: r.facets.execution.0,
            tier: r.facets.tier.0,
            format: Vec::new(),
        },
    }
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
