//! Group commit: the transactions of concurrent publishes run one after
//! another inside one database transaction, which commits once for all of
//! them.
//!
//! # Why
//!
//! A commit returns only after its write-ahead log is flushed to the disk
//! (`fdatasync`, a few milliseconds on a virtual disk): PostgreSQL's
//! default, and SQLite's with `--sqlite-synchronous full`, the default
//! ([`super::SqliteSync`]). Publishes committed one at a time therefore
//! cannot exceed one per disk flush, however many cores there are: on
//! SQLite one writer commits at a time; on PostgreSQL every publish
//! appends to the change log and to the transparency log, and each append
//! takes a lock that is held until its transaction ends
//! ([`Db::lock_change_log`], the log's append lock), because the rows must
//! commit in the order of their sequence numbers. In one transaction, a
//! batch of publishes shares its one flush.
//!
//! Durability is unchanged: a job is answered only after the transaction
//! holding it has committed (or failed to), so an acknowledged publish is
//! on the disk.
//!
//! # How
//!
//! One thread (started by the first grouped write) takes every queued job,
//! at most [`MAX_BATCH`], opens a transaction on a pooled connection (on
//! SQLite after taking the write lock every writer queues on) and runs each
//! job in a savepoint of its own: a job that fails is rolled back to its
//! savepoint and answers its own error, the others go on. After the commit
//! each job gets its answer; if the commit fails, every job of the batch
//! gets that error. Jobs that arrive meanwhile wait for the next batch —
//! which is what makes batches grow exactly when the disk is the limit.
//!
//! # Locks (PostgreSQL)
//!
//! Every write transaction takes its locks in one order (publisher, version
//! and tool rows, change log, transparency log). A batch breaks it: after
//! its first job it already holds the change log's lock when a later job
//! asks for a row lock. If another transaction holds that row and waits for
//! the change log's lock, the two would wait for each other. So every job
//! after the first runs under a short `lock_timeout`
//! ([`LATER_JOB_LOCK_TIMEOUT`]); a job that fails there, for this or any
//! other reason, is rolled back to its savepoint and run again as the first
//! job of the next batch, where it waits for its locks like a transaction
//! of its own would and its answer is its own. The first job of a batch
//! always completes, so every job is answered. (SQLite has no row locks:
//! the batch holds the one write lock, so a later job fails only for
//! reasons of its own, and is run again first all the same.)
//!
//! [`Db::lock_change_log`]: super::Db::lock_change_log

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use diesel::connection::{Connection, SimpleConnection};
use tokio::sync::oneshot;

use super::{DbConnection, DbPool};
use crate::error::{internal, AppError, AppResult};

/// Most jobs in one transaction. A batch holds the change log's lock from
/// its first job to its commit, so a writer outside the batch waits for at
/// most this many jobs and one commit. (Measured batches averaged two
/// publishes with 8 publishing clients.)
pub const MAX_BATCH: usize = 64;

/// How long a job after the first of its batch waits for a lock before it
/// is moved to the next batch (see the module's docs).
pub const LATER_JOB_LOCK_TIMEOUT: &str = "100ms";

/// What the group-commit thread has done, shown at `/metrics`.
#[derive(Debug, Default)]
pub struct GroupCommitCounts {
    /// Transactions run for grouped writes.
    pub batches: AtomicU64,
    /// Grouped writes answered; over `batches`, the mean batch.
    pub writes: AtomicU64,
    /// Writes rolled back to their savepoint and run again in a later
    /// batch (a lock waited for past [`LATER_JOB_LOCK_TIMEOUT`], or any
    /// other failure of a write after the first of its batch).
    pub moved: AtomicU64,
}

/// A job of the batch: its work, and where its answer goes.
trait Job: Send {
    /// Run the job in a savepoint of the batch's transaction. `first`: the
    /// first job of its batch, whose failure is its answer. A later job's
    /// failure gives it back to be run again first ([`Ran::Again`]).
    fn run(&mut self, conn: &mut DbConnection, first: bool) -> Ran;

    /// Answer after the batch's commit: the job's own result if the commit
    /// succeeded (or the job had failed anyway), the commit's error if not.
    fn answer(self: Box<Self>, commit: Result<(), &str>);
}

enum Ran {
    Done,
    Again,
}

struct TypedJob<T, F> {
    work: F,
    result: Option<AppResult<T>>,
    reply: oneshot::Sender<AppResult<T>>,
}

impl<T, F> Job for TypedJob<T, F>
where
    T: Send,
    F: FnMut(&mut DbConnection) -> AppResult<T> + Send,
{
    fn run(&mut self, conn: &mut DbConnection, first: bool) -> Ran {
        // A transaction inside the batch's transaction is a savepoint:
        // diesel rolls back to it when the work fails.
        let work = &mut self.work;
        match conn.transaction::<T, AppError, _>(|conn| work(conn)) {
            Ok(value) => self.result = Some(Ok(value)),
            Err(_) if !first => return Ran::Again,
            Err(e) => self.result = Some(Err(e)),
        }
        Ran::Done
    }

    fn answer(self: Box<Self>, commit: Result<(), &str>) {
        let result = match (self.result, commit) {
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (Some(Ok(_)), Err(e)) => Err(internal(format!("the transaction did not commit: {e}"))),
            (None, Err(e)) => Err(internal(format!("the write was not run: {e}"))),
            (None, Ok(())) => Err(internal("the write was not run")),
        };
        // The request may be gone (its client disconnected); what committed
        // stays committed, as with any other write.
        let _ = self.reply.send(result);
    }
}

/// The queue of grouped writes and the thread that commits them.
pub(super) struct GroupCommit {
    jobs: Sender<Box<dyn Job>>,
}

impl GroupCommit {
    /// Start the committing thread. It ends when the last [`GroupCommit`]
    /// handle (the queue's sender) is dropped.
    /// `write_lock`: the lock every SQLite write transaction takes first
    /// (`None` on PostgreSQL).
    pub(super) fn start(
        pool: DbPool,
        write_lock: Option<Arc<Mutex<()>>>,
        counts: Arc<GroupCommitCounts>,
    ) -> AppResult<GroupCommit> {
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("group-commit".into())
            .spawn(move || commit_batches(&pool, write_lock.as_deref(), &queue, &counts))
            .map_err(|e| internal(format!("cannot start the group-commit thread: {e}")))?;
        Ok(GroupCommit { jobs })
    }

    /// Queue `work` and wait for its answer, given after its batch commits.
    pub(super) async fn write<T, F>(&self, work: F) -> AppResult<T>
    where
        T: Send + 'static,
        F: FnMut(&mut DbConnection) -> AppResult<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = TypedJob {
            work,
            result: None,
            reply,
        };
        self.jobs
            .send(Box::new(job))
            .map_err(|_| internal("the group-commit thread has stopped"))?;
        answer
            .await
            .map_err(|_| internal("the group-commit thread dropped a write"))?
    }
}

/// The committing thread's loop: one batch per transaction until the queue
/// closes.
fn commit_batches(
    pool: &DbPool,
    write_lock: Option<&Mutex<()>>,
    queue: &Receiver<Box<dyn Job>>,
    counts: &GroupCommitCounts,
) {
    // Jobs to run again, first, in the next batch.
    let mut again: VecDeque<Box<dyn Job>> = VecDeque::new();
    loop {
        let mut batch: Vec<Box<dyn Job>> = again.drain(..again.len().min(MAX_BATCH)).collect();
        if batch.is_empty() {
            match queue.recv() {
                Ok(job) => batch.push(job),
                Err(_) => return,
            }
        }
        let room = MAX_BATCH - batch.len();
        batch.extend(queue.try_iter().take(room));
        let size = batch.len();
        let moved_before = again.len();
        let mut done: Vec<Box<dyn Job>> = Vec::with_capacity(size);
        // A panicking job ends its batch, not the thread: the batch's jobs
        // are dropped unanswered (their callers get an error), its
        // connection is discarded by the pool (it was in use while the
        // thread panicked), and the transaction never commits.
        let commit = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_batch(pool, write_lock, &mut batch, &mut done, &mut again)
        }));
        let Ok(commit) = commit else {
            tracing::error!(size, "a grouped write panicked; its batch was rolled back");
            continue;
        };
        // Jobs not reached (the pool gave no connection, or the batch's
        // transaction failed before or while running them) answer the error
        // too.
        done.append(&mut batch);
        let moved = again.len().saturating_sub(moved_before);
        counts.batches.fetch_add(1, Ordering::Relaxed);
        counts
            .writes
            .fetch_add(done.len() as u64, Ordering::Relaxed);
        counts.moved.fetch_add(moved as u64, Ordering::Relaxed);
        tracing::trace!(size, moved, "group commit");
        let commit = commit.map_err(|e| e.to_string());
        for job in done {
            job.answer(commit.as_ref().map(|_| ()).map_err(String::as_str));
        }
    }
}

/// Run `batch` in one transaction: each job in its savepoint, finished jobs
/// into `done`, jobs to run again into `again`.
fn run_batch(
    pool: &DbPool,
    write_lock: Option<&Mutex<()>>,
    batch: &mut Vec<Box<dyn Job>>,
    done: &mut Vec<Box<dyn Job>>,
    again: &mut VecDeque<Box<dyn Job>>,
) -> AppResult<()> {
    // The lock first, then the connection, as `Db::write_blocking` takes them.
    let _guard = write_lock
        .map(|lock| {
            lock.lock()
                .map_err(|_| internal("the database write lock is poisoned"))
        })
        .transpose()?;
    let mut conn = pool.get()?;
    super::write_transaction(&mut conn, |conn| {
        // Taken one at a time from the front, so that jobs not reached when
        // something fails stay in `batch` and are answered with the error.
        let mut ran = 0;
        while !batch.is_empty() {
            if ran == 1 && matches!(conn, DbConnection::Postgresql(_)) {
                conn.batch_execute(&format!(
                    "SET LOCAL lock_timeout = '{LATER_JOB_LOCK_TIMEOUT}'"
                ))?;
            }
            let mut job = batch.remove(0);
            match job.run(conn, ran == 0) {
                Ran::Done => done.push(job),
                Ran::Again => again.push_back(job),
            }
            ran += 1;
        }
        Ok(())
    })
}
