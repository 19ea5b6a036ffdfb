//! SQLite's side of the pool: the settings every connection gets
//! ([`SqlitePragmas`], with the sync level [`SqliteSync`]), the library's
//! process-wide configuration ([`configure_sqlite`]), and write
//! transactions that take the write lock when they begin
//! ([`write_transaction`]).

use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::DbConnection;
use crate::error::{internal, AppError, AppResult};

/// Sets the SQLite pragmas on every new connection: WAL (readers never block
/// the writer), the sync level of `--sqlite-synchronous` ([`SqliteSync`]), a
/// busy timeout instead of immediate SQLITE_BUSY, enforced foreign keys, and a
/// 512 KiB page cache per connection (SQLite's default of 2 MiB times the
/// pool's 8 connections would hold a private copy of a small database eight
/// times over; the operating system's page cache serves the rest). Each
/// connection's cache is its own (no shared LRU behind a global mutex; see
/// `LIBSQLITE3_FLAGS` in `.cargo/config.toml`); 512 KiB holds the interior
/// pages of the hot tables' B-trees of a large registry, and the leaves a
/// lookup reads are random anyway.
/// The page cache's size is `--sqlite-cache-kib`.
#[derive(Debug)]
pub(super) struct SqlitePragmas {
    pub(super) cache_kib: u32,
    pub(super) synchronous: SqliteSync,
}

impl SqlitePragmas {
    /// Set the pragmas on a new connection.
    pub(super) fn apply(&self, c: &mut diesel::SqliteConnection) -> QueryResult<()> {
        c.batch_execute(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = {}; \
             PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; \
             PRAGMA cache_size = -{};",
            self.synchronous.pragma(),
            self.cache_kib
        ))
    }
}

/// Configure SQLite for this process once, before its first connection:
/// multi-thread mode (a pooled connection is only ever used by one thread
/// at a time, so SQLite's per-call connection mutex is not needed) and no
/// memory statistics (their global mutex is taken on every SQLite
/// allocation, and concurrent lookups would contend on it).
/// SQLite also allocates through mimalloc (`sqlite_memory`), as the rest
/// of the server does, instead of glibc's malloc.
/// If SQLite was already initialized (someone opened a connection first),
/// the defaults stay: slower, equally correct.
pub(super) fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use libsqlite3_sys::{
            sqlite3_config, SQLITE_CONFIG_MALLOC, SQLITE_CONFIG_MEMSTATUS,
            SQLITE_CONFIG_MULTITHREAD,
        };
        let memory = super::sqlite_memory::methods();
        // SAFETY: each option takes the documented arguments (none; one
        // int; a pointer to a `sqlite3_mem_methods`, which SQLite copies)
        // and is set before any connection is opened by this crate.
        let (threads, memstatus) = unsafe {
            (
                sqlite3_config(SQLITE_CONFIG_MULTITHREAD),
                sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int),
            )
        };
        // A heap-profiling build leaves SQLite on the C library's malloc,
        // where the profiler sees its allocations.
        let malloc = if cfg!(feature = "heap-profile") {
            0
        } else {
            // SAFETY: as above.
            unsafe {
                sqlite3_config(
                    SQLITE_CONFIG_MALLOC,
                    &memory as *const libsqlite3_sys::sqlite3_mem_methods,
                )
            }
        };
        if threads != 0 || memstatus != 0 || malloc != 0 {
            tracing::debug!(
                threads,
                memstatus,
                malloc,
                "SQLite was initialized already; kept its defaults"
            );
        }
    });
}

/// When an SQLite commit returns (`--sqlite-synchronous`).
///
/// In WAL mode SQLite appends each commit to the write-ahead log. With
/// `full` the commit returns only after the log is flushed to the disk
/// (`fdatasync`), so an acknowledged write survives a power loss or a
/// crash of the operating system, as a PostgreSQL commit does. With
/// `normal` it returns once the log is written to the operating system:
/// that survives a killed process, but the last commits before a power
/// loss can be rolled back. Publishes share their flushes either way
/// (group commit: [`Db::write_grouped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SqliteSync {
    /// Flush the log on every commit (durable).
    #[default]
    Full,
    /// Flush the log only at checkpoints (survives a killed process, not a
    /// power loss).
    Normal,
}

impl SqliteSync {
    /// The value of SQLite's `PRAGMA synchronous`.
    pub fn pragma(self) -> &'static str {
        match self {
            SqliteSync::Full => "FULL",
            SqliteSync::Normal => "NORMAL",
        }
    }
}

/// Run `f` in a write transaction; commit if it succeeds, roll back if not.
///
/// On SQLite the transaction begins with `BEGIN IMMEDIATE`, which takes the
/// database's write lock at once, waiting for it up to the busy timeout.
/// A plain `BEGIN` takes it only at the first write: if the transaction
/// read first and another process (an `admin` subcommand beside the
/// server, or the server beside it) committed in between, SQLite cannot
/// upgrade the stale read to a write and fails at once with "database is
/// locked", without waiting. (The server's own writers already queue on
/// one lock in the process.)
pub(crate) fn write_transaction<T>(
    conn: &mut DbConnection,
    f: impl FnOnce(&mut DbConnection) -> AppResult<T>,
) -> AppResult<T> {
    use diesel::connection::{AnsiTransactionManager, TransactionManager};
    let DbConnection::Sqlite(c) = conn else {
        return conn.transaction::<T, AppError, _>(f);
    };
    AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")?;
    let result = f(conn);
    let DbConnection::Sqlite(c) = conn else {
        return Err(internal("the SQLite connection changed its backend"));
    };
    match result {
        Ok(value) => match AnsiTransactionManager::commit_transaction(c) {
            Ok(()) => Ok(value),
            Err(e) => {
                let _ = AnsiTransactionManager::rollback_transaction(c);
                Err(e.into())
            }
        },
        Err(e) => {
            // The work's own error is the answer; a failed rollback leaves
            // the connection marked broken, and the pool drops it.
            let _ = AnsiTransactionManager::rollback_transaction(c);
            Err(e)
        }
    }
}
