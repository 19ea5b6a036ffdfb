//! The home page, `GET /`: the search form with its filters (facet counts
//! in the option labels) and the first page of results.

use askama::Template;
use toolreg_api::{FacetCounts, SearchAnswer, SearchFacets};
use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::Format;
use toolreg_search::{FindingsFilter, SearchParams, SearchSort};

use super::results::ResultsView;
use crate::web::assets::{Assets, ASSETS};
use crate::web::query::sort_value;

/// `GET /`: the search form and the first results.
#[derive(Template)]
#[template(path = "web/index.html")]
pub struct IndexPage<'a> {
    pub assets: &'static Assets,
    pub search: &'a SearchParams,
    pub filters: Vec<Filter>,
    pub results: ResultsView,
}

/// The orders the form offers, with their labels.
const SORTS: [(SearchSort, &str); 3] = [
    (SearchSort::Relevance, "Best match"),
    (SearchSort::Downloads, "Most downloaded"),
    (SearchSort::Recent, "Recently updated"),
];

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

impl<'a> IndexPage<'a> {
    pub fn new(search: &'a SearchParams, page: &SearchAnswer) -> Self {
        IndexPage {
            assets: &ASSETS,
            search,
            filters: filters(search, &page.facets),
            results: ResultsView::new(search, page),
        }
    }
}

fn facet_label(value: &str, counts: &FacetCounts) -> String {
    match counts.get(value) {
        0 => value.to_string(),
        n => format!("{value} ({n})"),
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
    counts: &FacetCounts,
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

/// A filter with a fixed list of `(value, label, selected)` options.
fn fixed(name: &'static str, label: &'static str, options: &[(&str, &str, bool)]) -> Filter {
    Filter {
        name,
        label,
        options: options
            .iter()
            .map(|&(value, label, selected)| FilterOption {
                value: value.to_string(),
                label: label.to_string(),
                selected,
            })
            .collect(),
    }
}

/// The filter `<select>`s, with facet counts in the option labels.
fn filters(q: &SearchParams, facets: &SearchFacets) -> Vec<Filter> {
    // Open-ended values (license, keyword) come from the facets, plus the
    // current choice even when no result carries it any more.
    let open = |counts: &FacetCounts, current: Option<&String>, limit: usize| {
        let mut values: Vec<String> = counts
            .0
            .iter()
            .take(limit)
            .map(|(v, _)| v.clone())
            .collect();
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
        options: SORTS
            .into_iter()
            .map(|(s, label)| FilterOption {
                value: if s == SearchSort::Relevance {
                    String::new()
                } else {
                    sort_value(s).to_string()
                },
                label: label.to_string(),
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
        fixed(
            "deprecated",
            "Deprecated",
            &[
                ("", "Any", q.deprecated.is_none()),
                ("false", "Not deprecated", q.deprecated == Some(false)),
                ("true", "Deprecated", q.deprecated == Some(true)),
            ],
        ),
        fixed(
            "findings",
            "Lint findings",
            &[
                ("", "Any", q.findings.is_none()),
                (
                    "none",
                    "None (clean)",
                    q.findings == Some(FindingsFilter::None),
                ),
                (
                    "flagged",
                    "Flagged",
                    q.findings == Some(FindingsFilter::Flagged),
                ),
            ],
        ),
        select(
            "format",
            "Format",
            "Any format",
            Format::ALL.iter().map(|f| f.as_str().to_string()).collect(),
            q.format.map(Format::as_str),
            // Search counts no format facet.
            &FacetCounts::default(),
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
