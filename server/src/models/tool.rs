//! Tools: one row per registry name, unique on its normalized form.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::{now, DbConnection};
use crate::error::{not_found, AppResult};
use crate::schema::tools;

#[derive(Debug, Clone, Queryable, Selectable, Identifiable)]
#[diesel(table_name = tools)]
pub struct ToolRow {
    pub id: i64,
    pub name: String,
    pub normalized_name: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub downloads: i64,
}

/// The uniqueness form of a name: case and `-`/`_` don't matter.
pub fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

impl ToolRow {
    /// The tool whose name matches `name` in normalized form.
    pub fn by_name(conn: &mut DbConnection, name: &str) -> AppResult<Option<ToolRow>> {
        let normalized = normalize(name);
        Ok(crate::on_backend!(conn, |c| tools::table
            .filter(tools::normalized_name.eq(&normalized))
            .select(ToolRow::as_select())
            .first(c)
            .optional())?)
    }

    /// [`ToolRow::by_name`], or 404 naming the tool.
    pub fn require(conn: &mut DbConnection, name: &str) -> AppResult<ToolRow> {
        ToolRow::by_name(conn, name)?
            .ok_or_else(|| not_found(format!("there is no tool named `{name}`")))
    }

    /// Insert a new tool (call inside a write transaction) and return its
    /// row as stored, in the same statement. A concurrent insert of the same
    /// normalized name fails with a unique violation.
    pub fn create(conn: &mut DbConnection, name: &str) -> AppResult<ToolRow> {
        let at = now();
        let normalized = normalize(name);
        Ok(crate::on_backend!(conn, |c| diesel::insert_into(
            tools::table
        )
        .values((
            tools::name.eq(name),
            tools::normalized_name.eq(&normalized),
            tools::created_at.eq(at),
            tools::updated_at.eq(at),
            tools::downloads.eq(0i64),
        ))
        .returning(ToolRow::as_returning())
        .get_result(c))?)
    }

    pub fn touch(conn: &mut DbConnection, id: i64) -> AppResult<()> {
        diesel::update(tools::table.find(id))
            .set(tools::updated_at.eq(now()))
            .execute(conn)?;
        Ok(())
    }

    /// Locks the rows of `ids` (ascending) in ascending id order, as every
    /// writer that changes several tools takes them, before a statement that
    /// updates them all at once (in whatever order its plan visits them).
    /// On PostgreSQL; SQLite has one writer at a time and no row locks.
    pub fn lock_in_order(conn: &mut DbConnection, ids: &[i64]) -> AppResult<()> {
        if let DbConnection::Postgresql(c) = conn {
            for chunk in ids.chunks(crate::db::MAX_IN_LIST) {
                tools::table
                    .filter(tools::id.eq_any(chunk))
                    .order(tools::id)
                    .select(tools::id)
                    .for_update()
                    .load::<i64>(c)?;
            }
        }
        Ok(())
    }
}
