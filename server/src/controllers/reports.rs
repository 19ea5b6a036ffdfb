//! Reports of harmful versions: `POST /api/v1/tools/{name}/{version}/reports`
//! (any signed-in user, rate-limited) and `GET /api/v1/reports` (admins
//! only: open reports, newest first, one page at a time). A quarantine of
//! the version closes its open reports (`crate::models::quarantine`).

use actix_web::{get, post, web, HttpRequest, HttpResponse};
use serde_json::{json, Value};

use crate::app::AppState;
use crate::auth::Auth;
use crate::controllers::audit::{DEFAULT_ENTRIES_PER_PAGE, MAX_ENTRIES_PER_PAGE};
use crate::controllers::{self, Page, PageQuery};
use crate::encode::rfc3339;
use crate::error::{bad_request, AppResult, ProblemBody};
use crate::models::report::{self, ReportRow};
use crate::models::{NewAudit, ToolRow, VersionRow};
use crate::rate_limit::Action;
use crate::views::{EncodableReport, ReasonRequest, ReportPage};

/// The most characters a report's or a quarantine's reason may have.
pub const MAX_REASON_CHARS: usize = 2000;

/// The reason from a body `{"reason": "..."}`: trimmed, 1 to
/// [`MAX_REASON_CHARS`] characters, no control characters but line breaks
/// and tabs. Anything else is a 400 naming the field and the limit.
pub fn parse_reason(body: &[u8]) -> AppResult<String> {
    let shape = r#"send {"reason": "..."} with 1 to 2000 characters"#;
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| bad_request(format!("the body is not JSON ({e}); {shape}")))?;
    let Value::Object(fields) = value else {
        return Err(bad_request(format!(
            "the body must be a JSON object: {shape}"
        )));
    };
    if let Some(other) = fields.keys().find(|k| k.as_str() != "reason") {
        return Err(bad_request(format!(
            "{other}: unknown field; the body has only `reason`"
        )));
    }
    let reason = match fields.get("reason") {
        None | Some(Value::Null) => {
            return Err(bad_request(format!("reason: is required; {shape}")))
        }
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err(bad_request(format!("reason: must be a string; {shape}"))),
    };
    let chars = reason.chars().count();
    if chars == 0 {
        return Err(bad_request(format!(
            "reason: must not be empty (1 to {MAX_REASON_CHARS} characters)"
        )));
    }
    if chars > MAX_REASON_CHARS {
        return Err(bad_request(format!(
            "reason: is {chars} characters long; at most {MAX_REASON_CHARS} are allowed"
        )));
    }
    if reason
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err(bad_request(
            "reason: must not contain control characters (line breaks and tabs are fine)",
        ));
    }
    Ok(reason.to_string())
}

impl From<ReportRow> for EncodableReport {
    fn from(r: ReportRow) -> Self {
        EncodableReport {
            id: r.id,
            name: r.tool,
            version: r.version,
            reporter: r.reporter,
            reason: r.reason,
            status: r.status,
            created_at: rfc3339(&r.created_at),
        }
    }
}

/// Report a version to the registry's administrators (any signed-in user;
/// rate-limited per token, user and client IP).
#[utoipa::path(tag = "reports", security(("bearer" = [])), params(("name" = String, Path), ("version" = String, Path)),
    request_body = ReasonRequest,
    responses((status = 201, body = EncodableReport),
              (status = 400, description = "no reason, an empty one or one over 2000 characters", body = ProblemBody),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody),
              (status = 429, description = "rate limited (see `Retry-After`)", body = ProblemBody)))]
#[post("/api/v1/tools/{name}/{version}/reports")]
pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    auth: Auth,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    let reason = parse_reason(&body)?;
    state
        .rate_limits
        .check(&state.db, &req, Action::Report, auth.token.id)
        .await?;
    let (name, version) = path.into_inner();
    let report = state
        .db
        .write(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            let (id, created_at) = report::insert(conn, v.id, auth.user.id, &reason)?;
            let mut audit = NewAudit::new("report");
            audit.actor = Some(&auth.user.login);
            audit.token_id = Some(auth.token.id);
            audit.tool = Some(&tool.name);
            audit.version = Some(&v.version);
            audit.detail = json!({"report": id, "reason": reason});
            audit.insert(conn)?;
            Ok(EncodableReport::from(ReportRow {
                id,
                tool: tool.name,
                version: v.version,
                reporter: auth.user.login,
                reason,
                status: report::OPEN.to_string(),
                created_at,
            }))
        })
        .await?;
    Ok(HttpResponse::Created().json(report))
}

/// Open reports, newest first (admins only).
#[utoipa::path(tag = "reports", security(("bearer" = [])), params(PageQuery),
    responses((status = 200, body = ReportPage),
              (status = 400, description = "bad page or per_page", body = ProblemBody),
              (status = 401, body = ProblemBody),
              (status = 403, description = "not an admin, an agent token, or no `admin` scope", body = ProblemBody)))]
#[get("/api/v1/reports")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Auth,
    query: web::Query<PageQuery>,
) -> AppResult<web::Json<ReportPage>> {
    auth.require_admin("list reports")?;
    let Page { page, per_page } =
        controllers::page(&query, DEFAULT_ENTRIES_PER_PAGE, MAX_ENTRIES_PER_PAGE)?;
    let (rows, total) = state
        .db
        .read(move |conn| report::open_page(conn, page, per_page))
        .await?;
    Ok(web::Json(ReportPage {
        total,
        page,
        per_page,
        reports: rows.into_iter().map(EncodableReport::from).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        parse_reason(body.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn reasons_are_trimmed_bounded_and_named() {
        assert_eq!(
            parse_reason(br#"{"reason": "  steals keys \n"}"#).unwrap(),
            "steals keys"
        );
        let at_limit = format!(r#"{{"reason": "{}"}}"#, "é".repeat(MAX_REASON_CHARS));
        assert!(parse_reason(at_limit.as_bytes()).is_ok());
        let over = format!(r#"{{"reason": "{}"}}"#, "é".repeat(MAX_REASON_CHARS + 1));
        assert!(err(&over).contains("at most 2000"), "{}", err(&over));
        for (body, needle) in [
            ("", "not JSON"),
            ("[]", "JSON object"),
            ("{}", "reason: is required"),
            (r#"{"reason": null}"#, "reason: is required"),
            (r#"{"reason": 3}"#, "reason: must be a string"),
            (r#"{"reason": "   "}"#, "reason: must not be empty"),
            (r#"{"reason": "x", "why": 1}"#, "why: unknown field"),
            (r#"{"reason": "a\u001b[2Jb"}"#, "control characters"),
        ] {
            assert!(err(body).contains(needle), "{body}: {}", err(body));
        }
    }
}
