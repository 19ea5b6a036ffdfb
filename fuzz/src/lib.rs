//! Shared bodies of toolreg's fuzz targets. The files are also included by
//! the normal test suite (`core/tests/fuzz_regressions.rs`,
//! `server/tests/search_fuzz_regressions.rs`), so fuzzing and CI replay run
//! the same code.

pub mod targets;

#[cfg(feature = "search")]
pub mod search;
