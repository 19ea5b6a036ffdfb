//! Versions: one immutable row per published version — digest, size,
//! format, execution kind, publisher, state, downloads and the manifest's
//! listing fields ([`ManifestSummary`]) — and, apart from it in
//! `version_contents`, the version's large texts ([`VersionContent`]: the
//! canonical manifest, the original definition, the README, the findings).
//!
//! The split keeps a `versions` row to a few hundred bytes, so the reads that
//! run on every request (a tool's summary, a download, a resolve) touch one
//! small row; only a version's own page and the definition export read the
//! texts.
//!
//! * [`state`]: what a version's state (live, yanked, blocked, quarantined)
//!   means for every surface that serves, lists or resolves it, and its
//!   deprecation (advice beside the state).
//! * [`order`]: the version's uniqueness key and its SemVer order key.
//! * [`summary`]: the listing fields stored with the row.
//! * [`fingerprints`]: filling in fingerprints of versions from before they were stored.
//! * [`encode`]: a version as the API answers it, with what its state withholds left out.

mod fingerprints;
mod order;
pub mod state;
mod summary;
mod view;

pub use fingerprints::fill_fingerprints;
pub use order::{fill_order, lookup_key, order_key, precedence_key, version_key, WITHOUT_ORDER};
pub use state::{HasState, VersionState};
pub use summary::ManifestSummary;
pub use view::{encode, MAX_README};

state::has_state!(rows: VersionRow, VersionSummary, VersionTarget);

use chrono::NaiveDateTime;
use diesel::prelude::*;

use toolreg_api::Provenance;
use toolreg_core::{ExecutionKind, Format, Tier};

use crate::db::DbConnection;
use crate::error::{not_found, AppResult};
use crate::models::stored::Stored;
use crate::schema::{log_entries, tools, users, version_contents, versions};

#[derive(Debug, Clone, Queryable, Selectable, Identifiable)]
#[diesel(table_name = versions)]
pub struct VersionRow {
    pub id: i64,
    pub tool_id: i64,
    pub version: String,
    pub version_key: String,
    pub sha256: String,
    pub size: i64,
    #[diesel(deserialize_as = Stored<Format>)]
    pub format: Format,
    #[diesel(deserialize_as = Stored<ExecutionKind>)]
    pub execution: ExecutionKind,
    pub publisher_id: i64,
    pub token_id: Option<i64>,
    /// The tier the version was published with.
    #[diesel(deserialize_as = Stored<Tier>)]
    pub publisher_tier: Tier,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub downloads: i64,
    pub published_at: NaiveDateTime,
    /// Withheld by an administrator until lifted (`crate::models::quarantine`).
    pub quarantined: bool,
    pub quarantine_reason: Option<String>,
    pub quarantined_at: Option<NaiveDateTime>,
    /// The definition fingerprint (`None` only for a version published
    /// before fingerprints were stored, until [`fill_fingerprints`] runs).
    pub definition_sha256: Option<String>,
    /// The owners' deprecation as JSON (`crate::models::deprecation`); read
    /// it through [`HasState::deprecation`].
    pub deprecation: Option<String>,
}

/// A version's large texts.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = version_contents)]
pub struct VersionContent {
    pub version_id: i64,
    /// The canonical `toolreg_core::Tool` as JSON.
    pub manifest: String,
    pub definition_file: String,
    pub definition: String,
    pub readme: Option<String>,
    /// The definition lint's findings as a JSON array (`[]` when clean).
    pub findings: String,
    /// The README rendered to sanitized HTML at publish (`None` before
    /// that was stored, or without a README).
    pub readme_html: Option<String>,
}

impl VersionContent {
    /// The texts of version `version_id` (every version has them).
    pub fn of(conn: &mut DbConnection, version_id: i64) -> AppResult<VersionContent> {
        Ok(crate::on_backend!(conn, |c| version_contents::table
            .find(version_id)
            .select(VersionContent::as_select())
            .first(c))?)
    }
}

/// The columns listed for a tool's versions (no manifest or definition text).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = versions)]
pub struct VersionSummary {
    pub id: i64,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    #[diesel(deserialize_as = Stored<Format>)]
    pub format: Format,
    #[diesel(deserialize_as = Stored<ExecutionKind>)]
    pub execution: ExecutionKind,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub downloads: i64,
    pub published_at: NaiveDateTime,
    pub publisher_id: i64,
    pub quarantined: bool,
    pub quarantine_reason: Option<String>,
    /// The owners' deprecation as JSON; read it through [`HasState::deprecation`].
    pub deprecation: Option<String>,
}

/// The columns a download needs (`crate::read_cache::DownloadTarget`):
/// what to serve and whether the version's state lets it be served.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = versions)]
pub struct VersionTarget {
    pub id: i64,
    pub tool_id: i64,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub quarantined: bool,
    pub quarantine_reason: Option<String>,
    pub deprecation: Option<String>,
}

impl VersionTarget {
    /// Version `version` (ignoring build metadata) of the tool whose
    /// normalized name matches `name`, in one statement: the tools' unique
    /// name index, then the versions' `(tool_id, version_key)` index. `None`
    /// for no such tool or version ([`VersionRow::require`] says which).
    pub fn find(
        conn: &mut DbConnection,
        name: &str,
        version: &str,
    ) -> AppResult<Option<VersionTarget>> {
        let Some(key) = lookup_key(version) else {
            return Ok(None);
        };
        let normalized = crate::models::tool::normalize(name);
        Ok(crate::on_backend!(conn, |c| versions::table
            .inner_join(tools::table)
            .filter(tools::normalized_name.eq(&normalized))
            .filter(versions::version_key.eq(&key))
            .select(VersionTarget::as_select())
            .first(c)
            .optional())?)
    }
}

/// A row to insert on publish.
#[derive(Debug, Insertable)]
#[diesel(table_name = versions)]
pub struct NewVersion<'a> {
    pub tool_id: i64,
    pub version: &'a str,
    pub version_key: &'a str,
    pub sha256: &'a str,
    pub size: i64,
    pub format: &'a str,
    pub execution: &'a str,
    pub publisher_id: i64,
    pub token_id: Option<i64>,
    pub publisher_tier: &'a str,
    pub yanked: bool,
    pub blocked: bool,
    pub downloads: i64,
    pub published_at: NaiveDateTime,
    /// [`ManifestSummary::to_json`] of the manifest.
    pub summary: &'a str,
    /// [`precedence_key`] of the version.
    pub version_order: &'a str,
    /// `toolreg_api::Provenance` JSON when published through trusted publishing.
    pub provenance: Option<&'a str>,
    /// `toolreg_core::fingerprint::of_tool` of the canonical tool.
    pub definition_sha256: Option<&'a str>,
}

/// A version's texts to insert on publish.
#[derive(Debug)]
pub struct NewContent<'a> {
    pub manifest: &'a str,
    pub definition_file: &'a str,
    pub definition: &'a str,
    pub readme: Option<&'a str>,
    /// The definition lint's findings as a JSON array.
    pub findings: &'a str,
    pub readme_html: Option<&'a str>,
}

impl VersionRow {
    /// The provenance of version `id` (the CI run that published it
    /// through trusted publishing), if any.
    pub fn provenance(conn: &mut DbConnection, id: i64) -> AppResult<Option<Provenance>> {
        let stored: Option<String> = versions::table
            .find(id)
            .select(versions::provenance)
            .first(conn)?;
        stored
            .map(|p| serde_json::from_str(&p))
            .transpose()
            .map_err(|e| {
                crate::error::internal(format!(
                    "stored provenance of version {id} does not parse: {e}"
                ))
            })
    }

    /// How many versions `tool_id` has (yanked and blocked ones too).
    pub fn count(conn: &mut DbConnection, tool_id: i64) -> AppResult<i64> {
        Ok(versions::table
            .filter(versions::tool_id.eq(tool_id))
            .count()
            .get_result(conn)?)
    }

    /// The version of `tool_id` equal to `version` (ignoring build metadata).
    pub fn find(
        conn: &mut DbConnection,
        tool_id: i64,
        version: &str,
    ) -> AppResult<Option<VersionRow>> {
        let Some(key) = lookup_key(version) else {
            return Ok(None);
        };
        Ok(crate::on_backend!(conn, |c| versions::table
            .filter(versions::tool_id.eq(tool_id))
            .filter(versions::version_key.eq(&key))
            .select(VersionRow::as_select())
            .first(c)
            .optional())?)
    }

    /// [`VersionRow::find`], or 404 naming the tool and version.
    pub fn require(
        conn: &mut DbConnection,
        tool_id: i64,
        tool_name: &str,
        version: &str,
    ) -> AppResult<VersionRow> {
        VersionRow::find(conn, tool_id, version)?
            .ok_or_else(|| not_found(format!("`{tool_name}` has no version `{version}`")))
    }

    /// Insert a version and its texts (call inside the publish
    /// transaction); returns the new version's id.
    pub fn insert(
        conn: &mut DbConnection,
        new: &NewVersion<'_>,
        content: &NewContent<'_>,
    ) -> AppResult<i64> {
        let id: i64 = diesel::insert_into(versions::table)
            .values(new)
            .returning(versions::id)
            .get_result(conn)?;
        diesel::insert_into(version_contents::table)
            .values((
                version_contents::version_id.eq(id),
                version_contents::manifest.eq(content.manifest),
                version_contents::definition_file.eq(content.definition_file),
                version_contents::definition.eq(content.definition),
                version_contents::readme.eq(content.readme),
                version_contents::findings.eq(content.findings),
                version_contents::readme_html.eq(content.readme_html),
            ))
            .execute(conn)?;
        Ok(id)
    }

    pub fn set_yanked(conn: &mut DbConnection, id: i64, yanked: bool) -> AppResult<()> {
        diesel::update(versions::table.find(id))
            .set(versions::yanked.eq(yanked))
            .execute(conn)?;
        Ok(())
    }

    /// Every version with a blob digest: `(tool name, version, sha256, size)` for `verify`.
    pub fn all_digests(conn: &mut DbConnection) -> AppResult<Vec<(i64, String, String, i64)>> {
        Ok(versions::table
            .select((
                versions::tool_id,
                versions::version,
                versions::sha256,
                versions::size,
            ))
            .order(versions::id.asc())
            .load(conn)?)
    }

    /// True if any version has this digest.
    pub fn digest_referenced(conn: &mut DbConnection, sha256: &str) -> AppResult<bool> {
        let n: i64 = versions::table
            .filter(versions::sha256.eq(sha256))
            .count()
            .get_result(conn)?;
        Ok(n > 0)
    }

    /// The newest version (by id) with this digest, for `GET /blobs/sha256/{hex}`.
    pub fn by_digest(conn: &mut DbConnection, sha256: &str) -> AppResult<Option<VersionRow>> {
        Ok(versions::table
            .filter(versions::sha256.eq(sha256))
            .order(versions::id.desc())
            .select(VersionRow::as_select())
            .first(conn)
            .optional()?)
    }
}

/// A version as the transparency log records it.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct VersionRecord {
    pub id: i64,
    pub tool: String,
    pub version: String,
    pub sha256: String,
}

impl VersionRecord {
    /// Every version's record, in publish (id) order.
    pub fn all(conn: &mut DbConnection) -> AppResult<Vec<VersionRecord>> {
        VersionRecord::load(conn, false)
    }

    /// The records of the versions that have no log entry (published
    /// before the log existed), in publish order: one query over the unique
    /// index on `log_entries.version_id`.
    pub fn unlogged(conn: &mut DbConnection) -> AppResult<Vec<VersionRecord>> {
        VersionRecord::load(conn, true)
    }

    fn load(conn: &mut DbConnection, unlogged_only: bool) -> AppResult<Vec<VersionRecord>> {
        let mut query = versions::table
            .inner_join(tools::table)
            .order(versions::id.asc())
            .select((
                versions::id,
                tools::name,
                versions::version,
                versions::sha256,
            ))
            .into_boxed();
        if unlogged_only {
            query = query.filter(diesel::dsl::not(diesel::dsl::exists(
                log_entries::table.filter(log_entries::version_id.eq(versions::id)),
            )));
        }
        Ok(query.load(conn)?)
    }
}

/// The newest `limit` versions of a tool from offset `offset`, by SemVer
/// precedence, each with its publisher's login and its manifest summary
/// (`versions.summary`): an index range scan, whatever the tool's number of
/// versions.
pub fn newest(
    conn: &mut DbConnection,
    tool_id: i64,
    offset: i64,
    limit: i64,
) -> AppResult<Vec<(VersionSummary, String, String)>> {
    Ok(crate::on_backend!(conn, |c| versions::table
        .inner_join(users::table)
        .filter(versions::tool_id.eq(tool_id))
        .order((versions::version_order.desc(), versions::id.desc()))
        .offset(offset)
        .limit(limit)
        .select((VersionSummary::as_select(), users::login, versions::summary))
        .load(c))?)
}

/// Every version of a tool with its publisher's login, sorted by SemVer, newest first.
pub fn list_for_tool(
    conn: &mut DbConnection,
    tool_id: i64,
) -> AppResult<Vec<(VersionSummary, String)>> {
    let mut rows: Vec<(VersionSummary, String)> = crate::on_backend!(conn, |c| versions::table
        .inner_join(users::table)
        .filter(versions::tool_id.eq(tool_id))
        .select((VersionSummary::as_select(), users::login))
        .load(c))?;
    rows.sort_by(|a, b| semver_desc(&a.0.version, &b.0.version));
    Ok(rows)
}

/// Order version strings newest first (unparsable ones last).
pub fn semver_desc(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(a), Ok(b)) => b.cmp(&a),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => b.cmp(a),
    }
}
