//! libFuzzer entry for the `tokenizer` harness (all checks live in `harness::tokenizer`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_meter_fuzz::harness::tokenizer::check(data));
