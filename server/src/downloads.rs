//! Download counting, buffered in memory and flushed to the database about
//! once a second, so serving a download never waits for a database write.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use diesel::prelude::*;

use crate::db::batch_update::{self, Value};
use crate::db::{Db, DbConnection, MAX_IN_LIST};
use crate::error::AppResult;
use crate::models::{tool_summary, ToolRow};
use crate::schema::{tools, versions};

/// Downloads counted since the last flush: version id → (tool id, count).
#[derive(Default)]
pub struct DownloadCounter {
    pending: Mutex<HashMap<i64, (i64, i64)>>,
}

impl DownloadCounter {
    pub fn count(&self, tool_id: i64, version_id: i64) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.entry(version_id).or_insert((tool_id, 0)).1 += 1;
        }
    }

    fn take(&self) -> HashMap<i64, (i64, i64)> {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Write the pending counts in one transaction — the versions' and
    /// tools' rows, a few hundred rows per statement
    /// ([`batch_update`]), and the tools' stored summaries
    /// ([`tool_summary::add_downloads`]) — and return the (tool name,
    /// version) pairs whose counts changed, so cached answers showing the
    /// counts can be dropped. On failure the counts are put back.
    pub async fn flush(&self, db: &Db) -> AppResult<Vec<(String, String)>> {
        let pending = self.take();
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        let batch = pending.clone();
        let result = db
            .write(move |conn| {
                let mut version_rows: Vec<(i64, Value<'_>)> = batch
                    .iter()
                    .map(|(id, (_, n))| (*id, Value::Int(*n)))
                    .collect();
                version_rows.sort_unstable_by_key(|(id, _)| *id);
                let ids: Vec<i64> = version_rows.iter().map(|(id, _)| *id).collect();
                let names = names_of(conn, &ids)?;
                let version_of: HashMap<i64, &str> =
                    names.iter().map(|(id, _, v)| (*id, v.as_str())).collect();
                batch_update::update_each(
                    conn,
                    "versions",
                    "id",
                    "downloads",
                    "downloads + ",
                    &version_rows,
                )?;
                let mut per_tool: BTreeMap<i64, (i64, Vec<(String, i64)>)> = BTreeMap::new();
                for (version_id, (tool_id, n)) in &batch {
                    let tool = per_tool.entry(*tool_id).or_default();
                    tool.0 += n;
                    if let Some(version) = version_of.get(version_id) {
                        tool.1.push((version.to_string(), *n));
                    }
                }
                let per_tool: Vec<tool_summary::ToolDownloads> = per_tool
                    .into_iter()
                    .map(|(id, (total, versions))| (id, total, versions))
                    .collect();
                // Tools in ascending id order: on PostgreSQL, concurrent
                // flushes (one per replica) and other writers take the tool
                // rows' locks in the same order.
                let tool_ids: Vec<i64> = per_tool.iter().map(|(id, _, _)| *id).collect();
                ToolRow::lock_in_order(conn, &tool_ids)?;
                let tool_rows: Vec<(i64, Value<'_>)> = per_tool
                    .iter()
                    .map(|(id, total, _)| (*id, Value::Int(*total)))
                    .collect();
                batch_update::update_each(
                    conn,
                    "tools",
                    "id",
                    "downloads",
                    "downloads + ",
                    &tool_rows,
                )?;
                tool_summary::add_downloads(conn, &per_tool)?;
                Ok(names
                    .into_iter()
                    .map(|(_, tool, version)| (tool, version))
                    .collect())
            })
            .await;
        if result.is_err() {
            if let Ok(mut p) = self.pending.lock() {
                for (version_id, (tool_id, n)) in pending {
                    p.entry(version_id).or_insert((tool_id, 0)).1 += n;
                }
            }
        }
        result
    }
}

/// The (version id, tool name, version) of each version id that exists,
/// looked up [`MAX_IN_LIST`] ids at a time (a flush can hold every version
/// downloaded in a second).
fn names_of(conn: &mut DbConnection, ids: &[i64]) -> AppResult<Vec<(i64, String, String)>> {
    let mut names = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(MAX_IN_LIST) {
        names.extend(
            versions::table
                .inner_join(tools::table)
                .filter(versions::id.eq_any(chunk))
                .select((versions::id, tools::name, versions::version))
                .load::<(i64, String, String)>(conn)?,
        );
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More ids than one SQLite statement may bind are looked up in chunks.
    #[test]
    fn names_of_more_versions_than_a_statement_may_bind() {
        let (_dir, db) = crate::db::temp_sqlite();
        let mut conn = db.conn().expect("connection");
        let ids: Vec<i64> = (1..=40_000).collect();
        let names = names_of(&mut conn, &ids).expect("chunked lookup");
        assert!(names.is_empty(), "no versions exist: {names:?}");
    }
}
