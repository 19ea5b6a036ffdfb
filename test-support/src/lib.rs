//! The test harness shared by the server's integration tests and the
//! end-to-end tests (`toolreg-e2e`).
//!
//! - [`Backend`] names the two storage pairs every behaviour is tested on,
//!   and [`both_backends!`] turns one test body into a test per backend.
//! - [`Services`] makes a PostgreSQL database and an S3 bucket of a test's
//!   own ([`services`]).
//! - [`Registry`] and [`ServerProcess`] run the real `toolreg-server`
//!   binary: subcommands, users and tokens, `serve` on a free port
//!   ([`process`]); [`ClosedPort`] is an address where nothing listens.
//! - [`FailingInsert`] makes one kind of database write fail, to test
//!   that a change is one transaction ([`inject`]).
//! - [`issuer::Issuer`] is a local OpenID Connect issuer for the
//!   trusted-publishing tests.
//! - [`unavailable`] is the one rule for a missing service or corpus:
//!   skip with a `SKIPPED:` line locally, fail when `CI` or
//!   `TOOLREG_REQUIRE_SERVICES` is set.
//!
//! The in-process app (the server's `TestApp`) lives beside the server's
//! tests, on top of this crate, so this crate does not depend on the server.

mod rule;

#[cfg(feature = "services")]
pub mod inject;
#[cfg(feature = "services")]
pub mod issuer;
#[cfg(feature = "services")]
pub mod process;
#[cfg(feature = "services")]
pub mod services;

pub use rule::{corpus, lint_bench, services_required, skills, unavailable, workspace_root};

#[cfg(feature = "services")]
pub use inject::{FailingInsert, SqlDialect};
#[cfg(feature = "services")]
pub use process::{eventually, free_port, ClosedPort, Registry, ServerProcess};
#[cfg(feature = "services")]
pub use services::{database_admin_url, s3_endpoint, Services};

/// The database and blob storage a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite and local files in a temporary directory (no services needed).
    Sqlite,
    /// A fresh PostgreSQL database and a fresh bucket on the S3 server.
    Postgres,
}

impl Backend {
    /// Both backends, SQLite first.
    pub const ALL: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];
}

/// Generate, for each `NAME`, a module `NAME` with the tests `sqlite` and
/// `postgres` that start a harness on that backend and pass it to the
/// function `NAME` of the calling module. `START` is called with a
/// [`Backend`] and gives `Option<harness>`: `None` means the backend's
/// services are missing and the test was skipped under the [`unavailable`]
/// rule.
///
/// - `both_backends!(async START => NAME, ...)`: `START` and `NAME` are
///   async; the tests run on `actix_web::test`.
/// - `both_backends!(START => NAME, ...)`: plain `#[test]`s.
///
/// `START` is resolved inside the generated module, which imports
/// everything of the calling module (`use super::*`).
#[macro_export]
macro_rules! both_backends {
    (async $start:expr => $($name:ident),+ $(,)?) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[actix_web::test]
            async fn sqlite() {
                if let Some(harness) = ($start)($crate::Backend::Sqlite).await {
                    super::$name(harness).await;
                }
            }

            #[actix_web::test]
            async fn postgres() {
                if let Some(harness) = ($start)($crate::Backend::Postgres).await {
                    super::$name(harness).await;
                }
            }
        }
    )+};
    ($start:expr => $($name:ident),+ $(,)?) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn sqlite() {
                if let Some(harness) = ($start)($crate::Backend::Sqlite) {
                    super::$name(harness);
                }
            }

            #[test]
            fn postgres() {
                if let Some(harness) = ($start)($crate::Backend::Postgres) {
                    super::$name(harness);
                }
            }
        }
    )+};
}
