//! `page` and `per_page` of a paginated list — a tool's versions, the audit
//! log, open reports, search results and the web index's results — as they
//! arrive ([`PageQuery`], all strings, so a bad number is an error naming
//! the parameter rather than the framework's), and checked ([`Page`]).

use serde::{Deserialize, Serialize};

/// `page` and `per_page` as they arrive in a query string. A missing or
/// blank value means the default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
pub struct PageQuery {
    /// Page number, from 1 (default 1).
    #[serde(default)]
    pub page: Option<String>,
    /// Items per page (the default and the largest allowed depend on the list).
    #[serde(default)]
    pub per_page: Option<String>,
}

/// A checked page: `page` from 1, `per_page` within the list's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub page: i64,
    pub per_page: i64,
}

impl Page {
    /// How many items come before this page.
    pub fn offset(&self) -> i64 {
        (self.page - 1).saturating_mul(self.per_page)
    }
}

/// A `page` or `per_page` that is not a whole number in its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{param}: {message}")]
pub struct PageError {
    /// `page` or `per_page`.
    pub param: &'static str,
    pub message: String,
}

impl PageQuery {
    /// The query for `page` and `per_page` (for building links).
    pub fn new(page: i64, per_page: i64) -> PageQuery {
        PageQuery {
            page: Some(page.to_string()),
            per_page: Some(per_page.to_string()),
        }
    }

    /// The page and the page size (`default_per_page` when absent, at most
    /// `max_per_page`); an error names the parameter and its range. The page
    /// is bounded so the offset it makes can't overflow.
    pub fn parse(&self, default_per_page: i64, max_per_page: i64) -> Result<Page, PageError> {
        let max_page = i64::MAX / max_per_page.max(1);
        Ok(Page {
            page: number("page", self.page.as_deref(), 1, max_page)?,
            per_page: number(
                "per_page",
                self.per_page.as_deref(),
                default_per_page,
                max_per_page,
            )?,
        })
    }
}

/// A parameter that is a whole number in `1..=max`, or `default` when
/// missing or blank.
fn number(
    param: &'static str,
    text: Option<&str>,
    default: i64,
    max: i64,
) -> Result<i64, PageError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(default);
    };
    match text.parse::<i64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(PageError {
            param,
            message: format!(
                "`{}` is not a whole number from 1 to {max}",
                text.chars().take(40).collect::<String>()
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(page: Option<&str>, per_page: Option<&str>) -> PageQuery {
        PageQuery {
            page: page.map(str::to_string),
            per_page: per_page.map(str::to_string),
        }
    }

    #[test]
    fn pages_are_bounded_and_errors_name_the_parameter() {
        assert_eq!(
            query(None, None).parse(50, 100),
            Ok(Page {
                page: 1,
                per_page: 50
            })
        );
        assert_eq!(
            query(Some(" 3 "), Some(""))
                .parse(50, 100)
                .map(|p| p.offset()),
            Ok(100)
        );
        for bad in ["0", "-1", "101", "x", "1.5", "99999999999999999999999"] {
            let err = query(None, Some(bad)).parse(50, 100).unwrap_err();
            assert_eq!(err.param, "per_page");
            assert!(err.to_string().starts_with("per_page: "), "{err}");
        }
        let err = query(Some(&i64::MAX.to_string()), None)
            .parse(50, 100)
            .unwrap_err();
        assert_eq!(err.param, "page", "the offset would overflow");
    }
}
