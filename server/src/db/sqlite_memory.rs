//! SQLite's memory allocator: mimalloc.
//!
//! The bundled SQLite allocates with the C library's `malloc` unless told
//! otherwise. Under glibc every thread that runs SQLite (two HTTP workers,
//! the blocking pool, the change-log tailers) gets an arena of its own, and
//! each arena keeps what SQLite freed, so resident memory stays well above
//! what SQLite actually uses. Routed
//! through mimalloc, which the server already uses for everything else and
//! tells to return freed pages at once (`main.rs`), SQLite's memory sits in
//! the same heap and goes back to the system like the rest.
//!
//! [`methods`] is passed to `sqlite3_config(SQLITE_CONFIG_MALLOC, …)` by
//! `configure_sqlite` before the first connection is opened; SQLite copies
//! the table.

use std::ffi::{c_int, c_void};

use libsqlite3_sys::sqlite3_mem_methods;

/// The allocator table SQLite is configured with.
pub fn methods() -> sqlite3_mem_methods {
    sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    }
}

/// A request size from SQLite; it never asks for a negative size, but a
/// negative `int` must not become a huge `usize`.
fn bytes(n: c_int) -> usize {
    usize::try_from(n).unwrap_or(0)
}

/// SQLite's `xSize`/`xRoundup` answer an `int`.
fn int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

// SAFETY (all functions below): SQLite calls them with the contract of its
// `sqlite3_mem_methods`: `xFree`, `xRealloc` and `xSize` only with pointers
// that `xMalloc`/`xRealloc` returned (never NULL for `xSize`), which are
// mimalloc allocations, aligned to at least 8 bytes as SQLite requires.

unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
    unsafe { libmimalloc_sys::mi_malloc(bytes(n)) }
}

unsafe extern "C" fn free(p: *mut c_void) {
    unsafe { libmimalloc_sys::mi_free(p) }
}

unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    unsafe { libmimalloc_sys::mi_realloc(p, bytes(n)) }
}

unsafe extern "C" fn size(p: *mut c_void) -> c_int {
    int(unsafe { libmimalloc_sys::mi_usable_size(p) })
}

unsafe extern "C" fn roundup(n: c_int) -> c_int {
    int(unsafe { libmimalloc_sys::mi_good_size(bytes(n)) })
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    libsqlite3_sys::SQLITE_OK
}

unsafe extern "C" fn shutdown(_: *mut c_void) {}
