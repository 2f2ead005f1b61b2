//! The fuzz harnesses: one `check(data)` per target, each asserting the engine's invariants on one
//! input. The same module is compiled into the main package's `tests/fuzz_regressions.rs`, which
//! replays every minimised crash and smoke input under plain `cargo test`.

pub mod harness;
