//! The log in the database: `log_entries` (one record per published version)
//! and `log_hashes` (every complete subtree hash), appended inside the
//! publish transaction so the log and the versions table never disagree.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use toolreg_core::tlog::{self, Hash, HashReader, StoredIndex};

use crate::db::{now, DbConnection};
use crate::error::{internal, AppError, AppResult};
use crate::models::version::VersionRecord;
use crate::schema::{log_entries, log_hashes};

/// The advisory lock key that serializes log appends across replicas on
/// PostgreSQL (SQLite has one writer at a time already).
const APPEND_LOCK: i64 = 7_370_009;

/// One record of the log, as stored.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = log_entries)]
pub struct LogEntry {
    pub idx: i64,
    pub version_id: i64,
    pub tool: String,
    pub version: String,
    pub sha256: String,
    pub record: String,
    pub leaf_hash: Vec<u8>,
    pub created_at: chrono::NaiveDateTime,
}

/// Reads stored hashes over a database connection (one query per call).
pub struct DbHashes<'a>(pub &'a mut DbConnection);

impl HashReader for DbHashes<'_> {
    type Error = AppError;

    fn read_hashes(&mut self, indexes: &[StoredIndex]) -> AppResult<Vec<Hash>> {
        let ids: Vec<i64> = indexes
            .iter()
            .map(|i| i64::try_from(i.id()).map_err(|_| internal("stored hash index overflow")))
            .collect::<AppResult<_>>()?;
        let rows: Vec<(i64, Vec<u8>)> = log_hashes::table
            .filter(log_hashes::id.eq_any(&ids))
            .select((log_hashes::id, log_hashes::hash))
            .load(self.0)?;
        let found: std::collections::HashMap<i64, Vec<u8>> = rows.into_iter().collect();
        ids.iter()
            .zip(indexes)
            .map(|(id, index)| {
                let bytes = found.get(id).ok_or_else(|| {
                    internal(format!(
                        "transparency log: stored hash ({}, {}) is missing from the database",
                        index.level, index.n
                    ))
                })?;
                Ok(Hash::from_slice(bytes, "stored hash")?)
            })
            .collect()
    }
}

/// Number of records in the log.
pub fn size(conn: &mut DbConnection) -> AppResult<u64> {
    let max: Option<i64> = log_entries::table
        .select(diesel::dsl::max(log_entries::idx))
        .first(conn)?;
    Ok(max.map_or(0, |m| m as u64 + 1))
}

/// Root hash of the tree of the first `size` records.
pub fn root(conn: &mut DbConnection, size: u64) -> AppResult<Hash> {
    tlog::tree_hash(size, &mut DbHashes(conn))
}

/// Append the record of a version just inserted in this transaction and
/// return its log index. Call it inside the publish transaction.
pub fn append(
    conn: &mut DbConnection,
    version_id: i64,
    tool: &str,
    version: &str,
    sha256: &str,
) -> AppResult<i64> {
    lock_appends(conn)?;
    let n = size(conn)?;
    let record = tlog::record(tool, version, sha256);
    let leaf = tlog::leaf_hash(record.as_bytes());
    let hashes = tlog::stored_hashes_for_record(n, leaf, &mut DbHashes(conn))?;
    let idx = i64::try_from(n).map_err(|_| internal("log index overflow"))?;
    diesel::insert_into(log_entries::table)
        .values((
            log_entries::idx.eq(idx),
            log_entries::version_id.eq(version_id),
            log_entries::tool.eq(tool),
            log_entries::version.eq(version),
            log_entries::sha256.eq(sha256),
            log_entries::record.eq(&record),
            log_entries::leaf_hash.eq(leaf.0.to_vec()),
            log_entries::created_at.eq(now()),
        ))
        .execute(conn)?;
    let rows = hashes
        .iter()
        .map(|(index, hash)| {
            let id =
                i64::try_from(index.id()).map_err(|_| internal("stored hash index overflow"))?;
            let n = i64::try_from(index.n).map_err(|_| internal("stored hash index overflow"))?;
            Ok((
                log_hashes::id.eq(id),
                log_hashes::level.eq(i32::from(index.level)),
                log_hashes::n.eq(n),
                log_hashes::hash.eq(hash.0.to_vec()),
            ))
        })
        .collect::<AppResult<Vec<_>>>()?;
    // All of the record's hashes in one statement (a multi-row insert is
    // built per backend: diesel's MultiConnection does not build one).
    crate::on_backend!(conn, |c| diesel::insert_into(log_hashes::table)
        .values(&rows)
        .execute(c))?;
    Ok(idx)
}

/// Serialize log appends across replicas until this transaction ends (on
/// PostgreSQL; SQLite has one writer at a time). Taking it twice is fine.
fn lock_appends(conn: &mut DbConnection) -> AppResult<()> {
    if let DbConnection::Postgresql(c) = conn {
        c.batch_execute(&format!("SELECT pg_advisory_xact_lock({APPEND_LOCK})"))?;
    }
    Ok(())
}

/// The log entry of a version, if it has one.
pub fn entry_for_version(conn: &mut DbConnection, version_id: i64) -> AppResult<Option<LogEntry>> {
    Ok(log_entries::table
        .filter(log_entries::version_id.eq(version_id))
        .select(LogEntry::as_select())
        .first(conn)
        .optional()?)
}

/// The log index of a version, if it has one.
pub fn index_of(conn: &mut DbConnection, version_id: i64) -> AppResult<Option<i64>> {
    Ok(crate::on_backend!(conn, |c| log_entries::table
        .filter(log_entries::version_id.eq(version_id))
        .select(log_entries::idx)
        .first(c)
        .optional())?)
}

/// Every log entry in index order.
pub fn all_entries(conn: &mut DbConnection) -> AppResult<Vec<LogEntry>> {
    Ok(log_entries::table
        .order(log_entries::idx.asc())
        .select(LogEntry::as_select())
        .load(conn)?)
}

/// Append records for versions that have none (published before the log
/// existed), in publish order. Returns how many were appended.
pub fn backfill(conn: &mut DbConnection) -> AppResult<usize> {
    use crate::schema::versions;
    // Under the append lock, so replicas starting together don't both append.
    lock_appends(conn)?;
    // Since the log exists, every version gets its record in its publish
    // transaction, and this backfill logs every older version in one
    // transaction: so if any version lacks its record, the oldest one does.
    // Two lookups by key instead of counting both tables (PostgreSQL reads
    // every row to count: ~0.1 s per 15,000 versions at start-up) or the
    // scan below.
    let oldest: Option<i64> = versions::table
        .select(versions::id)
        .order(versions::id.asc())
        .first(conn)
        .optional()?;
    match oldest {
        None => return Ok(0),
        Some(id) if index_of(conn, id)?.is_some() => return Ok(0),
        Some(_) => {}
    }
    let unlogged = VersionRecord::unlogged(conn)?;
    for r in &unlogged {
        append(conn, r.id, &r.tool, &r.version, &r.sha256)?;
    }
    Ok(unlogged.len())
}
