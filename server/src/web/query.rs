//! The home page's query string: parsed into a [`CatalogQuery`] with a clear
//! message naming the field for a bad value, and turned back into links
//! (pagination, keyword filters) that keep the other filters.

use toolreg_core::policy::{ExecutionKind, Tier};
use toolreg_core::Format;

use super::catalog::{CatalogQuery, CatalogSort};
use crate::error::{bad_request, AppResult};

/// Results per page on the web index.
pub const PER_PAGE: u32 = 20;
/// Highest page number the form accepts.
pub const MAX_PAGE: u32 = 500;
/// Longest filter value accepted (keyword, license), in characters.
const MAX_FILTER_CHARS: usize = 100;

/// Parse the query string of `GET /`. Unknown keys are ignored (links from
/// elsewhere may carry tracking junk); for a repeated key the last one wins;
/// an empty value means "no filter".
pub fn parse(query_string: &str) -> AppResult<CatalogQuery> {
    let mut q = CatalogQuery {
        page: 1,
        per_page: PER_PAGE,
        ..CatalogQuery::default()
    };
    for (key, value) in url::form_urlencoded::parse(query_string.as_bytes()) {
        let value = value.trim();
        match key.as_ref() {
            // Any length: the search engine reads what it can use of it.
            "q" => q.q = value.to_string(),
            "keyword" => q.keyword = filter_text("keyword", value)?,
            "license" => q.license = filter_text("license", value)?,
            "format" => q.format = parse_opt::<Format>("format", value)?,
            "execution" => q.execution = parse_opt::<ExecutionKind>("execution", value)?,
            "tier" => q.tier = parse_opt::<Tier>("tier", value)?,
            "findings" => {
                q.flagged = match value {
                    "" => None,
                    "none" => Some(false),
                    "flagged" => Some(true),
                    other => {
                        return Err(bad_request(format!(
                            "findings: unknown value `{}` (expected none or flagged)",
                            other.chars().take(40).collect::<String>()
                        )))
                    }
                }
            }
            "sort" => {
                q.sort = match value {
                    "" | "relevance" => CatalogSort::Relevance,
                    "downloads" => CatalogSort::Downloads,
                    "recent" => CatalogSort::Recent,
                    other => {
                        return Err(bad_request(format!(
                    "sort: unknown order `{other}` (expected one of relevance, downloads, recent)"
                )))
                    }
                }
            }
            "page" => {
                q.page = match value {
                    "" => 1,
                    v => match v.parse::<u32>() {
                        Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
                        _ => {
                            return Err(bad_request(format!(
                                "page: `{v}` is not a page number from 1 to {MAX_PAGE}"
                            )))
                        }
                    },
                }
            }
            _ => {}
        }
    }
    Ok(q)
}

fn filter_text(field: &str, value: &str) -> AppResult<Option<String>> {
    if value.is_empty() {
        return Ok(None);
    }
    if value.chars().count() > MAX_FILTER_CHARS {
        return Err(bad_request(format!(
            "{field}: the value is longer than {MAX_FILTER_CHARS} characters"
        )));
    }
    Ok(Some(value.to_string()))
}

fn parse_opt<T: std::str::FromStr<Err = String>>(field: &str, value: &str) -> AppResult<Option<T>> {
    if value.is_empty() {
        return Ok(None);
    }
    value
        .parse::<T>()
        .map(Some)
        .map_err(|e| bad_request(format!("{field}: {e}")))
}

/// The query string (without `?`) that asks for `query`, with `page` replaced.
/// Defaults (empty text, relevance, page 1) are left out so URLs stay short.
pub fn to_query_string(query: &CatalogQuery, page: u32) -> String {
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
    if let Some(flagged) = query.flagged {
        out.append_pair("findings", if flagged { "flagged" } else { "none" });
    }
    if query.sort != CatalogSort::Relevance {
        out.append_pair("sort", query.sort.as_str());
    }
    if page > 1 {
        out.append_pair("page", &page.to_string());
    }
    out.finish()
}

/// `/?…` for `query` at `page`.
pub fn url(query: &CatalogQuery, page: u32) -> String {
    let qs = to_query_string(query, page);
    if qs.is_empty() {
        "/".to_string()
    } else {
        format!("/?{qs}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_filter() {
        let q = parse("q=git+hub&license=MIT&format=mcp&execution=http&tier=verified&sort=downloads&page=3&keyword=vcs&utm=x")
            .unwrap();
        assert_eq!(q.q, "git hub");
        assert_eq!(q.license.as_deref(), Some("MIT"));
        assert_eq!(q.format, Some(Format::Mcp));
        assert_eq!(q.execution, Some(ExecutionKind::Http));
        assert_eq!(q.tier, Some(Tier::Verified));
        assert_eq!(q.sort, CatalogSort::Downloads);
        assert_eq!(q.page, 3);
        assert_eq!(q.keyword.as_deref(), Some("vcs"));
        assert_eq!(q.per_page, PER_PAGE);
    }

    #[test]
    fn empty_values_mean_no_filter() {
        let q = parse("q=&license=&format=&execution=&tier=&sort=&page=").unwrap();
        assert_eq!(
            q,
            CatalogQuery {
                page: 1,
                per_page: PER_PAGE,
                ..CatalogQuery::default()
            }
        );
    }

    #[test]
    fn bad_values_name_the_field() {
        for (qs, field) in [
            ("execution=teleport", "execution:"),
            ("tier=godlike", "tier:"),
            ("findings=some", "findings:"),
            ("format=xml", "format:"),
            ("sort=random", "sort:"),
            ("page=0", "page:"),
            ("page=abc", "page:"),
            ("page=501", "page:"),
        ] {
            let err = parse(qs).unwrap_err().to_string();
            assert!(err.starts_with(field), "{qs}: {err}");
        }
        let need = "find the weather forecast for a city ".repeat(30);
        assert_eq!(parse(&format!("q={need}")).unwrap().q, need.trim());
    }

    #[test]
    fn urls_round_trip_and_drop_defaults() {
        let q = parse("q=a%26b&tier=trusted&findings=flagged&sort=recent").unwrap();
        assert_eq!(q.flagged, Some(true));
        assert_eq!(
            url(&q, 1),
            "/?q=a%26b&tier=trusted&findings=flagged&sort=recent"
        );
        assert_eq!(parse("findings=none").unwrap().flagged, Some(false));
        assert_eq!(
            parse(&to_query_string(&q, 2)).unwrap(),
            CatalogQuery {
                page: 2,
                ..q.clone()
            }
        );
        assert_eq!(url(&CatalogQuery::default(), 1), "/");
    }
}
