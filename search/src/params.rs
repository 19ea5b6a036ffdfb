//! `GET /api/v1/search` parameters: [`SearchRequest`] as they arrive (all
//! strings, so a bad number is our 400 with the parameter's name, not the
//! framework's), and [`SearchParams`] once validated.

use std::str::FromStr;

use serde::Deserialize;
use toolreg_api::PageQuery;
use toolreg_core::{ExecutionKind, Format, Tier};

use crate::SearchError;

/// Largest accepted `per_page`.
pub const MAX_PER_PAGE: usize = 100;
/// Results beyond this many (`page * per_page`) are not served.
pub const MAX_PAGE_DEPTH: usize = 10_000;
/// Longest accepted filter value, in characters.
const MAX_FILTER_CHARS: usize = 100;
const DEFAULT_PER_PAGE: usize = 20;

/// Result order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchSort {
    /// Best match first (BM25 with field boosts), then by name.
    #[default]
    Relevance,
    /// Most downloaded first, then by name.
    Downloads,
    /// Most recently updated first, then by name.
    Recent,
    /// By registry name.
    Name,
}

impl FromStr for SearchSort {
    type Err = SearchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "relevance" => Ok(SearchSort::Relevance),
            "downloads" => Ok(SearchSort::Downloads),
            "recent" => Ok(SearchSort::Recent),
            "name" => Ok(SearchSort::Name),
            other => Err(SearchError::bad(
                "sort",
                format!(
                    "unknown sort `{}`; use relevance, downloads, recent or name",
                    clip(other)
                ),
            )),
        }
    }
}

/// The `findings` filter: tools whose listed version carries no lint
/// findings, or at least one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingsFilter {
    /// Clean: no findings.
    None,
    /// Flagged: one or more findings.
    Flagged,
}

impl FindingsFilter {
    /// `none` or `flagged`, as in the query string and the index.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingsFilter::None => "none",
            FindingsFilter::Flagged => "flagged",
        }
    }

    /// The filter value a version with `count` findings matches.
    pub fn of(count: u32) -> Self {
        if count == 0 {
            FindingsFilter::None
        } else {
            FindingsFilter::Flagged
        }
    }
}

impl FromStr for FindingsFilter {
    type Err = SearchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(FindingsFilter::None),
            "flagged" => Ok(FindingsFilter::Flagged),
            other => Err(SearchError::bad(
                "findings",
                format!("unknown value `{}`; use none or flagged", clip(other)),
            )),
        }
    }
}

/// The search parameters as they arrive in the query string.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SearchRequest {
    pub q: Option<String>,
    pub keyword: Option<String>,
    pub license: Option<String>,
    pub format: Option<String>,
    pub execution: Option<String>,
    pub tier: Option<String>,
    pub findings: Option<String>,
    pub provenance: Option<String>,
    pub deprecated: Option<String>,
    pub sort: Option<String>,
    /// `page` and `per_page`, as every paginated list takes them.
    #[serde(flatten)]
    pub page: PageQuery,
}

/// Validated search parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchParams {
    /// The free-text query ("" = every tool).
    pub q: String,
    /// Keyword filter, lowercased.
    pub keyword: Option<String>,
    /// License filter (matched case-insensitively).
    pub license: Option<String>,
    pub format: Option<Format>,
    pub execution: Option<ExecutionKind>,
    pub tier: Option<Tier>,
    /// Only tools whose listed version is clean, or flagged.
    pub findings: Option<FindingsFilter>,
    /// Only tools whose listed version has (`true`) or lacks (`false`) CI
    /// provenance from trusted publishing.
    pub provenance: Option<bool>,
    /// Only tools whose listed version is (`true`) or is not (`false`)
    /// deprecated by its owners.
    pub deprecated: Option<bool>,
    pub sort: SearchSort,
    /// 1-based page number.
    pub page: usize,
    pub per_page: usize,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            q: String::new(),
            keyword: None,
            license: None,
            format: None,
            execution: None,
            tier: None,
            findings: None,
            provenance: None,
            deprecated: None,
            sort: SearchSort::Relevance,
            page: 1,
            per_page: DEFAULT_PER_PAGE,
        }
    }
}

impl SearchParams {
    /// A query for `q` with every other parameter at its default.
    pub fn q(q: impl Into<String>) -> Self {
        SearchParams {
            q: q.into(),
            ..Self::default()
        }
    }

    /// True when no filter (keyword, license, format, execution, tier,
    /// findings) is set.
    pub fn no_filters(&self) -> bool {
        self.keyword.is_none()
            && self.license.is_none()
            && self.format.is_none()
            && self.execution.is_none()
            && self.tier.is_none()
            && self.findings.is_none()
            && self.provenance.is_none()
            && self.deprecated.is_none()
    }

    /// Checks every limit; used by [`SearchRequest::parse`] and by
    /// [`crate::SearchIndex::query`] (so typed callers get the same checks).
    /// The query text has none: however long, it is read up to
    /// [`crate::MAX_ANALYZED_CHARS`] characters and [`crate::MAX_TERMS`]
    /// words (see the `words` module).
    pub fn validate(&self) -> Result<(), SearchError> {
        if self.page == 0 {
            return Err(SearchError::bad("page", "pages are numbered from 1"));
        }
        if self.per_page == 0 || self.per_page > MAX_PER_PAGE {
            return Err(SearchError::bad(
                "per_page",
                format!(
                    "must be between 1 and {MAX_PER_PAGE}, got {}",
                    self.per_page
                ),
            ));
        }
        let depth = self.page.saturating_mul(self.per_page);
        if depth > MAX_PAGE_DEPTH {
            return Err(SearchError::bad(
                "page",
                format!(
                    "page {} with per_page {} is beyond the first {MAX_PAGE_DEPTH} results; narrow the query instead",
                    self.page, self.per_page
                ),
            ));
        }
        for (param, value) in [("keyword", &self.keyword), ("license", &self.license)] {
            if let Some(v) = value {
                if v.chars().count() > MAX_FILTER_CHARS {
                    return Err(SearchError::bad(
                        param,
                        format!("longer than {MAX_FILTER_CHARS} characters"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A value shortened for an error message.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// A `true`/`false` parameter (`None` when missing or blank); anything else
/// is an error naming `param`.
fn flag(param: &str, value: &Option<String>) -> Result<Option<bool>, SearchError> {
    match present(value) {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(other) => Err(SearchError::bad(
            param,
            format!("unknown value `{}`; use true or false", clip(other)),
        )),
    }
}

/// `None` for a missing or blank parameter, else the trimmed value.
fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

impl SearchRequest {
    /// Validates the raw parameters; every error names its parameter.
    pub fn parse(&self) -> Result<SearchParams, SearchError> {
        let format = match present(&self.format) {
            None => None,
            Some(v) => Some(v.parse::<Format>().map_err(|_| {
                SearchError::bad(
                    "format",
                    format!(
                        "unknown format `{}`; use {}",
                        clip(v),
                        Format::ALL.map(Format::as_str).join(", ")
                    ),
                )
            })?),
        };
        let execution = match present(&self.execution) {
            None => None,
            Some(v) => Some(v.parse::<ExecutionKind>().map_err(|_| {
                SearchError::bad(
                    "execution",
                    format!(
                        "unknown execution kind `{}`; use function, script, command, http, prompt or schema",
                        clip(v)
                    ),
                )
            })?),
        };
        let tier = match present(&self.tier) {
            None => None,
            Some(v) => Some(v.parse::<Tier>().map_err(|_| {
                SearchError::bad(
                    "tier",
                    format!(
                        "unknown tier `{}`; use untrusted, verified or trusted",
                        clip(v)
                    ),
                )
            })?),
        };
        let findings = match present(&self.findings) {
            None => None,
            Some(v) => Some(v.parse::<FindingsFilter>()?),
        };
        let provenance = flag("provenance", &self.provenance)?;
        let deprecated = flag("deprecated", &self.deprecated)?;
        let sort = match present(&self.sort) {
            None => SearchSort::Relevance,
            Some(v) => v.parse()?,
        };
        let page = self
            .page
            .parse(DEFAULT_PER_PAGE as i64, MAX_PER_PAGE as i64)
            .map_err(|e| SearchError::bad(e.param, e.message))?;
        let params = SearchParams {
            q: self.q.clone().unwrap_or_default(),
            keyword: present(&self.keyword).map(str::to_lowercase),
            license: present(&self.license).map(str::to_string),
            format,
            execution,
            tier,
            findings,
            provenance,
            deprecated,
            sort,
            page: usize::try_from(page.page).unwrap_or(usize::MAX),
            per_page: usize::try_from(page.per_page).unwrap_or(MAX_PER_PAGE),
        };
        params.validate()?;
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> SearchRequest {
        let mut q = SearchRequest::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match *k {
                "q" => q.q = v,
                "keyword" => q.keyword = v,
                "license" => q.license = v,
                "format" => q.format = v,
                "execution" => q.execution = v,
                "tier" => q.tier = v,
                "findings" => q.findings = v,
                "provenance" => q.provenance = v,
                "deprecated" => q.deprecated = v,
                "sort" => q.sort = v,
                "page" => q.page.page = v,
                "per_page" => q.page.per_page = v,
                _ => unreachable!(),
            }
        }
        q
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        match raw(pairs).parse() {
            Err(SearchError::BadRequest(m)) => m,
            other => panic!("expected a bad request for {pairs:?}, got {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let p = SearchRequest::default().parse().unwrap();
        assert_eq!(p, SearchParams::default());
        assert_eq!((p.page, p.per_page, p.sort), (1, 20, SearchSort::Relevance));
    }

    #[test]
    fn absurd_parameters_name_the_parameter() {
        assert!(err(&[("page", "0")]).starts_with("page:"));
        assert!(err(&[("page", "-1")]).starts_with("page:"));
        assert!(err(&[("page", "1000000000000")]).starts_with("page:"));
        assert!(err(&[("page", "99999999999999999999999")]).starts_with("page:"));
        assert!(err(&[("page", "abc")]).starts_with("page:"));
        assert!(err(&[("per_page", "0")]).starts_with("per_page:"));
        assert!(err(&[("per_page", "1000")]).starts_with("per_page:"));
        assert!(err(&[("per_page", "1.5")]).starts_with("per_page:"));
        assert!(err(&[("sort", "popularity")]).starts_with("sort:"));
        assert!(err(&[("execution", "binary")]).starts_with("execution:"));
        assert!(err(&[("tier", "gold")]).starts_with("tier:"));
        assert!(err(&[("findings", "some")]).starts_with("findings:"));
        assert!(err(&[("provenance", "yes")]).starts_with("provenance:"));
        assert!(err(&[("deprecated", "1")]).starts_with("deprecated:"));
        assert!(err(&[("findings", "Flagged")]).contains("use none or flagged"));
        assert!(err(&[("format", "openapi")]).starts_with("format:"));
        assert!(err(&[("keyword", &"k".repeat(101))]).starts_with("keyword:"));
        assert!(err(&[("license", &"l".repeat(101))]).starts_with("license:"));
    }

    #[test]
    fn limits_are_inclusive() {
        let p = raw(&[
            ("q", &"word ".repeat(2_000)),
            ("per_page", "100"),
            ("page", "100"),
        ])
        .parse()
        .unwrap();
        assert_eq!((p.page, p.per_page), (100, 100));
        let p = raw(&[
            ("execution", "http"),
            ("tier", "trusted"),
            ("format", "mcp"),
            ("sort", "name"),
            ("findings", "flagged"),
        ])
        .parse()
        .unwrap();
        assert_eq!(p.findings, Some(FindingsFilter::Flagged));
        assert_eq!(p.execution, Some(ExecutionKind::Http));
        assert_eq!(p.tier, Some(Tier::Trusted));
        assert_eq!(p.format, Some(Format::Mcp));
        assert_eq!(p.sort, SearchSort::Name);
    }

    #[test]
    fn blank_parameters_are_absent() {
        let p = raw(&[("keyword", " "), ("page", ""), ("sort", "")])
            .parse()
            .unwrap();
        assert_eq!(p, SearchParams::default());
    }
}
