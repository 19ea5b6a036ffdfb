//! `toolreg-server lint [--apply]`: re-run the definition lint over every
//! stored version — after the rules changed — and say, per version, what is
//! newly blocked or flagged compared with the findings stored with it (and
//! what is no longer found).
//!
//! Each version is linted as published: its definition as stored in
//! `version_contents`, and the `toolreg.toml` and every other text file of
//! its bundle (read from blob storage, the only place they are kept). When
//! the bundle cannot be read the definition is linted alone and the stored
//! findings in `/toolreg.toml` and in other files are kept as they are. A
//! definition naming other tools is linted again knowing its siblings (the
//! tools sharing an owner with it), as at publish.
//!
//! With `--apply`, each version whose findings changed gets the new list
//! stored, an audit entry (`findings_update`) and a change-log row, in one
//! transaction; in that transaction it is also checked against the tier
//! policy with its new findings (`Policy::admit`, as a tier change checks
//! it: flagged code from an untrusted publisher is blocked), and a version
//! hitting a block rule is quarantined (never deleted) through
//! [`crate::models::quarantine::set`], which writes its own audit and
//! change-log rows in that same transaction.

use diesel::prelude::*;
use serde::Serialize;
use serde_json::json;
use toolreg_core::lint::{self, Context, Finding};
use toolreg_core::{Format, Policy, Tool, ToolFiles};

use crate::db::DbConnection;
use crate::error::{internal, AppResult};
use crate::models::change::ChangeLogKind;
use crate::models::state_change::{self, StateChange};
use crate::models::stored::Stored;
use crate::models::tier::{self, Actor};
use crate::models::{quarantine, NewAudit, ToolRow, VersionRow};
use crate::schema::{tools, version_contents, versions};

/// Pointer prefix of the findings in `toolreg.toml`.
const MANIFEST_POINTER: &str = "/toolreg.toml";

/// How the rescan appears in the audit log's `via`.
const VIA: &str = "lint-rescan";

/// What the rescan reads of one version.
#[derive(Debug, Clone, Queryable)]
pub struct StoredVersion {
    pub id: i64,
    pub tool_id: i64,
    pub tool: String,
    pub version: String,
    pub sha256: String,
    #[diesel(deserialize_as = Stored<Format>)]
    pub format: Format,
    pub quarantined: bool,
    /// The canonical `toolreg_core::Tool` as JSON.
    pub manifest: String,
    pub definition: String,
    /// The stored findings as a JSON array.
    pub findings: String,
}

/// Up to `limit` versions with an id above `after`, in id order.
pub fn batch(conn: &mut DbConnection, after: i64, limit: i64) -> AppResult<Vec<StoredVersion>> {
    Ok(versions::table
        .inner_join(tools::table)
        .inner_join(version_contents::table)
        .filter(versions::id.gt(after))
        .order(versions::id.asc())
        .limit(limit)
        .select((
            versions::id,
            versions::tool_id,
            tools::name,
            versions::version,
            versions::sha256,
            versions::format,
            versions::quarantined,
            version_contents::manifest,
            version_contents::definition,
            version_contents::findings,
        ))
        .load(conn)?)
}

/// One version's rescan: what changed against the stored findings.
#[derive(Debug, Clone, Serialize)]
pub struct Rescan {
    pub name: String,
    pub version: String,
    pub newly_blocked: Vec<Finding>,
    pub newly_flagged: Vec<Finding>,
    /// Stored findings the rules no longer report.
    pub no_longer_found: Vec<Finding>,
    /// True when the bundle could not be read (only the definition was
    /// linted).
    pub manifest_unread: bool,
    /// Set by `--apply`: the version was quarantined for a block finding.
    pub quarantined: bool,
    /// Set by `--apply`: the policy refuses the version with its new
    /// findings, and it was blocked (or admits it again, and it was unblocked).
    pub blocked: bool,
    pub unblocked: bool,
    /// Every finding now, in document order: what `--apply` stores.
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

impl Rescan {
    /// True if the findings differ from the stored ones.
    pub fn changed(&self) -> bool {
        !self.newly_blocked.is_empty()
            || !self.newly_flagged.is_empty()
            || !self.no_longer_found.is_empty()
    }

    /// True if a block rule is hit (stored findings never hold blocks:
    /// publish refuses them).
    pub fn blocks(&self) -> bool {
        self.findings.iter().any(Finding::is_block)
    }

    /// The lines `lint` prints for this version.
    pub fn lines(&self) -> Vec<String> {
        let at = format!("{} {}", self.name, self.version);
        let mut out = Vec::new();
        if self.manifest_unread {
            out.push(format!(
                "{at}: its bundle could not be read; linted the definition only"
            ));
        }
        for f in self.newly_blocked.iter().chain(&self.newly_flagged) {
            out.push(format!("{at}: new {f}"));
        }
        for f in &self.no_longer_found {
            out.push(format!("{at}: no longer found {f}"));
        }
        if self.quarantined {
            out.push(format!("{at}: quarantined"));
        }
        if self.blocked {
            out.push(format!(
                "{at}: blocked (the policy refuses its findings for its publisher's tier)"
            ));
        }
        if self.unblocked {
            out.push(format!("{at}: unblocked"));
        }
        out
    }
}

/// Lint `v` again: its stored definition and the files of its `bundle`
/// (`None` when it could not be read), knowing its `siblings` if given,
/// against its stored findings.
pub fn rescan(
    v: &StoredVersion,
    bundle: Option<&ToolFiles>,
    siblings: Option<&[String]>,
) -> AppResult<Rescan> {
    let stored: Vec<Finding> = serde_json::from_str(&v.findings).map_err(|e| {
        internal(format!(
            "stored findings of {} {} are not JSON: {e}",
            v.tool, v.version
        ))
    })?;
    let tool: Tool = serde_json::from_str(&v.manifest).map_err(|e| {
        internal(format!(
            "stored manifest of {} {} is unreadable: {e}",
            v.tool, v.version
        ))
    })?;
    let doc = lint::parse_definition(v.format, v.definition.as_bytes());
    let mut ctx = Context::of(&tool);
    if let Some(names) = siblings {
        ctx.know_siblings(names.iter().map(String::as_str));
    }
    let mut findings = match bundle {
        Some(files) => lint::check_directory(&ctx, doc.as_ref(), files),
        None => lint::check_parsed(&ctx, doc.as_ref(), None),
    };
    if bundle.is_none() {
        // A skill's `/SKILL.md:<line>` findings are found again from the
        // definition: keep only the stored ones not found again.
        let kept: Vec<Finding> = stored
            .iter()
            .filter(|f| {
                (f.pointer.starts_with(MANIFEST_POINTER)
                    || lint::files::is_file_pointer(&f.pointer))
                    && !findings.contains(f)
            })
            .cloned()
            .collect();
        findings.extend(kept);
    }
    let new = lint::new_since(&stored, &findings);
    Ok(Rescan {
        name: v.tool.clone(),
        version: v.version.clone(),
        newly_blocked: new
            .iter()
            .filter(|f| f.is_block())
            .map(|f| (*f).clone())
            .collect(),
        newly_flagged: new
            .iter()
            .filter(|f| !f.is_block())
            .map(|f| (*f).clone())
            .collect(),
        no_longer_found: lint::new_since(&findings, &stored)
            .into_iter()
            .cloned()
            .collect(),
        manifest_unread: bundle.is_none(),
        quarantined: false,
        blocked: false,
        unblocked: false,
        findings,
    })
}

/// The quarantine reason for a version the rescan found blocked: the first
/// few block findings' rules, pointers and meanings.
fn block_reason(r: &Rescan) -> String {
    let blocks: Vec<&Finding> = r.findings.iter().filter(|f| f.is_block()).collect();
    let mut named: Vec<String> = blocks
        .iter()
        .take(3)
        .map(|f| format!("{} at {} ({})", f.rule, f.pointer, f.rule.meaning()))
        .collect();
    if blocks.len() > 3 {
        named.push(format!("and {} more", blocks.len() - 3));
    }
    format!(
        "a rescan with the current definition lint found block findings: {}",
        named.join(", ")
    )
}

/// What [`apply`] did besides storing the findings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Applied {
    /// The version was quarantined for a block finding.
    pub quarantined: bool,
    /// The policy now refuses the version with its new findings (flagged
    /// code from an untrusted publisher): it was blocked.
    pub blocked: bool,
    /// The policy admits it again: it was unblocked.
    pub unblocked: bool,
}

/// Store `r`'s findings for `v`, re-check it against `policy` with them
/// (blocking or unblocking it, as a tier change would) and, if a block rule
/// is hit, quarantine it (call inside a write transaction).
pub fn apply(
    conn: &mut DbConnection,
    policy: &Policy,
    v: &StoredVersion,
    r: &Rescan,
) -> AppResult<Applied> {
    let findings = serde_json::to_string(&r.findings)
        .map_err(|e| internal(format!("cannot encode the lint findings: {e}")))?;
    diesel::update(version_contents::table.find(v.id))
        .set(version_contents::findings.eq(&findings))
        .execute(conn)?;
    let rules = |list: &[Finding]| {
        list.iter()
            .map(|f| json!({"rule": f.rule, "pointer": f.pointer}))
            .collect::<Vec<_>>()
    };
    let mut audit = NewAudit::new("findings_update");
    audit.tool = Some(&v.tool);
    audit.version = Some(&v.version);
    audit.detail = json!({
        "new": rules(&[r.newly_blocked.as_slice(), r.newly_flagged.as_slice()].concat()),
        "no_longer_found": rules(&r.no_longer_found),
        "via": VIA,
    });
    let rechecked = tier::recheck(conn, policy, tier::Versions::One(v.id))?;
    let quarantine = r.blocks() && !v.quarantined;
    // A quarantine logs its own change; otherwise the findings change is logged.
    let mut change = StateChange::new().audit(audit);
    if !quarantine {
        change = change.version(v.tool_id, &v.tool, &v.version, ChangeLogKind::Findings);
    }
    let actor = Actor {
        login: None,
        token_id: None,
        via: VIA,
    };
    let change = tier::recorded(change, &rechecked, actor);
    // The `lint` subcommand serves nothing; servers follow the change log.
    state_change::record(conn, change)?.not_served();
    let applied = Applied {
        quarantined: quarantine,
        blocked: rechecked.iter().any(|c| c.kind == ChangeLogKind::Block),
        unblocked: rechecked.iter().any(|c| c.kind == ChangeLogKind::Unblock),
    };
    if quarantine {
        let tool: ToolRow = tools::table
            .find(v.tool_id)
            .select(ToolRow::as_select())
            .first(conn)?;
        let row = VersionRow::require(conn, tool.id, &tool.name, &v.version)?;
        let (_, after) = quarantine::set(conn, &tool, &row, Some(&block_reason(r)), &actor)?;
        after.not_served();
    }
    Ok(applied)
}
