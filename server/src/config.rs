//! Command line and environment configuration of `toolreg-server`:
//! every option is a flag with a `TOOLREG_*` environment equivalent.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use toolreg_core::{Policy, Tier};

use crate::rate_limit::RateLimit;

/// The toolreg registry server.
#[derive(Debug, Parser)]
#[command(
    name = "toolreg-server",
    version,
    about = "The toolreg registry server"
)]
pub struct Cli {
    #[command(flatten)]
    pub store: StoreOptions,
    #[command(flatten)]
    pub serve: ServeOptions,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Where the server keeps its data: shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct StoreOptions {
    /// Data directory: default home of the SQLite database, the blob store and the search index.
    #[arg(
        long = "data",
        env = "TOOLREG_DATA_DIR",
        default_value = "./data",
        global = true
    )]
    pub data_dir: PathBuf,
    /// Database: `sqlite://PATH` or `postgres://...` (default `sqlite://<data>/toolreg.db`).
    #[arg(long, env = "TOOLREG_DATABASE_URL", global = true)]
    pub database_url: Option<String>,
    /// Blob storage: `file://DIR` or `s3://bucket[/prefix]` (default `file://<data>/objects`).
    /// S3 reads the standard AWS_* variables (AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP, ...).
    #[arg(long, env = "TOOLREG_STORAGE", global = true)]
    pub storage: Option<String>,
    /// Most database connections this process keeps open (default 8 on
    /// SQLite, 16 on PostgreSQL). Opened as needed, never ahead of use.
    #[arg(long, env = "TOOLREG_DB_CONNECTIONS", value_parser = clap::value_parser!(u32).range(1..=1024), global = true)]
    pub db_connections: Option<u32>,
    /// SQLite's page cache per connection, in KiB (at most this times
    /// `--db-connections` in all). Ignored on PostgreSQL.
    #[arg(long, env = "TOOLREG_SQLITE_CACHE_KIB", default_value_t = crate::db::DEFAULT_SQLITE_CACHE_KIB, value_parser = clap::value_parser!(u32).range(0..=1024 * 1024), global = true)]
    pub sqlite_cache_kib: u32,
    /// When an SQLite commit returns: `full` after the write-ahead log is
    /// flushed to the disk (an acknowledged write survives a power loss),
    /// `normal` before (it survives a killed process only). Ignored on
    /// PostgreSQL.
    #[arg(long, env = "TOOLREG_SQLITE_SYNCHRONOUS", value_enum, default_value_t = crate::db::SqliteSync::Full, global = true)]
    pub sqlite_synchronous: crate::db::SqliteSync,
}

impl StoreOptions {
    /// The database URL, defaulting to SQLite inside the data directory.
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!("sqlite://{}", self.data_dir.join("toolreg.db").display()),
        }
    }

    /// The storage URL, defaulting to local files inside the data directory.
    pub fn storage_url(&self) -> String {
        match &self.storage {
            Some(url) => url.clone(),
            None => format!("file://{}", self.data_dir.join("objects").display()),
        }
    }

    /// The database pool's bounds.
    pub fn db_options(&self) -> crate::db::DbOptions {
        crate::db::DbOptions {
            connections: self.db_connections,
            sqlite_cache_kib: self.sqlite_cache_kib,
            sqlite_synchronous: self.sqlite_synchronous,
            generic_plans: false,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API (the default when no subcommand is given).
    Serve,
    /// Run pending database migrations and exit.
    Migrate,
    /// Manage users.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Check that every version's blob exists and hashes to its digest (exit 1 otherwise).
    Verify,
    /// Print a new transparency-log signing key (`PRIVATE+KEY+...`) on stdout,
    /// for `TOOLREG_LOG_KEY` / `--log-key-file` shared by replicas; its public
    /// form goes to stderr.
    LogKey {
        /// The log's origin, e.g. `registry.example.com/log` (part of the key).
        #[arg(long)]
        origin: String,
    },
    /// Delete blobs that no version references.
    Gc(GcOptions),
    /// Re-run the definition lint over every stored version and print what
    /// is newly blocked or flagged compared with the stored findings.
    Lint(LintOptions),
    /// Rebuild the search index from the database alone (stop the server using it first).
    Reindex {
        /// Index directory (default `<data>/index`).
        #[arg(long)]
        index: Option<PathBuf>,
    },
}

/// Options of `serve` (also accepted without the subcommand, since `serve` is the default).
#[derive(Debug, Clone, Args)]
pub struct ServeOptions {
    /// Address to listen on.
    #[arg(
        long,
        env = "TOOLREG_LISTEN",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    pub listen: SocketAddr,
    /// Tier overrides per execution kind, e.g. `function=trusted,command=verified`.
    #[arg(long, env = "TOOLREG_POLICY", default_value = "", value_parser = parse_policy, global = true)]
    pub policy: Policy,
    /// HTTP worker threads (default: one per CPU core).
    #[arg(long, env = "TOOLREG_WORKERS", global = true)]
    pub workers: Option<usize>,
    /// Publishes allowed per token and per client IP, e.g. `60/min`, `10/s`; `0` = no limit.
    /// Counted in the database, so replicas share the count.
    #[arg(long, env = "TOOLREG_RATE_LIMIT_PUBLISH", default_value = "600/min", value_parser = RateLimit::parse, global = true)]
    pub rate_limit_publish: RateLimit,
    /// Token creations allowed per token and per client IP, e.g. `60/min`; `0` = no limit.
    #[arg(long, env = "TOOLREG_RATE_LIMIT_TOKENS", default_value = "60/min", value_parser = RateLimit::parse, global = true)]
    pub rate_limit_tokens: RateLimit,
    /// Version reports allowed per token, per user and per client IP, e.g. `20/hour`; `0` = no limit.
    #[arg(long, env = "TOOLREG_RATE_LIMIT_REPORTS", default_value = "20/hour", value_parser = RateLimit::parse, global = true)]
    pub rate_limit_reports: RateLimit,
    /// Take the client IP for per-IP rate limits from the last `X-Forwarded-For` hop
    /// (set this only behind a load balancer that appends it, like deploy/nginx.conf).
    #[arg(long, env = "TOOLREG_TRUST_PROXY", global = true)]
    pub trust_proxy: bool,
    /// With S3 storage, answer bundle downloads with a redirect to a presigned
    /// URL valid for 5 minutes instead of streaming the bytes through the server.
    #[arg(long, env = "TOOLREG_REDIRECT_DOWNLOADS", global = true)]
    pub redirect_downloads: bool,
    /// The most versions one tool may have; a publish past it is refused
    /// (409 `too-many-versions`), so a tool's summary stays bounded.
    #[arg(long, env = "TOOLREG_MAX_VERSIONS_PER_TOOL", default_value_t = crate::app::DEFAULT_MAX_VERSIONS_PER_TOOL, global = true)]
    pub max_versions_per_tool: i64,
    /// An OpenID Connect issuer whose CI ID tokens may be exchanged for
    /// publish tokens (trusted publishing), e.g.
    /// `https://token.actions.githubusercontent.com` (GitHub Actions) or
    /// `https://gitlab.com`; repeat for several. `http://` only for a
    /// loopback host. None by default: trusted publishing is off.
    #[arg(long = "trusted-issuer", env = "TOOLREG_TRUSTED_ISSUERS", value_delimiter = ',', value_parser = toolreg_trustpub::parse_issuer, global = true)]
    pub trusted_issuers: Vec<String>,
    /// The audience (`aud`) ID tokens must be minted for.
    #[arg(long, env = "TOOLREG_OIDC_AUDIENCE", default_value = toolreg_trustpub::DEFAULT_AUDIENCE, global = true)]
    pub oidc_audience: String,
    /// Memory for cached API answers and small bundles, in MiB (`0` turns
    /// the cache off); the bundles take half, at most 16 MiB. Default: 32
    /// on SQLite, 96 on PostgreSQL. Other replicas' changes reach the
    /// cache through the change log; download counts and owner changes lag
    /// by at most 10 s.
    #[arg(long, env = "TOOLREG_CACHE_MIB", value_parser = clap::value_parser!(u64).range(0..=65536), global = true)]
    pub cache_mib: Option<u64>,
    /// Memory for remembered search answers, in MiB (`0` turns it off);
    /// emptied whenever the index changes.
    #[arg(long, env = "TOOLREG_SEARCH_CACHE_MIB", default_value_t = crate::search::DEFAULT_SEARCH_CACHE_MIB, value_parser = clap::value_parser!(u64).range(0..=4096), global = true)]
    pub search_cache_mib: u64,
    /// Memory for the search hit records (each tool's hit fields, ~350
    /// bytes a tool, kept decoded so a page needs no stored document), in
    /// MiB; segments past it answer from the index's stored documents,
    /// slower (`0`: all of them).
    #[arg(long, env = "TOOLREG_SEARCH_RECORDS_MIB", default_value_t = crate::search::DEFAULT_SEARCH_RECORDS_MIB, value_parser = clap::value_parser!(u64).range(0..=65536), global = true)]
    pub search_records_mib: u64,
    /// Memory the search index writer may use while indexing changes, in
    /// MiB (15 to 4000); it is released a few seconds after the last change.
    #[arg(long, env = "TOOLREG_INDEX_WRITER_MIB", default_value_t = crate::search::DEFAULT_INDEX_WRITER_MIB, value_parser = clap::value_parser!(u64).range(crate::search::MIN_INDEX_WRITER_MIB..=crate::search::MAX_INDEX_WRITER_MIB), global = true)]
    pub index_writer_mib: u64,
    /// Memory for the English stems the search indexer and queries have
    /// worked out, in KiB (`0` turns it off); emptied and refilled when full.
    #[arg(long, env = "TOOLREG_STEM_CACHE_KIB", default_value_t = crate::search::DEFAULT_STEM_CACHE_KIB, value_parser = clap::value_parser!(u64).range(0..=1024 * 1024), global = true)]
    pub stem_cache_kib: u64,
    /// Log lines waiting to be written to stderr, in KiB, before request
    /// threads wait for the writer (none is dropped).
    #[arg(long, env = "TOOLREG_LOG_BUFFER_KIB", default_value_t = crate::log_writer::DEFAULT_PENDING_KIB, value_parser = clap::value_parser!(u64).range(64..=1024 * 1024), global = true)]
    pub log_buffer_kib: u64,
    /// The transparency log's signing key (`PRIVATE+KEY+<origin>+...`), so
    /// replicas share one key. Default: `--log-key-file`.
    #[arg(long, env = "TOOLREG_LOG_KEY", hide_env_values = true, global = true)]
    pub log_key: Option<String>,
    /// File holding the log's signing key (default `<data>/log-key`, generated
    /// with mode 0600 on first start).
    #[arg(long, env = "TOOLREG_LOG_KEY_FILE", global = true)]
    pub log_key_file: Option<PathBuf>,
    /// The log's origin (the first line of checkpoints and the key's name).
    /// Default: the key's name; for a new key `<listen address>/log`.
    #[arg(long, env = "TOOLREG_LOG_ORIGIN", global = true)]
    pub log_origin: Option<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            policy: Policy::default(),
            workers: None,
            rate_limit_publish: RateLimit::OFF,
            rate_limit_tokens: RateLimit::OFF,
            rate_limit_reports: RateLimit::OFF,
            trust_proxy: false,
            redirect_downloads: false,
            max_versions_per_tool: crate::app::DEFAULT_MAX_VERSIONS_PER_TOOL,
            trusted_issuers: Vec::new(),
            oidc_audience: toolreg_trustpub::DEFAULT_AUDIENCE.to_string(),
            cache_mib: None,
            search_cache_mib: crate::search::DEFAULT_SEARCH_CACHE_MIB,
            search_records_mib: crate::search::DEFAULT_SEARCH_RECORDS_MIB,
            index_writer_mib: crate::search::DEFAULT_INDEX_WRITER_MIB,
            stem_cache_kib: crate::search::DEFAULT_STEM_CACHE_KIB,
            log_buffer_kib: crate::log_writer::DEFAULT_PENDING_KIB,
            log_key: None,
            log_key_file: None,
            log_origin: None,
        }
    }
}

fn parse_policy(spec: &str) -> Result<Policy, String> {
    Policy::default().with_overrides(spec)
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a user and print a new token for it, alone on stdout.
    CreateUser {
        login: String,
        /// The publisher tier: untrusted, verified or trusted.
        #[arg(long, default_value = "untrusted")]
        tier: Tier,
        /// Make the user an administrator; the printed token also gets the `admin` scope.
        #[arg(long)]
        admin: bool,
    },
    /// Change a publisher's tier.
    SetTier { login: String, tier: Tier },
}

/// Options of `lint`.
#[derive(Debug, Clone, Args)]
pub struct LintOptions {
    /// Store the new findings, and quarantine (never delete) the versions
    /// that hit a block rule; both recorded in the audit and change logs.
    #[arg(long)]
    pub apply: bool,
    /// Print one JSON array of the versions whose findings changed.
    #[arg(long)]
    pub json: bool,
}

/// Options of `gc`.
#[derive(Debug, Clone, Args)]
pub struct GcOptions {
    /// Only delete unreferenced blobs older than this many seconds (protects publishes in flight).
    #[arg(long, default_value_t = 3600)]
    pub min_age: u64,
}

impl GcOptions {
    pub fn min_age(&self) -> Duration {
        Duration::from_secs(self.min_age)
    }
}
