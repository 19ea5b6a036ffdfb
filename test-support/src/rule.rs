//! The one rule for something a test needs that is not on this machine (the
//! PostgreSQL or S3 server, the shared corpus): locally the test prints
//! `SKIPPED: <why>` and passes; when `CI` or `TOOLREG_REQUIRE_SERVICES` is
//! set it fails, so a CI run can't go green by testing nothing.

use std::path::{Path, PathBuf};

/// Whether missing services (and a missing corpus) fail instead of skip.
pub fn services_required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("TOOLREG_REQUIRE_SERVICES").is_some()
}

/// Apply the rule to something missing: print `SKIPPED: why` and give
/// `None`, or panic with `why` when [`services_required`].
#[track_caller]
pub fn unavailable<T>(why: impl std::fmt::Display) -> Option<T> {
    if services_required() {
        panic!("required by CI / TOOLREG_REQUIRE_SERVICES but unavailable: {why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support/ has a parent")
        .to_path_buf()
}

/// The shared corpus of real tool definitions (`../shared/corpus` from the
/// workspace root), or `None` under the [`unavailable`] rule.
#[track_caller]
pub fn corpus() -> Option<PathBuf> {
    let dir = workspace_root().join("../shared/corpus");
    if dir.join("SOURCES.md").is_file() {
        return Some(dir);
    }
    unavailable(format!("the corpus is not at {}", dir.display()))
}

/// The real Agent Skills (`skills/` beside the corpus, one folder per
/// skill), or `None` under the [`unavailable`] rule.
#[track_caller]
pub fn skills() -> Option<PathBuf> {
    let dir = workspace_root().join("../shared/skills");
    if dir.join("SOURCES.md").is_file() {
        return Some(dir);
    }
    unavailable(format!("the skills are not at {}", dir.display()))
}

/// The lint benchmark's data set of real poisoned and ordinary tool
/// definitions (`lint-bench/` beside the corpus), or `None` under the
/// [`unavailable`] rule.
#[track_caller]
pub fn lint_bench() -> Option<PathBuf> {
    let dir = workspace_root().join("../shared/lint-bench");
    if dir.join("README.md").is_file() && dir.join("poisoned").is_dir() {
        return Some(dir);
    }
    unavailable(format!("the lint-bench data is not at {}", dir.display()))
}
