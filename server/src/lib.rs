//! toolreg-server: the registry's HTTP API, diesel store, object_store blobs
//! and search (the `toolreg-search` engine fed from the store), plus the
//! operator subcommands (`migrate`, `admin`, `verify`, `gc`, `reindex`,
//! `lint`).
//! `main.rs` only parses the command line and calls [`run`].

pub mod access_log;
pub mod app;
pub mod auth;
pub mod blobs;
pub mod config;
pub mod controllers;
pub mod db;
pub mod downloads;
pub mod encode;
pub mod error;
pub mod log_writer;
pub mod metrics;
pub mod models;
pub mod ops;
pub mod rate_limit;
pub mod read_cache;
pub mod rescan;
pub mod schema;
pub mod search;
pub mod transparency;
pub mod views;
pub mod web;

use std::process::ExitCode;

use config::{AdminCommand, Cli, Command};
use error::AppResult;

/// Run one command line; the process exit code is the result.
pub fn run(cli: Cli) -> ExitCode {
    let log_buffer = usize::try_from(cli.serve.log_buffer_kib.saturating_mul(1024))
        .unwrap_or(log_writer::MAX_PENDING_BYTES);
    let _flush_logs_on_exit = init_tracing(log_buffer);
    let command = cli.command.unwrap_or(Command::Serve);
    let result = actix_web::rt::System::new().block_on(async move {
        match command {
            Command::Serve => ops::serve(&cli.store, &cli.serve)
                .await
                .map(|_| ExitCode::SUCCESS),
            Command::Migrate => ops::open_db(&cli.store).map(|_| ExitCode::SUCCESS),
            Command::Admin(AdminCommand::CreateUser { login, tier, admin }) => {
                ops::create_user(&cli.store, &login, tier, admin)
                    .await
                    .map(|secret| {
                        println!("{secret}");
                        ExitCode::SUCCESS
                    })
            }
            Command::Admin(AdminCommand::SetTier { login, tier }) => {
                ops::set_tier(&cli.store, &cli.serve.policy, &login, tier)
                    .await
                    .map(|change| {
                        println!("{}: {} -> {}", change.login, change.from, change.to);
                        for v in &change.blocked {
                            println!("blocked {} {}", v.name, v.version);
                        }
                        for v in &change.unblocked {
                            println!("unblocked {} {}", v.name, v.version);
                        }
                        ExitCode::SUCCESS
                    })
            }
            Command::Verify => ops::verify(&cli.store).await,
            Command::LogKey { origin } => {
                transparency::generate_key(&origin).map(|(private, public)| {
                    println!("{private}");
                    eprintln!("public key: {public}");
                    ExitCode::SUCCESS
                })
            }
            Command::Gc(opts) => ops::gc(&cli.store, opts.min_age())
                .await
                .map(|_| ExitCode::SUCCESS),
            Command::Reindex { index } => ops::reindex(&cli.store, index.as_deref()),
            Command::Lint(opts) => ops::lint(&cli.store, &cli.serve.policy, &opts).await,
        }
    });
    finish(result)
}

fn finish(result: AppResult<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Structured logs on stderr; `RUST_LOG` filters (default `info`).
///
/// Lines are written in batches by a thread of their own
/// ([`log_writer::BatchedStderr`]): a request's log line costs its
/// formatting and a copy, not a write or a wake-up; none are dropped. The
/// returned guard writes what is left when it is dropped. If the writer
/// thread cannot start, lines go straight to stderr.
fn init_tracing(log_buffer: usize) -> Option<log_writer::FlushGuard> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only for a person at a terminal: escape codes in a log file
    // or a collector are noise, and writing them costs formatting time on
    // every request's line.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    match log_writer::BatchedStderr::start(log_buffer) {
        Ok((writer, guard)) => {
            if !ansi {
                access_log::write_directly_to(writer.clone());
            }
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(ansi)
                .with_writer(writer)
                .try_init();
            Some(guard)
        }
        Err(e) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(ansi)
                .with_writer(std::io::stderr)
                .try_init();
            tracing::warn!("log writer thread did not start ({e}); logging directly to stderr");
            None
        }
    }
}
