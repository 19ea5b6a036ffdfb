//! Publisher tiers and the blocks that follow from them.
//!
//! [`set_tier`] is the one way a publisher's tier changes — the HTTP API
//! (`PUT /api/v1/publishers/{login}/tier`) and `toolreg-server admin
//! set-tier` both call it — so both have the same effects, in one
//! transaction: the new tier, the versions it blocks or unblocks, and
//! (through `state_change::record`) the audit entries for all of it, the
//! summaries showing the publisher and the change-log rows, so every
//! replica's search index agrees. [`sync_policy`] does the same for every
//! publisher when a server starts with a policy other than the one the
//! versions were last checked against.
//!
//! The rule: a version is blocked iff the policy refuses it
//! ([`Policy::admit`]: its execution kind, and flagged code) for its
//! *effective tier*, which is the publisher's current tier — except for a
//! version published with an agent token, whose effective tier is always
//! `untrusted` (as it was when it was published). [`recheck`] applies it to
//! a publisher's versions (a tier change, a new policy) or to one version
//! (a rescan that changed its findings).

use diesel::prelude::*;
use serde::Serialize;
use serde_json::json;
use toolreg_core::lint::Finding;
use toolreg_core::policy::Refusal;
use toolreg_core::{ExecutionKind, Policy, Tier};

use crate::db::DbConnection;
use crate::error::AppResult;
use crate::models::change::ChangeLogKind;
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::stored::Stored;
use crate::models::{NewAudit, User};
use crate::schema::{server_policy, tokens, tools, users, version_contents, versions};

/// Who asked for a change, for the audit log.
#[derive(Debug, Clone, Copy)]
pub struct Actor<'a> {
    /// The admin's login (`None` for the `admin` subcommand, run by the operator).
    pub login: Option<&'a str>,
    /// The token the request used.
    pub token_id: Option<i64>,
    /// Where the change came from: `api` or `admin-cli`.
    pub via: &'a str,
}

/// A version named in a [`TierChange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct VersionRef {
    pub name: String,
    pub version: String,
}

/// What [`set_tier`] did.
#[derive(Debug, Clone)]
pub struct TierChange {
    pub login: String,
    pub from: Tier,
    pub to: Tier,
    /// Versions that became blocked.
    pub blocked: Vec<VersionRef>,
    /// Versions that stopped being blocked.
    pub unblocked: Vec<VersionRef>,
}

/// One published version, with what decides its block.
#[derive(Debug, Queryable)]
struct PublishedRow {
    id: i64,
    tool_id: i64,
    tool_name: String,
    version: String,
    #[diesel(deserialize_as = Stored<ExecutionKind>)]
    execution: ExecutionKind,
    blocked: bool,
    blocked_reason: Option<String>,
    /// The publisher's login and current tier.
    login: String,
    #[diesel(deserialize_as = Stored<Tier>)]
    tier: Tier,
    agent: Option<bool>,
    /// `version_contents.findings`, the stored lint findings as JSON.
    findings: String,
}

/// The tier a version counts as published with, given its publisher's tier now.
pub fn effective_tier(publisher_tier: Tier, agent_token: bool) -> Tier {
    if agent_token {
        Tier::Untrusted
    } else {
        publisher_tier
    }
}

/// The reason shown for a blocked version (download, resolve, metadata, search).
fn block_reason(refusal: &Refusal, login: &str, agent_token: bool) -> String {
    let (needs, tier) = match refusal {
        Refusal::Tier(denial) => (
            format!(
                "a `{}` tool needs a publisher tier of at least `{}`",
                denial.execution, denial.required
            ),
            denial.publisher_tier,
        ),
        Refusal::FlaggedCode {
            execution,
            publisher_tier,
            ..
        } => (
            format!(
                "its definition has lint findings ({}) and a `{execution}` tool runs code, which needs a publisher tier above `untrusted`",
                refusal.rules_text()
            ),
            *publisher_tier,
        ),
    };
    if agent_token {
        format!(
            "{needs}, but it was published with an agent token, which always counts as `untrusted`"
        )
    } else {
        format!("{needs}, but its publisher `{login}` is now `{tier}`")
    }
}

/// Take the publisher's row lock and read their tier, inside a write
/// transaction. On PostgreSQL the no-op update holds the row until commit, so
/// a tier change and a publish by the same user are serialized: a publish
/// either sees the new tier or is visible to the tier change's block scan.
/// (SQLite runs one write transaction at a time already.)
pub fn lock_tier(conn: &mut DbConnection, user_id: i64) -> AppResult<Tier> {
    let user: User = crate::on_backend!(conn, |c| diesel::update(users::table.find(user_id))
        .set(users::tier.eq(users::tier))
        .returning(User::as_returning())
        .get_result(c))?;
    Ok(user.tier)
}

/// Check, inside the publish transaction, that the publisher's tier as it is
/// now still admits a version of `kind` with `findings` (a tier change may
/// have committed since the request was authenticated). Returns the
/// effective tier; a refusal is the publish's 403.
pub fn recheck_publish(
    conn: &mut DbConnection,
    policy: &Policy,
    user_id: i64,
    agent_token: bool,
    kind: ExecutionKind,
    findings: &[Finding],
) -> AppResult<Tier> {
    let tier = effective_tier(lock_tier(conn, user_id)?, agent_token);
    policy.admit(kind, tier, findings)?;
    Ok(tier)
}

/// Change `login`'s tier to `to` and block or unblock their versions to
/// match `policy` (call inside a write transaction: everything here commits
/// or rolls back together). Setting the tier a publisher already has still
/// re-checks their versions against `policy`, and is audited. The cached
/// answers to forget after the commit come with the change.
pub fn set_tier(
    conn: &mut DbConnection,
    policy: &Policy,
    login: &str,
    to: Tier,
    actor: Actor<'_>,
) -> AppResult<(TierChange, AfterCommit)> {
    let user = User::require_by_login(conn, login)?;
    let from = lock_tier(conn, user.id)?;
    User::set_tier(conn, user.id, to)?;
    let rechecked = recheck(conn, policy, Versions::Publisher(user.id))?;

    let mut audit = NewAudit::new("tier_change");
    audit.actor = actor.login;
    audit.token_id = actor.token_id;
    // First, so its id is below the block entries it causes.
    audit.detail =
        json!({"login": user.login, "from": from.as_str(), "to": to.as_str(), "via": actor.via});
    // The summaries showing this publisher: their tier as an owner, their
    // versions' blocked state.
    let change = StateChange::new().audit(audit).publisher(user.id);
    let change = recorded(change, &rechecked, actor);
    let after = state_change::record(conn, change)?;
    let (blocked, unblocked) = refs(&rechecked);
    Ok((
        TierChange {
            login: user.login.clone(),
            from,
            to,
            blocked,
            unblocked,
        },
        after,
    ))
}

/// What [`apply_policy`] did: the versions it blocked and unblocked.
#[derive(Debug, Clone, Default)]
pub struct PolicyApplied {
    pub blocked: Vec<VersionRef>,
    pub unblocked: Vec<VersionRef>,
}

/// Re-check every published version against `policy` — block what it now
/// forbids, unblock what it now allows — so a server started with a stricter
/// (or looser) `--policy` applies it to versions already out. Call inside
/// one write transaction: the blocks, their change-log rows (so search and
/// every replica see them) and their audit entries commit together.
pub fn apply_policy(conn: &mut DbConnection, policy: &Policy) -> AppResult<PolicyApplied> {
    let publishers: Vec<i64> = versions::table
        .select(versions::publisher_id)
        .distinct()
        .order(versions::publisher_id.asc())
        .load(conn)?;
    let actor = Actor {
        login: None,
        token_id: None,
        via: "policy",
    };
    let mut rechecked = Vec::new();
    let mut changed_publishers = Vec::new();
    for user_id in publishers {
        lock_tier(conn, user_id)?;
        let found = recheck(conn, policy, Versions::Publisher(user_id))?;
        if !found.is_empty() {
            changed_publishers.push(user_id);
        }
        rechecked.extend(found);
    }
    let (blocked, unblocked) = refs(&rechecked);
    let applied = PolicyApplied { blocked, unblocked };
    if rechecked.is_empty() {
        return Ok(applied);
    }
    // Every block this re-check writes gets its audit entry (`via` is not
    // stored per version; the `policy_apply` entry says why).
    let mut change = recorded(StateChange::new(), &rechecked, actor);
    let mut audit = NewAudit::new("policy_apply");
    audit.detail = json!({"policy": policy_text(policy),
                          "blocked": applied.blocked.len(), "unblocked": applied.unblocked.len()});
    change = change.audit(audit);
    for user_id in changed_publishers {
        change = change.publisher(user_id);
    }
    // At start, before this process serves: nothing of it is cached here.
    state_change::record(conn, change)?.not_served();
    Ok(applied)
}

/// What [`sync_policy`] found and did at start.
#[derive(Debug, Clone)]
pub struct PolicySync {
    /// The canonical text of the policy the versions were last checked
    /// against, when it differs from this process's (`None` when it is the
    /// same, or on the first start).
    pub previous: Option<String>,
    /// The re-check, when one ran.
    pub applied: Option<PolicyApplied>,
}

/// At start: compare `policy` with the one recorded in the database (by the
/// last start of this or another replica). If it differs, or none is
/// recorded, re-check every version ([`apply_policy`]) and record `policy`,
/// all in the caller's write transaction.
pub fn sync_policy(conn: &mut DbConnection, policy: &Policy) -> AppResult<PolicySync> {
    let text = policy_text(policy);
    let hash = toolreg_core::digest::sha256_hex(text.as_bytes());
    let stored: Option<(String, String)> = server_policy::table
        .find(1)
        .select((server_policy::policy, server_policy::sha256))
        .first(conn)
        .optional()?;
    if stored.as_ref().is_some_and(|(_, h)| *h == hash) {
        return Ok(PolicySync {
            previous: None,
            applied: None,
        });
    }
    let applied = apply_policy(conn, policy)?;
    diesel::delete(server_policy::table.find(1)).execute(conn)?;
    diesel::insert_into(server_policy::table)
        .values((
            server_policy::id.eq(1),
            server_policy::policy.eq(&text),
            server_policy::sha256.eq(&hash),
            server_policy::updated_at.eq(crate::db::now()),
        ))
        .execute(conn)?;
    Ok(PolicySync {
        previous: stored.map(|(p, _)| p),
        applied: Some(applied),
    })
}

/// A policy as one canonical line, `kind=tier` for every execution kind in a
/// fixed order, so two processes' policies compare as text.
pub fn policy_text(policy: &Policy) -> String {
    policy
        .entries()
        .map(|(kind, tier)| format!("{}={}", kind.as_str(), tier.as_str()))
        .collect::<Vec<_>>()
        .join(",")
}

/// A version [`recheck`] blocked or unblocked.
#[derive(Debug)]
pub struct Rechecked {
    tool_id: i64,
    tool: String,
    version: String,
    /// `Block` or `Unblock`.
    pub kind: ChangeLogKind,
    /// The audit entry's detail: `None` when only a blocked version's reason
    /// changed (a change-log row, no audit entry).
    audit: Option<serde_json::Value>,
}

/// The versions newly blocked and newly unblocked by `rechecked`.
fn refs(rechecked: &[Rechecked]) -> (Vec<VersionRef>, Vec<VersionRef>) {
    let (mut blocked, mut unblocked) = (Vec::new(), Vec::new());
    for r in rechecked.iter().filter(|r| r.audit.is_some()) {
        let here = VersionRef {
            name: r.tool.clone(),
            version: r.version.clone(),
        };
        match r.kind {
            ChangeLogKind::Block => blocked.push(here),
            _ => unblocked.push(here),
        }
    }
    (blocked, unblocked)
}

/// `change` with each re-checked version's audit entry (by `actor`) and
/// change-log row.
pub fn recorded<'a>(
    mut change: StateChange<'a>,
    rechecked: &'a [Rechecked],
    actor: Actor<'a>,
) -> StateChange<'a> {
    for r in rechecked {
        if let Some(detail) = &r.audit {
            let mut audit = NewAudit::new(r.kind.as_str());
            audit.actor = actor.login;
            audit.token_id = actor.token_id;
            audit.tool = Some(&r.tool);
            audit.version = Some(&r.version);
            audit.detail = detail.clone();
            change = change.audit(audit);
        }
        change = change.version(r.tool_id, &r.tool, &r.version, r.kind);
    }
    change
}

/// Which versions [`recheck`] looks at.
#[derive(Debug, Clone, Copy)]
pub enum Versions {
    /// Every version a publisher published.
    Publisher(i64),
    /// One version.
    One(i64),
}

/// Block or unblock `which` versions to match what `policy` admits for
/// their kind, their publisher's current tier and their stored findings
/// ([`Policy::admit`]), and say which changed; the caller records them
/// ([`recorded`]) after every version row here is updated: taking the
/// change log's lock last means a concurrent yank, which holds its version
/// row while it waits for that lock, can't deadlock with this.
pub fn recheck(
    conn: &mut DbConnection,
    policy: &Policy,
    which: Versions,
) -> AppResult<Vec<Rechecked>> {
    let mut query = versions::table
        .inner_join(tools::table)
        .inner_join(users::table)
        .inner_join(version_contents::table)
        .left_join(tokens::table.on(versions::token_id.eq(tokens::id.nullable())))
        .order(versions::id.asc())
        .select((
            versions::id,
            versions::tool_id,
            tools::name,
            versions::version,
            versions::execution,
            versions::blocked,
            versions::blocked_reason,
            users::login,
            users::tier,
            tokens::agent.nullable(),
            version_contents::findings,
        ))
        .into_boxed();
    query = match which {
        Versions::Publisher(user_id) => query.filter(versions::publisher_id.eq(user_id)),
        Versions::One(id) => query.filter(versions::id.eq(id)),
    };
    let rows: Vec<PublishedRow> = query.load(conn)?;

    let mut out = Vec::new();
    for row in rows {
        let agent = row.agent.unwrap_or(false);
        let kind = row.execution;
        let effective = effective_tier(row.tier, agent);
        // Read leniently: an odd row counts as clean rather than stopping
        // every other version's re-check.
        let findings: Vec<Finding> = serde_json::from_str(&row.findings).unwrap_or_default();
        match policy.admit(kind, effective, &findings) {
            Err(refusal) => {
                let reason = block_reason(&refusal, &row.login, agent);
                if row.blocked && row.blocked_reason.as_deref() == Some(reason.as_str()) {
                    continue;
                }
                set_blocked(conn, row.id, Some(&reason))?;
                let required = match &refusal {
                    Refusal::Tier(denial) => denial.required,
                    Refusal::FlaggedCode { .. } => Tier::Verified,
                };
                let audit = (!row.blocked).then(|| {
                    json!({"reason": reason, "publisher": row.login, "execution": kind.as_str(),
                           "required_tier": required.as_str(),
                           "publisher_tier": effective.as_str(), "agent": agent})
                });
                out.push(Rechecked {
                    tool_id: row.tool_id,
                    tool: row.tool_name,
                    version: row.version,
                    kind: ChangeLogKind::Block,
                    audit,
                });
            }
            Ok(()) if row.blocked => {
                set_blocked(conn, row.id, None)?;
                let audit = json!({"publisher": row.login, "execution": kind.as_str(),
                                   "publisher_tier": effective.as_str(), "previous_reason": row.blocked_reason});
                out.push(Rechecked {
                    tool_id: row.tool_id,
                    tool: row.tool_name,
                    version: row.version,
                    kind: ChangeLogKind::Unblock,
                    audit: Some(audit),
                });
            }
            Ok(()) => {}
        }
    }
    Ok(out)
}

fn set_blocked(conn: &mut DbConnection, version_id: i64, reason: Option<&str>) -> AppResult<()> {
    diesel::update(versions::table.find(version_id))
        .set((
            versions::blocked.eq(reason.is_some()),
            versions::blocked_reason.eq(reason),
        ))
        .execute(conn)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_tokens_count_as_untrusted_whatever_the_tier() {
        for tier in Tier::ALL {
            assert_eq!(effective_tier(tier, true), Tier::Untrusted);
            assert_eq!(effective_tier(tier, false), tier);
        }
    }

    #[test]
    fn block_reasons_name_kind_tiers_and_cause() {
        let refusal = Policy::default()
            .admit(ExecutionKind::Command, Tier::Untrusted, &[])
            .unwrap_err();
        let text = block_reason(&refusal, "bob", false);
        assert!(
            text.contains("`command`")
                && text.contains("`verified`")
                && text.contains("`bob` is now `untrusted`"),
            "{text}"
        );
        let text = block_reason(&refusal, "bob", true);
        assert!(text.contains("agent token"), "{text}");
    }
}
