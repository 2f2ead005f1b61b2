//! libFuzzer entry for the `composition` harness (all checks live in `harness::composition`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_meter_fuzz::harness::composition::check(data));
