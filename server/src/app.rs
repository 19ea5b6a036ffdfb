//! The application: shared state ([`AppState`]), the route table
//! ([`configure`]), the OpenAPI document, and starting and stopping the server.

use std::net::TcpListener;
use std::time::Duration;

use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use toolreg_core::Policy;
use utoipa::OpenApi;
use utoipa_actix_web::service_config::ServiceConfig;
use utoipa_actix_web::AppExt;

use crate::blobs::BlobStore;
use crate::controllers;
use crate::db::Db;
use crate::downloads::{self, DownloadCounter};
use crate::error::{json_error_handler, path_error_handler, query_error_handler};
use crate::metrics::Metrics;

/// The default of `--max-versions-per-tool`.
pub const DEFAULT_MAX_VERSIONS_PER_TOOL: i64 = 5000;

/// How long a presigned download URL stays valid (`--redirect-downloads`).
pub const PRESIGNED_URL_LIFETIME: Duration = Duration::from_secs(300);

/// Everything a request handler can reach. Add new shared services (the
/// search index, ...) as fields here and set them in [`AppState::new`].
pub struct AppState {
    pub db: Db,
    pub blobs: BlobStore,
    /// Which publisher tier may publish which execution kind.
    pub policy: Policy,
    pub metrics: Metrics,
    pub downloads: DownloadCounter,
    /// The OpenAPI document, rendered once.
    pub openapi_json: String,
    /// The search index and its change-log tailer (started by `serve`).
    pub search: crate::search::SearchService,
    /// Publish and token-creation limits (none unless `serve` sets them).
    pub rate_limits: crate::rate_limit::RateLimits,
    /// When set (S3 storage only), downloads answer a redirect to a presigned
    /// URL valid this long instead of streaming the bundle.
    pub redirect_downloads: Option<Duration>,
    /// The most versions one tool may have (`--max-versions-per-tool`).
    pub max_versions_per_tool: i64,
    /// The transparency log's signing key and latest checkpoint (`serve`
    /// sets the configured key; [`AppState::new`] starts with a random one).
    pub log: crate::transparency::LogService,
    /// Encoded answers of the hot read routes and small bundles.
    pub cache: crate::read_cache::ReadCache,
    /// The stored tool summaries the read cache misses, looked up in
    /// batches on PostgreSQL.
    pub summaries: std::sync::Arc<crate::db::lookup_batch::LookupBatcher<String>>,
    /// Trusted publishing's ID-token verifier (off unless `serve` is given
    /// trusted issuers).
    pub oidc: std::sync::Arc<toolreg_trustpub::IdTokenVerifier>,
}

impl AppState {
    pub fn new(db: Db, blobs: BlobStore, policy: Policy) -> AppState {
        let openapi_json = openapi()
            .to_pretty_json()
            .unwrap_or_else(|_| "{}".to_string());
        let summaries = crate::db::lookup_batch::LookupBatcher::new(
            &db,
            crate::models::tool_summary::stored,
            crate::db::lookup_batch::MAX_IN_FLIGHT,
        );
        AppState {
            db,
            blobs,
            policy,
            metrics: Metrics::default(),
            downloads: DownloadCounter::default(),
            openapi_json,
            search: crate::search::SearchService::default(),
            rate_limits: crate::rate_limit::RateLimits::default(),
            redirect_downloads: None,
            max_versions_per_tool: DEFAULT_MAX_VERSIONS_PER_TOOL,
            log: crate::transparency::LogService::ephemeral(),
            cache: crate::read_cache::ReadCache::default(),
            summaries,
            oidc: std::sync::Arc::new(toolreg_trustpub::IdTokenVerifier::off()),
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "toolreg", description = "The toolreg registry API: publish, fetch, resolve and manage AI-agent tool bundles."),
    components(schemas(crate::error::ProblemBody)),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

/// Declares the `bearer` security scheme the authenticated routes name.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("trg_ token")
                    .description(Some("An API token: `Authorization: Bearer trg_...`"))
                    .build(),
            ),
        );
    }
}

/// Register every route. Routes are matched in this order, so fixed path
/// segments (`/owners`) come before `{version}`. The two hottest reads come
/// first: the router tries each route's pattern in turn (a regular
/// expression for a pattern with `{...}` segments), and no other route's
/// pattern matches theirs (`/api/v1/tools/{name}` is one segment;
/// `/api/v1/tools/{name}/{version}/download` ends in `download`, which no
/// other route's does). Add new route modules here.
///
/// One list serves twice: [`configure`] registers it on each worker's app,
/// and [`openapi`] passes it through utoipa to collect the paths' documents.
macro_rules! api_routes {
    ($cfg:expr) => {
        $cfg.service(controllers::tools::metadata::show_tool)
            .service(controllers::tools::download::download)
            .service(controllers::health::healthz)
            .service(controllers::metrics::metrics)
            .service(controllers::health::openapi_json)
            .service(controllers::me::me)
            .service(controllers::me::my_invitations)
            .service(controllers::me::accept_invitation)
            .service(controllers::me::decline_invitation)
            .service(controllers::tokens::create)
            .service(controllers::tokens::list)
            .service(controllers::tokens::revoke)
            .service(controllers::tools::publish::publish)
            .service(controllers::tools::owners::list)
            .service(controllers::tools::owners::pending_invitations)
            .service(controllers::tools::owners::add)
            .service(controllers::tools::owners::remove)
            .service(controllers::trusted_publishers::list)
            .service(controllers::trusted_publishers::add)
            .service(controllers::trusted_publishers::remove)
            .service(controllers::oidc::exchange)
            .service(controllers::tools::diff::diff)
            .service(controllers::tools::metadata::list_versions)
            .service(controllers::tools::metadata::show_version)
            .service(controllers::skills::archive)
            .service(controllers::skills::discovery_index)
            .service(controllers::skills::skill_md)
            .service(controllers::tools::definition::definition)
            .service(controllers::tools::attestation::attestation)
            .service(controllers::tools::yank::yank)
            .service(controllers::tools::yank::unyank)
            .service(controllers::tools::deprecation::deprecate)
            .service(controllers::tools::deprecation::undeprecate)
            .service(controllers::reports::create)
            .service(controllers::tools::quarantine::quarantine_version)
            .service(controllers::tools::quarantine::lift_quarantine)
            .service(controllers::reports::list)
            .service(controllers::resolve::resolve)
            .service(controllers::blobs::blob)
            .service(controllers::publishers::set_tier)
            .service(controllers::audit::list)
            .service(controllers::search::search)
            .service(controllers::log::checkpoint)
            .service(controllers::log::key)
            .service(controllers::log::proof)
            .service(controllers::log::consistency)
    };
}

/// Register every API route (`api_routes!`) on a worker's app. The
/// workers register them on plain actix: going through utoipa there would
/// build every path's OpenAPI document again in each worker as it starts
/// (tens of milliseconds of start-up), only to drop it.
pub fn configure(cfg: &mut web::ServiceConfig) {
    api_routes!(cfg);
}

/// The OpenAPI 3 document covering every route registered by [`configure`].
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, api) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .configure(|cfg: &mut ServiceConfig| {
            api_routes!(cfg);
        })
        .split_for_parts();
    api
}

/// Build the HTTP server on `listener` (not yet running). actix stops it
/// gracefully on SIGTERM/SIGINT: it stops accepting, lets requests in flight
/// (publishes included) finish for up to 30 s, then exits.
pub fn server(
    state: web::Data<AppState>,
    listener: TcpListener,
    workers: Option<usize>,
) -> std::io::Result<actix_web::dev::Server> {
    let blocking_threads = state.db.backend().blocking_threads_per_worker();
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(
                web::JsonConfig::default()
                    .limit(64 * 1024)
                    .error_handler(json_error_handler),
            )
            .app_data(web::QueryConfig::default().error_handler(query_error_handler))
            .app_data(web::PathConfig::default().error_handler(path_error_handler))
            .configure(configure)
            .configure(crate::web::configure)
            .default_service(web::to(controllers::health::fallback))
            .wrap(from_fn(crate::metrics::track))
    })
    .shutdown_timeout(30)
    // Database work and local-file reads run on each worker's blocking
    // pool, sized for the backend. Threads beyond the database pool's
    // connections only queue for one, and each keeps its own stack and
    // allocator heap: the default cap (512 / workers) lets dozens of idle
    // threads pile up under load.
    .worker_max_blocking_threads(blocking_threads)
    // A streamed download writes headers and body separately; without
    // TCP_NODELAY, Nagle's algorithm holds the body back until the client's
    // delayed ACK (~40 ms per download on keep-alive connections).
    .tcp_nodelay(true)
    .listen(listener)?;
    if let Some(n) = workers {
        server = server.workers(n.max(1));
    }
    Ok(server.run())
}

/// Flush buffered download counts until the process ends: about once a
/// second, or, while more than [`downloads::BUSY_VERSIONS`] versions wait
/// to be counted, every [`downloads::BUSY_INTERVAL`] (see there why).
pub fn spawn_download_flusher(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(Duration::from_secs(1));
        let mut last = std::time::Instant::now();
        loop {
            tick.tick().await;
            if !downloads::flush_due(state.downloads.pending_versions(), last.elapsed()) {
                continue;
            }
            last = std::time::Instant::now();
            let mut counted = Vec::new();
            let flushed = state.downloads.flush(&state.db, &mut counted).await;
            for (tool, version) in &counted {
                state.cache.invalidate_counts(tool, version);
            }
            if let Err(e) = flushed {
                tracing::warn!(error = %e, "could not write download counts");
            }
        }
    });
}

/// How often the definition lint's compiled patterns are swept: one
/// unused for a whole period is released (after 10 to 20 s without a
/// publish or a rescan), so a registry between bursts of publishes doesn't
/// hold the automata only publishing uses. Compiling them again costs the
/// next publish a few milliseconds (`bench/README.md`, Lint).
const LINT_SWEEP_PERIOD: Duration = Duration::from_secs(10);

/// Sweep the lint's compiled patterns every [`LINT_SWEEP_PERIOD`]
/// ([`toolreg_core::lint::release_unused`]).
pub fn spawn_lint_sweeper() {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(LINT_SWEEP_PERIOD);
        loop {
            tick.tick().await;
            let released = toolreg_core::lint::release_unused();
            if released > 0 {
                tracing::debug!(released, "released the lint's unused automata");
            }
        }
    });
}

/// Store, in the background and in batches, the summaries of tools that have
/// none: tools published before summaries were stored
/// (`models::tool_summary`). Until then their summaries are built on each read.
pub fn spawn_summary_filler(state: web::Data<AppState>) {
    use crate::models::tool_summary;
    actix_web::rt::spawn(async move {
        // A write: when nothing is missing, that is recorded.
        match state.db.write(tool_summary::any_missing).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(error = %e, "could not count the stored tool summaries");
                return;
            }
        }
        let (mut stored, mut after) = (0, 0);
        loop {
            // Small batches: each holds SQLite's write lock while it runs.
            match state
                .db
                .write(move |conn| tool_summary::fill_missing(conn, after, 200))
                .await
            {
                Ok(ids) => match ids.last() {
                    Some(&last) => {
                        stored += ids.len();
                        after = last;
                    }
                    None => break,
                },
                Err(e) => {
                    tracing::warn!(error = %e, "could not store tool summaries");
                    break;
                }
            }
        }
        if let Err(e) = state.db.write(tool_summary::any_missing).await {
            tracing::warn!(error = %e, "could not count the stored tool summaries");
        }
        tracing::info!(
            tools = stored,
            "stored the summaries of tools published before summaries were stored"
        );
    });
}

/// Follow the change log about every 100 ms and drop the cached answers of
/// tools that changed on other replicas (publish, yank, unyank, block,
/// unblock). Changes made by this process were dropped when they committed;
/// seeing them again is harmless. Commits of change rows are serialized
/// (`Db::lock_change_log`), so reading past the last sequence number seen
/// never skips one.
pub fn spawn_change_follower(state: web::Data<AppState>) {
    use crate::models::change::LoggedChange;
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(Duration::from_millis(100));
        // The cache starts empty: only what comes after now matters.
        let mut last = loop {
            tick.tick().await;
            match state.db.read(LoggedChange::latest_seq).await {
                Ok(seq) => {
                    state.cache.set_followed(seq);
                    break seq;
                }
                Err(e) => tracing::warn!(error = %e, "could not read the change log"),
            }
        };
        loop {
            tick.tick().await;
            let after = last;
            match state
                .db
                .read(move |conn| LoggedChange::since(conn, after, 1000))
                .await
            {
                Ok(changes) => {
                    state.cache.apply_changes(
                        changes
                            .iter()
                            .map(|c| (c.tool_name.as_str(), c.version.as_str())),
                    );
                    if let Some(c) = changes.last() {
                        last = c.seq;
                    }
                    state.cache.set_followed(last);
                }
                Err(e) => tracing::warn!(error = %e, "could not read the change log"),
            }
        }
    });
}
