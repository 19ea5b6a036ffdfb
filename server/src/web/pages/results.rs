//! The results region of the home page: a summary line, the hits and
//! pagination. Sent alone (`X-Partial: results`) for search as you type.

use askama::Template;

use toolreg_api::{SearchAnswer, SearchHit};
use toolreg_search::SearchParams;

use super::{downloads_label, license_label, plural, tool_url};
use crate::web::html::{self, SafeHtml};
use crate::web::query;

/// `GET /` with `X-Partial: results`: the results region alone (for search as you type).
#[derive(Template)]
#[template(path = "web/results.html")]
pub struct ResultsFragment {
    pub results: ResultsView,
}

/// The results region: a summary line, the hits, pagination.
pub struct ResultsView {
    pub summary: String,
    /// For a query whose words were not all used (a long one): the words
    /// that were.
    pub used_words: Option<String>,
    pub empty_message: String,
    pub has_filters: bool,
    pub hits: Vec<HitView>,
    pub page: usize,
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
    /// The deprecation's message and successor, for the badge's title.
    pub deprecated: Option<String>,
    /// `flagged: 2 lint findings` when the listed version carries findings.
    pub flagged: Option<String>,
    pub license: String,
    pub downloads: String,
}

impl ResultsView {
    pub fn new(search: &SearchParams, page: &SearchAnswer) -> Self {
        let per_page = search.per_page.max(1) as u64;
        let pages = page.total.div_ceil(per_page);
        let filtered = !search.q.is_empty() || !search.no_filters();
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
                clip(&search.q, SUMMARY_QUERY_CHARS)
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
        let page_no = search.page as u64;
        ResultsView {
            summary,
            used_words: used_words(&search.q, &page.words),
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

/// Longest query shown in the summary line, in characters.
const SUMMARY_QUERY_CHARS: usize = 80;

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_string(),
    }
}

/// `Searched for: weather, forecast, city` when the search left some of the
/// query's words out.
fn used_words(q: &str, words: &[String]) -> Option<String> {
    let typed = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count();
    (!words.is_empty() && words.len() < typed)
        .then(|| format!("Searched for: {}", words.join(", ")))
}

impl HitView {
    fn new(hit: &SearchHit) -> Self {
        let name_html = match hit.highlights.name.as_str() {
            "" => html::escape(&hit.name),
            h => html::highlight(h),
        };
        let description_html = match hit.highlights.description.as_str() {
            "" => html::escape(&hit.description),
            h => html::highlight(h),
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
            deprecated: hit.deprecated.as_ref().map(|d| match &d.successor {
                Some(s) => format!("{} (use {s} instead)", d.message),
                None => d.message.clone(),
            }),
            flagged: (hit.findings > 0).then(|| {
                format!(
                    "{} lint {}",
                    hit.findings,
                    plural(u64::from(hit.findings), "finding", "findings")
                )
            }),
            license: license_label(hit.license.as_deref()),
            downloads: downloads_label(hit.downloads),
        }
    }
}
