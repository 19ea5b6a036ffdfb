//! libFuzzer target `search_query`: see `toolreg_fuzz::search::search_query`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::search::search_query(data));
