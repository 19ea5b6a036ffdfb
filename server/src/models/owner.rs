//! Tool owners: the users who may publish new versions, yank and manage owners.

use diesel::prelude::*;

use crate::db::{now, DbConnection};
use crate::error::AppResult;
use crate::models::User;
use crate::schema::{tool_owners, tools, users};

/// The owners of a tool, by login.
pub fn list(conn: &mut DbConnection, tool_id: i64) -> AppResult<Vec<User>> {
    Ok(crate::on_backend!(conn, |c| tool_owners::table
        .inner_join(users::table)
        .filter(tool_owners::tool_id.eq(tool_id))
        .order(users::login.asc())
        .select(User::as_select())
        .load(c))?)
}

pub fn is_owner(conn: &mut DbConnection, tool_id: i64, user_id: i64) -> AppResult<bool> {
    let n: i64 = tool_owners::table
        .filter(tool_owners::tool_id.eq(tool_id))
        .filter(tool_owners::user_id.eq(user_id))
        .count()
        .get_result(conn)?;
    Ok(n > 0)
}

/// Add an owner; returns false if they already were one.
pub fn add(conn: &mut DbConnection, tool_id: i64, user_id: i64) -> AppResult<bool> {
    // One statement: an existing row (the pair is the primary key) is left
    // as it is and inserts nothing.
    let at = now();
    let inserted = crate::on_backend!(conn, |c| diesel::insert_into(tool_owners::table)
        .values((
            tool_owners::tool_id.eq(tool_id),
            tool_owners::user_id.eq(user_id),
            tool_owners::created_at.eq(at),
        ))
        .on_conflict_do_nothing()
        .execute(c))?;
    Ok(inserted > 0)
}

/// Remove an owner; returns false if they were not one.
pub fn remove(conn: &mut DbConnection, tool_id: i64, user_id: i64) -> AppResult<bool> {
    let n = diesel::delete(
        tool_owners::table
            .filter(tool_owners::tool_id.eq(tool_id))
            .filter(tool_owners::user_id.eq(user_id)),
    )
    .execute(conn)?;
    Ok(n > 0)
}

/// At most this many sibling names are read for the lint.
const MAX_SIBLINGS: i64 = 10_000;

/// The names of the tools `user_id` owns: what a definition they publish
/// may name as its siblings without the lint flagging it.
pub fn tool_names_of(conn: &mut DbConnection, user_id: i64) -> AppResult<Vec<String>> {
    Ok(tool_owners::table
        .inner_join(tools::table)
        .filter(tool_owners::user_id.eq(user_id))
        .order(tools::id.asc())
        .limit(MAX_SIBLINGS)
        .select(tools::name)
        .load(conn)?)
}

/// The names of the tools that share an owner with `tool_id` (itself
/// included): a stored version's siblings, for a rescan.
pub fn sibling_names(conn: &mut DbConnection, tool_id: i64) -> AppResult<Vec<String>> {
    let owners: Vec<i64> = tool_owners::table
        .filter(tool_owners::tool_id.eq(tool_id))
        .select(tool_owners::user_id)
        .load(conn)?;
    Ok(tool_owners::table
        .inner_join(tools::table)
        .filter(tool_owners::user_id.eq_any(owners))
        .order(tools::name.asc())
        .limit(MAX_SIBLINGS)
        .select(tools::name)
        .distinct()
        .load(conn)?)
}
