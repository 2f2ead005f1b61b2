//! libFuzzer entry for the `token_opt_levers` harness (all checks live in `harness::token_opt_levers`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    |data: &[u8]| context_meter_fuzz::harness::token_opt_levers::check(data)
);
