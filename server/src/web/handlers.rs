//! The page handlers: `GET /` (search, or just the results region when asked
//! with `X-Partial: results`), `GET /tools/{name}`, `GET /tools/{name}/{version}`,
//! `GET /tools/{name}/diff/{A}...{B}` and the HTML 404 for anything else
//! under `/tools/`. Every HTML answer
//! carries the security headers of [`html_response`].

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use askama::Template;

use super::catalog::Catalog;
use super::html;
use super::pages::{
    diff_url, tool_url, version_url, DiffPage, ErrorPage, IndexPage, ResultsFragment, ResultsView,
    ToolPage,
};
use super::query;
use crate::error::AppError;

/// The Content-Security-Policy of every page: no inline scripts or styles,
/// nothing from other origins, no framing.
pub const CSP: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The header asking `GET /` for the results region only.
pub const PARTIAL_HEADER: &str = "x-partial";

/// An HTML answer with the page security headers and `Cache-Control: no-cache`.
pub fn html_response(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        ))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ))
        .insert_header((
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .insert_header((
            header::REFERRER_POLICY,
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        ))
        .insert_header((header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .insert_header((header::VARY, HeaderValue::from_static("X-Partial")))
        .body(body)
}

fn render(status: StatusCode, page: &impl Template) -> HttpResponse {
    match page.render() {
        Ok(body) => html_response(status, body),
        Err(e) => {
            tracing::error!(error = %e, "rendering a page failed");
            HttpResponse::InternalServerError()
                .content_type("text/plain; charset=utf-8")
                .body("The page could not be rendered; the error has been logged.")
        }
    }
}

/// The HTML page for a failed request: 400 and 404 say what was wrong,
/// server errors are logged and answered without detail.
pub fn error_page(err: &AppError) -> HttpResponse {
    let status = err.status_code();
    let (heading, message) = match (err, status) {
        (AppError::Quarantined(m), _) => ("Version quarantined".to_string(), m.clone()),
        (AppError::Blocked(m), _) => ("Version blocked".to_string(), m.clone()),
        (_, StatusCode::NOT_FOUND) => ("Not found".to_string(), err.to_string()),
        (_, StatusCode::BAD_REQUEST) => ("Bad request".to_string(), err.to_string()),
        (_, s) if s.is_server_error() => {
            tracing::error!(error = %err, "a web page failed");
            (
                "Something went wrong".to_string(),
                "The registry could not build this page; the error has been logged. Try again in a moment.".to_string(),
            )
        }
        (_, s) => (
            s.canonical_reason().unwrap_or("Error").to_string(),
            err.to_string(),
        ),
    };
    render(status, &ErrorPage::new(status.as_u16(), heading, message))
}

fn not_found(message: String) -> HttpResponse {
    error_page(&AppError::NotFound(message))
}

/// Run a catalog call on the blocking pool.
async fn blocking<C: Catalog, T: Send + 'static>(
    catalog: &web::Data<C>,
    f: impl FnOnce(&C) -> crate::error::AppResult<T> + Send + 'static,
) -> Result<T, AppError> {
    let catalog = catalog.clone();
    web::block(move || f(&catalog)).await?
}

/// `GET /`.
pub async fn home<C: Catalog>(req: HttpRequest, catalog: web::Data<C>) -> HttpResponse {
    let partial = req
        .headers()
        .get(PARTIAL_HEADER)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"results"));
    let failed = |e: AppError| {
        if partial {
            error_fragment(&e)
        } else {
            error_page(&e)
        }
    };
    let search = match query::parse(req.query_string()) {
        Ok(q) => q,
        Err(e) => return failed(e),
    };
    let q = search.clone();
    let page = match blocking(&catalog, move |c| c.search(&q)).await {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    if partial {
        render(
            StatusCode::OK,
            &ResultsFragment {
                results: ResultsView::new(&search, &page),
            },
        )
    } else {
        render(StatusCode::OK, &IndexPage::new(&search, &page))
    }
}

/// A failed search as the results region's content (search as you type shows it in place).
fn error_fragment(err: &AppError) -> HttpResponse {
    let status = err.status_code();
    let message = if status.is_server_error() {
        tracing::error!(error = %err, "a search from the web index failed");
        "The search failed; the error has been logged. Try again in a moment.".to_string()
    } else {
        err.to_string()
    };
    html_response(
        status,
        format!(
            "<div class=\"callout danger\" role=\"alert\">{}</div>",
            html::escape(&message)
        ),
    )
}

/// `GET /tools/{name}`: the latest version's page.
pub async fn tool<C: Catalog>(catalog: web::Data<C>, path: web::Path<String>) -> HttpResponse {
    let name = path.into_inner();
    show(catalog, name, None).await
}

/// `GET /tools/{name}/{version}`.
pub async fn tool_version<C: Catalog>(
    catalog: web::Data<C>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let (name, version) = path.into_inner();
    show(catalog, name, Some(version)).await
}

async fn show<C: Catalog>(
    catalog: web::Data<C>,
    name: String,
    version: Option<String>,
) -> HttpResponse {
    let explicit_version = version.clone();
    let wanted = match version.as_deref().map(semver::Version::parse).transpose() {
        Ok(v) => v,
        Err(_) => {
            return not_found(format!(
                "`{}` is not a version: versions are SemVer, like 1.2.0.",
                version.unwrap_or_default()
            ))
        }
    };
    let lookup = name.clone();
    let found = blocking(&catalog, move |c| {
        let Some(summary) = c.tool(&lookup)? else {
            return Ok(None);
        };
        let version = match wanted {
            Some(v) => v,
            None => match summary
                .latest_version
                .as_deref()
                .map(semver::Version::parse)
            {
                Some(Ok(v)) => v,
                _ => {
                    return Err(AppError::Internal(format!(
                        "tool `{lookup}` has a bad latest version"
                    )))
                }
            },
        };
        let detail = c.version(&summary.name, &version)?;
        let required = detail
            .as_ref()
            .map(|d| c.required_tier(d.version.execution));
        Ok(Some((summary, version, detail, required)))
    })
    .await;
    match found {
        Err(e) => error_page(&e),
        Ok(None) => not_found(format!("There is no tool named `{name}` in this registry.")),
        Ok(Some((summary, version, None, _))) => {
            let known: Vec<String> = summary
                .versions
                .iter()
                .take(10)
                .map(|v| v.version.to_string())
                .collect();
            not_found(format!(
                "`{}` has no version {version}. Published versions: {}.",
                summary.name,
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        }
        Ok(Some((summary, _, Some(_), _))) if summary.name != name => {
            // `/tools/Web_Search` names `web-search`: send people to the canonical URL.
            let target = match &explicit_version {
                Some(v) => version_url(&summary.name, v),
                None => tool_url(&summary.name),
            };
            HttpResponse::PermanentRedirect()
                .insert_header((header::LOCATION, target))
                .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
                .finish()
        }
        Ok(Some((summary, _, Some(detail), required))) => {
            // A version whose texts are withheld gets only the notice: its
            // definition, README and code are not on the page.
            match detail.state().texts(&detail.version.version) {
                Ok(()) => {
                    let required = required.unwrap_or_default();
                    render(StatusCode::OK, &ToolPage::new(&summary, &detail, required))
                }
                Err(refusal) => error_page(&refusal),
            }
        }
    }
}

/// `GET /tools/{name}/diff/{A}...{B}`: what changed from version A to B.
/// 404 naming what is unknown (the tool, a version, a malformed range);
/// 403 when either version's contents are withheld (blocked or quarantined).
pub async fn tool_diff<C: Catalog>(
    catalog: web::Data<C>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let (name, range) = path.into_inner();
    let parsed = range.split_once("...").and_then(|(a, b)| {
        Some((
            semver::Version::parse(a).ok()?,
            semver::Version::parse(b).ok()?,
        ))
    });
    let Some((from, to)) = parsed else {
        return not_found(format!(
            "`{range}` is not a version range: compare two versions as A...B, like 1.0.0...1.1.0."
        ));
    };
    let lookup = name.clone();
    let found = blocking(&catalog, move |c| {
        let Some(summary) = c.tool(&lookup)? else {
            return Ok(None);
        };
        let a = c.version(&summary.name, &from)?;
        let b = c.version(&summary.name, &to)?;
        Ok(Some((summary, from, a, to, b)))
    })
    .await;
    match found {
        Err(e) => error_page(&e),
        Ok(None) => not_found(format!("There is no tool named `{name}` in this registry.")),
        Ok(Some((summary, from, a, to, b))) => {
            let (a, b) = match (a, b) {
                (Some(a), Some(b)) => (a, b),
                (a, _) => {
                    let missing = if a.is_none() { from } else { to };
                    return not_found(format!("`{}` has no version {missing}.", summary.name));
                }
            };
            if summary.name != name {
                let target = diff_url(&summary.name, &a.version.version, &b.version.version);
                return HttpResponse::PermanentRedirect()
                    .insert_header((header::LOCATION, target))
                    .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
                    .finish();
            }
            // Either version's withheld contents withhold the comparison.
            for v in [&a, &b] {
                if let Err(refusal) = v.state().contents(&v.version.version) {
                    return error_page(&refusal);
                }
            }
            // The word diffs are CPU work on texts anyone can publish:
            // built and rendered on the blocking pool, never on a worker.
            let name = summary.name.clone();
            match web::block(move || DiffPage::new(&name, &a, &b).render()).await {
                Ok(Ok(body)) => html_response(StatusCode::OK, body),
                Ok(Err(e)) => {
                    tracing::error!(error = %e, "rendering a page failed");
                    HttpResponse::InternalServerError()
                        .content_type("text/plain; charset=utf-8")
                        .body("The page could not be rendered; the error has been logged.")
                }
                Err(e) => error_page(&AppError::from(e)),
            }
        }
    }
}

/// Anything else under `/tools/`: an HTML 404.
pub async fn tools_not_found(req: HttpRequest) -> HttpResponse {
    not_found(format!("There is no page at {}.", req.path()))
}
