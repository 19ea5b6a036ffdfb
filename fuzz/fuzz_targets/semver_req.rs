//! libFuzzer target `semver_req`: see `toolreg_fuzz::targets::semver_req`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::semver_req(data));
