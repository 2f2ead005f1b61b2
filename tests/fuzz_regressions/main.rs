//! Replays, under plain `cargo test` (no cargo-fuzz, no nightly), every input kept in
//! tests/fuzz_regressions/inputs/<target>/ through the same harness the fuzz target runs
//! (tests/support/src/fuzz_harness/<target>.rs, in the test-support crate). Minimised crashes found by fuzzing are kept
//! there as `crash-*` (each one a bug that is fixed now); `smoke-*` inputs exercise each harness's
//! deep path so the harnesses themselves cannot rot unnoticed.

use context_meter_test_support::fuzz_harness as harness;
use std::path::PathBuf;

fn replay_dir(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_regressions/inputs")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|_| panic!("{} is missing", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    assert!(
        files.iter().any(|f| f
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("smoke-"))),
        "{target}: no smoke input"
    );
    for file in files {
        let data = std::fs::read(&file).expect("regression input");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", file.display());
    }
}

#[test]
fn token_efficiency() {
    replay_dir("token_efficiency", harness::token_efficiency::check);
}

#[test]
fn composition() {
    replay_dir("composition", harness::composition::check);
}

#[test]
fn budget_pack() {
    replay_dir("budget_pack", harness::budget_pack::check);
}

#[test]
fn token_opt_levers() {
    replay_dir("token_opt_levers", harness::token_opt_levers::check);
}

#[test]
fn token_opt_toon() {
    replay_dir("token_opt_toon", harness::token_opt_toon::check);
}

#[test]
fn x402_header() {
    replay_dir("x402_header", harness::x402_header::check);
}

#[test]
fn solana_transaction() {
    replay_dir("solana_transaction", harness::solana_transaction::check);
}

#[test]
fn json_canonical() {
    replay_dir("json_canonical", harness::json_canonical::check);
}

#[test]
fn tokenizer() {
    replay_dir("tokenizer", harness::tokenizer::check);
}

/// The harness checks can fail: a refusal that echoes the canary is caught.
#[test]
fn a_harness_failure_is_a_test_failure() {
    let refused = std::panic::catch_unwind(|| {
        harness::assert_closed_refusal(&BadRefusal);
    });
    assert!(refused.is_err(), "a refusal echoing input passed the check");
}

struct BadRefusal;

impl context_meter::engine::ClosedError for BadRefusal {
    fn code(&self) -> &'static str {
        "echo"
    }
    fn status(&self) -> u16 {
        400
    }
    fn message(&self) -> &'static str {
        "the input was \u{E000}"
    }
}
