//! The database: one diesel [`DbConnection`] over SQLite and PostgreSQL, an
//! r2d2 pool of them, the embedded migrations, and [`Db`], which runs
//! database work off the async executor and serializes SQLite writers.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{CustomizeConnection, ManageConnection, Pool, PooledConnection, R2D2Connection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::error::{internal, AppError, AppResult};

pub mod batch_update;
mod group_commit;
pub mod lookup_batch;
pub use group_commit::GroupCommitCounts;
mod postgres_url;
mod sqlite;
mod sqlite_memory;
pub(crate) use sqlite::write_transaction;
pub use sqlite::SqliteSync;
use sqlite::{configure_sqlite, SqlitePragmas};

/// Migrations for each backend; the SQL differs, the schema is the same.
pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../migrations/sqlite");
pub const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../migrations/postgres");

/// A connection to either backend.
#[derive(diesel::MultiConnection)]
pub enum DbConnection {
    Postgresql(diesel::PgConnection),
    Sqlite(diesel::SqliteConnection),
}

/// Run a diesel query on the backend's own connection: `$c` is bound to the
/// `&mut SqliteConnection` or `&mut PgConnection` inside `$conn` (a
/// `&mut DbConnection`) and `$body` is compiled for each.
///
/// Use it for the queries of hot read paths. Through the `MultiConnection`
/// wrapper every query is serialized to SQL text on every call — to decide
/// whether it may be cached and to look the prepared statement up by its
/// text — a large share of a small lookup's cost. On the backend's own
/// connection a query whose shape is fixed finds its prepared statement by
/// its Rust type, without building any SQL.
///
/// ```ignore
/// let row = on_backend!(conn, |c| tools::table.find(id).first::<ToolRow>(c))?;
/// ```
#[macro_export]
macro_rules! on_backend {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::db::DbConnection::Sqlite($c) => $body,
            $crate::db::DbConnection::Postgresql($c) => $body,
        }
    };
}

/// Which database backend a URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The default of `--db-connections`: 8 on SQLite (one writer at a
    /// time; more connections only hold more page caches), 16 on PostgreSQL.
    pub fn default_connections(self) -> u32 {
        match self {
            Backend::Sqlite => 8,
            Backend::Postgres => 16,
        }
    }

    /// Threads in each HTTP worker's blocking pool, where database work
    /// (and local-file reads) runs; [`crate::app::server`] sets it.
    ///
    /// - SQLite: **2**. Its work is CPU time on this machine's cores (the
    ///   file sits in the page cache, writers take turns on one lock), so
    ///   two threads per worker — one per core's worth of work plus one
    ///   waiting on a lock or a file write — keep the cores busy, and the
    ///   small hot reads skip the pool altogether ([`Db::lookup`]). Each
    ///   further thread only adds its stack and its allocator heap, not
    ///   throughput (`bench/README.md` has the measurements).
    /// - PostgreSQL: **4**. Every query is a network round trip, so more
    ///   requests are in flight per worker while each waits for its answer.
    pub fn blocking_threads_per_worker(self) -> usize {
        match self {
            Backend::Sqlite => 2,
            Backend::Postgres => 4,
        }
    }
}

pub type DbPool = Pool<Manager>;
pub type PooledConn = PooledConnection<Manager>;

/// One PostgreSQL connection: the pool's ([`Manager`]) and those opened
/// outside it (the tests' admin connections that create and drop
/// databases). Every libpq connection of the process goes through here.
///
/// libpq speaks TLS through OpenSSL, and whoever initializes OpenSSL first
/// decides whether it frees its state in an `atexit` handler. If libpq does
/// (its own initialization asks for the handler), a thread still inside
/// libpq when the process exits — the search tailer's poll, a pooled
/// connection being closed, a connection being opened — uses freed state
/// and crashes the process (SIGSEGV at the end of a test binary whose
/// harness had opened its own admin connection before the pool's first).
/// So OpenSSL is initialized here first, without that handler (later calls
/// do nothing).
pub fn connect_postgres(url: &str) -> ConnectionResult<diesel::PgConnection> {
    openssl_sys::init();
    diesel::PgConnection::establish(url)
}

/// Opens connections of the backend the URL selected. (The derived
/// `MultiConnection::establish` would try every backend in turn, so an
/// unreachable PostgreSQL URL could end up as an SQLite file.)
#[derive(Debug)]
pub struct Manager {
    backend: Backend,
    url: String,
}

/// How long a PostgreSQL connection that answered its check is taken as
/// alive without being checked again when it is taken from the pool.
pub const ALIVE_WINDOW: Duration = Duration::from_secs(1);

/// A pooled connection, and when it last answered the pool's check. It
/// dereferences to the [`DbConnection`].
pub struct PoolConnection {
    conn: DbConnection,
    alive_at: std::time::Instant,
}

impl std::ops::Deref for PoolConnection {
    type Target = DbConnection;
    fn deref(&self) -> &DbConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for PoolConnection {
    fn deref_mut(&mut self) -> &mut DbConnection {
        &mut self.conn
    }
}

impl ManageConnection for Manager {
    type Connection = PoolConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<PoolConnection, Self::Error> {
        let conn = match self.backend {
            Backend::Postgres => connect_postgres(&self.url).map(DbConnection::Postgresql),
            Backend::Sqlite => {
                diesel::SqliteConnection::establish(&self.url).map(DbConnection::Sqlite)
            }
        };
        conn.map(|conn| PoolConnection {
            conn,
            alive_at: std::time::Instant::now(),
        })
        .map_err(diesel::r2d2::Error::ConnectionError)
    }

    /// The check when a connection is taken from the pool (PostgreSQL
    /// only): `SELECT 1`, unless the connection answered it within the
    /// last [`ALIVE_WINDOW`]. A busy server takes each connection many
    /// times a second, and a round trip to the database before each
    /// request's own query would double the round trips of a small read.
    /// A connection lost within the window fails its request's query, and
    /// the pool drops it on its return: diesel takes a connection whose
    /// libpq status is bad as broken ([`ManageConnection::has_broken`]).
    fn is_valid(&self, conn: &mut PoolConnection) -> Result<(), Self::Error> {
        let now = std::time::Instant::now();
        if now.duration_since(conn.alive_at) < ALIVE_WINDOW {
            return Ok(());
        }
        conn.conn.ping().map_err(diesel::r2d2::Error::QueryError)?;
        conn.alive_at = now;
        Ok(())
    }

    fn has_broken(&self, conn: &mut PoolConnection) -> bool {
        std::thread::panicking() || conn.conn.is_broken()
    }
}

/// Most values in one `IN (...)` list: queries over a set of ids or names
/// that can be large go this many at a time, because a statement may bind
/// at most 32,766 parameters on SQLite (65,535 on PostgreSQL).
pub const MAX_IN_LIST: usize = 500;

/// The default of `--sqlite-cache-kib`: SQLite's page cache per connection.
pub const DEFAULT_SQLITE_CACHE_KIB: u32 = 512;

/// The bounds of the connection pool (`--db-connections`,
/// `--sqlite-cache-kib`) and SQLite's sync level (`--sqlite-synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbOptions {
    /// Most open connections; `None`: [`Backend::default_connections`].
    pub connections: Option<u32>,
    /// SQLite's page cache per connection, in KiB.
    pub sqlite_cache_kib: u32,
    /// When an SQLite commit returns.
    pub sqlite_synchronous: SqliteSync,
    /// PostgreSQL: every connection plans its prepared statements once, for
    /// any parameters (`plan_cache_mode = force_generic_plan`). Only the
    /// batched lookups' own pool sets it ([`Db::for_batched_lookups`]).
    pub generic_plans: bool,
}

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            connections: None,
            sqlite_cache_kib: DEFAULT_SQLITE_CACHE_KIB,
            sqlite_synchronous: SqliteSync::default(),
            generic_plans: false,
        }
    }
}

/// The database handle shared by all requests.
#[derive(Clone)]
pub struct Db {
    pool: DbPool,
    backend: Backend,
    /// SQLite allows one writer at a time; taking this lock before a write
    /// transaction means writers queue here instead of failing with SQLITE_BUSY
    /// when a deferred transaction tries to upgrade to a write lock.
    write_lock: Arc<Mutex<()>>,
    /// The group-commit thread of [`Db::write_grouped`], started by the
    /// first grouped write (`None` if it could not start:
    /// grouped writes then run as plain ones).
    group_commit: Arc<OnceLock<Option<group_commit::GroupCommit>>>,
    group_commit_counts: Arc<GroupCommitCounts>,
    /// The URL and options it was opened with, for [`Db::for_batched_lookups`].
    url: Arc<str>,
    options: DbOptions,
}

/// What every new pooled connection runs before its first use: SQLite's
/// pragmas, and on PostgreSQL the plan cache mode when
/// [`DbOptions::generic_plans`] is set.
#[derive(Debug)]
struct OnConnect {
    sqlite: SqlitePragmas,
    generic_plans: bool,
}

impl CustomizeConnection<PoolConnection, diesel::r2d2::Error> for OnConnect {
    fn on_acquire(&self, conn: &mut PoolConnection) -> Result<(), diesel::r2d2::Error> {
        match &mut conn.conn {
            DbConnection::Sqlite(c) => self.sqlite.apply(c),
            DbConnection::Postgresql(c) if self.generic_plans => {
                c.batch_execute("SET plan_cache_mode = force_generic_plan")
            }
            DbConnection::Postgresql(_) => Ok(()),
        }
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

impl Db {
    /// Open a pool for `url` (`sqlite://PATH`, a bare path, or `postgres://...`).
    /// Creates the SQLite file's directory if needed.
    pub fn connect(url: &str) -> AppResult<Db> {
        Db::connect_with(url, DbOptions::default())
    }

    /// [`Db::connect`] with the pool's bounds.
    pub fn connect_with(url: &str, options: DbOptions) -> AppResult<Db> {
        let (backend, conn_url) =
            if url.starts_with("postgres://") || url.starts_with("postgresql://") {
                (
                    Backend::Postgres,
                    postgres_url::without_tls_on_loopback(url),
                )
            } else {
                configure_sqlite();
                let path = url.strip_prefix("sqlite://").unwrap_or(url);
                if let Some(dir) = std::path::Path::new(path).parent() {
                    if !dir.as_os_str().is_empty() {
                        std::fs::create_dir_all(dir).map_err(|e| {
                            internal(format!(
                                "cannot create database directory {}: {e}",
                                dir.display()
                            ))
                        })?;
                    }
                }
                (Backend::Sqlite, path.to_string())
            };
        let manager = Manager {
            backend,
            url: conn_url,
        };
        let size = options
            .connections
            .unwrap_or_else(|| backend.default_connections())
            .max(1);
        let pool = Pool::builder()
            .max_size(size)
            // No connections opened in the background to keep some idle:
            // a subcommand that exits right after its work could otherwise
            // exit while r2d2's thread is inside libpq/OpenSSL opening one,
            // and OpenSSL's exit-time cleanup would crash that thread
            // (SIGSEGV). Connections are still kept once made.
            .min_idle(Some(0))
            .connection_timeout(Duration::from_secs(15))
            // A PostgreSQL connection can die with the network or the
            // server, so it is checked (`SELECT 1`) when it is taken, at
            // most once per `ALIVE_WINDOW` (`Manager::is_valid`); an SQLite
            // connection is a file handle and cannot go stale.
            .test_on_check_out(backend == Backend::Postgres)
            .connection_customizer(Box::new(OnConnect {
                sqlite: SqlitePragmas {
                    cache_kib: options.sqlite_cache_kib,
                    synchronous: options.sqlite_synchronous,
                },
                generic_plans: options.generic_plans,
            }))
            .build(manager)
            .map_err(|e| internal(format!("cannot connect to the database: {e}")))?;
        Ok(Db {
            pool,
            backend,
            write_lock: Arc::new(Mutex::new(())),
            group_commit: Arc::default(),
            group_commit_counts: Arc::default(),
            url: url.into(),
            options,
        })
    }

    /// The pool that [`lookup_batch`] sends its queries through: on
    /// PostgreSQL a pool of its own, of `connections` connections with
    /// generic plans. A batch's `= ANY($1)` lookup is planned anew on every
    /// call otherwise: PostgreSQL keeps a custom plan for it, because the
    /// generic plan's estimate for an array of unknown length costs more
    /// than a plan for the array at hand, and planning the two-table join
    /// took about as much of its CPU as running it. The plan is the same
    /// for any array (an index probe of each name, then the summary by
    /// key). On its own pool the setting touches no other query. On SQLite
    /// (no plan cache; lookups run on the calling thread) it is this pool.
    pub fn for_batched_lookups(&self, connections: u32) -> AppResult<Db> {
        match self.backend {
            Backend::Sqlite => Ok(self.clone()),
            Backend::Postgres => Db::connect_with(
                &self.url,
                DbOptions {
                    connections: Some(connections),
                    generic_plans: true,
                    ..self.options
                },
            ),
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A connection from the pool (blocking; call from blocking code only).
    pub fn conn(&self) -> AppResult<PooledConn> {
        Ok(self.pool.get()?)
    }

    /// Run the embedded migrations that have not run yet.
    pub fn migrate(&self) -> AppResult<()> {
        let mut conn = self.conn()?;
        let result = match &mut **conn {
            DbConnection::Sqlite(c) => c.run_pending_migrations(SQLITE_MIGRATIONS).map(|_| ()),
            DbConnection::Postgresql(c) => {
                c.run_pending_migrations(POSTGRES_MIGRATIONS).map(|_| ())
            }
        };
        result.map_err(|e| internal(format!("database migration failed: {e}")))
    }

    /// Run read-only work on a pooled connection, on the blocking thread pool.
    pub async fn read<T, F>(&self, f: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        let db = self.clone();
        actix_web::web::block(move || {
            let mut conn = db.conn()?;
            f(&mut conn)
        })
        .await?
    }

    /// Run a small read — a few indexed lookups, as the hot read routes
    /// do — where it is cheapest. On SQLite with an idle pooled connection
    /// it runs right here on the calling thread, in one read transaction
    /// (SQLite takes its locks once for the lookup's queries instead of
    /// once per query): the database is in-process and such a read takes
    /// microseconds, less than handing it to the blocking pool and back.
    /// Otherwise (no idle connection, or PostgreSQL, where every query is a
    /// network round trip) it is [`Db::read`]. Never waits for a connection
    /// on the calling thread.
    pub async fn lookup<T, F>(&self, f: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        self.lookup_in(true, f).await
    }

    /// [`Db::lookup`] for a lookup of one statement, without the read
    /// transaction around it: a statement runs atomically on its own, and
    /// on SQLite the transaction's `BEGIN` and `COMMIT` (each parsed and
    /// run anew) cost more than an indexed lookup. A lookup that needs more
    /// than its one statement on some path (a 404 that says what is
    /// missing) may open a transaction there itself.
    pub async fn lookup_one<T, F>(&self, f: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        self.lookup_in(false, f).await
    }

    async fn lookup_in<T, F>(&self, transaction: bool, f: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        if self.backend == Backend::Sqlite {
            if let Some(mut conn) = self.pool.try_get() {
                return if transaction {
                    conn.transaction::<T, AppError, _>(|conn| f(conn))
                } else {
                    f(&mut conn)
                };
            }
        }
        self.read(f).await
    }

    /// Run `f` in one write transaction on the blocking thread pool.
    pub async fn write<T, F>(&self, f: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        let db = self.clone();
        actix_web::web::block(move || db.write_blocking(f)).await?
    }

    /// [`Db::write`] for a write that may share its transaction, and so its
    /// commit, with other grouped writes (publish). It runs in its own
    /// savepoint of a batch's transaction on the group-commit thread and is
    /// answered after that transaction commits ([`group_commit`] says why
    /// and how); `f` may be run a second time, in a later batch, after its
    /// first run was rolled back.
    pub async fn write_grouped<T, F>(&self, f: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnMut(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        let group = self.group_commit.get_or_init(|| {
            // On SQLite the batch is one write transaction like any other:
            // it queues on the write lock.
            let write_lock = (self.backend == Backend::Sqlite).then(|| self.write_lock.clone());
            group_commit::GroupCommit::start(
                self.pool.clone(),
                write_lock,
                self.group_commit_counts.clone(),
            )
            .map_err(|e| tracing::error!("{e}; publishes commit one at a time"))
            .ok()
        });
        if let Some(group) = group {
            return group.write(f).await;
        }
        self.write(f).await
    }

    /// What the grouped writes of this pool have done so far.
    pub fn group_commit_counts(&self) -> &GroupCommitCounts {
        &self.group_commit_counts
    }

    /// [`Db::write`] for code that is already off the executor (subcommands).
    pub fn write_blocking<T, F>(&self, f: F) -> AppResult<T>
    where
        F: FnOnce(&mut DbConnection) -> AppResult<T>,
    {
        // The lock first, then the connection: writers queued on the lock
        // don't each hold a pooled connection (and its page cache) while
        // they wait.
        let _guard = match self.backend {
            Backend::Sqlite => Some(
                self.write_lock
                    .lock()
                    .map_err(|_| internal("the database write lock is poisoned"))?,
            ),
            Backend::Postgres => None,
        };
        let mut conn = self.conn()?;
        write_transaction(&mut conn, f)
    }

    /// Ensure commits of change-log rows happen in `seq` order on PostgreSQL,
    /// so a reader tailing `changes` by `seq` never skips a row that commits
    /// late. (SQLite has one writer at a time already.) Call inside a write
    /// transaction right before inserting into `changes`.
    pub fn lock_change_log(conn: &mut DbConnection) -> AppResult<()> {
        if let DbConnection::Postgresql(c) = conn {
            c.batch_execute("SELECT pg_advisory_xact_lock(7370001)")?;
        }
        Ok(())
    }
}

/// A migrated SQLite database in a temporary directory, for unit tests (the
/// directory goes with the returned guard).
#[cfg(test)]
pub(crate) fn temp_sqlite() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::connect(&dir.path().join("t.db").to_string_lossy()).expect("db");
    db.migrate().expect("migrations");
    (dir, db)
}

/// True if the error is a unique-constraint violation (a concurrent duplicate).
pub fn is_unique_violation(err: &AppError) -> bool {
    matches!(
        err,
        AppError::Database(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _
        ))
    )
}

/// Now, as stored in the database (UTC, microsecond precision).
pub fn now() -> chrono::NaiveDateTime {
    let now = chrono::Utc::now().naive_utc();
    chrono::DurationRound::duration_trunc(now, chrono::TimeDelta::microseconds(1)).unwrap_or(now)
}
