//! Publishing a new tool or a new version of a tool (`POST /api/v1/tools`).
//!
//! Everything is checked before anything is stored: the token, the body size
//! (while streaming), the bundle rules, the definition and its lint (block
//! findings are refused), ownership and the publisher's tier (an untrusted
//! publisher can't publish flagged code). Then the blob is stored
//! content-addressed, and one database transaction makes the version visible
//! together with its definition fingerprint, its lint findings (the flags it
//! carries), change log and audit rows. An Agent Skill's discovery archive
//! (`models::skill_archive`) is stored beside its bundle and recorded in the
//! same transaction. A failure at any point leaves nothing visible.

use actix_web::http::header;
use actix_web::{post, web, HttpRequest, HttpResponse};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::json;
use toolreg_core::bundle::{self, Limits};
use toolreg_core::lint::{self, Finding};
use toolreg_core::{ExecutionKind, Policy, Tier};

use crate::app::AppState;
use crate::auth::{Auth, PublishAuth};
use crate::db::{is_unique_violation, now, DbConnection};
use crate::error::{bad_request, forbidden, internal, AppError, AppResult, ProblemBody};
use crate::models::change::ChangeLogKind;
use crate::models::skill_archive::{PreparedArchive, SkillArchive};
use crate::models::state_change::{self, AfterCommit, StateChange};
use crate::models::trusted_publisher::TrustedPublisher;
use crate::models::version::{
    precedence_key, version_key, ManifestSummary, NewContent, NewVersion, MAX_README,
};
use crate::models::{owner, tier, NewAudit, Scope, ToolRow, VersionRow};
use crate::rate_limit::Action;
use crate::views::{EncodableProblem, Provenance, PublishedVersion};

/// Publish a bundle (a gzip'd tar of the tool directory).
#[utoipa::path(tag = "tools", security(("bearer" = [])),
    request_body(content = Vec<u8>, content_type = "application/gzip", description = "the bundle"),
    responses(
        (status = 201, body = PublishedVersion),
        (status = 400, description = "bad bundle", body = ProblemBody),
        (status = 401, body = ProblemBody),
        (status = 403, description = "not an owner, missing scope, or tier too low", body = ProblemBody),
        (status = 409, description = "version already published, or the tool has the most versions allowed", body = ProblemBody),
        (status = 413, description = "bundle or README.md too large", body = ProblemBody),
        (status = 422, description = "invalid definition", body = ProblemBody),
        (status = 429, description = "rate limited (see `Retry-After`)", body = ProblemBody)))]
#[post("/api/v1/tools")]
pub async fn publish(
    state: web::Data<AppState>,
    req: HttpRequest,
    PublishAuth(auth): PublishAuth,
    body: web::Payload,
) -> AppResult<HttpResponse> {
    state
        .rate_limits
        .check(&state.db, &req, Action::Publish, auth.token.id)
        .await?;
    let result = publish_bundle(&state, &req, auth, body).await;
    match &result {
        Ok(_) => state.metrics.publish_succeeded(),
        Err(_) => state.metrics.publish_failed(),
    }
    result
}

async fn publish_bundle(
    state: &AppState,
    req: &HttpRequest,
    auth: Auth,
    body: web::Payload,
) -> AppResult<HttpResponse> {
    if !auth.token.has_scope(Scope::PublishNew) && !auth.token.has_scope(Scope::PublishUpdate) {
        return Err(forbidden(format!(
            "the token `{}` has no publish scope; create a token with `publish-new` or `publish-update`",
            auth.token.name
        )));
    }
    let limits = Limits::default();

    // 1. The body, with the compressed-size limit enforced while streaming.
    let bytes = read_limited(req, body, limits.max_compressed).await?;
    let sha256 = toolreg_core::digest::sha256_hex(&bytes);

    // 2. The bundle rules and the definition (CPU work, off the executor).
    let unpack_input = bytes.clone();
    let (mut loaded, files, readme, readme_html) = web::block(move || -> AppResult<_> {
        let files = bundle::unpack(&unpack_input, &limits)?;
        let loaded = toolreg_core::load(&files)?;
        // Block findings of the definition lint (hidden characters, live
        // credentials in any text file, a strong combination of warning
        // signs, too many findings) refuse the publish: 422 naming rule,
        // pointer and excerpt.
        loaded.refuse_blocks()?;
        let readme = files.get("README.md");
        if let Some(readme) = readme.filter(|r| r.len() > MAX_README) {
            return Err(AppError::TooLarge(format!(
                "README.md too large: it is {} bytes; the limit is 512 KiB ({MAX_README} bytes)",
                readme.len()
            )));
        }
        let readme = readme.map(|b| String::from_utf8_lossy(b).into_owned());
        // Rendered once, here, off the workers; the tool page serves this.
        let readme_html = readme
            .as_deref()
            .map(|r| crate::web::html::markdown(r).as_str().to_string());
        Ok((loaded, files, readme, readme_html))
    })
    .await??;
    // 2a. An Agent Skill is also served to skill clients as an archive in
    //     the layout they read (`models::skill_archive`): built here (CPU
    //     work, off the executor), stored beside the bundle.
    let (files, skill) = if loaded.tool.format == toolreg_core::Format::Skill {
        web::block(move || -> AppResult<_> {
            let prepared = PreparedArchive::of(&files)?;
            Ok((files, Some(prepared)))
        })
        .await??
    } else {
        (files, None)
    };
    // 2b. A definition naming other tools is linted again knowing the
    //     publisher's tools: naming a sibling is ordinary, naming a tool
    //     the publisher doesn't own is a flag.
    if lint::names_other_tools(&loaded.findings) {
        let user_id = auth.user.id;
        let siblings = state
            .db
            .read(move |conn| owner::tool_names_of(conn, user_id))
            .await?;
        let tool = loaded.tool.clone();
        loaded.findings = web::block(move || {
            lint::check_knowing_siblings(&tool, &files, siblings.iter().map(String::as_str))
        })
        .await?;
        loaded.refuse_blocks()?;
    }
    let tool = &loaded.tool;

    // 3. The policy must admit this execution kind with these findings for
    //    the publisher's tier (an untrusted publisher can't publish flagged code).
    let tier = auth.effective_tier();
    state
        .policy
        .admit(tool.execution.kind, tier, &loaded.findings)
        .map_err(|refusal| match &skill {
            // A skill's kind follows from its files: the refusal names them.
            Some(skill) => skill.name_code_files(refusal.into()),
            None => AppError::from(refusal),
        })?;

    // 4. Ownership, scope and immutability, checked before storing anything
    //    (a few indexed reads: run where small reads are cheapest).
    let name = tool.registry_name.clone();
    let version = tool.version.to_string();
    {
        let (name, version, auth) = (name.clone(), version.clone(), auth.clone());
        let max = state.max_versions_per_tool;
        state
            .db
            .lookup(move |conn| {
                check_publish_allowed(conn, &auth, &name, &version, max).map(|_| ())
            })
            .await?;
    }

    // 5. The blob, content-addressed. Until the transaction below commits it
    //    is invisible; if that fails it is an orphan for `gc`.
    state.blobs.put_bundle(&sha256, bytes.clone()).await?;
    let skill_archive = match skill {
        Some(skill) => Some(skill.store(&state.blobs).await?),
        None => None,
    };

    // 6. One transaction makes the version visible, with its change log, audit and transparency log rows.
    let record = NewRecord {
        name,
        version,
        version_key: version_key(&tool.version),
        version_order: precedence_key(&tool.version),
        sha256: sha256.clone(),
        size: i64::try_from(bytes.len()).map_err(|_| internal("bundle size overflow"))?,
        format: tool.format.to_string(),
        execution: tool.execution.kind.to_string(),
        manifest: serde_json::to_string(tool)
            .map_err(|e| internal(format!("cannot encode the manifest: {e}")))?,
        summary: ManifestSummary::of(tool).to_json(),
        definition_file: tool.definition_file.clone(),
        definition: tool.original_text(),
        readme,
        findings: serde_json::to_string(&loaded.findings)
            .map_err(|e| internal(format!("cannot encode the lint findings: {e}")))?,
        readme_html,
        definition_sha256: toolreg_core::fingerprint::of_tool(tool),
        tier,
        kind: tool.execution.kind,
        found: loaded.findings.clone(),
        skill_archive,
    };
    let Published {
        name: published_name,
        log_index,
        after,
    } = insert_version_retrying(state, auth.clone(), record).await?;
    after.apply(&state.cache);

    tracing::info!(tool = %published_name, version = %tool.version, %sha256, publisher = %auth.login(), "published");
    Ok(HttpResponse::Created().json(PublishedVersion {
        name: published_name,
        version: tool.version.to_string(),
        sha256,
        size: bytes.len() as i64,
        format: tool.format,
        execution: tool.execution.kind,
        tier,
        publisher: auth.user.login.clone(),
        warnings: loaded.warnings.iter().map(EncodableProblem::from).collect(),
        log_index,
    }))
}

/// Human form of a byte limit: `10 MiB (10485760 bytes)`.
pub fn describe_limit(bytes: u64) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB ({bytes} bytes)", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Read the request body, refusing it (413) as soon as it passes `limit`:
/// early from `Content-Length`, else while streaming.
async fn read_limited(req: &HttpRequest, mut body: web::Payload, limit: u64) -> AppResult<Bytes> {
    let too_large = || {
        AppError::TooLarge(format!(
            "bundle too large: the compressed bundle exceeds the limit of {}",
            describe_limit(limit)
        ))
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut buf = BytesMut::with_capacity(declared.unwrap_or(16 * 1024).min(limit) as usize);
    while let Some(chunk) = body.next().await {
        let chunk =
            chunk.map_err(|e| bad_request(format!("could not read the request body: {e}")))?;
        if (buf.len() + chunk.len()) as u64 > limit {
            return Err(too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    if buf.is_empty() {
        return Err(AppError::BadBundle(
            "bad bundle: the request body is empty; send the bundle (.tar.gz)".into(),
        ));
    }
    Ok(buf.freeze())
}

/// What the publish transaction writes.
struct NewRecord {
    name: String,
    version: String,
    version_key: String,
    version_order: String,
    sha256: String,
    size: i64,
    format: String,
    execution: String,
    manifest: String,
    summary: String,
    definition_file: String,
    definition: String,
    readme: Option<String>,
    findings: String,
    readme_html: Option<String>,
    /// The definition fingerprint of the canonical tool.
    definition_sha256: String,
    tier: Tier,
    kind: ExecutionKind,
    /// The lint findings, for the policy's re-check.
    found: Vec<Finding>,
    /// A skill's discovery archive, already stored: digest, size and file list.
    skill_archive: Option<(String, i64, String)>,
}

/// The existing tool, if any, after checking the publisher may publish this
/// version of it: owner (403), scope (403), version not yet taken (409).
fn check_publish_allowed(
    conn: &mut DbConnection,
    auth: &Auth,
    name: &str,
    version: &str,
    max_versions: i64,
) -> AppResult<Option<ToolRow>> {
    let Some(tool) = ToolRow::by_name(conn, name)? else {
        if auth.token.provenance.is_some() {
            return Err(forbidden(format!(
                "a token from trusted publishing publishes new versions of existing tools only; publish the first version of `{name}` with your own token"
            )));
        }
        auth.require_scope(Scope::PublishNew)?;
        return Ok(None);
    };
    check_trusted_publishing(conn, auth, &tool)?;
    if !owner::is_owner(conn, tool.id, auth.user.id)? {
        return Err(if tool.name == name {
            forbidden(format!(
                "you are not an owner of `{}`; ask an owner to add you",
                tool.name
            ))
        } else {
            forbidden(format!(
                "the name `{name}` is taken by the tool `{}` (names are unique ignoring case and `-`/`_`); choose another name",
                tool.name
            ))
        });
    }
    auth.require_scope(Scope::PublishUpdate)?;
    if let Some(existing) = VersionRow::find(conn, tool.id, version)? {
        let yanked = if existing.yanked {
            " (it is yanked, but yanked versions are never replaced)"
        } else {
            ""
        };
        return Err(AppError::VersionExists(format!(
            "`{}` version {} is already published{yanked}; versions are immutable, so publish a new version",
            tool.name, existing.version
        )));
    }
    check_version_room(conn, &tool, max_versions)?;
    Ok(Some(tool))
}

/// For a token from trusted publishing: 403 unless it was issued for
/// `tool` and a trusted publisher of `tool` still accepts its CI run.
fn check_trusted_publishing(conn: &mut DbConnection, auth: &Auth, tool: &ToolRow) -> AppResult<()> {
    let Some(provenance) = &auth.token.provenance else {
        return Ok(());
    };
    let provenance: Provenance = serde_json::from_str(provenance)
        .map_err(|e| internal(format!("a token's stored provenance does not parse: {e}")))?;
    if !auth.token.tools(conn)?.contains(&tool.id)
        || !TrustedPublisher::still_accepts(
            conn,
            tool.id,
            &provenance,
            auth.token.oidc_environment.as_deref(),
        )?
    {
        return Err(forbidden(format!(
            "this token from trusted publishing ({} {}) may not publish `{}`: no trusted publisher of `{}` accepts that repository and workflow now",
            provenance.repository, provenance.workflow, tool.name, tool.name
        )));
    }
    Ok(())
}

/// 409 `too-many-versions` when `tool` has `max_versions` versions already.
fn check_version_room(conn: &mut DbConnection, tool: &ToolRow, max_versions: i64) -> AppResult<()> {
    let count = VersionRow::count(conn, tool.id)?;
    if count >= max_versions {
        return Err(AppError::TooManyVersions(format!(
            "`{}` has {count} versions, the most one tool may have (the limit is {max_versions} versions per tool); publish under a new name",
            tool.name
        )));
    }
    Ok(())
}

/// Run the publish transaction; a unique violation means a concurrent publish
/// of the same name or version won, so run it again to answer 403/409 properly.
async fn insert_version_retrying(
    state: &AppState,
    auth: Auth,
    record: NewRecord,
) -> AppResult<Published> {
    let record = std::sync::Arc::new(record);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let (auth, shared, policy) = (auth.clone(), record.clone(), state.policy.clone());
        let max = state.max_versions_per_tool;
        let result = state
            .db
            .write_grouped(move |conn| insert_version(conn, &policy, &auth, &shared, max))
            .await;
        match result {
            Err(e) if is_unique_violation(&e) && attempt < 3 => continue,
            Err(e) if is_unique_violation(&e) => {
                return Err(AppError::VersionExists(format!(
                    "`{}` version {} was published concurrently; versions are immutable",
                    record.name, record.version
                )))
            }
            other => return other,
        }
    }
}

/// What the publish transaction committed.
struct Published {
    /// The tool's name as stored.
    name: String,
    /// The version's record's index in the transparency log.
    log_index: i64,
    after: AfterCommit,
}

fn insert_version(
    conn: &mut DbConnection,
    policy: &Policy,
    auth: &Auth,
    r: &NewRecord,
    max_versions: i64,
) -> AppResult<Published> {
    // The tier again, under the publisher's row lock: a tier change may have
    // committed since step 3, and it must not miss this version.
    tier::recheck_publish(
        conn,
        policy,
        auth.user.id,
        auth.token.agent,
        r.kind,
        &r.found,
    )?;
    let tool = match check_publish_allowed(conn, auth, &r.name, &r.version, max_versions)? {
        Some(tool) => {
            ToolRow::touch(conn, tool.id)?;
            // Counted again under the tool's row lock, which serializes
            // publishes of one tool, so concurrent ones cannot pass the limit.
            check_version_room(conn, &tool, max_versions)?;
            tool
        }
        None => {
            let tool = ToolRow::create(conn, &r.name)?;
            owner::add(conn, tool.id, auth.user.id)?;
            tool
        }
    };
    let version_id = VersionRow::insert(
        conn,
        &NewVersion {
            tool_id: tool.id,
            version: &r.version,
            version_key: &r.version_key,
            version_order: &r.version_order,
            sha256: &r.sha256,
            size: r.size,
            format: &r.format,
            execution: &r.execution,
            publisher_id: auth.user.id,
            token_id: Some(auth.token.id),
            publisher_tier: r.tier.as_str(),
            yanked: false,
            blocked: false,
            downloads: 0,
            published_at: now(),
            summary: &r.summary,
            // A token from trusted publishing stamps its CI run on the version.
            provenance: auth.token.provenance.as_deref(),
            definition_sha256: Some(&r.definition_sha256),
        },
        &NewContent {
            manifest: &r.manifest,
            definition_file: &r.definition_file,
            definition: &r.definition,
            readme: r.readme.as_deref(),
            findings: &r.findings,
            readme_html: r.readme_html.as_deref(),
        },
    )?;
    if let Some((sha256, size, files)) = &r.skill_archive {
        SkillArchive::insert(
            conn,
            &SkillArchive {
                version_id,
                sha256: sha256.clone(),
                size: *size,
                files: files.clone(),
            },
        )?;
    }
    let mut audit = NewAudit::new("publish");
    audit.actor = Some(&auth.user.login);
    audit.token_id = Some(auth.token.id);
    audit.tool = Some(&tool.name);
    audit.version = Some(&r.version);
    audit.detail = json!({"sha256": r.sha256, "size": r.size, "format": r.format,
                          "execution": r.execution, "tier": r.tier.as_str(), "agent": auth.token.agent});
    let after = state_change::record(
        conn,
        StateChange::new().audit(audit).version(
            tool.id,
            &tool.name,
            &r.version,
            ChangeLogKind::Publish,
        ),
    )?;
    // The transparency log record, in this same transaction, last in the
    // lock order.
    let log_index =
        crate::transparency::store::append(conn, version_id, &tool.name, &r.version, &r.sha256)?;
    Ok(Published {
        name: tool.name,
        log_index,
        after,
    })
}
