//! The audit log: who did what, written in the same transaction as the change.

use diesel::prelude::*;
use serde_json::Value;

use crate::db::{now, DbConnection};
use crate::error::AppResult;
use crate::schema::audit_log;

/// One audit entry to write. `action` is one of docs/api.md's actions
/// (`publish`, `yank`, `unyank`, `owner_add`, `owner_remove`, `token_create`,
/// `token_revoke`, `tier_change`, `block`, `unblock`, `user_create`, `report`,
/// `quarantine`, `unquarantine`).
#[derive(Debug, Clone)]
pub struct NewAudit<'a> {
    pub action: &'a str,
    pub actor: Option<&'a str>,
    pub token_id: Option<i64>,
    pub tool: Option<&'a str>,
    pub version: Option<&'a str>,
    pub detail: Value,
}

impl<'a> NewAudit<'a> {
    pub fn new(action: &'a str) -> Self {
        NewAudit {
            action,
            actor: None,
            token_id: None,
            tool: None,
            version: None,
            detail: Value::Object(Default::default()),
        }
    }

    pub fn insert(&self, conn: &mut DbConnection) -> AppResult<()> {
        diesel::insert_into(audit_log::table)
            .values((
                audit_log::action.eq(self.action),
                audit_log::actor_login.eq(self.actor),
                audit_log::token_id.eq(self.token_id),
                audit_log::tool.eq(self.tool),
                audit_log::version.eq(self.version),
                audit_log::detail.eq(self.detail.to_string()),
                audit_log::created_at.eq(now()),
            ))
            .execute(conn)?;
        Ok(())
    }
}

/// One stored audit entry.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = audit_log)]
pub struct AuditEntry {
    pub id: i64,
    pub action: String,
    pub actor_login: Option<String>,
    pub token_id: Option<i64>,
    pub tool: Option<String>,
    pub version: Option<String>,
    pub detail: String,
    pub created_at: chrono::NaiveDateTime,
}

impl AuditEntry {
    /// One page of entries, newest first (`page` counts from 1), and the total count.
    pub fn page(
        conn: &mut DbConnection,
        page: i64,
        per_page: i64,
    ) -> AppResult<(Vec<AuditEntry>, i64)> {
        let total: i64 = audit_log::table.count().get_result(conn)?;
        let entries = audit_log::table
            .order(audit_log::id.desc())
            .limit(per_page)
            .offset((page - 1).saturating_mul(per_page))
            .select(AuditEntry::as_select())
            .load(conn)?;
        Ok((entries, total))
    }
}
