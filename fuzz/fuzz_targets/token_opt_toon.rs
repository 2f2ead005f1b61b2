//! libFuzzer entry for the `token_opt_toon` harness (all checks live in `harness::token_opt_toon`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_meter_fuzz::harness::token_opt_toon::check(data));
