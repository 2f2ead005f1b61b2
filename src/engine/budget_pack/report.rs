//! The response document: `{operation, version, result, provenance}` exactly as the contract's
//! outputSchema and exampleResponse lay it out, and the two provenance hashes.
//!
//! Hash rule (derived from the contract's example, which it reproduces byte for byte):
//! - `inputSha256` = SHA-256 of the RFC 8785 (JCS) bytes of the validated input with every schema
//!   default filled in (`reservedUnits` 0, `deduplicate` true, each candidate's `priority` 0 and
//!   `required` false);
//! - `outputSha256` = SHA-256 of the compact JSON (`JSON.stringify(result)`, no whitespace, members
//!   in the order this module writes them) of the `result` member.
//!
//! Finding messages are fixed sentences (they feed `outputSha256`): never vary them.

use super::pack::{Packing, Reason};
use super::{limits, Request, OPERATION, VERSION};
use crate::engine::jsjson::{to_jcs, write_js_string};
use crate::engine::sign::sha256_hex;
use serde_json::{json, Map, Value};

/// The contract's result profile.
pub const PROFILE: &str = "caller-cost-context-pack-v1";
/// The contract's offset unit.
pub const OFFSET_UNIT: &str = "UTF-16-code-units";

/// One finding code with its fixed sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingCode {
    ReservedUnitsOverBudget,
    RequiredSetOverBudget,
    SourceMissing,
    InvalidSpan,
}

impl FindingCode {
    pub const ALL: [FindingCode; 4] = [
        FindingCode::ReservedUnitsOverBudget,
        FindingCode::RequiredSetOverBudget,
        FindingCode::SourceMissing,
        FindingCode::InvalidSpan,
    ];

    pub fn code(self) -> &'static str {
        match self {
            FindingCode::ReservedUnitsOverBudget => "RESERVED_UNITS_OVER_BUDGET",
            FindingCode::RequiredSetOverBudget => "REQUIRED_SET_OVER_BUDGET",
            FindingCode::SourceMissing => "SOURCE_MISSING",
            FindingCode::InvalidSpan => "INVALID_SPAN",
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            FindingCode::ReservedUnitsOverBudget => {
                "reservedUnits exceeds budgetUnits; no candidate can be packed within the budget."
            }
            FindingCode::RequiredSetOverBudget => {
                "reservedUnits plus the costs of the required candidates exceed budgetUnits; no content was packed."
            }
            FindingCode::SourceMissing => {
                "The candidate's sourceId names no source; the candidate was excluded."
            }
            FindingCode::InvalidSpan => {
                "The candidate's span is reversed, runs past its source, or splits a surrogate pair; the candidate was excluded."
            }
        }
    }

    /// Severity: set-level findings are errors; a broken candidate is an error when it is required
    /// (the required set is then not satisfied) and a warning otherwise.
    fn severity(self, required: bool) -> &'static str {
        match self {
            FindingCode::ReservedUnitsOverBudget | FindingCode::RequiredSetOverBudget => "error",
            _ if required => "error",
            _ => "warning",
        }
    }
}

fn finding(code: FindingCode, required: bool, path: String) -> Value {
    json!({
        "code": code.code(),
        "severity": code.severity(required),
        "path": path,
        "message": code.message(),
    })
}

/// Findings in order: set-level first, then one per broken candidate in ranking order.
fn findings(req: &Request, packing: &Packing) -> Vec<Value> {
    let mut out = Vec::new();
    if req.reserved_units > req.budget_units {
        out.push(finding(
            FindingCode::ReservedUnitsOverBudget,
            false,
            "/reservedUnits".to_owned(),
        ));
    }
    if packing.required_set_over_budget {
        out.push(finding(
            FindingCode::RequiredSetOverBudget,
            true,
            "/candidates".to_owned(),
        ));
    }
    for excluded in &packing.excluded {
        let code = match excluded.reason {
            Reason::SourceMissing => FindingCode::SourceMissing,
            Reason::InvalidSpan => FindingCode::InvalidSpan,
            _ => continue,
        };
        let required = req.candidates[excluded.candidate].required;
        out.push(finding(
            code,
            required,
            format!("/candidates/{}", excluded.candidate),
        ));
    }
    out
}

/// The `result` member, members in the contract's order.
pub fn result(req: &Request, packing: &Packing) -> Map<String, Value> {
    let budget = u64::from(req.budget_units);
    let required_satisfied = req
        .candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.required)
        .all(|(i, _)| packing.selected.iter().any(|s| s.candidate == i));
    let selected: Vec<Value> = packing
        .selected
        .iter()
        .map(|s| {
            let c = &req.candidates[s.candidate];
            json!({
                "id": c.id,
                "sourceId": c.source_id,
                "start": c.start,
                "end": c.end,
                "text": String::from_utf16(&s.text).expect("spans never split a surrogate pair"),
                "costUnits": c.cost_units,
                "priority": c.priority,
            })
        })
        .collect();
    let excluded: Vec<Value> = packing
        .excluded
        .iter()
        .map(|e| {
            json!({
                "id": req.candidates[e.candidate].id,
                "reason": e.reason.as_str(),
                "duplicateOf": e.duplicate_of.map(|i| req.candidates[i].id.clone()),
            })
        })
        .collect();
    let mut all_findings = findings(req, packing);
    let finding_count = all_findings.len();
    let error_count = all_findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .count();
    let truncated = finding_count > limits::FINDINGS;
    all_findings.truncate(limits::FINDINGS);

    let mut out = Map::new();
    out.insert("profile".into(), json!(PROFILE));
    out.insert("requiredSatisfied".into(), json!(required_satisfied));
    out.insert("withinBudget".into(), json!(packing.used_units <= budget));
    out.insert("usedUnits".into(), json!(packing.used_units));
    out.insert(
        "remainingUnits".into(),
        json!(budget.saturating_sub(packing.used_units)),
    );
    out.insert("offsetUnit".into(), json!(OFFSET_UNIT));
    out.insert("selected".into(), Value::Array(selected));
    out.insert("excluded".into(), Value::Array(excluded));
    out.insert("findings".into(), Value::Array(all_findings));
    out.insert("findingCount".into(), json!(finding_count));
    out.insert("errorCount".into(), json!(error_count));
    out.insert("truncated".into(), json!(truncated));
    out
}

/// The validated input with every schema default filled in (the value `inputSha256` is taken over).
pub fn normalized_input(req: &Request) -> Value {
    let sources: Vec<Value> = req
        .sources
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "text": String::from_utf16(&s.text).expect("validated text is well-formed"),
            })
        })
        .collect();
    let candidates: Vec<Value> = req
        .candidates
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "sourceId": c.source_id,
                "start": c.start,
                "end": c.end,
                "costUnits": c.cost_units,
                "priority": c.priority,
                "required": c.required,
            })
        })
        .collect();
    json!({
        "sources": sources,
        "candidates": candidates,
        "budgetUnits": req.budget_units,
        "reservedUnits": req.reserved_units,
        "deduplicate": req.deduplicate,
    })
}

/// `inputSha256` of a validated request.
pub fn input_sha256(req: &Request) -> String {
    sha256_hex(to_jcs(&normalized_input(req)).as_bytes())
}

/// ECMAScript `JSON.stringify` (compact, member order kept): the shared writer in `canonical`.
pub use crate::engine::jsjson::to_js_compact as compact_json;

/// Bytes of the selected texts written as JSON strings (quotes included).
pub fn packed_text_json_bytes(packing: &Packing) -> usize {
    packing
        .selected
        .iter()
        .map(|s| {
            let mut literal = String::new();
            write_js_string(
                &mut literal,
                &String::from_utf16(&s.text).expect("spans never split a surrogate pair"),
            );
            literal.len()
        })
        .sum()
}

/// The whole response document around a computed result.
pub fn response(
    input_sha256: String,
    result: Map<String, Value>,
    result_json: &str,
) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("operation".into(), json!(OPERATION));
    out.insert("version".into(), json!(VERSION));
    out.insert("result".into(), Value::Object(result));
    out.insert(
        "provenance".into(),
        json!({
            "inputSha256": input_sha256,
            "outputSha256": sha256_hex(result_json.as_bytes()),
            "deterministic": true,
            "externalRequests": 0,
        }),
    );
    out
}
