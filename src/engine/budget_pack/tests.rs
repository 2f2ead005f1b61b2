//! Unit tests beside the code: the contract's own example, byte for byte, and the selection rules
//! one at a time on hand-made inputs whose answers follow from the contract text.

use super::report::compact_json;
use super::*;
use crate::engine::ClosedError;
use serde_json::{json, Value};

fn published() -> Value {
    serde_json::from_str(contract::PUBLISHED_CONTRACT).unwrap()
}

fn request(input: &Value) -> Request {
    parse(serde_json::to_string(input).unwrap().as_bytes()).unwrap()
}

fn example_request(contract: &Value) -> Request {
    request(&contract["exampleInput"])
}

fn run_value(input: &Value) -> Value {
    Value::Object(run(&request(input), 0).unwrap().report)
}

#[test]
fn example_input_reproduces_example_response_byte_for_byte() {
    let contract = published();
    let req = example_request(&contract);
    let delivery = run(&req, 1_700_000_000_000).unwrap();
    assert_eq!(delivery.status, 200);
    assert!(delivery.chargeable);
    assert_eq!(
        compact_json(&Value::Object(delivery.report)),
        compact_json(&contract["exampleResponse"])
    );
}

#[test]
fn example_hashes_do_not_depend_on_how_the_input_is_written() {
    let contract = published();
    let want = &contract["exampleResponse"]["provenance"]["inputSha256"];
    let pretty = serde_json::to_string_pretty(&contract["exampleInput"]).unwrap();
    let mut explicit = contract["exampleInput"].clone();
    explicit["deduplicate"] = json!(true);
    explicit["candidates"][0]["priority"] = json!(0.0);
    explicit["candidates"][1]["required"] = json!(false);
    for body in [pretty, serde_json::to_string(&explicit).unwrap()] {
        let report = run_value(&serde_json::from_str(&body).unwrap());
        assert_eq!(&report["provenance"]["inputSha256"], want);
    }
    explicit["deduplicate"] = json!(false);
    let report = run_value(&explicit);
    assert_ne!(&report["provenance"]["inputSha256"], want);
}

fn body(candidates: Value, budget: u32, reserved: u32) -> Value {
    json!({
        "sources": [
            {"id": "a", "text": "alpha beta alpha"},
            {"id": "e", "text": "x😀y"}
        ],
        "candidates": candidates,
        "budgetUnits": budget,
        "reservedUnits": reserved
    })
}

fn member_strings<'a>(list: &'a Value, member: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v[member].as_str().unwrap())
        .collect()
}

/// The `result` member of a run over `body(candidates, budget, reserved)`.
fn pack_result(candidates: Value, budget: u32, reserved: u32) -> Value {
    run_value(&body(candidates, budget, reserved))["result"].take()
}

fn ids(list: &Value) -> Vec<&str> {
    member_strings(list, "id")
}

fn reasons(list: &Value) -> Vec<&str> {
    member_strings(list, "reason")
}

#[test]
fn ranking_uses_utf16_order_and_skips_then_continues() {
    // "\u{ff61}" sorts after "\u{1f600}" in UTF-16 (0xff61 > 0xd83d) but before it in code points.
    let candidates = json!([
        {"id": "\u{ff61}", "sourceId": "a", "start": 0, "end": 5, "costUnits": 2},
        {"id": "\u{1f600}", "sourceId": "a", "start": 6, "end": 10, "costUnits": 2},
        {"id": "big", "sourceId": "a", "start": 0, "end": 16, "costUnits": 9, "priority": 5},
        {"id": "must", "sourceId": "a", "start": 0, "end": 0, "costUnits": 1, "required": true}
    ]);
    let result = pack_result(candidates, 5, 0);
    assert_eq!(ids(&result["selected"]), ["must", "\u{1f600}", "\u{ff61}"]);
    assert_eq!(ids(&result["excluded"]), ["big"]);
    assert_eq!(result["excluded"][0]["reason"], "budget");
    assert_eq!(result["usedUnits"], 5);
    assert_eq!(result["remainingUnits"], 0);
    assert_eq!(result["selected"][0]["text"], "");
}

#[test]
fn broken_spans_and_missing_sources_are_excluded_with_reasons_and_findings() {
    let result = pack_result(
        json!([
            {"id": "rev", "sourceId": "a", "start": 3, "end": 2, "costUnits": 1},
            {"id": "past", "sourceId": "a", "start": 0, "end": 17, "costUnits": 1},
            {"id": "split", "sourceId": "e", "start": 0, "end": 2, "costUnits": 1, "required": true},
            {"id": "pair", "sourceId": "e", "start": 1, "end": 3, "costUnits": 1},
            {"id": "gone", "sourceId": "zzz", "start": 0, "end": 1, "costUnits": 1}
        ]),
        10,
        0,
    );
    assert_eq!(ids(&result["selected"]), ["pair"]);
    assert_eq!(result["selected"][0]["text"], "😀");
    assert_eq!(ids(&result["excluded"]), ["split", "gone", "past", "rev"]);
    assert_eq!(
        reasons(&result["excluded"]).join(" "),
        "invalid_span source_missing invalid_span invalid_span"
    );
    assert_eq!(result["requiredSatisfied"], false);
    assert_eq!(result["findingCount"], 4);
    assert_eq!(result["errorCount"], 1);
    assert_eq!(result["findings"][0]["path"], "/candidates/2");
    assert_eq!(result["findings"][0]["severity"], "error");
    assert_eq!(result["findings"][1]["code"], "SOURCE_MISSING");
    assert_eq!(result["findings"][1]["severity"], "warning");
}

#[test]
fn required_set_over_budget_packs_nothing() {
    let result = pack_result(
        json!([
            {"id": "r1", "sourceId": "a", "start": 0, "end": 5, "costUnits": 4, "required": true},
            {"id": "r2", "sourceId": "a", "start": 6, "end": 10, "costUnits": 4, "required": true},
            {"id": "o", "sourceId": "a", "start": 0, "end": 1, "costUnits": 1},
            {"id": "bad", "sourceId": "a", "start": 0, "end": 99, "costUnits": 1, "required": true}
        ]),
        9,
        2,
    );
    assert_eq!(result["selected"], json!([]));
    let over = "required_set_over_budget";
    assert_eq!(
        reasons(&result["excluded"]),
        ["invalid_span", over, over, over]
    );
    assert_eq!(result["requiredSatisfied"], false);
    assert_eq!(result["withinBudget"], true);
    assert_eq!(result["usedUnits"], 2);
    assert_eq!(result["findings"][0]["code"], "REQUIRED_SET_OVER_BUDGET");
    // Exactly fitting (inclusive) is not over budget.
    let fits = run_value(&body(
        json!([
            {"id": "r1", "sourceId": "a", "start": 0, "end": 5, "costUnits": 4, "required": true},
            {"id": "r2", "sourceId": "a", "start": 0, "end": 5, "costUnits": 4, "required": true}
        ]),
        10,
        2,
    ));
    assert_eq!(ids(&fits["result"]["selected"]), ["r1", "r2"]);
    assert_eq!(fits["result"]["remainingUnits"], 0);
}

#[test]
fn duplicates_point_at_the_earliest_selected_and_precede_the_budget_check() {
    let candidates = json!([
        {"id": "first", "sourceId": "a", "start": 6, "end": 10, "costUnits": 1, "priority": 9},
        {"id": "second", "sourceId": "a", "start": 11, "end": 16, "costUnits": 1, "priority": 8},
        {"id": "costly", "sourceId": "a", "start": 11, "end": 16, "costUnits": 50, "priority": 7},
        {"id": "req", "sourceId": "a", "start": 11, "end": 16, "costUnits": 1, "required": true}
    ]);
    let result = pack_result(candidates.clone(), 4, 0);
    assert_eq!(ids(&result["selected"]), ["req", "first"]);
    assert_eq!(
        result["excluded"],
        json!([
            {"id": "second", "reason": "duplicate_text", "duplicateOf": "req"},
            {"id": "costly", "reason": "duplicate_text", "duplicateOf": "req"}
        ])
    );
    let mut no_dedupe = body(candidates, 4, 0);
    no_dedupe["deduplicate"] = json!(false);
    let result = run_value(&no_dedupe)["result"].clone();
    assert_eq!(ids(&result["selected"]), ["req", "first", "second"]);
    assert_eq!(result["excluded"][0]["reason"], "budget");
}

#[test]
fn reserved_above_budget_is_reported_and_nothing_fits() {
    let result = pack_result(
        json!([{"id": "o", "sourceId": "a", "start": 0, "end": 1, "costUnits": 1}]),
        3,
        5,
    );
    assert_eq!(result["withinBudget"], false);
    assert_eq!(result["remainingUnits"], 0);
    assert_eq!(result["usedUnits"], 5);
    assert_eq!(result["requiredSatisfied"], true);
    assert_eq!(result["excluded"][0]["reason"], "budget");
    assert_eq!(result["findings"][0]["code"], "RESERVED_UNITS_OVER_BUDGET");
}

#[test]
fn idempotency_key_rules() {
    assert_eq!(
        check_idempotency_key(None),
        Err(Refusal::IdempotencyKeyMissing)
    );
    assert_eq!(check_idempotency_key(Some(&"a".repeat(16))), Ok(()));
    assert_eq!(check_idempotency_key(Some(&"Z_-9".repeat(32))), Ok(()));
    for bad in [
        "a".repeat(15),
        "a".repeat(129),
        format!("{}!", "a".repeat(20)),
        format!("{}é", "a".repeat(20)),
        String::new(),
    ] {
        assert_eq!(
            check_idempotency_key(Some(&bad)),
            Err(Refusal::IdempotencyKeyInvalid)
        );
    }
    assert_eq!(Refusal::IdempotencyKeyInvalid.status(), 400);
}

#[test]
fn ledger_columns_match_the_delivery_and_the_served_contract() {
    let contract = published();
    let req = example_request(&contract);
    let delivery = run(&req, 0).unwrap();
    let names: Vec<&str> = delivery.ledger.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, LEDGER_COLUMNS);
    assert_eq!(delivery.ledger[2].1, LedgerValue::Int(8));
    assert_eq!(delivery.ledger[6].1, LedgerValue::Text("packed".into()));
    let served = criteria();
    assert_eq!(served["ledger"]["family_columns"], json!(LEDGER_COLUMNS));
    let mapped: Vec<String> = served["ledger"]["columns"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap().clone())
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    for column in LEDGER_COLUMNS {
        assert!(mapped.iter().any(|m| m == column), "{column}");
    }
    let fields: Vec<Value> = served["ledger"]["ledger_closed_fields"]
        .as_array()
        .unwrap()
        .clone();
    let keys: Vec<Value> = served["ledger"]["columns"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| json!(k))
        .collect();
    assert_eq!(fields, keys);
}

#[test]
fn served_contract_keeps_the_published_example_and_states_the_hash_rule() {
    let served = criteria();
    let contract = published();
    assert_eq!(served["exampleInput"], contract["exampleInput"]);
    assert_eq!(served["exampleResponse"], contract["exampleResponse"]);
    assert_eq!(served["inputSchema"], contract["inputSchema"]);
    assert_eq!(
        served["paths"],
        json!({"x402": PAID_PATH, "mpp": "/v1/mpp/context-budget-pack"})
    );
    assert_eq!(served["paymentWorkflow"]["mpp"]["supported"], true);
    assert_eq!(
        served["paymentWorkflow"]["supportedProtocols"],
        json!(["x402", "mpp"])
    );
    assert_eq!(served["paymentWorkflow"]["mpp"]["method"], "tempo");
    assert_eq!(served["requirementsProfile"]["facts"]["payment.mpp"], true);
    assert!(served["provenanceRule"]["inputSha256"]
        .as_str()
        .unwrap()
        .contains("JCS"));
    let codes = served["errorCodes"].as_array().unwrap();
    for refusal in Refusal::catalogue() {
        assert!(codes.contains(&json!(refusal.code())));
    }
}

#[test]
fn preflight_reports_figures_but_no_packing() {
    let contract = published();
    let req = example_request(&contract);
    let report = precheck(&req, 1_764_633_600_000).unwrap();
    assert_eq!(report["valid"], true);
    assert_eq!(report["checkedAt"], "2025-12-02T00:00:00.000Z");
    assert_eq!(report["input"]["candidates"], 2);
    assert_eq!(report["input"]["requiredCandidates"], 1);
    assert_eq!(report["input"]["depth"], 4);
    assert_eq!(
        report["inputSha256"],
        contract["exampleResponse"]["provenance"]["inputSha256"]
    );
    let text = compact_json(&Value::Object(report));
    assert!(!text.contains("Approval"));
    assert!(!text.contains("selected"));
}

#[test]
fn hash_rule_is_the_one_the_example_pins_and_not_its_neighbours() {
    use crate::engine::jsjson::to_jcs;
    use crate::engine::sign::sha256_hex;
    let contract = published();
    let input = &contract["exampleInput"];
    let response = &contract["exampleResponse"];
    let result = &response["result"];
    let (want_in, want_out) = (
        response["provenance"]["inputSha256"].as_str().unwrap(),
        response["provenance"]["outputSha256"].as_str().unwrap(),
    );
    let req = request(input);
    // The rule: JCS of the input with defaults filled in; compact JSON of the result in order.
    assert_eq!(
        sha256_hex(to_jcs(&report::normalized_input(&req)).as_bytes()),
        want_in
    );
    assert_eq!(sha256_hex(compact_json(result).as_bytes()), want_out);
    // Its neighbours do not match: JCS of the input as sent, compact input, JCS of the result.
    assert_ne!(sha256_hex(to_jcs(input).as_bytes()), want_in);
    assert_ne!(sha256_hex(compact_json(input).as_bytes()), want_in);
    assert_ne!(sha256_hex(to_jcs(result).as_bytes()), want_out);
}
