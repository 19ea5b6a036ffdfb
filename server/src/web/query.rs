//! The home page's query string, read by the search crate's own parser
//! (`toolreg_search::SearchRequest::parse`), so the web index and
//! `GET /api/v1/search` accept and refuse the same values with the same
//! messages naming the field; and turned back into links (pagination,
//! keyword filters) that keep the other filters.

use toolreg_search::{SearchParams, SearchRequest, SearchSort};

use crate::error::AppResult;

/// Results per page on the web index.
pub const PER_PAGE: usize = 20;

/// Parse the query string of `GET /`. Unknown keys are ignored (links from
/// elsewhere may carry tracking junk), and so is `per_page`: the web's page
/// size is its own. For a repeated key the last one wins; an empty value
/// means "no filter".
pub fn parse(query_string: &str) -> AppResult<SearchParams> {
    let mut raw = SearchRequest::default();
    for (key, value) in url::form_urlencoded::parse(query_string.as_bytes()) {
        let value = Some(value.trim().to_string());
        match key.as_ref() {
            "q" => raw.q = value,
            "keyword" => raw.keyword = value,
            "license" => raw.license = value,
            "format" => raw.format = value,
            "execution" => raw.execution = value,
            "tier" => raw.tier = value,
            "findings" => raw.findings = value,
            "provenance" => raw.provenance = value,
            "deprecated" => raw.deprecated = value,
            "sort" => raw.sort = value,
            "page" => raw.page.page = value,
            _ => {}
        }
    }
    raw.page.per_page = Some(PER_PAGE.to_string());
    Ok(raw.parse()?)
}

/// A sort order as the query string names it.
pub fn sort_value(sort: SearchSort) -> &'static str {
    match sort {
        SearchSort::Relevance => "relevance",
        SearchSort::Downloads => "downloads",
        SearchSort::Recent => "recent",
        SearchSort::Name => "name",
    }
}

/// The query string (without `?`) that asks for `query`, with `page` replaced.
/// Defaults (empty text, relevance, page 1) are left out so URLs stay short.
pub fn to_query_string(query: &SearchParams, page: usize) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    if !query.q.is_empty() {
        out.append_pair("q", &query.q);
    }
    if let Some(k) = &query.keyword {
        out.append_pair("keyword", k);
    }
    if let Some(l) = &query.license {
        out.append_pair("license", l);
    }
    if let Some(f) = query.format {
        out.append_pair("format", f.as_str());
    }
    if let Some(e) = query.execution {
        out.append_pair("execution", e.as_str());
    }
    if let Some(t) = query.tier {
        out.append_pair("tier", t.as_str());
    }
    if let Some(findings) = query.findings {
        out.append_pair("findings", findings.as_str());
    }
    if let Some(provenance) = query.provenance {
        out.append_pair("provenance", if provenance { "true" } else { "false" });
    }
    if let Some(deprecated) = query.deprecated {
        out.append_pair("deprecated", if deprecated { "true" } else { "false" });
    }
    if query.sort != SearchSort::Relevance {
        out.append_pair("sort", sort_value(query.sort));
    }
    if page > 1 {
        out.append_pair("page", &page.to_string());
    }
    out.finish()
}

/// `/?…` for `query` at `page`.
pub fn url(query: &SearchParams, page: usize) -> String {
    let qs = to_query_string(query, page);
    if qs.is_empty() {
        "/".to_string()
    } else {
        format!("/?{qs}")
    }
}

/// The search for tools with `keyword`, from the first page.
pub fn keyword_url(keyword: &str) -> String {
    url(
        &SearchParams {
            keyword: Some(keyword.to_string()),
            per_page: PER_PAGE,
            ..SearchParams::default()
        },
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolreg_core::{ExecutionKind, Format, Tier};
    use toolreg_search::FindingsFilter;

    #[test]
    fn parses_every_filter() {
        let q = parse("q=git+hub&license=MIT&format=mcp&execution=http&tier=verified&sort=downloads&page=3&keyword=vcs&utm=x&per_page=100")
            .unwrap();
        assert_eq!(q.q, "git hub");
        assert_eq!(q.license.as_deref(), Some("MIT"));
        assert_eq!(q.format, Some(Format::Mcp));
        assert_eq!(q.execution, Some(ExecutionKind::Http));
        assert_eq!(q.tier, Some(Tier::Verified));
        assert_eq!(q.sort, SearchSort::Downloads);
        assert_eq!(q.page, 3);
        assert_eq!(q.keyword.as_deref(), Some("vcs"));
        assert_eq!(q.per_page, PER_PAGE);
    }

    #[test]
    fn empty_values_mean_no_filter() {
        let q = parse("q=&license=&format=&execution=&tier=&sort=&page=").unwrap();
        assert_eq!(
            q,
            SearchParams {
                per_page: PER_PAGE,
                ..SearchParams::default()
            }
        );
    }

    #[test]
    fn bad_values_name_the_field() {
        for (qs, field) in [
            ("execution=teleport", "execution:"),
            ("tier=godlike", "tier:"),
            ("findings=some", "findings:"),
            ("deprecated=maybe", "deprecated:"),
            ("format=xml", "format:"),
            ("sort=random", "sort:"),
            ("page=0", "page:"),
            ("page=abc", "page:"),
            ("page=501", "page:"),
        ] {
            let err = parse(qs).unwrap_err().to_string();
            assert!(err.starts_with(field), "{qs}: {err}");
        }
        // A need in a sentence of any length is a query, as on the API.
        let long = format!("q={}", "a%20".repeat(2_000));
        assert!(parse(&long).is_ok());
    }

    #[test]
    fn urls_round_trip_and_drop_defaults() {
        let q =
            parse("q=a%26b&tier=trusted&findings=flagged&deprecated=false&sort=recent").unwrap();
        assert_eq!(q.findings, Some(FindingsFilter::Flagged));
        assert_eq!(q.deprecated, Some(false));
        assert_eq!(
            url(&q, 1),
            "/?q=a%26b&tier=trusted&findings=flagged&deprecated=false&sort=recent"
        );
        assert_eq!(
            parse("findings=none").unwrap().findings,
            Some(FindingsFilter::None)
        );
        assert_eq!(
            parse(&to_query_string(&q, 2)).unwrap(),
            SearchParams {
                page: 2,
                ..q.clone()
            }
        );
        assert_eq!(url(&SearchParams::default(), 1), "/");
        assert_eq!(keyword_url("vcs"), "/?keyword=vcs");
    }
}
