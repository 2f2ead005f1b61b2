//! token-efficiency/v1's budget op engine over the canonical text: the census that proves S-1..S-3
//! find nothing ([`census`]), the operations' names and constants ([`ops`]), the tree, its edits and
//! S-1..S-4 ([`shape`]), and the receipt with its reconciliation self-check ([`receipt`]).
//!
//! Its own package so the release profile can build it at its own level ("s", where the worker
//! is at "z": as fast here as opt-level 3, for less of the bundle; see the root Cargo.toml);
//! the worker re-exports these modules under `engine::token_efficiency` and keeps the family API,
//! refusals, reports and ledger columns. Pure and deterministic; every count is exact under the
//! published tokenizer; imported downwards only (ops, then census and receipt, then shape).

pub mod census;
pub mod ops;
pub mod receipt;
pub mod shape;

use context_meter_jsjson as jsjson;
use context_meter_tokenizer as tokenizer;
