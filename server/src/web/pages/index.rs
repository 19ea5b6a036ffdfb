//! The home page, `GET /`: the search form with its filters (facet counts
//! in the option labels) and the first page of results.

use askama::Template;
use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::Format;

use super::results::ResultsView;
use crate::web::assets::{Assets, ASSETS};
use crate::web::catalog::{CatalogFacets, CatalogQuery, CatalogSort, SearchPage};

/// `GET /`: the search form and the first results.
#[derive(Template)]
#[template(path = "web/index.html")]
pub struct IndexPage<'a> {
    pub assets: &'static Assets,
    pub search: &'a CatalogQuery,
    pub filters: Vec<Filter>,
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

impl<'a> IndexPage<'a> {
    pub fn new(search: &'a CatalogQuery, page: &SearchPage) -> Self {
        IndexPage {
            assets: &ASSETS,
            search,
            filters: filters(search, &page.facets),
            results: ResultsView::new(search, page),
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
fn filters(q: &CatalogQuery, facets: &CatalogFacets) -> Vec<Filter> {
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
        options: CatalogSort::ALL
            .into_iter()
            .map(|s| FilterOption {
                value: if s == CatalogSort::Relevance {
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
        Filter {
            name: "findings",
            label: "Lint findings",
            options: [
                ("", "Any", q.flagged.is_none()),
                ("none", "None (clean)", q.flagged == Some(false)),
                ("flagged", "Flagged", q.flagged == Some(true)),
            ]
            .into_iter()
            .map(|(value, label, selected)| FilterOption {
                value: value.to_string(),
                label: label.to_string(),
                selected,
            })
            .collect(),
        },
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
