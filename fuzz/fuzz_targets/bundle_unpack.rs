//! libFuzzer target `bundle_unpack`: see `toolreg_fuzz::targets::bundle_unpack`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolreg_fuzz::targets::bundle_unpack(data));
