//! Versions: one immutable row per published version — digest, size,
//! format, execution kind, publisher, state (yanked, blocked), downloads and
//! the manifest's listing fields ([`ManifestSummary`]) — and, apart from it
//! in `version_contents`, the version's large texts ([`VersionContent`]: the
//! canonical manifest, the original definition, the README).
//!
//! The split keeps a `versions` row to a few hundred bytes, so the reads that
//! run on every request (a tool's summary, a download, a resolve) touch one
//! small row; only a version's own page and the definition export read the
//! texts.

use chrono::NaiveDateTime;
use diesel::prelude::*;

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
}

impl VersionSummary {
    /// Neither yanked, blocked nor quarantined: a version that resolving may
    /// choose and that a tool is shown under.
    pub fn is_live(&self) -> bool {
        !self.yanked && !self.blocked && !self.quarantined
    }
}

/// The version a tool is shown under, from its versions sorted newest
/// first (as [`list_for_tool`] returns them): the highest that is neither
/// yanked, blocked nor quarantined, else the highest. `summary` picks each item's version.
pub fn latest<T>(newest_first: &[T], summary: impl Fn(&T) -> &VersionSummary) -> Option<&T> {
    newest_first
        .iter()
        .find(|v| summary(v).is_live())
        .or_else(|| newest_first.first())
}

/// The listing fields of a version's manifest, stored with the version
/// (`versions.summary`) so a tool's summary and its search document don't
/// read and parse the whole manifest. Read leniently: a row that doesn't
/// parse gives empty fields rather than an error, so one odd row can't break
/// a listing or the index.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
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
    /// The summary of a canonical tool, as publish stores it.
    pub fn of(tool: &toolreg_core::Tool) -> ManifestSummary {
        ManifestSummary {
            call_name: Some(tool.call_name.clone()),
            title: tool.title.clone(),
            description: Some(tool.description.clone()),
            keywords: tool.keywords.clone(),
            license: tool.license.clone(),
            homepage: tool.homepage.clone(),
            repository: tool.repository.clone(),
        }
    }

    /// Read a stored summary (or any JSON object with these fields, such as
    /// a whole manifest); what doesn't parse gives the empty summary.
    pub fn parse(json: &str) -> ManifestSummary {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// The JSON stored in `versions.summary`.
    pub fn to_json(&self) -> String {
        // A struct of strings and a list of strings always serializes.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
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

/// The uniqueness key of a version: without build metadata, so `1.0.0+a`
/// and `1.0.0+b` are the same version (as on crates.io).
pub fn version_key(v: &semver::Version) -> String {
    let mut v = v.clone();
    v.build = semver::BuildMetadata::EMPTY;
    v.to_string()
}

/// A string whose byte order is the SemVer precedence of `v` (build
/// metadata ignored, like [`version_key`]), stored as `versions.version_order`
/// so the newest versions of a tool come from an index in order.
///
/// Major, minor and patch are zero-padded to the 20 digits of a `u64`. A
/// release ends in `~`, which sorts after the `-` that starts a
/// pre-release, so `1.0.0` > `1.0.0-rc.1`. Each pre-release identifier is
/// `0` + its length (4 digits) + its digits when numeric, so numbers compare
/// by value and below words, or `1` + the word; they are joined by `!`,
/// which sorts below every character an identifier may hold, so a shorter
/// list of otherwise equal identifiers comes first, as SemVer orders them.
pub fn precedence_key(v: &semver::Version) -> String {
    let mut key = format!("{:020}.{:020}.{:020}", v.major, v.minor, v.patch);
    if v.pre.is_empty() {
        key.push('~');
        return key;
    }
    key.push('-');
    for (i, id) in v.pre.as_str().split('.').enumerate() {
        if i > 0 {
            key.push('!');
        }
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
            key.push_str(&format!("0{:04}{id}", id.len()));
        } else {
            key.push('1');
            key.push_str(id);
        }
    }
    key
}

/// The stored order key of a version string: [`precedence_key`], or for a
/// string that is not SemVer (publish refuses those) `!` and the string, which
/// sorts below every real version and is never empty (empty marks a row to
/// fill in).
pub fn order_key(version: &str) -> String {
    match semver::Version::parse(version) {
        Ok(v) => precedence_key(&v),
        Err(_) => format!("!{version}"),
    }
}

/// Fill in `version_order` for up to `limit` versions published before the
/// column existed, and say how many were filled (0 when none are left).
/// Call inside a write transaction until it returns 0.
pub fn fill_order(conn: &mut DbConnection, limit: i64) -> AppResult<usize> {
    let rows: Vec<(i64, String)> = versions::table
        .filter(versions::version_order.eq(""))
        .order(versions::id.asc())
        .limit(limit)
        .select((versions::id, versions::version))
        .load(conn)?;
    for (id, version) in &rows {
        diesel::update(versions::table.find(id))
            .set(versions::version_order.eq(order_key(version)))
            .execute(conn)?;
    }
    Ok(rows.len())
}

impl VersionRow {
    /// The provenance JSON of version `id` (trusted publishing), if any.
    pub fn provenance(conn: &mut DbConnection, id: i64) -> AppResult<Option<String>> {
        Ok(versions::table
            .find(id)
            .select(versions::provenance)
            .first::<Option<String>>(conn)?)
    }

    /// The quarantine's reason while the version is quarantined.
    pub fn quarantine(&self) -> Option<String> {
        self.quarantined
            .then(|| self.quarantine_reason.clone().unwrap_or_default())
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
        let key = match semver::Version::parse(version) {
            Ok(v) => version_key(&v),
            Err(_) => return Ok(None),
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

/// Fill in the definition fingerprint of up to `limit` versions with an id
/// above `after` that have none (published before fingerprints were
/// stored), computed from each version's stored canonical manifest exactly
/// as publish computes it; returns the last id looked at (`None` when there
/// were none left). Call inside a write transaction, with `after` the id
/// returned, until `None`. Only rows whose column is NULL are read, so a
/// second run finds nothing to do. A manifest that no longer reads is left
/// NULL and logged (the version is still served; it shows no fingerprint).
pub fn fill_fingerprints(
    conn: &mut DbConnection,
    after: i64,
    limit: i64,
) -> AppResult<Option<(i64, usize)>> {
    let rows: Vec<(i64, String, String)> = crate::on_backend!(conn, |c| versions::table
        .inner_join(version_contents::table)
        .filter(versions::definition_sha256.is_null())
        .filter(versions::id.gt(after))
        .order(versions::id.asc())
        .limit(limit)
        .select((
            versions::id,
            version_contents::manifest,
            version_contents::definition,
        ))
        .load(c))?;
    let Some(last) = rows.last().map(|r| r.0) else {
        return Ok(None);
    };
    let mut filled = 0;
    for (id, manifest, definition) in rows {
        let mut tool: toolreg_core::Tool = match serde_json::from_str(&manifest) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(version_id = id, error = %e,
                    "the stored manifest does not read: its definition fingerprint is left unset");
                continue;
            }
        };
        tool.original = definition.into_bytes();
        let fingerprint = toolreg_core::fingerprint::of_tool(&tool);
        diesel::update(
            versions::table
                .find(id)
                .filter(versions::definition_sha256.is_null()),
        )
        .set(versions::definition_sha256.eq(&fingerprint))
        .execute(conn)?;
        filled += 1;
    }
    Ok(Some((last, filled)))
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
/// precedence, each with its publisher's login and its manifest summary: an
/// index range scan, whatever the tool's number of versions.
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

/// The version a tool is shown under, as [`latest`] chooses it, with its
/// manifest summary, found by the order index: the newest live version, else
/// the newest of all.
pub fn latest_of_tool(
    conn: &mut DbConnection,
    tool_id: i64,
) -> AppResult<Option<(VersionSummary, String)>> {
    let live = crate::on_backend!(conn, |c| versions::table
        .filter(versions::tool_id.eq(tool_id))
        .filter(versions::yanked.eq(false))
        .filter(versions::blocked.eq(false))
        .filter(versions::quarantined.eq(false))
        .order((versions::version_order.desc(), versions::id.desc()))
        .select((VersionSummary::as_select(), versions::summary))
        .first(c)
        .optional())?;
    if live.is_some() {
        return Ok(live);
    }
    Ok(crate::on_backend!(conn, |c| versions::table
        .filter(versions::tool_id.eq(tool_id))
        .order((versions::version_order.desc(), versions::id.desc()))
        .select((VersionSummary::as_select(), versions::summary))
        .first(c)
        .optional())?)
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

#[cfg(test)]
mod tests {
    use super::{order_key, precedence_key};

    /// Every pair of `versions` orders the same by key as by SemVer.
    fn assert_same_order(versions: &[&str]) {
        for a in versions {
            for b in versions {
                let (va, vb) = (
                    semver::Version::parse(a).expect("semver"),
                    semver::Version::parse(b).expect("semver"),
                );
                let by_semver = va.cmp_precedence(&vb);
                let by_key = precedence_key(&va).cmp(&precedence_key(&vb));
                assert_eq!(by_key, by_semver, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn keys_sort_like_the_semver_spec_example() {
        // The precedence example of the SemVer 2.0.0 specification, in order.
        let spec = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        let keys: Vec<String> = spec.iter().map(|v| order_key(v)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_same_order(&spec);
    }

    #[test]
    fn keys_sort_like_semver_across_edge_cases() {
        assert_same_order(&[
            "0.0.0",
            "0.0.1",
            "0.1.0",
            "0.9.0",
            "0.10.0",
            "1.0.0-0",
            "1.0.0-1",
            "1.0.0-9",
            "1.0.0-10",
            "1.0.0-a",
            "1.0.0-a-b",
            "1.0.0-a.0",
            "1.0.0-a.b",
            "1.0.0-A",
            "1.0.0-Z.9",
            "1.0.0-z",
            "1.0.0-zz",
            "1.0.0-99999999999999999999",
            "1.0.0-100000000000000000000",
            "1.0.0+build.1",
            "1.0.1-rc.1",
            "2.0.0",
            "10.0.0",
            "18446744073709551615.0.0",
        ]);
    }

    #[test]
    fn build_metadata_is_ignored_and_bad_strings_sort_first() {
        assert_eq!(order_key("1.0.0+a"), order_key("1.0.0+b"));
        assert!(order_key("not-semver") < order_key("0.0.0-0"));
        assert!(!order_key("").is_empty());
    }
}
