//! Quarantine: an administrator withholds one version — its bundle, its
//! definition in every format, its place in resolve, search and the web
//! index — until the quarantine is lifted. Nothing is deleted; lifting
//! restores everything.
//!
//! The state lives on the version's row (`versions.quarantined`,
//! `quarantine_reason`, `quarantined_at`), so every read that already loads
//! the row (download, resolve, metadata, the tool summary, the search
//! source) sees it without another query. Setting or lifting it writes, in
//! one transaction: the row, then (through `state_change::record`) the
//! audit log, the tool's stored summary and the change log (which other
//! replicas' caches and search indexes follow).
//! A quarantine also closes the version's open reports.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde_json::json;

use crate::db::{now, DbConnection};
use crate::error::AppResult;
use crate::models::change::ChangeLogKind;
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::tier::Actor;
use crate::models::{report, NewAudit, ToolRow, VersionRow};
use crate::schema::versions;

/// A version's quarantine state after [`set`], and what the read cache must
/// forget once it commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarantineOutcome {
    pub name: String,
    pub version: String,
    pub quarantined: bool,
    pub reason: Option<String>,
    pub quarantined_at: Option<NaiveDateTime>,
    /// False when the version already was in the state asked for.
    pub changed: bool,
    /// Open reports of the version that the quarantine closed.
    pub reports_closed: usize,
}

/// Quarantine `v` with `reason` (`Some`), or lift its quarantine (`None`);
/// call inside a write transaction. Quarantining a quarantined version with
/// another reason replaces the reason; asking for the state the version is
/// already in changes nothing and writes nothing.
pub fn set(
    conn: &mut DbConnection,
    tool: &ToolRow,
    v: &VersionRow,
    reason: Option<&str>,
    actor: &Actor<'_>,
) -> AppResult<(QuarantineOutcome, AfterCommit)> {
    let unchanged = match reason {
        Some(r) => v.quarantined && v.quarantine_reason.as_deref() == Some(r),
        None => !v.quarantined,
    };
    if unchanged {
        let state = QuarantineOutcome {
            name: tool.name.clone(),
            version: v.version.clone(),
            quarantined: v.quarantined,
            reason: v.quarantine_reason.clone(),
            quarantined_at: v.quarantined_at,
            changed: false,
            reports_closed: 0,
        };
        return Ok((state, AfterCommit::nothing()));
    }
    let at = reason.map(|_| now());
    diesel::update(versions::table.find(v.id))
        .set((
            versions::quarantined.eq(reason.is_some()),
            versions::quarantine_reason.eq(reason),
            versions::quarantined_at.eq(at),
        ))
        .execute(conn)?;
    let reports_closed = match reason {
        Some(_) => report::close_open(conn, v.id)?,
        None => 0,
    };
    let kind = if reason.is_some() {
        ChangeLogKind::Quarantine
    } else {
        ChangeLogKind::Unquarantine
    };
    let mut audit = NewAudit::new(kind.as_str());
    audit.actor = actor.login;
    audit.token_id = actor.token_id;
    audit.tool = Some(&tool.name);
    audit.version = Some(&v.version);
    audit.detail = match reason {
        Some(r) => json!({"reason": r, "previous_reason": v.quarantine_reason,
                          "reports_closed": reports_closed, "via": actor.via}),
        None => json!({"previous_reason": v.quarantine_reason, "via": actor.via}),
    };
    let after = state_change::record(
        conn,
        StateChange::new()
            .audit(audit)
            .version(tool.id, &tool.name, &v.version, kind),
    )?;
    let state = QuarantineOutcome {
        name: tool.name.clone(),
        version: v.version.clone(),
        quarantined: reason.is_some(),
        reason: reason.map(str::to_string),
        quarantined_at: at,
        changed: true,
        reports_closed,
    };
    Ok((state, after))
}
