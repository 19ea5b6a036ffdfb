//! The stored tool summary: the JSON body of `GET /api/v1/tools/{name}`,
//! one `tool_summaries` row per tool, kept ready to send.
//!
//! A summary shows a tool's row (downloads, times), its owners with their
//! tiers, every version with its publisher and counts, and the listing fields
//! of the latest version (the newest versions only: a tool with thousands
//! lists its newest [`TOOL_VERSIONS_LISTED`] and their number). Building it
//! takes a few index lookups and encoding JSON; reading the stored body is one lookup by
//! normalized name (the tools' unique index, then the summary by tool id).
//! With many tools most summaries are not in the read cache
//! (`crate::read_cache`), so this is what an uncached summary costs.
//!
//! # Keeping it current
//!
//! Every write that changes what a summary shows refreshes it **inside its
//! own transaction**, so the stored body commits or rolls back with the
//! change: the state changes (publish, yank, quarantine, owners, tier
//! changes, the lint rescan) through `crate::models::state_change::record`,
//! and the download-count flush (`crate::downloads`) through
//! [`add_downloads`], which adds the new downloads to the stored counts
//! instead of building the summary again: counts are all a download
//! changes, and the flush touches every tool downloaded in the last second,
//! so building each one again (its owners, versions and manifest read,
//! then encoded) was most of what serving downloads cost the database.
//!
//! [`refresh`] first takes the tool row's lock (a no-op update) and only then
//! reads: on PostgreSQL two transactions refreshing one tool are serialized
//! on that lock, and the second reads what the first committed, so the last
//! one to commit stores a summary built from everything committed (SQLite
//! runs one write transaction at a time anyway). Where that lock sits in the
//! order every write transaction takes its locks is spelled out in
//! `crate::models::state_change`.
//!
//! # The version a tool is listed under
//!
//! [`refresh`] also chooses the version the tool is listed under
//! ([`choose_listed`]: its newest version of the highest
//! [`VersionState::listing_rank`] — the newest live one, else the newest
//! blocked one, else the newest) and stores it with the body
//! (`tool_summaries.listed_version_id`), the way crates.io stores a crate's
//! default version. The summary shows that version's listing fields, and the
//! search source and the web index read it through [`listed`]; nothing
//! chooses it again.
//!
//! Tools that existed before the table (or the column) did get their row
//! from [`fill_missing`] at start-up; until then [`encode`] and [`listed`]
//! choose on each read with the same function, so the answer is the same
//! either way.

use std::collections::HashMap;

use diesel::prelude::*;
use toolreg_api::{
    EncodablePublisher, EncodableTool, EncodableVersionSummary, TOOL_VERSIONS_LISTED,
};

use crate::db::batch_update::{self, Value};
use crate::db::{DbConnection, MAX_IN_LIST};
use crate::encode::{rfc3339, to_json};
use crate::error::{internal, AppResult};
use crate::models::version::{
    self, HasState, ManifestSummary, VersionRow, VersionState, VersionSummary,
};
use crate::models::{owner, ToolRow};
use crate::schema::{startup_fills, tool_owners, tool_summaries, tools, versions};

/// The stored bodies of the tools whose normalized names are `normalized`:
/// (normalized name, body) for each such tool that has one. One name is
/// one lookup by `=`, whose statement is prepared once; several are one
/// `= ANY` query ([`crate::db::lookup_batch`] sends them on PostgreSQL).
pub fn stored(conn: &mut DbConnection, normalized: &[String]) -> AppResult<Vec<(String, String)>> {
    let query = tools::table
        .inner_join(tool_summaries::table)
        .select((tools::normalized_name, tool_summaries::body));
    Ok(match normalized {
        [one] => crate::on_backend!(conn, |c| query
            .filter(tools::normalized_name.eq(one))
            .load::<(String, String)>(c))?,
        many => crate::on_backend!(conn, |c| query
            .filter(tools::normalized_name.eq_any(many))
            .load::<(String, String)>(c))?,
    })
}

/// A version a tool is listed under, with its manifest summary
/// (`versions.summary`).
pub type Listed = (VersionSummary, String);

/// One of a tool's versions as [`version::newest`] reads it: the row, its
/// publisher's login and its manifest summary.
type Newest = (VersionSummary, String, String);

/// The version `tool_id` is listed under: its newest version (by SemVer)
/// of the highest [`VersionState::listing_rank`]. `newest` is the tool's
/// first [`TOOL_VERSIONS_LISTED`] versions, already read for its summary;
/// later ones are read, a page at a time through the version-order index,
/// only when none of those is live. `None` only for a tool without versions.
pub fn choose_listed(
    conn: &mut DbConnection,
    tool_id: i64,
    newest: &[Newest],
) -> AppResult<Option<Listed>> {
    let top = VersionState::Live.listing_rank();
    let mut best: Option<(u8, &VersionSummary, &String)> = None;
    for (v, _, summary) in newest {
        let rank = v.state().listing_rank();
        if best.is_none_or(|(r, _, _)| rank > r) {
            best = Some((rank, v, summary));
            if rank == top {
                break;
            }
        }
    }
    let mut chosen = best.map(|(rank, v, summary)| (rank, (v.clone(), summary.clone())));
    let mut offset = newest.len() as i64;
    let mut full = offset == TOOL_VERSIONS_LISTED;
    while full && chosen.as_ref().is_none_or(|(rank, _)| *rank < top) {
        let page = version::newest(conn, tool_id, offset, TOOL_VERSIONS_LISTED)?;
        full = page.len() as i64 == TOOL_VERSIONS_LISTED;
        offset += page.len() as i64;
        for (v, _, summary) in page {
            let rank = v.state().listing_rank();
            if chosen.as_ref().is_none_or(|(r, _)| rank > *r) {
                chosen = Some((rank, (v, summary)));
                if rank == top {
                    break;
                }
            }
        }
    }
    Ok(chosen.map(|(_, listed)| listed))
}

/// A tool's newest versions (what its summary lists) and the version it is
/// listed under.
fn read(conn: &mut DbConnection, tool_id: i64) -> AppResult<(Vec<Newest>, Option<Listed>)> {
    let newest = version::newest(conn, tool_id, 0, TOOL_VERSIONS_LISTED)?;
    let listed = choose_listed(conn, tool_id, &newest)?;
    Ok((newest, listed))
}

/// The id of the version `tool_id` is listed under, as the last write
/// stored it; chosen now ([`choose_listed`]) for a tool whose summary is not
/// stored yet.
pub fn listed(conn: &mut DbConnection, tool_id: i64) -> AppResult<Option<i64>> {
    let stored: Option<Option<i64>> = tool_summaries::table
        .find(tool_id)
        .select(tool_summaries::listed_version_id)
        .first(conn)
        .optional()?;
    match stored.flatten() {
        Some(id) => Ok(Some(id)),
        None => Ok(read(conn, tool_id)?.1.map(|(v, _)| v.id)),
    }
}

/// The summary of `tool` as the API answers it: the stored body, or built
/// now for a tool whose summary is not stored yet.
pub fn load(conn: &mut DbConnection, tool: &ToolRow) -> AppResult<EncodableTool> {
    let stored: Option<String> = tool_summaries::table
        .find(tool.id)
        .select(tool_summaries::body)
        .first(conn)
        .optional()?;
    match stored {
        Some(body) => serde_json::from_str(&body).map_err(|e| {
            internal(format!(
                "the stored summary of `{}` does not parse: {e}",
                tool.name
            ))
        }),
        None => {
            let (newest, listed) = read(conn, tool.id)?;
            build(conn, tool, newest, listed.as_ref())
        }
    }
}

/// Build the summary of `tool` from its owners, `newest` (its newest
/// [`TOOL_VERSIONS_LISTED`] versions) and `listed`, the version it is listed
/// under ([`choose_listed`]), each read through the version-order index, so
/// the cost does not grow with the tool's number of versions.
fn build(
    conn: &mut DbConnection,
    tool: &ToolRow,
    newest: Vec<Newest>,
    listed: Option<&Listed>,
) -> AppResult<EncodableTool> {
    let owners = owner::list(conn, tool.id)?;
    // `newest` is the first page of the versions: if it is not full, it
    // is all of them and needs no count.
    let versions_total = match i64::try_from(newest.len()) {
        Ok(n) if n < TOOL_VERSIONS_LISTED => n,
        _ => VersionRow::count(conn, tool.id)?,
    };
    let versions = newest;
    // A version whose texts are withheld lends the tool no listing fields.
    let manifest = listed
        .filter(|(v, _)| v.state().texts_shown())
        .map(|(_, summary)| ManifestSummary::parse(summary))
        .unwrap_or_default();
    let listed_row = listed.map(|(v, _)| v);
    Ok(EncodableTool {
        name: tool.name.clone(),
        call_name: manifest.call_name,
        title: manifest.title,
        description: manifest.description,
        keywords: manifest.keywords,
        license: manifest.license,
        homepage: manifest.homepage,
        repository: manifest.repository,
        format: listed_row.map(|v| v.format),
        execution: listed_row.map(|v| v.execution),
        latest_version: listed_row.map(|v| v.version.clone()),
        deprecated: listed_row.and_then(|v| v.deprecation()),
        downloads: tool.downloads,
        created_at: rfc3339(&tool.created_at),
        updated_at: rfc3339(&tool.updated_at),
        owners: owners.iter().map(EncodablePublisher::from).collect(),
        versions: versions
            .into_iter()
            .map(|(v, login, _)| encode_version(v, login))
            .collect(),
        versions_total,
    })
}

/// One line of a tool's version list.
pub fn encode_version(v: VersionSummary, publisher: String) -> EncodableVersionSummary {
    let deprecated = v.deprecation();
    EncodableVersionSummary {
        version: v.version,
        sha256: v.sha256,
        size: v.size,
        yanked: v.yanked,
        blocked: v.blocked,
        blocked_reason: v.blocked_reason,
        quarantined: v.quarantined,
        deprecated,
        quarantine_reason: v.quarantine_reason,
        execution: v.execution,
        format: v.format,
        published_at: rfc3339(&v.published_at),
        publisher,
        downloads: v.downloads,
    }
}

/// The summary of `tool` as the JSON body that is sent and stored, built
/// with the version it is listed under chosen now.
pub fn encode(conn: &mut DbConnection, tool: &ToolRow) -> AppResult<String> {
    let (newest, listed) = read(conn, tool.id)?;
    encode_with(conn, tool, newest, listed.as_ref())
}

fn encode_with(
    conn: &mut DbConnection,
    tool: &ToolRow,
    newest: Vec<Newest>,
    listed: Option<&Listed>,
) -> AppResult<String> {
    body_of(&build(conn, tool, newest, listed)?)
}

/// A summary as the JSON body that is sent and stored.
fn body_of(summary: &EncodableTool) -> AppResult<String> {
    String::from_utf8(Vec::from(to_json(summary)?))
        .map_err(|e| internal(format!("the tool summary is not UTF-8: {e}")))
}

/// Lock the tool's row, choose the version it is listed under and build its
/// summary from what is committed now, and store both (call inside a write
/// transaction, after the change).
pub fn refresh(conn: &mut DbConnection, tool_id: i64) -> AppResult<()> {
    let tool = lock(conn, tool_id)?;
    let (newest, listed) = read(conn, tool.id)?;
    let body = encode_with(conn, &tool, newest, listed.as_ref())?;
    let listed_id = listed.map(|(v, _)| v.id);
    crate::on_backend!(conn, |c| diesel::insert_into(tool_summaries::table)
        .values((
            tool_summaries::tool_id.eq(tool.id),
            tool_summaries::body.eq(&body),
            tool_summaries::listed_version_id.eq(listed_id),
        ))
        .on_conflict(tool_summaries::tool_id)
        .do_update()
        .set((
            tool_summaries::body.eq(&body),
            tool_summaries::listed_version_id.eq(listed_id),
        ))
        .execute(c))?;
    Ok(())
}

/// Downloads counted for one tool since the last flush: its id, the total,
/// and the count of each version by version string.
pub type ToolDownloads = (i64, i64, Vec<(String, i64)>);

/// Adds each tool's new downloads to its stored summary: the total, and
/// each `(version, n)` that is listed (a version not listed among the
/// newest is counted in the total only), without building the summary
/// again. The bodies are read and written back [`MAX_IN_LIST`] tools at a
/// time, one statement each ([`batch_update`]). Call inside the write
/// transaction that added the same downloads to the rows, after the tool
/// rows' update, which holds their locks as [`refresh`]'s does: every
/// count change goes through here, so the stored counts stay the rows'. A
/// tool without a stored summary is left alone (its summary is built on
/// each read until [`fill_missing`] stores it).
pub fn add_downloads(conn: &mut DbConnection, tools: &[ToolDownloads]) -> AppResult<()> {
    for chunk in tools.chunks(MAX_IN_LIST) {
        let ids: Vec<i64> = chunk.iter().map(|(id, _, _)| *id).collect();
        let stored: HashMap<i64, String> = crate::on_backend!(conn, |c| tool_summaries::table
            .filter(tool_summaries::tool_id.eq_any(&ids))
            .select((tool_summaries::tool_id, tool_summaries::body))
            .load::<(i64, String)>(c))?
        .into_iter()
        .collect();
        let mut bodies = Vec::with_capacity(stored.len());
        for (tool_id, total, versions) in chunk {
            let Some(body) = stored.get(tool_id) else {
                continue;
            };
            let mut summary: EncodableTool = serde_json::from_str(body).map_err(|e| {
                internal(format!(
                    "the stored summary of tool {tool_id} does not parse: {e}"
                ))
            })?;
            summary.downloads += total;
            for (version, n) in versions {
                if let Some(v) = summary.versions.iter_mut().find(|v| &v.version == version) {
                    v.downloads += n;
                }
            }
            bodies.push((*tool_id, body_of(&summary)?));
        }
        let rows: Vec<(i64, Value<'_>)> = bodies
            .iter()
            .map(|(id, body)| (*id, Value::Text(body)))
            .collect();
        batch_update::update_each(conn, "tool_summaries", "tool_id", "body", "", &rows)?;
    }
    Ok(())
}

/// [`refresh`] each of `tool_ids`, in ascending id order.
pub fn refresh_all(
    conn: &mut DbConnection,
    tool_ids: impl IntoIterator<Item = i64>,
) -> AppResult<()> {
    let mut ids: Vec<i64> = tool_ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        refresh(conn, id)?;
    }
    Ok(())
}

/// The tools whose summaries show `user_id`: the tools they own (their tier
/// is shown with the owners) and the tools with versions they published (a
/// tier change blocks or unblocks those).
pub fn shows_publisher(conn: &mut DbConnection, user_id: i64) -> AppResult<Vec<i64>> {
    let mut tools: Vec<i64> = tool_owners::table
        .filter(tool_owners::user_id.eq(user_id))
        .select(tool_owners::tool_id)
        .load(conn)?;
    let published: Vec<i64> = versions::table
        .filter(versions::publisher_id.eq(user_id))
        .select(versions::tool_id)
        .distinct()
        .load(conn)?;
    tools.extend(published);
    Ok(tools)
}

/// The name of the summaries' row in `startup_fills`.
const FILLED: &str = "tool_summaries";

/// True if some tool has no stored summary, or one stored without the
/// version it is listed under. (Every write that creates a tool stores its
/// summary in the same transaction, so comparing the counts is enough.)
/// Once the counts show nothing missing, that is recorded
/// ([`record_filled`]) and later starts read that one row instead of
/// counting (the counts read every summary: ~200 MB at 100,000 tools).
pub fn any_missing(conn: &mut DbConnection) -> AppResult<bool> {
    let filled: Option<String> = startup_fills::table
        .find(FILLED)
        .select(startup_fills::name)
        .first(conn)
        .optional()?;
    if filled.is_some() {
        return Ok(false);
    }
    let tools: i64 = tools::table.count().get_result(conn)?;
    let stored: i64 = tool_summaries::table.count().get_result(conn)?;
    let unlisted: i64 = tool_summaries::table
        .filter(tool_summaries::listed_version_id.is_null())
        .count()
        .get_result(conn)?;
    let missing = stored < tools || unlisted > 0;
    if !missing {
        record_filled(conn)?;
    }
    Ok(missing)
}

/// Record that every tool has its summary with the version it is listed
/// under (kept so by every write since), so [`any_missing`] need not count.
/// (Another replica recording it at the same time is no error.)
pub fn record_filled(conn: &mut DbConnection) -> AppResult<()> {
    let now = crate::db::now();
    crate::on_backend!(conn, |c| diesel::insert_into(startup_fills::table)
        .values((
            startup_fills::name.eq(FILLED),
            startup_fills::done_at.eq(now),
        ))
        .on_conflict_do_nothing()
        .execute(c))?;
    Ok(())
}

/// [`refresh`] up to `limit` tools with an id above `after` that have no
/// stored summary (tools published before the table existed) or one without
/// the version they are listed under (stored before that column existed),
/// and return their ids; call inside a write transaction, with `after` the
/// last id returned, until none are. (A write that stores a tool's summary
/// meanwhile is no conflict: [`refresh`] builds under the tool's lock
/// either way.)
pub fn fill_missing(conn: &mut DbConnection, after: i64, limit: i64) -> AppResult<Vec<i64>> {
    let missing: Vec<i64> = tools::table
        .left_join(tool_summaries::table)
        .filter(tool_summaries::listed_version_id.is_null())
        .filter(tools::id.gt(after))
        .order(tools::id.asc())
        .limit(limit)
        .select(tools::id)
        .load(conn)?;
    refresh_all(conn, missing.iter().copied())?;
    Ok(missing)
}

/// Take the tool row's lock (PostgreSQL holds it until commit) and read it.
fn lock(conn: &mut DbConnection, tool_id: i64) -> AppResult<ToolRow> {
    Ok(crate::on_backend!(conn, |c| diesel::update(
        tools::table.find(tool_id)
    )
    .set(tools::downloads.eq(tools::downloads))
    .returning(ToolRow::as_returning())
    .get_result(c))?)
}
