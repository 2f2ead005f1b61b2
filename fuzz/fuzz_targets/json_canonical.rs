//! libFuzzer entry for the `json_canonical` harness (all checks live in `harness::json_canonical`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_meter_fuzz::harness::json_canonical::check(data));
