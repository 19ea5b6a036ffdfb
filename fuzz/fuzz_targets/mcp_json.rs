//! libFuzzer target `mcp_json`: see `toolreg_fuzz::targets::mcp_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::mcp_json(data));
