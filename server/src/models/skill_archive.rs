//! The archive an Agent Skill version is served as to skill clients, and
//! the skills the discovery index lists (`controllers::skills`).
//!
//! Skill clients (the npm `skills` CLI among them) download an archive
//! named by the discovery index, check its SHA-256 against the index's
//! `digest`, and read it as a plain ustar tar: `SKILL.md` must be at its
//! root, each path is the header's `prefix/name`, and link entries or GNU
//! long-name records are not understood. A bundle as a publisher uploads it
//! need not look like that (GNU headers, `./` prefixes, pax records), so
//! every skill version also gets a discovery archive ([`pack`]): the
//! bundle's files, sorted, as regular ustar entries with fixed metadata,
//! gzip'd without a timestamp. It is built once, at publish (or, for a
//! version published before archives were stored, the first time it is
//! asked for: [`ensure`]), stored as a blob under its own digest and
//! recorded in `skill_archives`, so the bytes behind a digest never change.

use bytes::Bytes;
use diesel::prelude::*;
use toolreg_core::bundle::contents::is_code_path;
use toolreg_core::bundle::{self, Limits};
use toolreg_core::{Format, ToolFiles};

use crate::blobs::BlobStore;
use crate::db::{Db, DbConnection};
use crate::error::{internal, AppError, AppResult};
use crate::schema::{skill_archives, tool_summaries, tools, version_contents, versions};

/// A skill version's stored discovery archive.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = skill_archives)]
pub struct SkillArchive {
    pub version_id: i64,
    /// Hex SHA-256 of the archive's bytes (its blob's name).
    pub sha256: String,
    pub size: i64,
    /// The files it holds, as a JSON array of `[path, size]` ([`files_json`]).
    pub files: String,
}

/// The file list a [`SkillArchive`] row stores: `[[path, size], ...]` in
/// path order.
pub fn files_json(files: &ToolFiles) -> String {
    let list: Vec<(&str, usize)> = files.iter().map(|(p, b)| (p, b.len())).collect();
    serde_json::to_string(&list).unwrap_or_else(|_| "[]".to_string())
}

impl SkillArchive {
    /// The stored file list: `(path, size)` in path order (empty if the
    /// stored text does not parse).
    pub fn file_list(&self) -> Vec<(String, u64)> {
        serde_json::from_str(&self.files).unwrap_or_default()
    }
}

/// Pack a skill's files as the discovery archive
/// ([`bundle::pack_ustar`]: ustar entries at the root in path order, with
/// fixed metadata, so the same files always give the same bytes). A path
/// that does not fit a ustar header is refused by name: clients would read
/// it truncated.
pub fn pack(files: &ToolFiles) -> AppResult<Vec<u8>> {
    bundle::pack_ustar(files).map_err(|e| match e {
        toolreg_core::Error::Bundle(message) => AppError::BadBundle(format!(
            "bad bundle: {message}: skill clients read ustar headers only"
        )),
        other => internal(format!("could not write the skill archive: {other}")),
    })
}

/// A skill being published: its discovery archive, built from the
/// bundle's files before anything is stored.
pub struct PreparedArchive {
    bytes: Vec<u8>,
    /// [`files_json`] of the files.
    files: String,
    /// The files that make the skill a `script` skill.
    code_files: Vec<String>,
}

impl PreparedArchive {
    /// Pack `files` ([`pack`]; a path clients would truncate is refused).
    pub fn of(files: &ToolFiles) -> AppResult<PreparedArchive> {
        Ok(PreparedArchive {
            bytes: pack(files)?,
            files: files_json(files),
            code_files: files
                .paths()
                .filter(|p| is_code_path(p))
                .map(str::to_string)
                .collect(),
        })
    }

    /// A policy refusal of this skill, naming the files that make it run
    /// code (a skill's kind follows from its files, not from a field).
    pub fn name_code_files(&self, err: AppError) -> AppError {
        const SHOWN: usize = 5;
        if self.code_files.is_empty() {
            return err;
        }
        let mut named: Vec<String> = self
            .code_files
            .iter()
            .take(SHOWN)
            .map(|f| format!("`{f}`"))
            .collect();
        if self.code_files.len() > SHOWN {
            named.push(format!("{} more", self.code_files.len() - SHOWN));
        }
        let note = format!(
            "; this skill is a `script` skill because it carries code: {}",
            named.join(", ")
        );
        match err {
            AppError::TierForbidden(denial, _) => AppError::TierForbidden(denial, Some(note)),
            AppError::Forbidden(message) => AppError::Forbidden(format!("{message}{note}")),
            other => other,
        }
    }

    /// Store the archive's blob under its digest (invisible until the
    /// publish transaction records it); the digest, size and file list the
    /// row takes.
    pub async fn store(self, blobs: &BlobStore) -> AppResult<(String, i64, String)> {
        let digest = toolreg_core::digest::sha256_hex(&self.bytes);
        let size =
            i64::try_from(self.bytes.len()).map_err(|_| internal("archive size overflow"))?;
        blobs.put_bundle(&digest, Bytes::from(self.bytes)).await?;
        Ok((digest, size, self.files))
    }
}

impl SkillArchive {
    /// The stored archive of version `version_id`, if it has one.
    pub fn of(conn: &mut DbConnection, version_id: i64) -> AppResult<Option<SkillArchive>> {
        Ok(skill_archives::table
            .find(version_id)
            .select(SkillArchive::as_select())
            .first(conn)
            .optional()?)
    }

    /// Record the archive (in the publish transaction). Recording the same
    /// version again keeps the first row: the archive of a version is
    /// deterministic, so a second writer built the same bytes.
    pub fn insert(conn: &mut DbConnection, archive: &SkillArchive) -> AppResult<()> {
        if SkillArchive::of(conn, archive.version_id)?.is_none() {
            diesel::insert_into(skill_archives::table)
                .values(archive)
                .execute(conn)?;
        }
        Ok(())
    }

    /// True if a stored archive has this digest (`gc` keeps its blob).
    pub fn digest_referenced(conn: &mut DbConnection, sha256: &str) -> AppResult<bool> {
        let n: i64 = skill_archives::table
            .filter(skill_archives::sha256.eq(sha256))
            .count()
            .get_result(conn)?;
        Ok(n > 0)
    }
}

/// A skill as the discovery index lists it: the version its tool is listed
/// under, with what the index says about it.
#[derive(Debug, Clone)]
pub struct ListedSkill {
    pub name: String,
    pub version: crate::models::VersionRow,
    /// The version's `ManifestSummary` JSON (its description).
    pub summary: String,
    /// The lint findings as stored (a JSON array).
    pub findings: String,
    /// Its stored archive (`None` until [`ensure`] stores it, for a version
    /// published before archives were stored).
    pub archive: Option<SkillArchive>,
}

/// Every skill tool with the version it is listed under, by name; `only`
/// narrows it to one tool name (as stored). The caller asks each version's
/// state whether it is listed in discovery.
pub fn listed(conn: &mut DbConnection, only: Option<&str>) -> AppResult<Vec<ListedSkill>> {
    let query = tools::table
        .inner_join(tool_summaries::table)
        .inner_join(
            versions::table.on(tool_summaries::listed_version_id.eq(versions::id.nullable())),
        )
        .inner_join(version_contents::table.on(version_contents::version_id.eq(versions::id)))
        .left_join(skill_archives::table.on(skill_archives::version_id.eq(versions::id)))
        .filter(versions::format.eq(Format::Skill.as_str()))
        .select((
            tools::name,
            crate::models::VersionRow::as_select(),
            versions::summary,
            version_contents::findings,
            skill_archives::sha256.nullable(),
            skill_archives::size.nullable(),
            skill_archives::files.nullable(),
        ))
        .order(tools::name.asc());
    type Row = (
        String,
        crate::models::VersionRow,
        String,
        String,
        Option<String>,
        Option<i64>,
        Option<String>,
    );
    let rows: Vec<Row> = match only {
        // Found through the normalized name's index, then held to the exact name.
        Some(name) => query
            .filter(tools::normalized_name.eq(crate::models::tool::normalize(name)))
            .filter(tools::name.eq(name))
            .load(conn)?,
        None => query.load(conn)?,
    };
    Ok(rows
        .into_iter()
        .map(
            |(name, version, summary, findings, sha256, size, files)| ListedSkill {
                archive: match (sha256, size, files) {
                    (Some(sha256), Some(size), Some(files)) => Some(SkillArchive {
                        version_id: version.id,
                        sha256,
                        size,
                        files,
                    }),
                    _ => None,
                },
                name,
                version,
                summary,
                findings,
            },
        )
        .collect())
}

/// The stored archive of skill version `version`, built from its bundle and
/// stored now if it was published before archives were: the blob first,
/// then its row (a second request building it at the same moment writes
/// the same bytes under the same name).
pub async fn ensure(
    db: &Db,
    blobs: &BlobStore,
    version: &crate::models::VersionRow,
) -> AppResult<SkillArchive> {
    let id = version.id;
    if let Some(found) = db.read(move |conn| SkillArchive::of(conn, id)).await? {
        return Ok(found);
    }
    let bundle = blobs.read_bundle(&version.sha256).await?.ok_or_else(|| {
        internal(format!(
            "the bundle sha256:{} of version {} is missing from storage",
            version.sha256, version.version
        ))
    })?;
    let (bytes, files) = actix_web::web::block(move || -> AppResult<(Vec<u8>, String)> {
        let files = bundle::unpack(&bundle, &Limits::default())?;
        Ok((pack(&files)?, files_json(&files)))
    })
    .await??;
    let archive = SkillArchive {
        version_id: id,
        sha256: toolreg_core::digest::sha256_hex(&bytes),
        size: i64::try_from(bytes.len()).map_err(|_| internal("archive size overflow"))?,
        files,
    };
    blobs
        .put_bundle(&archive.sha256, Bytes::from(bytes))
        .await?;
    let row = archive.clone();
    db.write(move |conn| SkillArchive::insert(conn, &row))
        .await?;
    Ok(archive)
}
