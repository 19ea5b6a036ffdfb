//! The audit log over HTTP: `GET /api/v1/audit?page=&per_page=` (admins only),
//! newest first — publishes, yanks, owner and token changes, tier changes
//! and blocks, each with who, when, what and from which token.

use actix_web::{get, web};
use serde::Serialize;
use serde_json::Value;

use crate::app::AppState;
use crate::auth::Auth;
use crate::controllers::{self, Page, PageQuery};
use crate::encode::rfc3339;
use crate::error::{AppResult, ProblemBody};
use crate::models::audit::AuditEntry;

/// Entries per page when `per_page` is not given, and the most allowed.
pub const DEFAULT_ENTRIES_PER_PAGE: i64 = 50;
pub const MAX_ENTRIES_PER_PAGE: i64 = 100;

/// One audit entry.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EncodableAuditEntry {
    pub id: i64,
    /// `publish`, `yank`, `unyank`, `owner_add`, `owner_remove`, `token_create`,
    /// `token_revoke`, `tier_change`, `block`, `unblock`, `user_create`,
    /// `report`, `quarantine` or `unquarantine`.
    pub action: String,
    /// Login of who did it (`null` for the operator's `admin` subcommands).
    pub actor: Option<String>,
    /// Id of the token the request used.
    pub token_id: Option<i64>,
    pub tool: Option<String>,
    pub version: Option<String>,
    /// What changed (an object; its members depend on the action).
    #[schema(value_type = Object)]
    pub detail: Value,
    pub created_at: String,
}

impl From<AuditEntry> for EncodableAuditEntry {
    fn from(e: AuditEntry) -> Self {
        EncodableAuditEntry {
            id: e.id,
            action: e.action,
            actor: e.actor_login,
            token_id: e.token_id,
            tool: e.tool,
            version: e.version,
            detail: serde_json::from_str(&e.detail).unwrap_or(Value::String(e.detail)),
            created_at: rfc3339(&e.created_at),
        }
    }
}

/// `GET /api/v1/audit`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AuditPage {
    pub total: i64,
    pub page: i64,
    pub per_page: i64,
    pub entries: Vec<EncodableAuditEntry>,
}

/// The audit log, newest first, one page at a time.
#[utoipa::path(tag = "audit", security(("bearer" = [])), params(PageQuery),
    responses((status = 200, body = AuditPage),
              (status = 400, description = "bad page or per_page", body = ProblemBody),
              (status = 401, body = ProblemBody),
              (status = 403, description = "not an admin, an agent token, or no `admin` scope", body = ProblemBody)))]
#[get("/api/v1/audit")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Auth,
    query: web::Query<PageQuery>,
) -> AppResult<web::Json<AuditPage>> {
    auth.require_admin("read the audit log")?;
    let Page { page, per_page } =
        controllers::page(&query, DEFAULT_ENTRIES_PER_PAGE, MAX_ENTRIES_PER_PAGE)?;
    let (entries, total) = state
        .db
        .read(move |conn| AuditEntry::page(conn, page, per_page))
        .await?;
    Ok(web::Json(AuditPage {
        total,
        page,
        per_page,
        entries: entries.into_iter().map(EncodableAuditEntry::from).collect(),
    }))
}
