//! The server's one error type, [`AppError`], answered as
//! `application/problem+json` (RFC 9457) with the `type` slugs of docs/api.md.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use toolreg_api::EncodableProblem;
pub use toolreg_api::ProblemBody;
use toolreg_core::policy::{Denial, Refusal};
use toolreg_core::Problem;

/// Base of every problem `type` URI.
pub const PROBLEM_BASE: &str = "https://toolreg.dev/problems/";

/// Everything a request (or a subcommand) can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// 400 `bad-request`: a malformed request (query, body, header).
    #[error("{0}")]
    BadRequest(String),
    /// 400 `bad-bundle`: the uploaded bundle breaks a bundle rule.
    #[error("{0}")]
    BadBundle(String),
    /// 401 `unauthorized`: no token, or a bad, expired or revoked one.
    #[error("{0}")]
    Unauthorized(String),
    /// 403 `forbidden`: not an owner, missing scope, not an admin.
    #[error("{0}")]
    Forbidden(String),
    /// 403 `tier-forbidden`: the publisher's tier may not publish this
    /// execution kind; the second field, when set, says what gave the
    /// version its kind (e.g. the code files of an Agent Skill).
    #[error("{}{}", .0, .1.as_deref().unwrap_or_default())]
    TierForbidden(Denial, Option<String>),
    /// 403 `blocked`: the version is blocked.
    #[error("{0}")]
    Blocked(String),
    /// 403 `quarantined`: an administrator quarantined the version.
    #[error("{0}")]
    Quarantined(String),
    /// 404 `not-found`.
    #[error("{0}")]
    NotFound(String),
    /// 410 `invitation-expired`: an owner invitation past its expiry.
    #[error("{0}")]
    InvitationExpired(String),
    /// 409 `version-exists`: versions are immutable.
    #[error("{0}")]
    VersionExists(String),
    /// 409 `too-many-versions`: the tool has as many versions as one tool may have.
    #[error("{0}")]
    TooManyVersions(String),
    /// 413 `too-large`: the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    /// 422 `invalid-definition` with every problem found.
    #[error("{detail}")]
    InvalidDefinition {
        detail: String,
        errors: Vec<Problem>,
    },
    /// 422 `unprocessable`: a request that is well-formed but cannot be done (e.g. an impossible export).
    #[error("{0}")]
    Unprocessable(String),
    /// 429 `rate-limited`, with `Retry-After: retry_after` (seconds).
    #[error("{detail}")]
    RateLimited { detail: String, retry_after: u64 },
    /// 503 `unavailable`: a part of the server is not running (yet), with
    /// `Retry-After: retry_after` (seconds).
    #[error("{detail}")]
    Unavailable { detail: String, retry_after: u64 },
    #[error("database error: {0}")]
    Database(#[from] diesel::result::Error),
    #[error("database connection error: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    #[error("storage error: {0}")]
    Storage(#[from] object_store::Error),
    #[error("{0}")]
    Internal(String),
}

/// Result alias used throughout the server.
pub type AppResult<T> = Result<T, AppError>;

pub fn bad_request(msg: impl Into<String>) -> AppError {
    AppError::BadRequest(msg.into())
}
pub fn unauthorized(msg: impl Into<String>) -> AppError {
    AppError::Unauthorized(msg.into())
}
pub fn forbidden(msg: impl Into<String>) -> AppError {
    AppError::Forbidden(msg.into())
}
pub fn not_found(msg: impl Into<String>) -> AppError {
    AppError::NotFound(msg.into())
}
pub fn internal(msg: impl Into<String>) -> AppError {
    AppError::Internal(msg.into())
}

impl From<toolreg_core::Error> for AppError {
    fn from(err: toolreg_core::Error) -> Self {
        use toolreg_core::Error as E;
        match err {
            E::Invalid(problems) => {
                let detail = match problems.len() {
                    1 => format!("1 problem in the tool definition: {}", problems[0]),
                    n => format!("{n} problems in the tool definition"),
                };
                AppError::InvalidDefinition {
                    detail,
                    errors: problems,
                }
            }
            E::Bundle(msg) => AppError::BadBundle(format!("bad bundle: {msg}")),
            e @ E::TooLarge { .. } => AppError::TooLarge(e.to_string()),
            e @ E::Export { .. } => AppError::Unprocessable(e.to_string()),
            e @ E::Io { .. } => AppError::Internal(e.to_string()),
            E::LogRequest(msg) => AppError::BadRequest(msg),
            e @ (E::LogInclusion(_)
            | E::LogConsistency(_)
            | E::LogMalformed { .. }
            | E::LogSignature(_)
            | E::LogStorage(_)) => AppError::Internal(format!("transparency log: {e}")),
        }
    }
}

/// The policy's refusal of a publish: 403 `tier-forbidden` for the tier, 403
/// `forbidden` for flagged code. (A version already out is blocked instead,
/// by `models::tier`.)
impl From<Refusal> for AppError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Tier(denial) => AppError::TierForbidden(denial, None),
            flagged @ Refusal::FlaggedCode { .. } => AppError::Forbidden(format!(
                "{flagged}: reword the flagged text, or publish as a verified or trusted \
                 publisher (not with an agent token)"
            )),
        }
    }
}

/// Trusted publishing's refusals: off is 403, a token that does not verify
/// 401 naming what did not check out, an issuer whose keys can't be read 500.
impl From<toolreg_trustpub::TrustPubError> for AppError {
    fn from(err: toolreg_trustpub::TrustPubError) -> Self {
        use toolreg_trustpub::TrustPubError as E;
        match err {
            e @ E::Off => AppError::Forbidden(e.to_string()),
            E::Refused(message) => AppError::Unauthorized(message),
            e @ E::IssuerUnreachable { .. } => AppError::Internal(e.to_string()),
        }
    }
}

/// Seconds a client is told to wait when search is not running yet (the
/// index is opened, or rebuilt from the database, at start-up).
pub const SEARCH_RETRY_AFTER: u64 = 5;

/// The one mapping of search errors: a bad parameter is a 400 naming it,
/// search not running (yet) a 503, anything else a 500.
impl From<toolreg_search::SearchError> for AppError {
    fn from(err: toolreg_search::SearchError) -> Self {
        use toolreg_search::SearchError as E;
        match err {
            E::BadRequest(message) => AppError::BadRequest(message),
            e @ E::NotRunning => AppError::Unavailable {
                detail: e.to_string(),
                retry_after: SEARCH_RETRY_AFTER,
            },
            other => AppError::Internal(format!("search failed: {other}")),
        }
    }
}

impl From<actix_web::error::BlockingError> for AppError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        AppError::Internal(format!("background task failed: {err}"))
    }
}

impl AppError {
    fn slug_and_title(&self) -> (&'static str, &'static str) {
        match self {
            AppError::BadRequest(_) => ("bad-request", "Bad request"),
            AppError::BadBundle(_) => ("bad-bundle", "Bad bundle"),
            AppError::Unauthorized(_) => ("unauthorized", "Unauthorized"),
            AppError::Forbidden(_) => ("forbidden", "Forbidden"),
            AppError::TierForbidden(..) => ("tier-forbidden", "Publisher tier too low"),
            AppError::Blocked(_) => ("blocked", "Version blocked"),
            AppError::Quarantined(_) => ("quarantined", "Version quarantined"),
            AppError::NotFound(_) => ("not-found", "Not found"),
            AppError::InvitationExpired(_) => ("invitation-expired", "Invitation expired"),
            AppError::VersionExists(_) => ("version-exists", "Version already published"),
            AppError::TooManyVersions(_) => ("too-many-versions", "Too many versions"),
            AppError::TooLarge(_) => ("too-large", "Too large"),
            AppError::InvalidDefinition { .. } => ("invalid-definition", "Invalid tool definition"),
            AppError::Unprocessable(_) => ("unprocessable", "Cannot process the request"),
            AppError::RateLimited { .. } => ("rate-limited", "Too many requests"),
            AppError::Unavailable { .. } => ("unavailable", "Service unavailable"),
            AppError::Database(_)
            | AppError::Pool(_)
            | AppError::Storage(_)
            | AppError::Internal(_) => ("internal", "Internal server error"),
        }
    }

    /// The body of this error as problem+json.
    pub fn problem(&self) -> ProblemBody {
        let (slug, title) = self.slug_and_title();
        let status = self.status_code();
        // A server error's own message stays in the log; "not running yet"
        // is no failure and says what is unavailable.
        let detail = if status.is_server_error() && !matches!(self, AppError::Unavailable { .. }) {
            "The registry failed to handle the request; it has been logged. Try again later."
                .to_string()
        } else {
            self.to_string()
        };
        let mut body = ProblemBody {
            kind: format!("{PROBLEM_BASE}{slug}"),
            title: title.to_string(),
            status: status.as_u16(),
            detail,
            errors: None,
            execution: None,
            required_tier: None,
            publisher_tier: None,
        };
        match self {
            AppError::InvalidDefinition { errors, .. } => {
                body.errors = Some(errors.iter().map(EncodableProblem::from).collect())
            }
            AppError::TierForbidden(denial, _) => {
                body.execution = Some(denial.execution.to_string());
                body.required_tier = Some(denial.required.to_string());
                body.publisher_tier = Some(denial.publisher_tier.to_string());
            }
            _ => {}
        }
        body
    }
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) | AppError::BadBundle(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_)
            | AppError::TierForbidden(..)
            | AppError::Blocked(_)
            | AppError::Quarantined(_) => StatusCode::FORBIDDEN,
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::InvitationExpired(_) => StatusCode::GONE,
            AppError::VersionExists(_) | AppError::TooManyVersions(_) => StatusCode::CONFLICT,
            AppError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::InvalidDefinition { .. } | AppError::Unprocessable(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            AppError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            AppError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Database(_)
            | AppError::Pool(_)
            | AppError::Storage(_)
            | AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        match self {
            AppError::Unavailable { .. } => tracing::warn!(error = %self, "request refused"),
            _ if status.is_server_error() => tracing::error!(error = %self, "request failed"),
            _ => {}
        }
        let mut res = HttpResponse::build(status);
        res.content_type("application/problem+json");
        if status == StatusCode::UNAUTHORIZED {
            res.insert_header(("WWW-Authenticate", "Bearer"));
        }
        if let AppError::RateLimited { retry_after, .. }
        | AppError::Unavailable { retry_after, .. } = self
        {
            res.insert_header((
                actix_web::http::header::RETRY_AFTER,
                retry_after.to_string(),
            ));
        }
        res.json(self.problem())
    }
}

/// Answer extractor failures (bad JSON body, bad query, bad path) as problem+json too.
pub fn json_error_handler(
    err: actix_web::error::JsonPayloadError,
    _: &actix_web::HttpRequest,
) -> actix_web::Error {
    bad_request(format!("the JSON body is invalid: {err}")).into()
}

/// See [`json_error_handler`].
pub fn query_error_handler(
    err: actix_web::error::QueryPayloadError,
    _: &actix_web::HttpRequest,
) -> actix_web::Error {
    bad_request(format!("the query string is invalid: {err}")).into()
}

/// See [`json_error_handler`].
pub fn path_error_handler(
    err: actix_web::error::PathError,
    _: &actix_web::HttpRequest,
) -> actix_web::Error {
    bad_request(format!("the path is invalid: {err}")).into()
}
