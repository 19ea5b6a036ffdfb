//! The operator subcommands: `serve`, `migrate`, `admin`, `verify`, `gc`,
//! `reindex` and `lint`.

use std::net::TcpListener;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use serde_json::json;
use toolreg_core::{Policy, Tier};

use crate::app::{self, AppState};
use crate::blobs::{self, BlobStore};
use crate::config::{LintOptions, ServeOptions, StoreOptions};
use crate::db::Db;
use crate::error::{internal, AppResult};
use crate::models::tier::{Actor, TierChange};
use crate::models::{NewAudit, Scope, Token, User, VersionRow};
use crate::read_cache::{CacheSizes, ReadCache};
use crate::search::{self, StoreSource};

/// Open the database and run pending migrations.
pub fn open_db(store: &StoreOptions) -> AppResult<Db> {
    let db = Db::connect_with(&store.database_url(), store.db_options())?;
    db.migrate()?;
    Ok(db)
}

/// `reindex [--index DIR]`: rebuild the search index from the database
/// alone (into `<data>/index` by default), print how many tools were indexed.
pub fn reindex(store: &StoreOptions, index: Option<&Path>) -> AppResult<ExitCode> {
    let db = open_db(store)?;
    let dir = index
        .map(Path::to_path_buf)
        .unwrap_or_else(|| search::index_dir(store));
    let n = search::reindex(&dir, Arc::new(StoreSource::new(db)))?;
    println!("reindexed {n} tools into {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `serve`: migrate, then serve until SIGTERM/SIGINT.
pub async fn serve(store: &StoreOptions, opts: &ServeOptions) -> AppResult<()> {
    let started = std::time::Instant::now();
    let db = open_db(store)?;
    let migrated = started.elapsed();
    let blobs = BlobStore::open(&store.storage_url())?;
    let mut state = AppState::new(db, blobs, opts.policy.clone());
    let cache_mib = opts
        .cache_mib
        .unwrap_or_else(|| crate::read_cache::default_mib(state.db.backend()));
    state.cache = ReadCache::new(CacheSizes::from_mib(cache_mib));
    state.rate_limits = crate::rate_limit::RateLimits {
        publish: opts.rate_limit_publish,
        tokens: opts.rate_limit_tokens,
        reports: opts.rate_limit_reports,
        trust_proxy: opts.trust_proxy,
    };
    state.max_versions_per_tool = opts.max_versions_per_tool;
    state.oidc = Arc::new(toolreg_trustpub::IdTokenVerifier::new(
        toolreg_trustpub::Options {
            issuers: opts.trusted_issuers.clone(),
            audience: opts.oidc_audience.clone(),
        },
    ));
    if !opts.trusted_issuers.is_empty() {
        tracing::info!(issuers = ?opts.trusted_issuers, audience = %opts.oidc_audience, "trusted publishing is on");
    }
    if opts.redirect_downloads {
        if !state.blobs.can_presign() {
            return Err(internal(format!(
                "--redirect-downloads needs S3 storage (TOOLREG_STORAGE=s3://...), but the storage is {}",
                store.storage_url()
            )));
        }
        state.redirect_downloads = Some(app::PRESIGNED_URL_LIFETIME);
    }
    let key_source = crate::transparency::KeySource {
        key: opts.log_key.clone(),
        key_file: opts.log_key_file.clone(),
        origin: opts.log_origin.clone(),
    };
    let signer = crate::transparency::load_signer(&key_source, &store.data_dir, opts.listen)?;
    tracing::info!(key = %signer.verifier_key(), "transparency log key");
    state.log = crate::transparency::LogService::new(signer);
    let set_up = started.elapsed();
    // Versions published before `versions.version_order` existed get it
    // before anything reads versions in that order.
    let mut ordered = 0;
    loop {
        let n = state
            .db
            .write(|conn| crate::models::version::fill_order(conn, 1000))
            .await?;
        if n == 0 {
            break;
        }
        ordered += n;
    }
    if ordered > 0 {
        tracing::info!(
            versions = ordered,
            "stored the SemVer order of versions published before it was stored"
        );
    }
    let policy = state.policy.clone();
    let synced = state
        .db
        .write(move |conn| crate::models::tier::sync_policy(conn, &policy))
        .await?;
    if let Some(previous) = &synced.previous {
        tracing::warn!(
            previous = %previous,
            running = %crate::models::tier::policy_text(&state.policy),
            "the tier policy differs from the one the versions were last checked against \
             (another replica's, or this server's last start); replicas with different \
             policies disagree on blocks"
        );
    }
    if let Some(applied) = &synced.applied {
        if !applied.blocked.is_empty() || !applied.unblocked.is_empty() {
            tracing::info!(
                blocked = applied.blocked.len(),
                unblocked = applied.unblocked.len(),
                "re-checked every version against the tier policy"
            );
        }
    }
    let backfilled = state.db.write(crate::transparency::store::backfill).await?;
    if backfilled > 0 {
        tracing::info!(
            records = backfilled,
            "appended log records for versions published before the log existed"
        );
    }
    let fingerprinted = fill_fingerprints(&state).await?;
    if fingerprinted > 0 {
        tracing::info!(
            versions = fingerprinted,
            "stored the definition fingerprints of versions published before they were stored"
        );
    }
    let filled = started.elapsed();
    let state = web::Data::new(state);
    let listener = TcpListener::bind(opts.listen)
        .map_err(|e| internal(format!("cannot listen on {}: {e}", opts.listen)))?;
    let addr = listener.local_addr().map_err(|e| internal(e.to_string()))?;
    // Where start-up time goes: connecting and migrating, setting up the
    // storage client, the caches and the log key, the start-up fills and
    // checks (database transactions). The search index opens afterwards.
    tracing::info!(
        %addr,
        database = %redact(&store.database_url()),
        storage = %store.storage_url(),
        start_ms = ms(started.elapsed()),
        migrate_ms = ms(migrated),
        setup_ms = ms(set_up - migrated),
        fill_ms = ms(filled - set_up),
        "toolreg-server listening"
    );
    // Searches wait for the index from here on, before the first request.
    state.search.begin_opening();
    let server =
        app::server(state.clone(), listener, opts.workers).map_err(|e| internal(e.to_string()))?;
    let search_failed = open_search(state.clone(), store, opts, server.handle(), started);
    app::spawn_download_flusher(state.clone());
    app::spawn_change_follower(state.clone());
    app::spawn_summary_filler(state.clone());
    app::spawn_lint_sweeper();
    let result = server.await;
    if let Err(e) = state.downloads.flush(&state.db, &mut Vec::new()).await {
        tracing::warn!(error = %e, "could not write the last download counts");
    }
    tracing::info!("toolreg-server stopped");
    if let Some(e) = search_failed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        return Err(e);
    }
    result.map_err(|e| internal(format!("server failed: {e}")))
}

/// Milliseconds, for the start-up log lines.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Open the search index (rebuilt from the database if it is missing or
/// unreadable) while the server already answers: the index's files are
/// most of what a restart reads, and on a cold page cache most of its time,
/// and no other route needs them. Queries wait for it meanwhile
/// (`SearchService::query`). An index that cannot be opened at all (its
/// directory not writable, or held by another process) stops the server,
/// as it did when the index was opened before listening; the error is
/// left in the returned slot for `serve` to return.
fn open_search(
    state: web::Data<AppState>,
    store: &StoreOptions,
    opts: &ServeOptions,
    server: actix_web::dev::ServerHandle,
    started: std::time::Instant,
) -> Arc<std::sync::Mutex<Option<crate::error::AppError>>> {
    let failed = Arc::new(std::sync::Mutex::new(None));
    let slot = failed.clone();
    let dir = search::index_dir(store);
    let memory = search::SearchMemory::from_flags(
        opts.search_cache_mib,
        opts.search_records_mib,
        opts.index_writer_mib,
        opts.stem_cache_kib,
    );
    actix_web::rt::spawn(async move {
        let opening = std::time::Instant::now();
        let source = Arc::new(StoreSource::new(state.db.clone()));
        let app = state.clone();
        let opened = web::block(move || app.search.start(&dir, source, memory)).await;
        let error = match opened {
            Ok(Ok(())) => {
                tracing::info!(
                    search_ms = ms(opening.elapsed()),
                    since_start_ms = ms(started.elapsed()),
                    "search index open"
                );
                return;
            }
            Ok(Err(e)) => crate::error::AppError::from(e),
            Err(e) => crate::error::AppError::from(e),
        };
        tracing::error!(error = %error, "cannot open the search index; stopping");
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        server.stop(false).await;
    });
    failed
}

/// Store the definition fingerprint of every version that has none, in
/// batches (each one short write transaction), before the search index and
/// the routes read them; returns how many were stored.
pub async fn fill_fingerprints(state: &AppState) -> AppResult<usize> {
    let (mut after, mut stored) = (0, 0);
    while let Some((last, filled)) = state
        .db
        .write(move |conn| crate::models::version::fill_fingerprints(conn, after, 200))
        .await?
    {
        after = last;
        stored += filled;
    }
    Ok(stored)
}

/// Hide a password in a database URL for logs.
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// `admin create-user`: the user and a first token with the default scopes,
/// plus `admin` for an administrator; returns the secret.
pub async fn create_user(
    store: &StoreOptions,
    login: &str,
    tier: Tier,
    admin: bool,
) -> AppResult<String> {
    let db = open_db(store)?;
    let login = login.to_string();
    web::block(move || {
        db.write_blocking(|conn| {
            let user = User::create(conn, &login, tier, admin)?;
            let scopes: &[Scope] = if admin { &Scope::ALL } else { &Scope::DEFAULT };
            let created = Token::create(conn, user.id, "admin-created", scopes, false, None)?;
            let mut audit = NewAudit::new("user_create");
            audit.tool = None;
            audit.detail = json!({"login": user.login, "tier": tier.as_str(), "admin": admin});
            audit.insert(conn)?;
            let mut audit = NewAudit::new("token_create");
            audit.actor = Some(&user.login);
            audit.token_id = Some(created.token.id);
            audit.detail =
                json!({"name": created.token.name, "scopes": created.token.scopes, "agent": false});
            audit.insert(conn)?;
            Ok(created.secret)
        })
    })
    .await?
}

/// `admin set-tier`: change a publisher's tier through the same model
/// function as `PUT /api/v1/publishers/{login}/tier` (blocks, unblocks and
/// audit entries included), with this process's `--policy`.
pub async fn set_tier(
    store: &StoreOptions,
    policy: &Policy,
    login: &str,
    tier: Tier,
) -> AppResult<TierChange> {
    let db = open_db(store)?;
    let (login, policy) = (login.to_string(), policy.clone());
    web::block(move || {
        db.write_blocking(|conn| {
            let actor = Actor {
                login: None,
                token_id: None,
                via: "admin-cli",
            };
            let (change, after) =
                crate::models::tier::set_tier(conn, &policy, &login, tier, actor)?;
            // This process serves nothing; servers follow the change log.
            after.not_served();
            Ok(change)
        })
    })
    .await?
}

/// `verify`: every version's blob, and every skill version's discovery
/// archive, exists and hashes to its digest. Prints each bad one on stdout
/// and answers exit code 1 if there are any.
pub async fn verify(store: &StoreOptions) -> AppResult<ExitCode> {
    let db = open_db(store)?;
    let blobs = BlobStore::open(&store.storage_url())?;
    let rows = db
        .read(|conn| {
            use crate::schema::{skill_archives, versions};
            let mut rows = VersionRow::all_digests(conn)?;
            let archives: Vec<(i64, String, String, i64)> = skill_archives::table
                .inner_join(versions::table)
                .select((
                    versions::tool_id,
                    versions::version,
                    skill_archives::sha256,
                    skill_archives::size,
                ))
                .load(conn)?;
            rows.extend(archives.into_iter().map(|(tool, version, sha, size)| {
                (tool, format!("{version} (skill archive)"), sha, size)
            }));
            let mut out = Vec::with_capacity(rows.len());
            let mut names = std::collections::HashMap::new();
            for (tool_id, version, sha256, size) in rows {
                let name = match names.get(&tool_id) {
                    Some(n) => Clone::clone(n),
                    None => {
                        let n = crate::schema::tools::table
                            .find(tool_id)
                            .select(crate::schema::tools::name)
                            .first::<String>(conn)?;
                        names.insert(tool_id, n.clone());
                        n
                    }
                };
                out.push((name, version, sha256, size));
            }
            Ok(out)
        })
        .await?;
    let mut bad = 0usize;
    for (name, version, sha256, size) in &rows {
        let problem = match blobs.read_bundle(sha256).await? {
            None => Some("blob missing".to_string()),
            Some(bytes) => {
                let actual = toolreg_core::digest::sha256_hex(&bytes);
                if &actual != sha256 {
                    Some(format!("blob hashes to {actual}"))
                } else if bytes.len() as i64 != *size {
                    Some(format!("blob is {} bytes, expected {size}", bytes.len()))
                } else {
                    None
                }
            }
        };
        if let Some(problem) = problem {
            bad += 1;
            println!("{name}@{version} sha256:{sha256}: {problem}");
        }
    }
    let (log_problems, log_size) = db.read(crate::transparency::verify_log).await?;
    for problem in &log_problems {
        println!("transparency log: {}", problem.0);
    }
    if log_problems.is_empty() {
        eprintln!("verified the transparency log: {log_size} records, every version logged, root recomputed");
    }
    bad += log_problems.len();
    if bad == 0 {
        eprintln!(
            "verified {} blobs (bundles and skill archives): every blob is present and matches its digest",
            rows.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{bad} of {} blobs failed verification", rows.len());
        Ok(ExitCode::FAILURE)
    }
}

use diesel::prelude::*;

/// `gc`: delete bundle blobs no version (nor skill archive) references that
/// are older than `min_age`.
pub async fn gc(store: &StoreOptions, min_age: Duration) -> AppResult<()> {
    let db = open_db(store)?;
    let blobs = BlobStore::open(&store.storage_url())?;
    let cutoff = chrono::Utc::now()
        - chrono::TimeDelta::from_std(min_age)
            .map_err(|e| internal(format!("--min-age is too large: {e}")))?;
    let (mut deleted, mut kept) = (0usize, 0usize);
    for meta in blobs.list_bundles().await? {
        let Some(digest) = blobs::digest_of(&meta.location).map(str::to_string) else {
            continue;
        };
        if meta.last_modified > cutoff {
            kept += 1;
            continue;
        }
        let referenced = db
            .read(move |conn| {
                Ok(VersionRow::digest_referenced(conn, &digest)?
                    || crate::models::skill_archive::SkillArchive::digest_referenced(
                        conn, &digest,
                    )?)
            })
            .await?;
        if referenced {
            kept += 1;
        } else {
            blobs.delete(&meta.location).await?;
            println!("deleted {}", meta.location);
            deleted += 1;
        }
    }
    eprintln!("gc: deleted {deleted} unreferenced blobs, kept {kept}");
    Ok(())
}

/// `lint [--apply] [--json]`: re-run the definition lint over every stored
/// version ([`crate::rescan`]); print each change against the stored
/// findings (one line each, or one JSON array) and a summary on stderr.
/// With `--apply`, store the changes, re-check the versions against
/// `policy` with their new findings and quarantine the versions that hit a
/// block rule. Exit code 0 unless the rescan itself fails.
pub async fn lint(
    store: &StoreOptions,
    policy: &Policy,
    opts: &LintOptions,
) -> AppResult<ExitCode> {
    use crate::rescan;
    let db = open_db(store)?;
    let blobs = BlobStore::open(&store.storage_url())?;
    let limits = toolreg_core::bundle::Limits::default();
    let (mut after, mut scanned) = (0i64, 0usize);
    let mut changed: Vec<rescan::Rescan> = Vec::new();
    // Sibling names by tool, read once per tool.
    let mut siblings: std::collections::HashMap<i64, Vec<String>> = Default::default();
    loop {
        let batch = db.read(move |conn| rescan::batch(conn, after, 200)).await?;
        let Some(last) = batch.last() else { break };
        after = last.id;
        for v in batch {
            scanned += 1;
            // The manifest and the other files are kept only in the bundle.
            let bundle = match blobs.read_bundle(&v.sha256).await {
                Ok(Some(bytes)) => toolreg_core::bundle::unpack(&bytes, &limits).ok(),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(error = %e, tool = %v.tool, version = %v.version, "could not read the bundle");
                    None
                }
            };
            let mut r = match rescan::rescan(&v, bundle.as_ref(), None) {
                Ok(r) => r,
                // One unreadable row does not stop the rescan of the others.
                Err(e) => {
                    eprintln!("{} {}: not rescanned: {e}", v.tool, v.version);
                    continue;
                }
            };
            // Naming other tools: lint again knowing the tool's siblings.
            if toolreg_core::lint::names_other_tools(&r.findings) {
                let tool_id = v.tool_id;
                let siblings = match siblings.get(&tool_id) {
                    Some(names) => names.clone(),
                    None => {
                        let names = db
                            .read(move |conn| crate::models::owner::sibling_names(conn, tool_id))
                            .await?;
                        siblings.insert(tool_id, names.clone());
                        names
                    }
                };
                match rescan::rescan(&v, bundle.as_ref(), Some(&siblings)) {
                    Ok(again) => r = again,
                    Err(e) => {
                        eprintln!("{} {}: not rescanned: {e}", v.tool, v.version);
                        continue;
                    }
                }
            }
            if !r.changed() {
                continue;
            }
            if opts.apply {
                let (v, applying, policy) = (v, r.clone(), policy.clone());
                let applied = db
                    .write(move |conn| rescan::apply(conn, &policy, &v, &applying))
                    .await?;
                r.quarantined = applied.quarantined;
                r.blocked = applied.blocked;
                r.unblocked = applied.unblocked;
            }
            if !opts.json {
                for line in r.lines() {
                    println!("{line}");
                }
            }
            changed.push(r);
        }
    }
    if opts.json {
        let text = serde_json::to_string_pretty(&changed)
            .map_err(|e| internal(format!("cannot encode the rescan: {e}")))?;
        println!("{text}");
    }
    let count = |f: fn(&rescan::Rescan) -> bool| changed.iter().filter(|r| f(r)).count();
    eprintln!(
        "lint: rescanned {scanned} versions: {} newly blocked, {} newly flagged, {} with findings no longer found",
        count(|r| !r.newly_blocked.is_empty()),
        count(|r| !r.newly_flagged.is_empty()),
        count(|r| !r.no_longer_found.is_empty()),
    );
    if opts.apply {
        eprintln!(
            "lint --apply: stored the new findings of {} versions, quarantined {}",
            changed.len(),
            count(|r| r.quarantined)
        );
    } else if !changed.is_empty() {
        eprintln!(
            "run `toolreg-server lint --apply` to store them and quarantine the blocked versions"
        );
    }
    Ok(ExitCode::SUCCESS)
}
