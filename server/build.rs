//! Link settings of the `toolreg-server` executables.
//!
//! On Linux with GNU ld, the executable stores its relative relocations
//! packed (`-z pack-relative-relocs`, DT_RELR; glibc 2.36+). A
//! position-independent Rust executable of this size carries tens of
//! thousands of them: megabytes of `.rela.dyn` that the dynamic loader
//! reads at every start, and that then stay resident. Packed, they take a
//! few kilobytes; the executable stays position-independent (ASLR).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
