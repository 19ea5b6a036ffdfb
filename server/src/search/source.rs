//! [`StoreSource`]: the [`SearchSource`] over the registry's database — the
//! `changes` table as the change log, and per tool the version it is listed
//! under (stored with its summary, `crate::models::tool_summary::listed`) as
//! its [`SearchDoc`], with the number of lint findings that version carries
//! (for the `findings=none|flagged` filter and the hits' `findings`). A tool
//! whose listed version's state is not listed (every version yanked or
//! quarantined) is not indexed.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::dsl::max;
use diesel::prelude::*;
use toolreg_core::{ExecutionKind, Format, Tier};

use crate::db::{Db, DbConnection, MAX_IN_LIST};
use crate::models::stored::Stored;
use crate::models::tool::normalize;
use crate::models::tool_summary;
use crate::models::version::{HasState, ManifestSummary, VersionState};
use crate::models::ToolRow;
use crate::schema::{changes, tool_summaries, tools, version_contents, versions};
use toolreg_search::{IndexChange, SearchDoc, SearchError, SearchSource};

/// Longest README excerpt indexed as usage notes, in bytes.
const MAX_NOTES: usize = 8 * 1024;

/// The database as a search source.
#[derive(Clone)]
pub struct StoreSource {
    db: Db,
}

impl StoreSource {
    pub fn new(db: Db) -> Self {
        StoreSource { db }
    }

    fn conn(&self) -> Result<crate::db::PooledConn, SearchError> {
        self.db.conn().map_err(source_error)
    }
}

fn source_error(e: impl std::fmt::Display) -> SearchError {
    SearchError::Source(e.to_string())
}

/// The chosen version's indexed fields.
#[derive(Debug, Queryable)]
struct Chosen {
    version: String,
    #[diesel(deserialize_as = Stored<Format>)]
    format: Format,
    #[diesel(deserialize_as = Stored<ExecutionKind>)]
    execution: ExecutionKind,
    /// `versions.summary`: the manifest's listing fields.
    summary: String,
    readme: Option<String>,
    /// The tier the version was published with.
    #[diesel(deserialize_as = Stored<Tier>)]
    publisher_tier: Tier,
    yanked: bool,
    blocked: bool,
    blocked_reason: Option<String>,
    quarantined: bool,
    quarantine_reason: Option<String>,
    /// `version_contents.findings`: the lint findings as a JSON array.
    findings: String,
    /// `versions.provenance`: set when trusted publishing published it.
    provenance: Option<String>,
    definition_sha256: Option<String>,
    /// `versions.deprecation`: the owners' deprecation as JSON.
    deprecation: Option<String>,
}

/// How many flags the stored JSON array of findings holds (notes are not
/// flags), read leniently (an odd row counts as clean rather than stopping
/// the index from being built).
fn findings_count(json: &str) -> u32 {
    #[derive(serde::Deserialize)]
    struct Severity {
        #[serde(default)]
        severity: Option<String>,
    }
    serde_json::from_str::<Vec<Severity>>(json)
        .map(|v| {
            let flags = v
                .iter()
                .filter(|f| f.severity.as_deref() != Some("note"))
                .count();
            u32::try_from(flags).unwrap_or(u32::MAX)
        })
        .unwrap_or(0)
}

crate::models::version::state::has_state!(rows: Chosen);

fn clip_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The document of `tool` from the version it is listed under, or `None`
/// when that version's state keeps the tool out of search. The summary is
/// read leniently so that one odd row can't stop the index from being built;
/// the enum columns were read typed by the query ([`Stored`]).
fn build_doc(tool: &ToolRow, v: Chosen) -> Option<SearchDoc> {
    let state = v.state();
    if !state.listed() {
        return None;
    }
    let deprecated = v.deprecation();
    let manifest = ManifestSummary::parse(&v.summary);
    Some(SearchDoc {
        name: tool.name.clone(),
        version: v.version,
        definition_sha256: v.definition_sha256,
        title: manifest.title,
        description: manifest.description.unwrap_or_default(),
        notes: v
            .readme
            .as_deref()
            .map(|r| clip_bytes(r, MAX_NOTES).to_string())
            .unwrap_or_default(),
        keywords: manifest.keywords,
        license: manifest.license,
        format: v.format,
        execution: v.execution,
        tier: v.publisher_tier,
        downloads: u64::try_from(tool.downloads).unwrap_or(0),
        updated_at: DateTime::<Utc>::from_naive_utc_and_offset(tool.updated_at, Utc),
        blocked: matches!(state, VersionState::Blocked { .. }),
        deprecated,
        blocked_reason: v.blocked_reason,
        findings: findings_count(&v.findings),
        provenance: v.provenance.is_some(),
    })
}

/// The search document of the tool named `name` (canonical or not), read on `conn`.
pub fn search_doc_on(
    conn: &mut DbConnection,
    name: &str,
) -> Result<Option<SearchDoc>, SearchError> {
    let Some(tool) = ToolRow::by_name(conn, name).map_err(source_error)? else {
        return Ok(None);
    };
    let Some(id) = tool_summary::listed(conn, tool.id).map_err(source_error)? else {
        return Ok(None);
    };
    let chosen: Chosen = versions::table
        .inner_join(version_contents::table)
        .filter(versions::id.eq(id))
        .select(CHOSEN_COLUMNS)
        .first(conn)
        .map_err(source_error)?;
    Ok(build_doc(&tool, chosen))
}

#[allow(clippy::type_complexity)]
const CHOSEN_COLUMNS: (
    versions::version,
    versions::format,
    versions::execution,
    versions::summary,
    version_contents::readme,
    versions::publisher_tier,
    versions::yanked,
    versions::blocked,
    versions::blocked_reason,
    versions::quarantined,
    versions::quarantine_reason,
    version_contents::findings,
    versions::provenance,
    versions::definition_sha256,
    versions::deprecation,
) = (
    versions::version,
    versions::format,
    versions::execution,
    versions::summary,
    version_contents::readme,
    versions::publisher_tier,
    versions::yanked,
    versions::blocked,
    versions::blocked_reason,
    versions::quarantined,
    versions::quarantine_reason,
    version_contents::findings,
    versions::provenance,
    versions::definition_sha256,
    versions::deprecation,
);

/// Every searchable tool's document in a few bulk queries (for `reindex`).
pub fn all_docs_on(conn: &mut DbConnection) -> Result<Vec<SearchDoc>, SearchError> {
    let tools: Vec<ToolRow> = tools::table
        .order(tools::name.asc())
        .select(ToolRow::as_select())
        .load(conn)
        .map_err(source_error)?;
    docs_of(conn, &tools)
}

/// The documents of `tools` (those searchable), in their order, read in
/// bulk queries of [`MAX_IN_LIST`] rows.
fn docs_of(conn: &mut DbConnection, tools: &[ToolRow]) -> Result<Vec<SearchDoc>, SearchError> {
    let mut stored: HashMap<i64, Option<i64>> = HashMap::with_capacity(tools.len());
    for chunk in tools.chunks(MAX_IN_LIST) {
        let ids: Vec<i64> = chunk.iter().map(|t| t.id).collect();
        stored.extend(
            tool_summaries::table
                .filter(tool_summaries::tool_id.eq_any(ids))
                .select((tool_summaries::tool_id, tool_summaries::listed_version_id))
                .load::<(i64, Option<i64>)>(conn)
                .map_err(source_error)?,
        );
    }
    let mut chosen_ids = Vec::with_capacity(tools.len());
    for tool in tools {
        match stored.get(&tool.id).copied().flatten() {
            Some(id) => chosen_ids.push(id),
            // Not stored yet (before the start-up fill): chosen the same way.
            None => chosen_ids.extend(tool_summary::listed(conn, tool.id).map_err(source_error)?),
        }
    }
    let mut chosen: HashMap<i64, Chosen> = HashMap::with_capacity(chosen_ids.len());
    for chunk in chosen_ids.chunks(MAX_IN_LIST) {
        let rows: Vec<(i64, Chosen)> = versions::table
            .inner_join(version_contents::table)
            .filter(versions::id.eq_any(chunk))
            .select((versions::tool_id, CHOSEN_COLUMNS))
            .load(conn)
            .map_err(source_error)?;
        chosen.extend(rows);
    }
    Ok(tools
        .iter()
        .filter_map(|tool| chosen.remove(&tool.id).and_then(|v| build_doc(tool, v)))
        .collect())
}

impl SearchSource for StoreSource {
    fn changes_after(&self, seq: i64, limit: usize) -> Result<Vec<IndexChange>, SearchError> {
        let mut conn = self.conn()?;
        let rows: Vec<(i64, String)> = changes::table
            .filter(changes::seq.gt(seq))
            .order(changes::seq.asc())
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select((changes::seq, changes::tool_name))
            .load(&mut **conn)
            .map_err(source_error)?;
        Ok(rows
            .into_iter()
            .map(|(seq, tool)| IndexChange { seq, tool })
            .collect())
    }

    fn changes_at(&self, seqs: &[i64]) -> Result<Vec<IndexChange>, SearchError> {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn()?;
        let mut out = Vec::new();
        for chunk in seqs.chunks(MAX_IN_LIST) {
            let rows: Vec<(i64, String)> = changes::table
                .filter(changes::seq.eq_any(chunk))
                .order(changes::seq.asc())
                .select((changes::seq, changes::tool_name))
                .load(&mut **conn)
                .map_err(source_error)?;
            out.extend(
                rows.into_iter()
                    .map(|(seq, tool)| IndexChange { seq, tool }),
            );
        }
        Ok(out)
    }

    fn latest_seq(&self) -> Result<i64, SearchError> {
        let mut conn = self.conn()?;
        let seq: Option<i64> = changes::table
            .select(max(changes::seq))
            .first(&mut **conn)
            .map_err(source_error)?;
        Ok(seq.unwrap_or(0))
    }

    fn search_doc(&self, tool_name: &str) -> Result<Option<SearchDoc>, SearchError> {
        let mut conn = self.conn()?;
        search_doc_on(&mut conn, tool_name)
    }

    fn search_docs(&self, names: &[String]) -> Result<Vec<SearchDoc>, SearchError> {
        let mut conn = self.conn()?;
        // By the normalized name, which is indexed (unique): `tools.name`
        // is not, and a filter on it reads every tool's row, for each
        // batch of changes the tailer applies.
        let normalized: Vec<String> = names.iter().map(|n| normalize(n)).collect();
        let mut tools: Vec<ToolRow> = Vec::with_capacity(names.len());
        for chunk in normalized.chunks(MAX_IN_LIST) {
            tools.extend(
                tools::table
                    .filter(tools::normalized_name.eq_any(chunk))
                    .select(ToolRow::as_select())
                    .load(&mut **conn)
                    .map_err(source_error)?,
            );
        }
        docs_of(&mut conn, &tools)
    }

    fn all_docs(&self) -> Result<Vec<SearchDoc>, SearchError> {
        let mut conn = self.conn()?;
        all_docs_on(&mut conn)
    }

    fn all_downloads(&self) -> Result<Vec<(String, u64)>, SearchError> {
        let mut conn = self.conn()?;
        let rows: Vec<(String, i64)> = tools::table
            .filter(tools::downloads.gt(0))
            .select((tools::name, tools::downloads))
            .load(&mut **conn)
            .map_err(source_error)?;
        Ok(rows
            .into_iter()
            .map(|(name, d)| (name, u64::try_from(d).unwrap_or(0)))
            .collect())
    }

    fn all_tool_names(&self) -> Result<Vec<String>, SearchError> {
        let mut conn = self.conn()?;
        tools::table
            .order(tools::name.asc())
            .select(tools::name)
            .load(&mut **conn)
            .map_err(source_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_counted_leniently() {
        assert_eq!(findings_count("[]"), 0);
        assert_eq!(findings_count(r#"[{"rule":"P4"},{"rule":"P3"}]"#), 2);
        assert_eq!(findings_count("not json"), 0);
        assert_eq!(
            findings_count(r#"[{"rule":"P6","severity":"note"},{"rule":"P4","severity":"flag"}]"#),
            1,
            "notes are not flags"
        );
    }

    #[test]
    fn readme_notes_are_clipped_on_a_char_boundary() {
        let s = "é".repeat(10);
        assert_eq!(clip_bytes(&s, 5), "éé");
        assert_eq!(clip_bytes("abc", 5), "abc");
    }
}
