//! The `toolreg-server` binary: parse the command line and hand over to the library.

use clap::Parser;

/// mimalloc instead of glibc's malloc: glibc keeps a growing arena per
/// thread (HTTP workers, the blocking pool that runs database work, the
/// search writer) and held on to freed memory; with mimalloc, set up by
/// [`release_memory_promptly`], the server stays far smaller after a load.
/// The `heap-profile` feature keeps the C library's malloc instead, so that
/// heaptrack sees every allocation (`bench/README.md`, heap profile).
#[cfg(not(feature = "heap-profile"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc (v3) option numbers (`mi_option_e` in its `mimalloc.h`).
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Commit arena memory as it is used (not a whole arena up front, which
/// Linux then backs with resident huge pages) and give freed pages back at
/// once instead of after a delay, so the heap shrinks back after a load
/// (`bench/README.md` has the measurements). An operator's
/// `MIMALLOC_ARENA_EAGER_COMMIT` or `MIMALLOC_PURGE_DELAY` still wins.
fn release_memory_promptly() {
    for (var, option, value) in [
        (
            "MIMALLOC_ARENA_EAGER_COMMIT",
            MI_OPTION_ARENA_EAGER_COMMIT,
            0,
        ),
        ("MIMALLOC_PURGE_DELAY", MI_OPTION_PURGE_DELAY, 0),
    ] {
        if std::env::var_os(var).is_none() {
            // SAFETY: sets one process-wide option; no memory is touched.
            unsafe { libmimalloc_sys::mi_option_set(option, value) };
        }
    }
}

fn main() -> std::process::ExitCode {
    release_memory_promptly();
    let cli = toolreg_server::config::Cli::parse();
    toolreg_server::run(cli)
}
