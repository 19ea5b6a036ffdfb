//! The pages (askama templates in `server/templates/web/`) and the view
//! models they print. Everything here is plain text that askama escapes,
//! except [`SafeHtml`] values, which come from `web::html`'s sanitizers.

use askama::Template;
use serde_json::Value;
use toolreg_core::export::{export, ExportFormat};
use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::Format;

use super::assets::{Assets, ASSETS};
use super::catalog::{
    Facets, Publisher, SearchPage, SearchQuery, Sort, ToolSummary, VersionDetail,
};
use super::html::{self, SafeHtml};
use super::params::{self, ParamRow};
use super::query;

// ---------------------------------------------------------------- home page

/// `GET /`: the search form and the first results.
#[derive(Template)]
#[template(path = "web/index.html")]
pub struct IndexPage<'a> {
    pub assets: &'static Assets,
    pub search: &'a SearchQuery,
    pub filters: Vec<Filter>,
    pub results: ResultsView,
}

/// `GET /` with `X-Partial: results`: the results region alone (for search as you type).
#[derive(Template)]
#[template(path = "web/results.html")]
pub struct ResultsFragment {
    pub results: ResultsView,
}

/// One `<select>` of the search form.
pub struct Filter {
    pub name: &'static str,
    pub label: &'static str,
    pub options: Vec<FilterOption>,
}

pub struct FilterOption {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// The results region: a summary line, the hits, pagination.
pub struct ResultsView {
    pub summary: String,
    pub empty_message: String,
    pub has_filters: bool,
    pub hits: Vec<HitView>,
    pub page: u32,
    pub pages: u64,
    pub prev_url: Option<String>,
    pub next_url: Option<String>,
}

pub struct HitView {
    pub url: String,
    pub name_html: SafeHtml,
    pub version: String,
    pub title: Option<String>,
    pub description_html: SafeHtml,
    pub tier: &'static str,
    pub execution: &'static str,
    pub blocked: bool,
    pub license: String,
    pub downloads: String,
}

impl<'a> IndexPage<'a> {
    pub fn new(search: &'a SearchQuery, page: &SearchPage) -> Self {
        IndexPage {
            assets: &ASSETS,
            search,
            filters: filters(search, &page.facets),
            results: ResultsView::new(search, page),
        }
    }
}

fn has_filters(q: &SearchQuery) -> bool {
    !q.q.is_empty()
        || q.keyword.is_some()
        || q.license.is_some()
        || q.format.is_some()
        || q.execution.is_some()
        || q.tier.is_some()
}

impl ResultsView {
    pub fn new(search: &SearchQuery, page: &SearchPage) -> Self {
        let per_page = u64::from(search.per_page.max(1));
        let pages = page.total.div_ceil(per_page);
        let filtered = has_filters(search);
        let summary = match (page.total, search.q.is_empty()) {
            (0, _) => "No tools found.".to_string(),
            (n, true) => format!(
                "{} {}{}.",
                n,
                plural(n, "tool", "tools"),
                if filtered {
                    " match the filters"
                } else {
                    " in the registry"
                }
            ),
            (n, false) => format!(
                "{} {} found for “{}”.",
                n,
                plural(n, "tool", "tools"),
                search.q
            ),
        };
        let empty_message = if page.total > 0 {
            format!(
                "There are no results on page {}; the results end on page {}.",
                search.page, pages
            )
        } else if filtered {
            "Nothing matches. Try fewer words, or remove a filter.".to_string()
        } else {
            "The registry has no tools yet. Publish one with `toolreg publish`.".to_string()
        };
        let page_no = u64::from(search.page);
        ResultsView {
            summary,
            empty_message,
            has_filters: filtered,
            hits: page.hits.iter().map(HitView::new).collect(),
            page: search.page,
            pages,
            prev_url: (page_no > 1 && pages > 0).then(|| query::url(search, search.page - 1)),
            next_url: (page_no < pages).then(|| query::url(search, search.page + 1)),
        }
    }
}

impl HitView {
    fn new(hit: &super::catalog::Hit) -> Self {
        let name_html = match hit.name_highlight.as_deref() {
            Some(h) if !h.is_empty() => html::highlight(h),
            _ => html::escape(&hit.name),
        };
        let description_html = match hit.description_highlight.as_deref() {
            Some(h) if !h.is_empty() => html::highlight(h),
            _ => html::escape(&hit.description),
        };
        HitView {
            url: tool_url(&hit.name),
            name_html,
            version: hit.version.clone(),
            title: hit
                .title
                .clone()
                .filter(|t| !t.is_empty() && *t != hit.name),
            description_html,
            tier: hit.tier.as_str(),
            execution: hit.execution.as_str(),
            blocked: hit.blocked,
            license: license_label(hit.license.as_deref()),
            downloads: downloads_label(hit.downloads),
        }
    }
}

fn facet_label(value: &str, counts: &[(String, u64)]) -> String {
    match counts.iter().find(|(v, _)| v == value) {
        Some((_, n)) if *n > 0 => format!("{value} ({n})"),
        _ => value.to_string(),
    }
}

fn any(label: &str) -> FilterOption {
    FilterOption {
        value: String::new(),
        label: label.to_string(),
        selected: false,
    }
}

fn select(
    name: &'static str,
    label: &'static str,
    first: &str,
    values: Vec<String>,
    current: Option<&str>,
    counts: &[(String, u64)],
) -> Filter {
    let mut options = vec![any(first)];
    options[0].selected = current.is_none();
    for v in values {
        let selected = current == Some(v.as_str());
        options.push(FilterOption {
            label: facet_label(&v, counts),
            value: v,
            selected,
        });
    }
    Filter {
        name,
        label,
        options,
    }
}

/// The filter `<select>`s, with facet counts in the option labels.
fn filters(q: &SearchQuery, facets: &Facets) -> Vec<Filter> {
    // Open-ended values (license, keyword) come from the facets, plus the
    // current choice even when no result carries it any more.
    let open = |counts: &[(String, u64)], current: Option<&String>, limit: usize| {
        let mut values: Vec<String> = counts.iter().take(limit).map(|(v, _)| v.clone()).collect();
        if let Some(c) = current {
            if !values.contains(c) {
                values.push(c.clone());
            }
        }
        values
    };
    let sort = Filter {
        name: "sort",
        label: "Sort by",
        options: Sort::ALL
            .into_iter()
            .map(|s| FilterOption {
                value: if s == Sort::Relevance {
                    String::new()
                } else {
                    s.as_str().to_string()
                },
                label: s.label().to_string(),
                selected: q.sort == s,
            })
            .collect(),
    };
    vec![
        select(
            "license",
            "License",
            "Any license",
            open(&facets.license, q.license.as_ref(), 30),
            q.license.as_deref(),
            &facets.license,
        ),
        select(
            "execution",
            "Execution kind",
            "Any kind",
            ExecutionKind::ALL
                .iter()
                .map(|k| k.as_str().to_string())
                .collect(),
            q.execution.map(ExecutionKind::as_str),
            &facets.execution,
        ),
        select(
            "tier",
            "Publisher tier",
            "Any tier",
            Tier::ALL
                .iter()
                .rev()
                .map(|t| t.as_str().to_string())
                .collect(),
            q.tier.map(Tier::as_str),
            &facets.tier,
        ),
        select(
            "format",
            "Format",
            "Any format",
            Format::ALL.iter().map(|f| f.as_str().to_string()).collect(),
            q.format.map(Format::as_str),
            &facets.format,
        ),
        select(
            "keyword",
            "Keyword",
            "Any keyword",
            open(&facets.keyword, q.keyword.as_ref(), 30),
            q.keyword.as_deref(),
            &facets.keyword,
        ),
        sort,
    ]
}

// ---------------------------------------------------------------- tool page

/// `GET /tools/{name}` and `GET /tools/{name}/{version}`.
#[derive(Template)]
#[template(path = "web/tool.html")]
pub struct ToolPage {
    pub assets: &'static Assets,
    pub t: ToolView,
}

pub struct ToolView {
    pub name: String,
    pub version: String,
    pub version_is_stable: bool,
    pub is_latest: bool,
    pub latest_version: String,
    pub latest_url: Option<String>,
    pub title: Option<String>,
    pub description: String,
    pub meta_description: String,
    pub call_name: String,
    pub pin: String,
    pub tier: &'static str,
    pub required_tier: &'static str,
    pub execution: &'static str,
    pub execution_explained: &'static str,
    pub execution_detail: Option<String>,
    pub runs_code: bool,
    pub format: &'static str,
    pub definition_file: String,
    pub license: String,
    pub publisher: String,
    pub published_at: String,
    pub published_date: String,
    pub size: String,
    pub sha256: String,
    pub bundle_url: String,
    pub version_downloads: String,
    pub tool_downloads: String,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: String,
    pub params: Vec<ParamRow>,
    pub params_cut: bool,
    pub result: Vec<ParamRow>,
    pub readme: SafeHtml,
    pub exports: Vec<ExportView>,
    pub versions: Vec<VersionLine>,
    pub owners: Vec<Publisher>,
    pub keywords: Vec<Link>,
    pub links: Vec<Link>,
    pub authors: Vec<String>,
}

pub struct ExportView {
    pub label: String,
    pub body: Option<String>,
    pub unavailable: String,
    pub download_url: String,
    pub file_name: String,
}

pub struct VersionLine {
    pub version: String,
    pub url: String,
    pub current: bool,
    pub published_at: String,
    pub published_date: String,
    pub publisher: String,
    pub execution: &'static str,
    pub downloads: u64,
    pub yanked: bool,
    pub blocked: bool,
}

pub struct Link {
    pub label: String,
    pub url: String,
}

impl ToolPage {
    pub fn new(summary: &ToolSummary, detail: &VersionDetail, required_tier: Tier) -> Self {
        ToolPage {
            assets: &ASSETS,
            t: ToolView::new(summary, detail, required_tier),
        }
    }
}

impl ToolView {
    fn new(summary: &ToolSummary, detail: &VersionDetail, required_tier: Tier) -> Self {
        let tool = &detail.manifest;
        let row = &detail.row;
        let name = summary.name.clone();
        let version = row.version.to_string();
        let is_latest = version == summary.latest_version;
        let (params, params_cut) = params::rows(&tool.parameters);
        let result = tool
            .result
            .as_ref()
            .map(|r| params::rows(r).0)
            .unwrap_or_default();
        let readme = detail
            .readme
            .as_deref()
            .map(html::markdown)
            .unwrap_or_default();
        let mut links = Vec::new();
        for (label, url) in [
            ("Homepage", &tool.homepage),
            ("Repository", &tool.repository),
        ] {
            if let Some(u) = url.as_deref().filter(|u| html::is_web_url(u)) {
                links.push(Link {
                    label: label.to_string(),
                    url: u.to_string(),
                });
            }
        }
        let keywords = tool
            .keywords
            .iter()
            .map(|k| Link {
                label: k.clone(),
                url: query::url(
                    &SearchQuery {
                        keyword: Some(k.clone()),
                        page: 1,
                        per_page: query::PER_PAGE,
                        ..SearchQuery::default()
                    },
                    1,
                ),
            })
            .collect();
        let authors = tool
            .authors
            .iter()
            .map(|a| match (&a.organization, &a.email) {
                (Some(o), _) => format!("{} ({o})", a.name),
                (None, Some(e)) => format!("{} <{e}>", a.name),
                (None, None) => a.name.clone(),
            })
            .collect();
        let versions = summary
            .versions
            .iter()
            .map(|v| VersionLine {
                version: v.version.to_string(),
                url: version_url(&name, &v.version.to_string()),
                current: v.version == row.version,
                published_at: v.published_at.clone(),
                published_date: date_only(&v.published_at),
                publisher: v.publisher.clone(),
                execution: v.execution.as_str(),
                downloads: v.downloads,
                yanked: v.yanked,
                blocked: v.blocked,
            })
            .collect();
        let description = if tool.description.trim().is_empty() {
            "No description.".to_string()
        } else {
            tool.description.clone()
        };
        ToolView {
            meta_description: description.chars().take(160).collect(),
            title: tool.title.clone().filter(|t| !t.is_empty() && *t != name),
            description,
            call_name: tool.call_name.clone(),
            pin: pin_snippet(&name, &row.version),
            version_is_stable: row.version.pre.is_empty(),
            is_latest,
            latest_url: (!is_latest).then(|| tool_url(&name)),
            latest_version: summary.latest_version.clone(),
            tier: detail.publisher.tier.as_str(),
            required_tier: required_tier.as_str(),
            execution: row.execution.as_str(),
            execution_explained: row.execution.explain(),
            execution_detail: execution_detail(row.execution, &tool.execution.detail),
            runs_code: row.execution.runs_bundle_code(),
            format: row.format.as_str(),
            definition_file: tool.definition_file.clone(),
            license: license_label(tool.license.as_deref()),
            publisher: detail.publisher.login.clone(),
            published_at: row.published_at.clone(),
            published_date: date_only(&row.published_at),
            size: size_label(row.size),
            sha256: row.sha256.clone(),
            bundle_url: format!("/api/v1/tools/{name}/{version}/download"),
            version_downloads: downloads_label(row.downloads),
            tool_downloads: format!("{} (all versions)", downloads_label(summary.downloads)),
            yanked: row.yanked,
            blocked: row.blocked,
            blocked_reason: row.blocked_reason.clone().unwrap_or_else(|| {
                format!(
                    "Its publisher's tier no longer allows publishing `{}` tools.",
                    row.execution
                )
            }),
            params,
            params_cut,
            result,
            readme,
            exports: exports(detail, &name, &version),
            versions,
            owners: summary.owners.clone(),
            keywords,
            links,
            authors,
            name,
            version,
        }
    }
}

fn exports(detail: &VersionDetail, name: &str, version: &str) -> Vec<ExportView> {
    let tool = &detail.manifest;
    let api = format!("/api/v1/tools/{name}/{version}/definition");
    let mut out = vec![ExportView {
        label: format!("Original definition ({})", tool.definition_file),
        body: Some(tool.original_text()),
        unavailable: String::new(),
        download_url: format!("{api}?format=native"),
        file_name: tool.definition_file.clone(),
    }];
    for (format, id, label) in [
        (ExportFormat::Mcp, "mcp", "MCP tool (JSON)"),
        (ExportFormat::Openai, "openai", "OpenAI function (JSON)"),
    ] {
        let (body, unavailable) = match export(tool, format) {
            Ok(e) => (Some(e.body), String::new()),
            Err(e) => (None, format!("This export is not available: {e}")),
        };
        out.push(ExportView {
            label: label.to_string(),
            body,
            unavailable,
            download_url: format!("{api}?format={id}"),
            file_name: format!("{name}-{version}.{id}.json"),
        });
    }
    out
}

/// A short, plain description of how the tool runs, from the format's execution detail.
fn execution_detail(kind: ExecutionKind, detail: &Value) -> Option<String> {
    let s = |k: &str| detail.get(k).and_then(Value::as_str).map(str::to_string);
    match kind {
        ExecutionKind::Http => {
            let url = s("url")?;
            Some(format!(
                "It sends {} {url}.",
                s("method").unwrap_or_else(|| "GET".into()).to_uppercase()
            ))
        }
        ExecutionKind::Command => {
            let command = s("command")?;
            let args: Vec<String> = detail
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let line = std::iter::once(command)
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ");
            Some(format!("It runs: {line}"))
        }
        ExecutionKind::Function => {
            let file = s("code_file").or_else(|| s("code"))?;
            let runner = s("runner")
                .map(|r| format!(" (runner: {r})"))
                .unwrap_or_default();
            Some(format!("The code it loads is {file}{runner}."))
        }
        ExecutionKind::Script => {
            let code = s("code")?;
            Some(format!(
                "The inline code is {} lines long; read it in the definition below.",
                code.lines().count()
            ))
        }
        ExecutionKind::Prompt | ExecutionKind::Schema => None,
    }
}

/// `toolreg add NAME@^X.Y` (`^0.0.Z` below 0.1, `=V` for a pre-release).
pub fn pin_snippet(name: &str, v: &semver::Version) -> String {
    let req = if !v.pre.is_empty() {
        format!("={v}")
    } else if v.major == 0 && v.minor == 0 {
        format!("^0.0.{}", v.patch)
    } else {
        format!("^{}.{}", v.major, v.minor)
    };
    format!("toolreg add {name}@{req}")
}

// ---------------------------------------------------------------- error pages

/// 400, 404 and 500 pages.
#[derive(Template)]
#[template(path = "web/error.html")]
pub struct ErrorPage {
    pub assets: &'static Assets,
    pub status: u16,
    pub heading: String,
    pub message: String,
}

impl ErrorPage {
    pub fn new(status: u16, heading: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorPage {
            assets: &ASSETS,
            status,
            heading: heading.into(),
            message: message.into(),
        }
    }
}

// ---------------------------------------------------------------- helpers

pub fn tool_url(name: &str) -> String {
    format!("/tools/{name}")
}

pub fn version_url(name: &str, version: &str) -> String {
    format!("/tools/{name}/{version}")
}

fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn downloads_label(n: u64) -> String {
    format!("{} {}", thousands(n), plural(n, "download", "downloads"))
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn license_label(license: Option<&str>) -> String {
    license
        .filter(|l| !l.is_empty())
        .unwrap_or("no license given")
        .to_string()
}

fn size_label(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

fn date_only(rfc3339: &str) -> String {
    rfc3339.get(..10).unwrap_or(rfc3339).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_follow_semver_compatibility() {
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(pin_snippet("calc", &v("1.2.3")), "toolreg add calc@^1.2");
        assert_eq!(pin_snippet("calc", &v("0.3.1")), "toolreg add calc@^0.3");
        assert_eq!(pin_snippet("calc", &v("0.0.4")), "toolreg add calc@^0.0.4");
        assert_eq!(
            pin_snippet("calc", &v("2.0.0-beta.1")),
            "toolreg add calc@=2.0.0-beta.1"
        );
    }

    #[test]
    fn labels() {
        assert_eq!(downloads_label(1), "1 download");
        assert_eq!(downloads_label(1234567), "1,234,567 downloads");
        assert_eq!(size_label(2048), "2.0 KiB");
        assert_eq!(license_label(None), "no license given");
    }
}
