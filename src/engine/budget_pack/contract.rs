//! The served contract: the published contract (pinned in `corpus/context-budget-pack/contract.json`)
//! with our release values — the payment protocols and paths this worker actually offers, our
//! preflight path — plus what the published text leaves to the implementer, written down: the
//! provenance hash rule, the readings of open points, the refusal table, the finding codes and the
//! closed ledger columns. The edge adds `signing`.

use super::refusal::Refusal;
use super::report::FindingCode;
use super::{limits, LEDGER_COLUMNS, OUTCOMES, PAID_PATH};
use crate::engine::jsjson::to_jcs;
use crate::engine::sign::sha256_hex;
use crate::engine::ClosedError;
use serde_json::{json, Value};

/// The published contract, byte for byte as received.
pub const PUBLISHED_CONTRACT: &str =
    include_str!("../../../corpus/context-budget-pack/contract.json");

/// Path of the served contract.
pub const CONTRACT_PATH: &str = "/context-budget-pack/contract";
/// Path of the free preflight.
pub const PREFLIGHT_PATH: &str = "/context-budget-pack/preflight";

/// The provenance hash rule (verified against the contract's exampleResponse).
pub const HASH_RULE_INPUT: &str = "inputSha256 = lower-case hex SHA-256 of the UTF-8 bytes of the RFC 8785 (JCS) canonical form of the validated input with every inputSchema default filled in: reservedUnits 0, deduplicate true, and on each candidate priority 0 and required false. Members absent from the schema cannot occur (additionalProperties is false); numbers are integers.";
pub const HASH_RULE_OUTPUT: &str = "outputSha256 = lower-case hex SHA-256 of the UTF-8 bytes of the result member written as compact JSON exactly as JavaScript JSON.stringify(result) writes it: no whitespace, members in the order the outputSchema lists them (profile, requiredSatisfied, withinBudget, usedUnits, remainingUnits, offsetUnit, selected, excluded, findings, findingCount, errorCount, truncated; selected items id, sourceId, start, end, text, costUnits, priority; excluded items id, reason, duplicateOf; findings code, severity, path, message). Not JCS: the member order is the document's own.";

const READINGS: &[&str] = &[
    "Ranking: required candidates first, then higher priority first, then id in UTF-16 code-unit order (JavaScript <, not code-point order). selected and excluded are both listed in ranking order.",
    "Greedy skip-and-continue: an optional candidate that does not fit is excluded as budget and later candidates are still tried. No optimal packing is attempted.",
    "Reserved units: usedUnits = reservedUnits + the costs of the selected candidates; an optional candidate is selected when usedUnits + costUnits <= budgetUnits (inclusive). withinBudget = usedUnits <= budgetUnits; remainingUnits = budgetUnits - usedUnits, clamped at 0.",
    "Required candidates are all-or-nothing and never deduplicated: when reservedUnits plus the costs of every valid required candidate exceed budgetUnits, nothing is packed, every valid candidate (required or optional) is excluded as required_set_over_budget, broken ones keep invalid_span or source_missing, and the error finding REQUIRED_SET_OVER_BUDGET is reported.",
    "With no valid required candidate the required set is empty and cannot be over budget; reservedUnits above budgetUnits is then reported by the error finding RESERVED_UNITS_OVER_BUDGET, every optional candidate is excluded as budget, and withinBudget is false.",
    "requiredSatisfied is false when any required candidate is not selected, broken ones included.",
    "Spans: offsets are UTF-16 code units; an empty span (start = end) is valid; start > end, end past the source, or an offset between the two halves of a surrogate pair is invalid_span; a sourceId naming no source is source_missing (checked first). Each broken candidate gets a finding at /candidates/<index>: error when it is required, warning otherwise.",
    "Deduplication (deduplicate true, the default): an optional candidate whose exact slice text (UTF-16 code units, no normalisation) equals the text of an already selected candidate is excluded as duplicate_text with duplicateOf = the earliest selected candidate with that text; the duplicate check comes before the budget check, so a duplicate that would also not fit is reported as duplicate_text. duplicateOf is null for every other reason.",
    "Findings: set-level findings first (RESERVED_UNITS_OVER_BUDGET at /reservedUnits, REQUIRED_SET_OVER_BUDGET at /candidates), then one per broken candidate in ranking order; paths are JSON Pointers into the input. At most limits.findings are listed; findingCount and errorCount count every finding produced, and truncated is true when some were not listed. Messages are fixed sentences.",
    "Validation follows JavaScript JSON Schema semantics: integer means a number with no fractional part (5.0 and 5e0 are 5), string lengths (id 1..80, text up to 90000) count code points, absent members take the schema defaults. A repeated object key keeps its last value, as JSON.parse does.",
    "Refusal order: input bytes (INPUT_LIMIT), UTF-8 (INVALID_UNICODE), the JSON text (MALFORMED_JSON; COMPLEXITY_LIMIT for more than limits.jsonNodes values counting every value in the text, or a value deeper than limits.depth with the root at depth 1), unsafe keys anywhere (UNSAFE_KEY), lone surrogates anywhere (INVALID_UNICODE), the inputSchema member by member (bounds also named in limits - sources, candidates, budgetUnits - give INPUT_LIMIT, everything else SCHEMA_VIOLATION), duplicate source ids or duplicate candidate ids (DUPLICATE_ID, two separate namespaces), the sum of end - start over candidates with end > start above limits.candidateSpanCharacters (EVALUATION_LIMIT), then on the computed result the selected texts' JSON string bytes above limits.packedTextJsonBytes and the compact result above limits.outputBytes (OUTPUT_LIMIT; the free preflight checks these too, so a valid preflight means the paid call will not refuse).",
    "Idempotency-Key: required on the paid path; 16 to 128 characters of A-Z a-z 0-9 _ - (the payment-identifier character set); missing or malformed gives 400.",
    "Costs are the caller's integer units: nothing is tokenized, and nothing is judged for relevance.",
];

fn refusal_table() -> Value {
    Value::Array(
        Refusal::catalogue()
            .into_iter()
            .map(|r| {
                json!({
                    "code": r.code(),
                    "status": r.status(),
                    "message": r.message(),
                    "limit": r.limit().map(|l| l.name()),
                    "figures": r.figures().into_iter().map(|(name, _)| name).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

fn finding_table() -> Value {
    Value::Array(
        FindingCode::ALL
            .into_iter()
            .map(|f| json!({"code": f.code(), "message": f.message()}))
            .collect(),
    )
}

fn ledger() -> Value {
    json!({
        "ledger_closed_fields": [
            "payer wallet",
            "timestamp/day",
            "price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)",
            "payment tx id + Solana fee (lamports)",
            "op",
            "budget units",
            "used units",
            "selected count",
            "excluded count",
            "input size (request body bytes)",
            "outcome",
            "house flag"
        ],
        "columns": {
            "payer wallet": ["payer"],
            "timestamp/day": ["ts_ms", "day"],
            "price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)":
                ["price_usdc_units", "cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund_usdc_units"],
            "payment tx id + Solana fee (lamports)": ["tx_sig", "fee_lamports"],
            "op": ["op"],
            "budget units": ["budget_units"],
            "used units": ["used_units"],
            "selected count": ["selected_count"],
            "excluded count": ["excluded_count"],
            "input size (request body bytes)": ["input_bytes"],
            "outcome": ["outcome"],
            "house flag": ["house"]
        },
        "family_columns": LEDGER_COLUMNS,
        "outcomes": OUTCOMES,
        "note": "The ledger list is closed: adding a field is a contract/handling version change. The ledger never carries submitted content, any fragment of it, ids, or any hash of a submitted value; op is always \"pack\"; outcome is one of the listed values."
    })
}

/// The served contract document (unsigned; the edge adds `signing`).
pub fn criteria() -> Value {
    let mut doc: Value =
        serde_json::from_str(PUBLISHED_CONTRACT).expect("the pinned contract is valid JSON");
    let published_sha256 = sha256_hex(to_jcs(&doc).as_bytes());

    // Release values: what this worker offers.
    doc["requirementsProfile"]["preflight"] = json!(PREFLIGHT_PATH);
    doc["documentation"] = json!(CONTRACT_PATH);
    doc["serviceContract"] = json!(CONTRACT_PATH);
    doc["fixedExample"] = json!(CONTRACT_PATH);
    let workflow = &mut doc["paymentWorkflow"];
    // MPP: the published entry stands (headers, method tempo, intent charge, mppx, 6 decimals); this
    // release adds what a payer must know: push mode only, and where the chain settings are served.
    workflow["mpp"]["path"] = json!(crate::engine::payment::mpp::PATH);
    workflow["mpp"]["modes"] = json!(["push"]);
    workflow["mpp"]["note"] = json!("Push mode only (the challenge's methodDetails.supportedModes is [\"push\"]): the payer broadcasts a TIP-20 transferWithMemo whose memo binds the challenge (mppx's attribution memo) and sends Authorization: Payment with the transaction hash. The chain id, currency and recipient are in each challenge's request. Refusals are application/problem+json; every 402 carries a fresh challenge. A hash the chain does not show yet is answered 409 with Retry-After: retry the same credential, never pay again.");
    workflow["x402"]["sdk"] = json!("@x402/core with @x402/svm (Solana, USDC)");
    workflow["x402"]["network"] = json!("solana");
    workflow["docs"] = json!("/");
    doc["paths"] = json!({"x402": PAID_PATH, "mpp": crate::engine::payment::mpp::PATH});
    doc["preflight"] = json!({
        "method": "POST",
        "path": PREFLIGHT_PATH,
        "price": "free",
        "returns": "operation, version, valid, checkedAt, input figures (bytes, jsonNodes, depth, sources, candidates, requiredCandidates, spanCharacters), inputSha256, paidPath; never selections, exclusions or unit figures",
    });
    let mut codes: Vec<Value> = doc["errorCodes"].as_array().cloned().unwrap_or_default();
    for extra in Refusal::catalogue() {
        let code = json!(extra.code());
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    doc["errorCodes"] = Value::Array(codes);

    // What the published text leaves open, written down.
    doc["provenanceRule"] = json!({
        "inputSha256": HASH_RULE_INPUT,
        "outputSha256": HASH_RULE_OUTPUT,
        "verified": "The exampleInput reproduces the exampleResponse byte for byte under these rules, both hashes included.",
    });
    doc["interpretation"] = json!(READINGS);
    doc["refusals"] = refusal_table();
    doc["findingCodes"] = finding_table();
    doc["limitsApplied"] = json!({
        "bodyCapBytes": limits::HTTP_REQUEST_BYTES,
        "inputBytes": limits::INPUT_BYTES,
        "note": "A body above limit.httpRequestBytes is refused while it is read (EDGE_LIMIT); one above limits.inputBytes by validation (INPUT_LIMIT).",
    });
    doc["ledger"] = ledger();
    doc["releaseSnapshot"]["servedBy"] = json!({
        "service": "context-meter",
        "publishedContractSha256": published_sha256,
        "publishedContractHashRule": "SHA-256 of the JCS form of the published contract document",
    });
    doc
}
