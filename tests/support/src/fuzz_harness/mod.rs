//! Fuzz harnesses over the pure engine. Each submodule's `check(data: &[u8])` feeds one input to one
//! family (or decoder) and panics when an invariant breaks; libFuzzer reports the panic as a crash.
//!
//! Shared conventions:
//! - The first input byte is a mode selector where a target has more than one way to read the
//!   bytes (raw request body, or a body built around the remaining bytes so mutations reach deep
//!   code instead of dying in the envelope).
//! - Refusals must be closed: a code of `[A-Za-z0-9_:.-]`, a 4xx status, a static message, and no
//!   trace of the input (checked with the private-use [`CANARY`] character, which the seeds carry and
//!   the service's own vocabulary never does).
//! - Determinism: the same input twice gives the same bytes.
//!
//! They live in the test-support crate so the fuzz targets (fuzz/) and the main package's replay of
//! every kept input (tests/fuzz_regressions) run the same code.

pub mod budget_pack;
pub mod composition;
pub mod json_canonical;
pub mod solana_transaction;
pub mod token_efficiency;
pub mod token_opt_levers;
pub mod token_opt_toon;
pub mod tokenizer;
pub mod x402_header;

pub use crate::receipt_replay;

use context_meter::engine::{ClosedError, Delivery, LedgerValue};
use serde_json::{Map, Value};
use std::fmt::Debug;

/// A private-use character the seeds plant in submitted text: no report field that must not echo
/// the submission, no refusal and no ledger value may ever contain it.
pub const CANARY: char = '\u{E000}';

/// The fixed clock every harness passes (any value works; fixed keeps runs reproducible).
pub const NOW_MS: u64 = 1_796_216_991_123;

/// A refusal is closed: code from a small alphabet, 4xx status, static message, numeric figures,
/// nothing of the input.
pub fn assert_closed_refusal(refusal: &dyn ClosedError) {
    let code = refusal.code();
    assert!(
        !code.is_empty()
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_:.-".contains(&b)),
        "refusal code outside the closed alphabet: {code:?}"
    );
    let status = refusal.status();
    assert!((400..500).contains(&status), "{code}: status {status}");
    let message = refusal.message();
    assert!(!message.is_empty() && !message.contains(CANARY), "{code}");
    for (name, _) in refusal.figures() {
        assert!(!name.is_empty() && !name.contains(CANARY), "{code}");
    }
}

/// Parses with `parse`; a refusal must be closed and the same when parsing again (then `None`).
pub fn parsed_or_closed_refusal<R, E>(parse: impl Fn() -> Result<R, E>) -> Option<R>
where
    E: ClosedError + PartialEq + Debug,
{
    match parse() {
        Ok(request) => Some(request),
        Err(refusal) => {
            assert_closed_refusal(&refusal);
            assert_eq!(parse().err(), Some(refusal), "refusal not deterministic");
            None
        }
    }
}

/// Runs a paid op twice on an accepted request: it must deliver (200, chargeable), give the same
/// bytes both times, and write only `columns` to the ledger, none echoing input.
pub fn delivered_deterministically<E: ClosedError>(
    run: impl Fn() -> Result<Delivery, E>,
    columns: &[&str],
) -> Delivery {
    let delivery = run().unwrap_or_else(|refusal| {
        panic!(
            "an accepted body was refused by the paid op: {}",
            refusal.code()
        )
    });
    let again = run().unwrap_or_else(|refusal| panic!("second run refused: {}", refusal.code()));
    assert_eq!(
        bytes_of(&delivery.report),
        bytes_of(&again.report),
        "not deterministic"
    );
    assert!(
        delivery.status == 200 && delivery.chargeable,
        "not delivered"
    );
    assert_ledger_clean(&delivery.ledger, columns);
    delivery
}

/// No ledger value carries the canary (ledger columns hold counts, ops and verdict lines only).
pub fn assert_ledger_clean(ledger: &[(&'static str, LedgerValue)], expected_columns: &[&str]) {
    let names: Vec<&str> = ledger.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected_columns, "ledger columns");
    for (name, value) in ledger {
        if let LedgerValue::Text(text) = value {
            assert!(!text.contains(CANARY), "ledger column {name} echoes input");
        }
    }
}

/// Compact serialisation used to compare two reports byte for byte.
pub fn bytes_of(report: &Map<String, Value>) -> String {
    serde_json::to_string(report).expect("reports serialise")
}

/// Every string (keys included) of a JSON value.
pub fn strings_of(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings_of(v, out);
        }),
        _ => {}
    }
}

/// Reads structured choices off the front of the fuzz input; past the end every read is zero.
pub struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes }
    }

    pub fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.byte(), self.byte()])
    }

    /// Everything not read yet.
    pub fn rest(self) -> &'a [u8] {
        self.bytes
    }
}

/// The request body a fuzz input stands for: with an even mode byte, the rest of the input as the raw
/// body; with an odd one, the body `built` makes around the rest (given the mode, for targets that
/// read more choices from it).
pub fn raw_or_built_body(data: &[u8], built: impl FnOnce(&[u8], u8) -> Vec<u8>) -> Vec<u8> {
    let (mode, rest) = mode_and_rest(data);
    if mode & 1 == 0 {
        rest.to_vec()
    } else {
        built(rest, mode)
    }
}

/// The input split into a mode byte and the rest (an empty input is mode 0 with no bytes).
pub fn mode_and_rest(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&mode, rest)) => (mode, rest),
        None => (0, data),
    }
}
