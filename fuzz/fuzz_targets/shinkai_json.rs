//! libFuzzer target `shinkai_json`: see `toolreg_fuzz::targets::shinkai_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::shinkai_json(data));
