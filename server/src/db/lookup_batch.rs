//! Concurrent lookups of one kind merged into one query (PostgreSQL).
//!
//! On PostgreSQL every query is a round trip: the server hands it to the
//! blocking pool, libpq sends it and waits, and a PostgreSQL backend wakes
//! up, parses the bind, runs the plan and answers. For an indexed lookup of
//! one row the plan is the least of it; the per-statement costs on both
//! sides are most of the CPU a cache miss takes (`bench/README.md` has the
//! measurements). A [`LookupBatcher`] answers the lookups that arrive
//! while one is in flight together: the waiting keys go out as one
//! `= ANY($1)` query, and each waiter gets its own row. Under load that
//! turns sixteen round trips into a few; an idle server still sends a
//! lone lookup at once, as one query of one key.
//!
//! On SQLite a lookup is a function call on the calling thread
//! ([`Db::lookup_one`]), cheaper than any hand-off, so it runs as before:
//! one key, directly.
//!
//! The batch runs in its own task, not in the future of the request that
//! started it: a client that disconnects drops its request's future, and
//! the other waiters of its batch must still be answered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::db::{Backend, Db, DbConnection, MAX_IN_LIST};
use crate::error::{internal, AppResult};

/// Looks up the rows of several keys in one query: each key found, with its
/// value (keys not found are left out).
pub type FetchMany<V> = fn(&mut DbConnection, &[String]) -> AppResult<Vec<(String, V)>>;

type Waiter<V> = (String, oneshot::Sender<AppResult<Option<V>>>);

/// The default most queries of one kind out at once: one. With more, the
/// lookups split into smaller batches, which served fewer summaries a
/// second in the benchmark (`bench/README.md`).
pub const MAX_IN_FLIGHT: usize = 1;

/// Lookups of one kind waiting for a query, and how many queries are out.
struct Pending<V> {
    waiting: Vec<Waiter<V>>,
    in_flight: usize,
}

/// What a [`LookupBatcher`] has done (`/metrics`).
#[derive(Debug, Default)]
pub struct LookupCounts {
    /// Lookups answered from the database.
    pub lookups: AtomicU64,
    /// Queries that answered them; over `lookups`, how much was shared.
    pub queries: AtomicU64,
}

/// Merges concurrent lookups into batches (see the module docs).
pub struct LookupBatcher<V> {
    pub counts: LookupCounts,
    /// Where the queries go ([`Db::for_batched_lookups`]).
    db: Db,
    fetch: FetchMany<V>,
    /// Most queries of this kind out at once: while they are all out, new
    /// lookups wait and go with the next one.
    max_in_flight: usize,
    pending: Mutex<Pending<V>>,
}

impl<V: Clone + Send + 'static> LookupBatcher<V> {
    /// Lookups with `fetch` in `db`, at most `max_in_flight` queries at once.
    pub fn new(db: &Db, fetch: FetchMany<V>, max_in_flight: usize) -> Arc<Self> {
        let connections = u32::try_from(max_in_flight).unwrap_or(u32::MAX);
        let db = db.for_batched_lookups(connections).unwrap_or_else(|e| {
            tracing::warn!("batched lookups share the main pool: {e}");
            db.clone()
        });
        Arc::new(LookupBatcher {
            counts: LookupCounts::default(),
            db,
            fetch,
            max_in_flight: max_in_flight.max(1),
            pending: Mutex::new(Pending {
                waiting: Vec::new(),
                in_flight: 0,
            }),
        })
    }

    /// The value of `key`, or `None` if no row has it.
    pub async fn load(self: &Arc<Self>, key: String) -> AppResult<Option<V>> {
        if self.db.backend() == Backend::Sqlite {
            self.counted(1);
            let fetch = self.fetch;
            let rows = self.db.lookup_one(move |conn| fetch(conn, &[key])).await?;
            return Ok(rows.into_iter().next().map(|(_, v)| v));
        }
        let (tx, rx) = oneshot::channel();
        let first_batch = {
            let mut pending = self.lock();
            pending.waiting.push((key, tx));
            if pending.in_flight < self.max_in_flight {
                pending.in_flight += 1;
                Some(take_batch(&mut pending.waiting))
            } else {
                None
            }
        };
        if let Some(batch) = first_batch {
            actix_web::rt::spawn(self.clone().run(batch));
        }
        rx.await
            .map_err(|_| internal("the database lookup was dropped before it answered"))?
    }

    /// Answer `batch`, then every batch that gathered meanwhile, until none
    /// is waiting.
    async fn run(self: Arc<Self>, mut batch: Vec<Waiter<V>>) {
        loop {
            self.counted(batch.len());
            let keys: Vec<String> = batch.iter().map(|(key, _)| key.clone()).collect();
            let fetch = self.fetch;
            let found = self.db.read(move |conn| fetch(conn, &keys)).await;
            answer(batch, found);
            let mut pending = self.lock();
            if pending.waiting.is_empty() {
                pending.in_flight -= 1;
                return;
            }
            batch = take_batch(&mut pending.waiting);
        }
    }

    fn counted(&self, lookups: usize) {
        self.counts.queries.fetch_add(1, Ordering::Relaxed);
        self.counts
            .lookups
            .fetch_add(lookups as u64, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending<V>> {
        // The lock guards plain data and is held only to push or take; a
        // poisoned one still holds a usable queue.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The next batch: the oldest waiters, at most one `IN` list's worth.
fn take_batch<V>(waiting: &mut Vec<Waiter<V>>) -> Vec<Waiter<V>> {
    if waiting.len() <= MAX_IN_LIST {
        std::mem::take(waiting)
    } else {
        waiting.drain(..MAX_IN_LIST).collect()
    }
}

/// Send each waiter its key's value, or the query's error.
fn answer<V: Clone>(batch: Vec<Waiter<V>>, found: AppResult<Vec<(String, V)>>) {
    match found {
        Ok(rows) => {
            let rows: HashMap<String, V> = rows.into_iter().collect();
            for (key, tx) in batch {
                // A waiter that has gone (its client disconnected) is skipped.
                let _ = tx.send(Ok(rows.get(&key).cloned()));
            }
        }
        Err(e) => {
            let message = e.to_string();
            let mut first = Some(e);
            for (_, tx) in batch {
                // Database errors can't be cloned: the later waiters get
                // the same text, as the same 500.
                let e = first.take().unwrap_or_else(|| internal(message.clone()));
                let _ = tx.send(Err(e));
            }
        }
    }
}
