//! libFuzzer target `toolreg_toml`: see `toolreg_fuzz::targets::toolreg_toml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::toolreg_toml(data));
