//! libFuzzer entry for the `budget_pack` harness (all checks live in `harness::budget_pack`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_meter_fuzz::harness::budget_pack::check(data));
