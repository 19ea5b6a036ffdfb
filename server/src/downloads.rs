//! Download counting, buffered in memory and flushed to the database about
//! once a second, so serving a download never waits for a database write.
//!
//! Under heavy download traffic the flush waits longer ([`BUSY_INTERVAL`]
//! once more than [`BUSY_VERSIONS`] versions are pending). A flush writes
//! each counted version's row, its tool's row and its tool's stored
//! summary, and the database writes whole pages: with downloads spread
//! over a large registry, nearly every row of a flush sits on a page of
//! its own, so one second's flush rewrites tens of thousands of pages
//! (~9 KB written per 2 KB bundle served at 100,000 tools), and waiting
//! longer lets one write of a page carry many more of its rows' counts.
//! The counts shown then lag by up to that interval, and a killed process
//! loses that many seconds of counts instead of one.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use diesel::prelude::*;

use crate::db::batch_update::{self, Value};
use crate::db::{Db, DbConnection, MAX_IN_LIST};
use crate::error::AppResult;
use crate::models::{tool_summary, ToolRow};
use crate::schema::{tools, versions};

/// Pending versions above which the flush waits for [`BUSY_INTERVAL`]
/// instead of a second.
pub const BUSY_VERSIONS: usize = 1_000;

/// How often the counts are flushed while more than [`BUSY_VERSIONS`]
/// versions are pending.
pub const BUSY_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether the once-a-second tick should flush, `since_last` after the
/// last flush: always while at most [`BUSY_VERSIONS`] versions are
/// pending, otherwise once [`BUSY_INTERVAL`] has passed.
pub fn flush_due(pending_versions: usize, since_last: std::time::Duration) -> bool {
    pending_versions <= BUSY_VERSIONS || since_last >= BUSY_INTERVAL
}

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

    /// How many versions have counts waiting for the next flush.
    pub fn pending_versions(&self) -> usize {
        self.pending.lock().map(|p| p.len()).unwrap_or_default()
    }

    fn take(&self) -> HashMap<i64, (i64, i64)> {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Write the pending counts — the versions' and tools' rows, a few
    /// hundred rows per statement ([`batch_update`]), and the tools' stored
    /// summaries ([`tool_summary::add_downloads`]) — in transactions of at
    /// most about [`FLUSH_CHUNK`] versions, and add to `counted` the (tool
    /// name, version) pairs whose counts changed, as each transaction
    /// commits, so cached answers showing the counts can be dropped (also
    /// when a later transaction fails). A tool's versions are written in one
    /// transaction, with its row and its summary. On failure the counts not
    /// written are put back.
    pub async fn flush(&self, db: &Db, counted: &mut Vec<(String, String)>) -> AppResult<()> {
        let pending = self.take();
        if pending.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let versions = pending.len();
        let mut chunks = chunks_by_tool(pending).into_iter();
        while let Some(chunk) = chunks.next() {
            let batch = chunk.clone();
            match db.write(move |conn| write_counts(conn, &batch)).await {
                Ok(names) => counted.extend(names),
                Err(e) => {
                    if let Ok(mut p) = self.pending.lock() {
                        for (version_id, (tool_id, n)) in
                            std::iter::once(chunk).chain(chunks).flatten()
                        {
                            p.entry(version_id).or_insert((tool_id, 0)).1 += n;
                        }
                    }
                    return Err(e);
                }
            }
        }
        tracing::debug!(
            versions,
            ms = started.elapsed().as_millis() as u64,
            "download counts written"
        );
        Ok(())
    }
}

/// Most versions whose counts one flush transaction writes (a tool's
/// versions are never split, so a chunk may hold a few more). The flush
/// holds the database's write lock for a transaction at a time: on SQLite,
/// a publish waits for at most one chunk (~0.15 s of writing at 100,000
/// tools on the 2-core benchmark machine), not for the whole flush.
const FLUSH_CHUNK: usize = 5_000;

/// One version's pending count: (version id, (tool id, count)).
type Pending = (i64, (i64, i64));

/// The pending counts in ascending tool id order, cut into chunks of about
/// [`FLUSH_CHUNK`] versions between tools. In that order a chunk's rows sit
/// on neighbouring pages of the tools' and summaries' tables.
fn chunks_by_tool(pending: HashMap<i64, (i64, i64)>) -> Vec<Vec<Pending>> {
    let mut all: Vec<Pending> = pending.into_iter().collect();
    all.sort_unstable_by_key(|(version_id, (tool_id, _))| (*tool_id, *version_id));
    let mut chunks: Vec<Vec<Pending>> = Vec::new();
    let mut chunk = Vec::new();
    for entry in all {
        let new_tool = chunk
            .last()
            .is_none_or(|(_, (tool, _)): &Pending| *tool != entry.1 .0);
        if chunk.len() >= FLUSH_CHUNK && new_tool {
            chunks.push(std::mem::take(&mut chunk));
        }
        chunk.push(entry);
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// One flush transaction: add `batch`'s counts (version id → (tool id,
/// count)) to the versions' and tools' rows and the tools' summaries.
fn write_counts(conn: &mut DbConnection, batch: &[Pending]) -> AppResult<Vec<(String, String)>> {
    let mut version_rows: Vec<(i64, Value<'_>)> = batch
        .iter()
        .map(|(id, (_, n))| (*id, Value::Int(*n)))
        .collect();
    version_rows.sort_unstable_by_key(|(id, _)| *id);
    let ids: Vec<i64> = version_rows.iter().map(|(id, _)| *id).collect();
    let names = names_of(conn, &ids)?;
    let version_of: HashMap<i64, &str> = names.iter().map(|(id, _, v)| (*id, v.as_str())).collect();
    batch_update::update_each(
        conn,
        "versions",
        "id",
        "downloads",
        "downloads + ",
        &version_rows,
    )?;
    let mut per_tool: BTreeMap<i64, (i64, Vec<(String, i64)>)> = BTreeMap::new();
    for (version_id, (tool_id, n)) in batch {
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
    batch_update::update_each(conn, "tools", "id", "downloads", "downloads + ", &tool_rows)?;
    tool_summary::add_downloads(conn, &per_tool)?;
    Ok(names
        .into_iter()
        .map(|(_, tool, version)| (tool, version))
        .collect())
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

    #[test]
    fn a_busy_flush_waits_for_the_longer_interval() {
        use std::time::Duration;
        let second = Duration::from_secs(1);
        assert!(flush_due(0, second));
        assert!(flush_due(BUSY_VERSIONS, second));
        assert!(!flush_due(BUSY_VERSIONS + 1, second));
        assert!(!flush_due(BUSY_VERSIONS + 1, BUSY_INTERVAL - second));
        assert!(flush_due(BUSY_VERSIONS + 1, BUSY_INTERVAL));
    }

    /// Chunks follow the tool ids, hold about `FLUSH_CHUNK` versions each,
    /// and never split one tool's versions.
    #[test]
    fn chunks_keep_each_tools_versions_together() {
        let mut pending = HashMap::new();
        let mut version_id = 0;
        // 3,000 tools with 1 to 3 versions each, one count per version.
        for tool_id in 1..=3_000i64 {
            for _ in 0..=(tool_id % 3) {
                version_id += 1;
                pending.insert(version_id, (tool_id, 1));
            }
        }
        let total = pending.len();
        let chunks = chunks_by_tool(pending);
        assert!(chunks.len() > 1, "{total} versions made one chunk");
        assert_eq!(chunks.iter().map(Vec::len).sum::<usize>(), total);
        let mut last_tool = 0;
        for (i, chunk) in chunks.iter().enumerate() {
            assert!(
                chunk.len() < FLUSH_CHUNK + 3,
                "chunk {i} has {}",
                chunk.len()
            );
            if i + 1 < chunks.len() {
                assert!(chunk.len() >= FLUSH_CHUNK, "chunk {i} cut early");
            }
            let first_tool = chunk[0].1 .0;
            assert!(
                first_tool > last_tool,
                "chunk {i} repeats tool {first_tool}"
            );
            for pair in chunk.windows(2) {
                assert!(pair[0].1 .0 <= pair[1].1 .0, "chunk {i} out of tool order");
            }
            last_tool = chunk[chunk.len() - 1].1 .0;
        }
    }

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
