//! Versions: one immutable row per published version, with its digest,
//! canonical manifest, original definition and README.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::DbConnection;
use crate::error::{not_found, AppResult};
use crate::schema::{users, versions};

#[derive(Debug, Clone, Queryable, Selectable, Identifiable)]
#[diesel(table_name = versions)]
pub struct VersionRow {
    pub id: i64,
    pub tool_id: i64,
    pub version: String,
    pub version_key: String,
    pub sha256: String,
    pub size: i64,
    pub format: String,
    pub execution: String,
    pub manifest: String,
    pub definition_file: String,
    pub definition: String,
    pub readme: Option<String>,
    pub publisher_id: i64,
    pub token_id: Option<i64>,
    pub publisher_tier: String,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub downloads: i64,
    pub published_at: NaiveDateTime,
}

/// The columns listed for a tool's versions (no manifest or definition text).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = versions)]
pub struct VersionSummary {
    pub id: i64,
    pub version: String,
    pub sha256: String,
    pub size: i64,
    pub format: String,
    pub execution: String,
    pub yanked: bool,
    pub blocked: bool,
    pub blocked_reason: Option<String>,
    pub downloads: i64,
    pub published_at: NaiveDateTime,
    pub publisher_id: i64,
}

/// The summary fields of a stored manifest (the canonical `toolreg_core::Tool`
/// as JSON), read leniently: a row that doesn't parse gives empty fields
/// rather than an error, so one odd row can't break a listing or the index.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct ManifestSummary {
    pub call_name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
}

impl ManifestSummary {
    pub fn parse(manifest: &str) -> ManifestSummary {
        serde_json::from_str(manifest).unwrap_or_default()
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
    pub manifest: &'a str,
    pub definition_file: &'a str,
    pub definition: &'a str,
    pub readme: Option<&'a str>,
    pub publisher_id: i64,
    pub token_id: Option<i64>,
    pub publisher_tier: &'a str,
    pub yanked: bool,
    pub blocked: bool,
    pub downloads: i64,
    pub published_at: NaiveDateTime,
}

/// The uniqueness key of a version: without build metadata, so `1.0.0+a`
/// and `1.0.0+b` are the same version (as on crates.io).
pub fn version_key(v: &semver::Version) -> String {
    let mut v = v.clone();
    v.build = semver::BuildMetadata::EMPTY;
    v.to_string()
}

impl VersionRow {
    /// The version of `tool_id` equal to `version` (ignoring build metadata).
    pub fn find(
        conn: &mut DbConnection,
        tool_id: i64,
        version: &str,
    ) -> AppResult<Option<VersionRow>> {
        let key = match semver::Version::parse(version) {
            Ok(v) => version_key(&v),
            Err(_) => return Ok(None),
        };
        Ok(versions::table
            .filter(versions::tool_id.eq(tool_id))
            .filter(versions::version_key.eq(key))
            .select(VersionRow::as_select())
            .first(conn)
            .optional()?)
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

    pub fn insert(conn: &mut DbConnection, new: &NewVersion<'_>) -> AppResult<()> {
        diesel::insert_into(versions::table)
            .values(new)
            .execute(conn)?;
        Ok(())
    }

    pub fn set_yanked(conn: &mut DbConnection, id: i64, yanked: bool) -> AppResult<()> {
        diesel::update(versions::table.find(id))
            .set(versions::yanked.eq(yanked))
            .execute(conn)?;
        Ok(())
    }

    pub fn add_downloads(conn: &mut DbConnection, id: i64, n: i64) -> AppResult<()> {
        diesel::update(versions::table.find(id))
            .set(versions::downloads.eq(versions::downloads + n))
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

/// Every version of a tool with its publisher's login, sorted by SemVer, newest first.
pub fn list_for_tool(
    conn: &mut DbConnection,
    tool_id: i64,
) -> AppResult<Vec<(VersionSummary, String)>> {
    let mut rows: Vec<(VersionSummary, String)> = versions::table
        .inner_join(users::table)
        .filter(versions::tool_id.eq(tool_id))
        .select((VersionSummary::as_select(), users::login))
        .load(conn)?;
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
