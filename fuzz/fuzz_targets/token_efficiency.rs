//! libFuzzer entry for the `token_efficiency` harness (all checks live in `harness::token_efficiency`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    |data: &[u8]| context_meter_fuzz::harness::token_efficiency::check(data)
);
