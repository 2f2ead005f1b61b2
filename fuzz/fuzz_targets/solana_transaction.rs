//! libFuzzer entry for the `solana_transaction` harness (all checks live in `harness::solana_transaction`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    |data: &[u8]| context_meter_fuzz::harness::solana_transaction::check(data)
);
