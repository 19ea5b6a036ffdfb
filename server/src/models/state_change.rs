//! Recording a state change: the one tail that every write changing what a
//! tool or version shows ends with. [`record`] writes, inside the write's
//! transaction, its audit entries, the stored summaries of the tools it
//! touched and its change-log rows, and returns what the read cache must
//! forget once the transaction has committed ([`AfterCommit`]).
//!
//! Publish, yank and unyank, quarantine and its lifting, deprecation and
//! its lifting, owner changes, tier changes (with the blocks and unblocks
//! they cause) and the lint rescan all end with [`record`]; none writes
//! these rows by hand.
//!
//! # Lock order
//!
//! Every write transaction takes its locks in one order, so that two of
//! them never wait on each other in a cycle (on PostgreSQL; SQLite runs one
//! write transaction at a time):
//!
//! 1. the publisher's row (`tier::lock_tier`: publish and tier changes);
//! 2. the version rows the write updates, and the tool row it creates or
//!    touches (the caller's own updates, before [`record`]);
//! 3. the tool rows of the summaries [`record`] refreshes, in ascending id
//!    order (`tool_summary::refresh_all`);
//! 4. the change log's lock (`Db::lock_change_log`), taken by the first
//!    change-log row [`record`] appends;
//! 5. the transparency log's append lock (publish only, after [`record`]).
//!
//! So a caller updates its rows first and calls [`record`] last (a publish
//! appends its transparency-log record after it).

use crate::db::DbConnection;
use crate::error::AppResult;
use crate::models::change::{ChangeLogKind, LoggedChange};
use crate::models::{tool_summary, NewAudit};
use crate::read_cache::ReadCache;

/// What one write changed, for [`record`].
#[derive(Debug, Default)]
pub struct StateChange<'a> {
    audit: Vec<NewAudit<'a>>,
    /// Tools whose stored summaries show the change.
    summaries: Vec<i64>,
    /// Publishers whose every tool's summary shows the change.
    publishers: Vec<i64>,
    /// Change-log rows: (tool id, tool name, version, kind).
    log: Vec<(i64, String, String, ChangeLogKind)>,
    stale: Vec<Stale>,
}

/// Cached answers a change makes stale.
#[derive(Debug, Clone)]
enum Stale {
    /// The tool summary and everything about one version.
    Version { tool: String, version: String },
    /// The tool summary.
    Tool(String),
    /// Every answer (a publisher's tier shows with the owners of every tool
    /// they own).
    Everything,
}

impl<'a> StateChange<'a> {
    pub fn new() -> Self {
        StateChange::default()
    }

    /// An audit entry; entries are written in the order they are added.
    pub fn audit(mut self, entry: NewAudit<'a>) -> Self {
        self.audit.push(entry);
        self
    }

    /// A version's state or contents changed (`kind`): its change-log row,
    /// its tool's summary, and its cached answers.
    pub fn version(mut self, tool_id: i64, tool: &str, version: &str, kind: ChangeLogKind) -> Self {
        self.summaries.push(tool_id);
        self.log
            .push((tool_id, tool.to_string(), version.to_string(), kind));
        self.stale.push(Stale::Version {
            tool: tool.to_string(),
            version: version.to_string(),
        });
        self
    }

    /// A tool's summary changed with no version changing (its owners).
    pub fn tool(mut self, tool_id: i64, tool: &str) -> Self {
        self.summaries.push(tool_id);
        self.stale.push(Stale::Tool(tool.to_string()));
        self
    }

    /// Every summary that shows publisher `user_id` changed (their tier).
    pub fn publisher(mut self, user_id: i64) -> Self {
        self.publishers.push(user_id);
        self.stale.push(Stale::Everything);
        self
    }

    /// True when nothing was added: [`record`] would write nothing.
    pub fn is_empty(&self) -> bool {
        self.audit.is_empty()
            && self.summaries.is_empty()
            && self.publishers.is_empty()
            && self.log.is_empty()
    }
}

/// What the read cache forgets once the write has committed: apply it
/// after the transaction, never inside it (a reader could put the old answer
/// back before the commit).
#[must_use = "apply it to the read cache after the commit"]
#[derive(Debug, Default)]
pub struct AfterCommit {
    stale: Vec<Stale>,
}

impl AfterCommit {
    /// Nothing to forget (the write changed nothing).
    pub fn nothing() -> AfterCommit {
        AfterCommit::default()
    }

    /// Drop the stale answers from this process's cache. Other replicas
    /// drop theirs when they read the change-log rows.
    pub fn apply(self, cache: &ReadCache) {
        if self.stale.iter().any(|s| matches!(s, Stale::Everything)) {
            cache.invalidate_answers();
            return;
        }
        for stale in self.stale {
            match stale {
                Stale::Version { tool, version } => cache.invalidate_version(&tool, &version),
                Stale::Tool(tool) => cache.invalidate_tool(&tool),
                Stale::Everything => {}
            }
        }
    }

    /// For a process that serves nothing (the `lint` subcommand): the
    /// serving replicas follow the change-log rows instead.
    pub fn not_served(self) {}
}

/// Record `change` inside the write's transaction, after the rows it is
/// about were updated: the audit entries, then the summaries of the tools it
/// touched (tool rows locked in ascending id order), then the change-log
/// rows (under the change log's lock) — the lock order of the module docs.
pub fn record(conn: &mut DbConnection, change: StateChange<'_>) -> AppResult<AfterCommit> {
    for entry in &change.audit {
        entry.insert(conn)?;
    }
    let mut tools = change.summaries;
    for user_id in change.publishers {
        tools.extend(tool_summary::shows_publisher(conn, user_id)?);
    }
    tool_summary::refresh_all(conn, tools)?;
    for (tool_id, tool, version, kind) in &change.log {
        LoggedChange::append(conn, *tool_id, tool, version, *kind)?;
    }
    Ok(AfterCommit {
        stale: change.stale,
    })
}
