//! libFuzzer entry for the `x402_header` harness (all checks live in `harness::x402_header`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_meter_fuzz::harness::x402_header::check(data));
