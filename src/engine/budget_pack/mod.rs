//! context-budget-pack: packs caller-costed evidence spans into a caller's budget, byte-exact to the
//! published contract (`corpus/context-budget-pack/contract.json`, served with our release values by
//! [`criteria`]).
//!
//! Flow: [`parse`] validates the raw body (free; every refusal is a closed [`Refusal`]), [`precheck`]
//! is the free preflight (validation result and input figures, never packed content), [`run`] is the
//! paid op. [`check_idempotency_key`] validates the `Idempotency-Key` header for the edge.
//!
//! Invariants: pure and deterministic (no clock except the `now_ms` the edge passes to the
//! preflight, no I/O, no tokenizer — costs are the caller's units); the run's document is exactly the
//! contract's `{operation, version, result, provenance}`; selected texts are exact UTF-16 slices of
//! their sources; `usedUnits` never exceeds `budgetUnits` unless `reservedUnits` alone does; nothing
//! from the input reaches a refusal or the ledger.

mod contract;
pub mod pack;
pub mod refusal;
pub mod report;
mod validate;

pub use contract::criteria;
pub use refusal::{Limit, Refusal};

use crate::engine::time::iso8601_millis;
use crate::engine::{Delivery, LedgerValue};
use serde_json::{json, Map, Value};

/// The contract's operation id.
pub const OPERATION: &str = "context-budget-pack";
/// The contract's release version (outputSchema `version` const).
pub const VERSION: &str = "0.29.0";
/// The contract's x402 path (the paid route).
pub const PAID_PATH: &str = "/v1/x402/context-budget-pack";

/// The contract's limits.
pub mod limits {
    pub const INPUT_BYTES: usize = 100_000;
    pub const OUTPUT_BYTES: usize = 400_000;
    pub const JSON_NODES: usize = 8_000;
    pub const JSON_DEPTH: usize = 20;
    pub const FINDINGS: usize = 200;
    pub const SOURCES: usize = 100;
    pub const CANDIDATES: usize = 200;
    pub const BUDGET_UNITS: u32 = 1_000_000;
    pub const CANDIDATE_SPAN_CHARACTERS: u64 = 2_000_000;
    pub const PACKED_TEXT_JSON_BYTES: usize = 200_000;
    /// `requirementsProfile.facts["limit.httpRequestBytes"]`.
    pub const HTTP_REQUEST_BYTES: usize = 131_072;
}

/// Request body byte cap the edge enforces while reading: the contract's HTTP request limit
/// (answer [`Refusal::EdgeLimit`] above it). Bodies between `limits::INPUT_BYTES` and this cap
/// reach [`parse`], which refuses them as INPUT_LIMIT, so each code means what the contract says.
pub const BODY_CAP: usize = limits::HTTP_REQUEST_BYTES;

/// Family-specific ledger columns, in order (the edge adds the payment columns).
pub const LEDGER_COLUMNS: &[&str] = &[
    "op",
    "budget_units",
    "used_units",
    "selected_count",
    "excluded_count",
    "input_bytes",
    "outcome",
];

/// `op` ledger value of the paid call.
pub const LEDGER_OP: &str = "pack";

/// The closed set of `outcome` ledger values.
pub const OUTCOMES: [&str; 4] = [
    "packed",
    "required_unsatisfied",
    "reserved_over_budget",
    "required_set_over_budget",
];

/// One source: its id and its text as UTF-16 code units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub id: String,
    pub text: Vec<u16>,
}

/// One candidate span (schema defaults applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    pub source_id: String,
    pub start: u32,
    pub end: u32,
    pub cost_units: u32,
    pub priority: u32,
    pub required: bool,
}

/// A validated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub sources: Vec<Source>,
    pub candidates: Vec<Candidate>,
    pub budget_units: u32,
    pub reserved_units: u32,
    pub deduplicate: bool,
    /// Request body bytes.
    pub input_bytes: usize,
    /// JSON values in the body text.
    pub json_nodes: usize,
    /// Deepest JSON value (root = 1).
    pub json_depth: usize,
    /// Sum of `end − start` over candidates with end > start.
    pub span_characters: u64,
}

/// Free validation of the raw body bytes against the contract's inputSchema and limits.
pub fn parse(body: &[u8]) -> Result<Request, Refusal> {
    validate::validate(body)
}

/// Validates the `Idempotency-Key` header: present, 16–128 characters of `[A-Za-z0-9_-]`
/// (the contract's 16–128 characters; the character set is ARCHITECTURE §4's payment-identifier rule).
pub fn check_idempotency_key(key: Option<&str>) -> Result<(), Refusal> {
    let key = key.ok_or(Refusal::IdempotencyKeyMissing)?;
    let well_formed = (16..=128).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if well_formed {
        Ok(())
    } else {
        Err(Refusal::IdempotencyKeyInvalid)
    }
}

/// A computed, limit-checked pack.
struct Computed {
    packing: pack::Packing,
    result: Map<String, Value>,
    result_json: String,
}

fn compute(req: &Request) -> Result<Computed, Refusal> {
    let packing = pack::pack(req);
    if report::packed_text_json_bytes(&packing) > limits::PACKED_TEXT_JSON_BYTES {
        return Err(Refusal::OutputLimit(Limit::PackedTextJsonBytes));
    }
    let result = report::result(req, &packing);
    let result_json = report::compact_json(&Value::Object(result.clone()));
    if result_json.len() > limits::OUTPUT_BYTES {
        return Err(Refusal::OutputLimit(Limit::OutputBytes));
    }
    Ok(Computed {
        packing,
        result,
        result_json,
    })
}

/// The free preflight: the validation result and input figures. It runs the selection internally
/// only to refuse, before any payment, a request whose result would exceed the output limits; no
/// selection, exclusion or unit figure leaves it.
pub fn precheck(req: &Request, now_ms: u64) -> Result<Map<String, Value>, Refusal> {
    compute(req)?;
    let mut out = Map::new();
    out.insert("operation".into(), json!(OPERATION));
    out.insert("version".into(), json!(VERSION));
    out.insert("valid".into(), json!(true));
    out.insert("checkedAt".into(), json!(iso8601_millis(now_ms)));
    out.insert(
        "input".into(),
        json!({
            "bytes": req.input_bytes,
            "jsonNodes": req.json_nodes,
            "depth": req.json_depth,
            "sources": req.sources.len(),
            "candidates": req.candidates.len(),
            "requiredCandidates": req.candidates.iter().filter(|c| c.required).count(),
            "spanCharacters": req.span_characters,
        }),
    );
    out.insert("inputSha256".into(), json!(report::input_sha256(req)));
    out.insert("paidPath".into(), json!(PAID_PATH));
    out.insert(
        "note".into(),
        json!("Validation only: the free preflight returns no packed content. A valid preflight means the paid call will not refuse this body."),
    );
    Ok(out)
}

/// The ledger `outcome` of a packing.
fn outcome(req: &Request, computed: &Computed) -> &'static str {
    if computed.packing.required_set_over_budget {
        "required_set_over_budget"
    } else if req.reserved_units > req.budget_units {
        "reserved_over_budget"
    } else if computed.result["requiredSatisfied"] == json!(false) {
        "required_unsatisfied"
    } else {
        "packed"
    }
}

/// The paid op: the contract's response document (unsigned) and the closed ledger columns.
/// Every pack is a delivered result (200, chargeable), including a required set over budget, whose
/// explicit finding is the deliverable.
pub fn run(req: &Request, _now_ms: u64) -> Result<Delivery, Refusal> {
    let computed = compute(req)?;
    let values: [LedgerValue; LEDGER_COLUMNS.len()] = [
        LedgerValue::Text(LEDGER_OP.to_owned()),              // op
        LedgerValue::Int(i64::from(req.budget_units)),        // budget_units
        LedgerValue::Int(computed.packing.used_units as i64), // used_units
        LedgerValue::Int(computed.packing.selected.len() as i64), // selected_count
        LedgerValue::Int(computed.packing.excluded.len() as i64), // excluded_count
        LedgerValue::Int(req.input_bytes as i64),             // input_bytes
        LedgerValue::Text(outcome(req, &computed).to_owned()), // outcome
    ];
    let ledger = LEDGER_COLUMNS.iter().copied().zip(values).collect();
    let report = report::response(
        report::input_sha256(req),
        computed.result,
        &computed.result_json,
    );
    Ok(Delivery::delivered(report, ledger))
}

#[cfg(test)]
mod tests;
