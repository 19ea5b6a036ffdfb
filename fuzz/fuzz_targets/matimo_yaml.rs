//! libFuzzer target `matimo_yaml`: see `toolreg_fuzz::targets::matimo_yaml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::matimo_yaml(data));
