//! The fuzz harnesses: one `check(data)` per target, each asserting the engine's invariants on one
//! input. They live in the test-support crate (tests/support/src/fuzz_harness), whose
//! tests/fuzz_regressions replays every minimised crash and smoke input under plain `cargo test`.

pub use context_meter_test_support::fuzz_harness as harness;
