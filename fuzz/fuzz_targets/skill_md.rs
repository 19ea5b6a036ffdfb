//! libFuzzer target `skill_md`: see `toolreg_fuzz::targets::skill_md`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::skill_md(data));
