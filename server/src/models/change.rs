//! The change log: one ordered row per publish, yank, unyank, block,
//! unblock, quarantine, unquarantine, findings update, deprecation and its
//! lifting (one row per version it changed), written in the
//! same transaction as the change (by `crate::models::state_change::record`).
//! Search indexes and read caches tail it by `seq`.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::{now, Db, DbConnection};
use crate::error::AppResult;
use crate::schema::changes;

/// What happened to a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeLogKind {
    Publish,
    Yank,
    Unyank,
    Block,
    Unblock,
    Quarantine,
    Unquarantine,
    /// A version's stored lint findings were replaced (`toolreg-server lint --apply`).
    Findings,
    /// Its owners deprecated the version, or changed its deprecation.
    Deprecate,
    /// Its owners lifted the version's deprecation.
    Undeprecate,
}

impl ChangeLogKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeLogKind::Publish => "publish",
            ChangeLogKind::Yank => "yank",
            ChangeLogKind::Unyank => "unyank",
            ChangeLogKind::Block => "block",
            ChangeLogKind::Unblock => "unblock",
            ChangeLogKind::Quarantine => "quarantine",
            ChangeLogKind::Unquarantine => "unquarantine",
            ChangeLogKind::Findings => "findings",
            ChangeLogKind::Deprecate => "deprecate",
            ChangeLogKind::Undeprecate => "undeprecate",
        }
    }
}

/// One row of the change log.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = changes)]
pub struct LoggedChange {
    pub seq: i64,
    pub tool_id: i64,
    pub tool_name: String,
    pub version: String,
    pub kind: String,
    pub created_at: NaiveDateTime,
}

impl LoggedChange {
    /// Append a change (call inside the write transaction that makes it;
    /// `state_change::record` does).
    pub fn append(
        conn: &mut DbConnection,
        tool_id: i64,
        tool_name: &str,
        version: &str,
        kind: ChangeLogKind,
    ) -> AppResult<()> {
        Db::lock_change_log(conn)?;
        diesel::insert_into(changes::table)
            .values((
                changes::tool_id.eq(tool_id),
                changes::tool_name.eq(tool_name),
                changes::version.eq(version),
                changes::kind.eq(kind.as_str()),
                changes::created_at.eq(now()),
            ))
            .execute(conn)?;
        Ok(())
    }

    /// The highest sequence number in the log (0 when it is empty).
    pub fn latest_seq(conn: &mut DbConnection) -> AppResult<i64> {
        Ok(changes::table
            .select(diesel::dsl::max(changes::seq))
            .first::<Option<i64>>(conn)?
            .unwrap_or(0))
    }

    /// Changes after `seq`, oldest first, at most `limit`.
    pub fn since(conn: &mut DbConnection, seq: i64, limit: i64) -> AppResult<Vec<LoggedChange>> {
        Ok(changes::table
            .filter(changes::seq.gt(seq))
            .order(changes::seq.asc())
            .limit(limit)
            .select(LoggedChange::as_select())
            .load(conn)?)
    }
}
