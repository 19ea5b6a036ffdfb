//! One `UPDATE` for many rows, each with its own value:
//!
//! ```sql
//! UPDATE versions SET downloads = downloads + v.column2
//! FROM (VALUES (?1, ?2), (?3, ?4)) AS v WHERE versions.id = v.column1
//! ```
//!
//! The download-count flush changes thousands of rows a second, one value
//! each. As single-row statements that is thousands of statements, and
//! diesel prepares every `UPDATE` anew (it caches only statements whose SQL
//! it knows to be fixed), so preparing them cost more than running them.
//! Here each [`MAX_IN_LIST`] rows are one statement: the values are a table
//! joined to the updated one by its key, so each row is found by its index
//! (a `CASE key WHEN … END` would compare every row with every key).
//!
//! The SQL is the same on both backends (both name a `VALUES` list's
//! columns `column1`, `column2`, and both take `UPDATE … FROM`) but for its
//! numbered parameters: `?N` on SQLite, `$N` on PostgreSQL.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use super::{DbConnection, MAX_IN_LIST};
use crate::error::AppResult;

/// A row's new value, or what is added to it.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Int(i64),
    Text(&'a str),
}

/// Runs `UPDATE {table} SET {column} = {set}v.column2 FROM (VALUES …) AS v
/// WHERE {table}.{key} = v.column1` over `rows` (key, value),
/// [`MAX_IN_LIST`] rows per statement, in the order given. `set` is put
/// before the value: `"downloads + "` adds it, `""` replaces the column
/// with it. A key may appear once per call. Returns how many rows were
/// updated (a key that names no row updates nothing).
pub fn update_each(
    conn: &mut DbConnection,
    table: &str,
    key: &str,
    column: &str,
    set: &str,
    rows: &[(i64, Value<'_>)],
) -> AppResult<usize> {
    let mark = match conn {
        DbConnection::Sqlite(_) => '?',
        DbConnection::Postgresql(_) => '$',
    };
    let mut updated = 0;
    for chunk in rows.chunks(MAX_IN_LIST) {
        let sql = statement(mark, table, key, column, set, chunk.len());
        updated += crate::on_backend!(conn, |c| {
            let mut query = diesel::sql_query(&sql).into_boxed();
            for (id, value) in chunk {
                query = query.bind::<BigInt, _>(*id);
                query = match *value {
                    Value::Int(n) => query.bind::<BigInt, _>(n),
                    Value::Text(s) => query.bind::<Text, _>(s),
                };
            }
            query.execute(c)
        })?;
    }
    Ok(updated)
}

/// The statement for `n` rows, with parameters numbered from 1: key, value,
/// key, value, …
fn statement(mark: char, table: &str, key: &str, column: &str, set: &str, n: usize) -> String {
    use std::fmt::Write;
    let mut sql = format!("UPDATE {table} SET {column} = {set}v.column2 FROM (VALUES ");
    for i in 0..n {
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(sql, "{sep}({mark}{}, {mark}{})", 2 * i + 1, 2 * i + 2);
    }
    let _ = write!(sql, ") AS v WHERE {table}.{key} = v.column1");
    sql
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ToolRow;
    use crate::schema::tools;

    /// More rows than one statement takes: each gets its own value, rows
    /// not named keep theirs, and a key that names no row is skipped.
    #[test]
    fn many_rows_each_get_their_own_value() {
        let (_dir, db) = crate::db::temp_sqlite();
        let mut conn = db.conn().expect("connection");
        let n = MAX_IN_LIST * 2 + 7;
        let ids: Vec<i64> = (0..n + 1)
            .map(|i| {
                ToolRow::create(&mut conn, &format!("tool-{i}"))
                    .expect("tool")
                    .id
            })
            .collect();
        let (named, untouched) = ids.split_at(n);
        let mut rows: Vec<(i64, Value<'_>)> =
            named.iter().map(|id| (*id, Value::Int(id * 3))).collect();
        rows.push((i64::MAX, Value::Int(1)));
        let updated = update_each(&mut conn, "tools", "id", "downloads", "downloads + ", &rows)
            .expect("update");
        assert_eq!(updated, n);
        update_each(
            &mut conn,
            "tools",
            "id",
            "downloads",
            "downloads + ",
            &rows[..1],
        )
        .expect("second update");
        let counts: Vec<(i64, i64)> = tools::table
            .select((tools::id, tools::downloads))
            .order(tools::id)
            .load(&mut **conn)
            .expect("counts");
        for (id, downloads) in counts {
            let expected = if untouched.contains(&id) {
                0
            } else if id == named[0] {
                id * 6
            } else {
                id * 3
            };
            assert_eq!(downloads, expected, "tool {id}");
        }
    }

    #[test]
    fn the_statement_joins_the_values_by_key() {
        assert_eq!(
            statement('$', "tools", "id", "downloads", "downloads + ", 2),
            "UPDATE tools SET downloads = downloads + v.column2 FROM (VALUES ($1, $2), ($3, $4)) AS v WHERE tools.id = v.column1"
        );
        assert_eq!(
            statement('?', "tool_summaries", "tool_id", "body", "", 1),
            "UPDATE tool_summaries SET body = v.column2 FROM (VALUES (?1, ?2)) AS v WHERE tool_summaries.tool_id = v.column1"
        );
    }
}
