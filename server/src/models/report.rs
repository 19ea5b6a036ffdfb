//! Reports: a signed-in user tells the administrators that a version looks
//! harmful (a poisoned description, a hidden instruction the lint missed).
//! A report is `open` until a quarantine of its version closes it;
//! administrators list the open ones, newest first.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::{now, DbConnection};
use crate::error::AppResult;
use crate::schema::{reports, tools, users, versions};

/// A report's `status`.
pub const OPEN: &str = "open";
pub const CLOSED: &str = "closed";

/// One report with the names it refers to.
#[derive(Debug, Clone, Queryable)]
pub struct ReportRow {
    pub id: i64,
    pub tool: String,
    pub version: String,
    pub reporter: String,
    pub reason: String,
    pub status: String,
    pub created_at: NaiveDateTime,
}

/// Store an open report of `version_id` by `reporter_id`; returns its id
/// and creation time.
pub fn insert(
    conn: &mut DbConnection,
    version_id: i64,
    reporter_id: i64,
    reason: &str,
) -> AppResult<(i64, NaiveDateTime)> {
    let at = now();
    let id = diesel::insert_into(reports::table)
        .values((
            reports::version_id.eq(version_id),
            reports::reporter_id.eq(reporter_id),
            reports::reason.eq(reason),
            reports::status.eq(OPEN),
            reports::created_at.eq(at),
        ))
        .returning(reports::id)
        .get_result(conn)?;
    Ok((id, at))
}

/// Close the open reports of a version; returns how many were open.
pub fn close_open(conn: &mut DbConnection, version_id: i64) -> AppResult<usize> {
    Ok(diesel::update(
        reports::table
            .filter(reports::version_id.eq(version_id))
            .filter(reports::status.eq(OPEN)),
    )
    .set(reports::status.eq(CLOSED))
    .execute(conn)?)
}

/// One page of open reports, newest first (`page` counts from 1), and how
/// many are open.
pub fn open_page(
    conn: &mut DbConnection,
    page: i64,
    per_page: i64,
) -> AppResult<(Vec<ReportRow>, i64)> {
    let total: i64 = reports::table
        .filter(reports::status.eq(OPEN))
        .count()
        .get_result(conn)?;
    let rows = reports::table
        .inner_join(versions::table.inner_join(tools::table))
        .inner_join(users::table)
        .filter(reports::status.eq(OPEN))
        .order(reports::id.desc())
        .limit(per_page)
        .offset((page - 1).saturating_mul(per_page))
        .select((
            reports::id,
            tools::name,
            versions::version,
            users::login,
            reports::reason,
            reports::status,
            reports::created_at,
        ))
        .load(conn)?;
    Ok((rows, total))
}
