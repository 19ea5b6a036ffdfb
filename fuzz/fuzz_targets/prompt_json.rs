//! libFuzzer target `prompt_json`: see `toolreg_fuzz::targets::prompt_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::prompt_json(data));
