//! Test support shared by the integration tests (tests/<family>/main.rs) and the cargo-fuzz
//! targets (fuzz/): one crate, so nothing is compiled in twice by `#[path]`.

pub mod fuzz_harness;
pub mod receipt_replay;
pub mod shared_samples;
