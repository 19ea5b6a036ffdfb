//! Agent Skills discovery, read by skill clients such as the npm `skills`
//! CLI (`skills add https://registry.example`):
//!
//! - `GET /.well-known/agent-skills/index.json`: the Agent Skills
//!   discovery index (format v0.2.0), one `archive` entry per skill — the
//!   version its tool is listed under, when that version is live. Yanked,
//!   blocked and quarantined versions are not listed; a flagged one
//!   carries its lint findings under `x-toolreg`.
//! - `GET /.well-known/agent-skills/{name}/SKILL.md`: that version's
//!   `SKILL.md`, as published.
//! - `GET /api/v1/tools/{name}/{version}/skill.tar.gz`: a skill version's
//!   discovery archive (`models::skill_archive`), the bytes the index's
//!   `digest` names; served like a bundle (immutable, `ETag`, counted as a
//!   download, refused while the version's contents are withheld).

use actix_web::http::header;
use actix_web::{get, web, HttpRequest, HttpResponse};
use toolreg_api::{SkillIndex, SkillIndexEntry, SkillIndexExtension, DISCOVERY_SCHEMA};
use toolreg_core::formats::skill::{is_skill_name, MAX_DESCRIPTION_CHARS};
use toolreg_core::Format;

use crate::app::AppState;
use crate::controllers::serve_bundle;
use crate::error::{internal, not_found, AppResult, ProblemBody};
use crate::models::skill_archive::{self, ListedSkill};
use crate::models::version::{HasState, ManifestSummary, VersionContent};
use crate::models::{ToolRow, VersionRow};
use crate::read_cache::DownloadTarget;

/// The path of a skill version's discovery archive.
pub fn archive_path(name: &str, version: &str) -> String {
    format!("/api/v1/tools/{name}/{version}/skill.tar.gz")
}

/// Is this skill listed in discovery? Its state decides
/// ([`crate::models::VersionState::discoverable`]: live only), and its name
/// must be one skill clients accept.
fn discoverable(skill: &ListedSkill) -> bool {
    skill.version.state().discoverable() && is_skill_name(&skill.name)
}

/// The Agent Skills discovery index (v0.2.0) of every skill's latest live
/// version.
#[utoipa::path(tag = "skills",
    responses((status = 200, body = SkillIndex)))]
#[get("/.well-known/agent-skills/index.json")]
pub async fn discovery_index(state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let listed = state
        .db
        .read(|conn| skill_archive::listed(conn, None))
        .await?;
    let mut skills = Vec::new();
    for skill in listed.into_iter().filter(discoverable) {
        let stored = match &skill.archive {
            Some(stored) => stored.clone(),
            None => skill_archive::ensure(&state.db, &state.blobs, &skill.version).await?,
        };
        let findings = serde_json::from_str(&skill.findings).map_err(|e| {
            internal(format!(
                "stored lint findings of {} {} are not JSON: {e}",
                skill.name, skill.version.version
            ))
        })?;
        let description: String = ManifestSummary::parse(&skill.summary)
            .description
            .unwrap_or_default()
            .chars()
            .take(MAX_DESCRIPTION_CHARS)
            .collect();
        skills.push(SkillIndexEntry {
            url: archive_path(&skill.name, &skill.version.version),
            digest: format!("sha256:{}", stored.sha256),
            kind: "archive".into(),
            description,
            toolreg: SkillIndexExtension {
                version: skill.version.version.clone(),
                findings,
            },
            name: skill.name,
        });
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(SkillIndex {
            schema: DISCOVERY_SCHEMA.into(),
            skills,
        }))
}

/// The `SKILL.md` of a skill's latest live version, as published.
#[utoipa::path(tag = "skills", params(("name" = String, Path)),
    responses((status = 200, description = "SKILL.md", content_type = "text/markdown"),
              (status = 404, body = ProblemBody)))]
#[get("/.well-known/agent-skills/{name}/SKILL.md")]
pub async fn skill_md(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let name = path.into_inner();
    let lookup = name.clone();
    let text = state
        .db
        .read(move |conn| {
            let listed = skill_archive::listed(conn, Some(&lookup))?;
            let Some(skill) = listed.into_iter().find(discoverable) else {
                return Err(not_found(format!(
                    "no skill `{lookup}` is listed: it is not a skill, or it has no live version"
                )));
            };
            Ok(VersionContent::of(conn, skill.version.id)?.definition)
        })
        .await?;
    Ok(HttpResponse::Ok()
        .content_type("text/markdown; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(text))
}

/// A skill version's discovery archive: a ustar `.tar.gz` with `SKILL.md`
/// at its root, whose SHA-256 the discovery index names.
#[utoipa::path(tag = "skills", params(("name" = String, Path), ("version" = String, Path)),
    responses((status = 200, description = "the archive", content_type = "application/gzip"),
              (status = 304, description = "not modified"),
              (status = 403, description = "quarantined or blocked", body = ProblemBody),
              (status = 404, description = "no such version, or not a skill", body = ProblemBody)))]
#[get("/api/v1/tools/{name}/{version}/skill.tar.gz")]
pub async fn archive(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (name, version) = path.into_inner();
    let v = state
        .db
        .read(move |conn| {
            let tool = ToolRow::require(conn, &name)?;
            let v = VersionRow::require(conn, tool.id, &tool.name, &version)?;
            if v.format != Format::Skill {
                return Err(not_found(format!(
                    "`{}` {} is a {} tool, not an Agent Skill: it has no skill archive; download its bundle",
                    tool.name, v.version, v.format
                )));
            }
            Ok(v)
        })
        .await?;
    // Withheld contents are refused before anything is built or read.
    v.state().contents(&v.version)?;
    let stored = skill_archive::ensure(&state.db, &state.blobs, &v).await?;
    let mut target = DownloadTarget::of(&v);
    target.sha256 = stored.sha256;
    target.size = stored.size;
    serve_bundle(&state, &req, &target).await
}
