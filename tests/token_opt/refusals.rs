//! Free validation of the levers op: every refusal is closed (static message, numeric figures),
//! happens before any paid work, and never carries any part of the body.

use context_meter::engine::token_opt::{criteria, parse_levers, run_levers, LEVERS_BODY_CAP};
use context_meter::engine::ClosedError;
use serde_json::{json, Value};

const SECRET: &str = "SECRET-91c2";

fn refusal(body: &[u8]) -> (String, u16, Vec<(&'static str, u64)>) {
    let r = parse_levers(body).expect_err("must refuse");
    assert!(!r.message().contains(SECRET));
    (r.code().to_owned(), r.status(), r.figures())
}

fn code(body: Value) -> String {
    refusal(body.to_string().as_bytes()).0
}

#[test]
fn body_level_refusals() {
    assert_eq!(
        refusal(&vec![b' '; LEVERS_BODY_CAP + 1]),
        (
            "CAP-EXCEEDED:body_bytes".into(),
            413,
            vec![("cap_bytes", 262_144)]
        )
    );
    assert_eq!(refusal(&[0xc3, 0x28]).0, "body_not_utf8");
    assert_eq!(
        refusal(format!("{{\"c9\": {SECRET}").as_bytes()).0,
        "malformed_body"
    );
    assert_eq!(refusal(b"\"c9\"").0, "body_not_object");
    assert_eq!(code(json!({})), "no_lever_requested");
    assert_eq!(code(json!({ SECRET: 1 })), "unknown_field");
    assert_eq!(
        code(json!({"truncate": {"blocks": [], "max_chars": 1, "maxChars": 2}})),
        "unknown_field"
    );
}

#[test]
fn lever_level_refusals_name_positions_only() {
    let c9 = |v: Value| code(json!({ "c9": v }));
    assert_eq!(
        c9(json!({"candidates": [], "query": 5})),
        "c9_query_invalid"
    );
    assert_eq!(c9(json!({"query": "q"})), "c9_candidate_invalid");
    let bad_score = json!({"candidates": [{"id": "a", "category": "c", "score": 1, "text": "t"},
                                          {"id": "b", "category": "c", "score": "high", "text": SECRET}]});
    assert_eq!(
        refusal(json!({ "c9": bad_score }).to_string().as_bytes()),
        (
            "c9_candidate_invalid".into(),
            400,
            vec![("candidate_index", 1)]
        )
    );
    assert_eq!(
        c9(json!({"candidates": [], "per_category": {"c": {"top_k": -1}}})),
        "c9_per_category_invalid"
    );
    assert_eq!(
        c9(json!({"candidates": [], "per_category": {"c": {"top_k": 1.5}}})),
        "c9_per_category_invalid"
    );
    assert_eq!(
        c9(json!({"candidates": [], "per_category": {"c": {"cutoff": "0.3"}}})),
        "c9_per_category_invalid"
    );
    assert_eq!(
        code(json!({"filter": {"response": [], "allowed": []}})),
        "filter_invalid"
    );
    assert_eq!(
        code(json!({"filter": {"response": {}, "allowed": [1]}})),
        "filter_invalid"
    );
    assert_eq!(
        code(json!({"truncate": {"blocks": ["a"], "max_chars": -1}})),
        "truncate_invalid"
    );
    assert_eq!(
        code(json!({"truncate": {"blocks": "a", "max_chars": 1}})),
        "truncate_invalid"
    );
    assert_eq!(
        refusal(
            json!({"schema": {"tools": [{"name": "a"}, {"name": "b", "detail_fetches": -2}]}})
                .to_string()
                .as_bytes()
        ),
        ("schema_tool_invalid".into(), 400, vec![("tool_index", 1)])
    );
}

#[test]
fn a_missing_required_field_is_a_clear_free_refusal() {
    let body = json!({"filter": {"response": {"id": 1}, "allowed": ["id"], "required": ["id", SECRET, "url"]}});
    assert_eq!(
        refusal(body.to_string().as_bytes()),
        (
            "filter_required_missing".into(),
            422,
            vec![("missing_required", 2), ("first_missing_index", 1)]
        )
    );
}

#[test]
fn every_refusal_code_is_published_in_the_criteria() {
    let c = criteria();
    let published: Vec<&str> = c["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    for code in [
        "CAP-EXCEEDED:body_bytes",
        "body_not_utf8",
        "malformed_body",
        "body_not_object",
        "unknown_field",
        "no_lever_requested",
        "c9_query_invalid",
        "c9_candidate_invalid",
        "c9_per_category_invalid",
        "filter_invalid",
        "filter_required_missing",
        "truncate_invalid",
        "schema_tool_invalid",
        "payload_missing",
        "toon_options_invalid",
    ] {
        assert!(published.contains(&code), "{code} unpublished");
    }
    assert_eq!(c["criteria_id"], "token-opt/v1");
    assert_eq!(c["price"]["levers"]["usdc_units_per_call"], 10_000);
    assert_eq!(c["price"]["toon"]["usdc_units_per_call"], 5_000);
}

#[test]
fn the_ledger_carries_counts_only_and_the_gate_keeps_disabled_levers() {
    let body = json!({
        "c9": {"candidates": [{"id": SECRET, "category": "c", "score": 0.9, "text": SECRET}]},
        "truncate": {"blocks": ["short"], "max_chars": 100},
    });
    let req = parse_levers(body.to_string().as_bytes()).unwrap();
    let d = run_levers(&req, 0).unwrap();
    for (_, v) in &d.ledger {
        assert!(!format!("{v:?}").contains(SECRET));
    }
    let r = Value::Object(d.report);
    // One candidate selected: the injected context equals the baseline → net 0 → disabled, still listed.
    assert_eq!(r["gate"]["c9"], false);
    // Nothing truncated: before = after, net 0 → disabled, kept.
    assert_eq!(r["gate"]["filter-truncate"], false);
    assert_eq!(r["measurements"].as_array().unwrap().len(), 2);
    assert!(r["verdict"]
        .as_str()
        .unwrap()
        .starts_with("TOKEN-OPT LEVERS — measured: 2 — enabled: 0 of 2 — net tokens: 0 — "));
}
