//! Link settings of the `toolreg-server` executables.
//!
//! On Linux with GNU ld, the executable stores its relative relocations
//! packed (`-z pack-relative-relocs`, DT_RELR; glibc 2.36+). A
//! position-independent Rust executable of this size carries tens of
//! thousands of them: megabytes of `.rela.dyn` that the dynamic loader
//! reads at every start, and that then stay resident. Packed, they take a
//! few kilobytes; the executable stays position-independent (ASLR).
//!
//! A release build on x86-64 Linux, linked by LLD (Rust's default linker
//! there), also lays out its functions in the order of `link/symbol-order.txt`:
//! the functions that starting, answering the read routes and publishing
//! run, in that order, before all the others. The kernel maps code in
//! 64 KiB windows around each page it runs, so with those functions spread
//! over the whole executable most of its code ended up resident; gathered
//! at its start, they share their windows. `scripts/symbol-order` writes the
//! file; a function missing from it (renamed, new) only lands among the
//! others.
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/symbol-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    // A linker chosen in RUSTFLAGS may not know the option.
    let linker_chosen = var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && !linker_chosen
        && order.is_file()
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
