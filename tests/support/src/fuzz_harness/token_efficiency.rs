//! token-efficiency/v1: `parse` → `precheck` → `run` (the paid budget op).
//!
//! Mode byte even: the rest is the raw request body. Odd: a body is built around the rest as the
//! payload string, with budget, reserve, keep_fields and caller read from the next bytes (so
//! mutations land in the shaping code rather than in the envelope).
//!
//! Checks: the fast body path reads every body as the general path does; refusals are members of
//! `Refusal::ALL` and closed; an accepted body never fails the paid op (a `receipt_unreconciled`
//! refusal means the engine shaped wrongly); the report's receipt
//! chain telescopes to submitted − shaped for tokens and characters; the shaped figures are the
//! shaped text's own counts; the shaped text fits unless the exhaustion block says why not; the
//! free pre-check agrees with the paid op; the receipt replays on the submission to the shaped
//! payload ([`super::receipt_replay`]); the ledger carries nothing of the payload; same body →
//! same bytes.

use super::receipt_replay::{replay, Replay};
use super::{
    delivered_deterministically, parsed_or_closed_refusal, raw_or_built_body, Cursor, NOW_MS,
};
use context_meter::engine::token_efficiency as te;
use context_meter::engine::{tokenizer, ClosedError};
use serde_json::{json, Map, Value};

/// Keep paths the built bodies draw from (they match the seeds' common field names).
const KEEP_CHOICES: [&str; 8] = [
    "id",
    "results",
    "results.title",
    "a",
    "a.b",
    "meta",
    "data.items",
    "text",
];
const CALLER: &str = "11111111111111111111111111111111";
/// Replays cost one full stringify and count per receipt entry; beyond this budget of
/// entries × characters the (still fully checked) delivery is not replayed.
const REPLAY_WORK: u64 = 1_000_000;

pub fn check(data: &[u8]) {
    check_body(&raw_or_built_body(data, |rest, _| built_body(rest)));
}

fn built_body(rest: &[u8]) -> Vec<u8> {
    let mut c = Cursor::new(rest);
    let budget = u64::from(c.u16() % 2048) + 1;
    let reserve = u64::from(c.byte()) % budget;
    let flags = c.byte();
    let keep_mask = c.byte();
    let keep: Vec<&str> = KEEP_CHOICES
        .iter()
        .enumerate()
        .filter(|(i, _)| keep_mask & (1 << i) != 0)
        .map(|(_, k)| *k)
        .collect();
    let payload = String::from_utf8_lossy(c.rest()).into_owned();
    let mut body = Map::new();
    body.insert("payload".into(), json!(payload));
    body.insert("budget_tokens".into(), json!(budget));
    if flags & 1 != 0 {
        body.insert("reserve_tokens".into(), json!(reserve));
    }
    if !keep.is_empty() {
        body.insert("keep_fields".into(), json!(keep));
    }
    if flags & 2 != 0 {
        body.insert("caller".into(), json!(CALLER));
    }
    serde_json::to_vec(&Value::Object(body)).expect("a built body serialises")
}

fn num(report: &Map<String, Value>, pointer: &str) -> u64 {
    Value::Object(report.clone())
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("report without {pointer}"))
}

pub fn check_body(body: &[u8]) {
    // The fast body path answers exactly as the general path, or leaves the body to it.
    assert_eq!(
        format!("{:?}", te::parse(body)),
        format!("{:?}", te::parse_general(body)),
        "the fast body path and the general path disagree"
    );
    // The paid route's parse: the census rides the canonical check.
    let Some(req) = parsed_or_closed_refusal(|| te::parse_for_budget(body)) else {
        if let Err(refusal) = te::parse(body) {
            assert!(te::Refusal::ALL.contains(&refusal), "{}", refusal.code());
        }
        return;
    };
    let budget = req.effective_budget();
    assert!(budget >= 1 && req.reserve_tokens < req.budget_tokens);

    let delivery = delivered_deterministically(|| te::run(&req, NOW_MS), te::LEDGER_COLUMNS);
    let report = &delivery.report;

    // The receipt telescopes, entry by entry and in total.
    let submitted_tokens = num(report, "/submitted/tokens");
    let submitted_chars = num(report, "/submitted/chars");
    let shaped_tokens = num(report, "/shaped/tokens");
    let shaped_chars = num(report, "/shaped/chars");
    let receipt = report["receipt"].as_array().expect("receipt array");
    let (mut tokens, mut chars) = (submitted_tokens, submitted_chars);
    let (mut delta_tokens, mut delta_chars) = (0i64, 0i64);
    for entry in receipt {
        let get = |name: &str| entry[name].as_u64().expect("receipt figure");
        assert_eq!((get("tokens_before"), get("chars_before")), (tokens, chars));
        tokens = get("tokens_after");
        chars = get("chars_after");
        let dt = entry["delta_tokens"].as_i64().expect("delta_tokens");
        let dc = entry["delta_chars"].as_i64().expect("delta_chars");
        assert_eq!(dt, get("tokens_before") as i64 - tokens as i64);
        assert_eq!(dc, get("chars_before") as i64 - chars as i64);
        delta_tokens += dt;
        delta_chars += dc;
    }
    assert_eq!((tokens, chars), (shaped_tokens, shaped_chars));
    assert_eq!(delta_tokens, submitted_tokens as i64 - shaped_tokens as i64);
    assert_eq!(delta_chars, submitted_chars as i64 - shaped_chars as i64);

    // The shaped figures are the shaped text's own.
    let shaped = report["shaped_payload"].as_str().expect("shaped_payload");
    assert_eq!(tokenizer::count(shaped) as u64, shaped_tokens);
    assert_eq!(shaped.chars().count() as u64, shaped_chars);
    assert_eq!(
        report["applications"]["total"].as_u64(),
        Some(receipt.len() as u64)
    );

    // Fits, or the exhaustion block says why not (and nothing was applied).
    let exhausted = report.get("exhaustion").is_some();
    let verdict = report["verdict"].as_str().expect("verdict");
    let head = format!(
        "PAYLOAD BUDGET — payload tokens: {submitted_tokens} — effective budget: {budget} — "
    );
    assert!(verdict.starts_with(&head), "verdict grammar");
    if exhausted {
        assert!(receipt.is_empty() && submitted_tokens > budget);
        assert_eq!(shaped_tokens, submitted_tokens);
        assert!(verdict.contains("OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS"));
    } else {
        assert!(shaped_tokens <= budget, "shaped payload over budget");
        if submitted_tokens <= budget {
            assert!(receipt.is_empty() && verdict.contains(" — FITS — "));
        } else {
            let over = format!(" — OVER by {} — ", submitted_tokens - budget);
            assert!(verdict.contains(&over));
        }
    }

    // The free pre-check is the paid op's headline, its verdict line included.
    match te::precheck(&req, NOW_MS) {
        Ok(pre) => {
            assert!(req.caller.is_some());
            assert_eq!(pre["verdict"], report["verdict"]);
            assert_eq!(num(&pre, "/payload_tokens"), submitted_tokens);
            assert_eq!(num(&pre, "/payload_chars"), submitted_chars);
            assert_eq!(pre["operation_set"], report["operation_set"]);
            assert!(pre.get("shaped_payload").is_none() && pre.get("receipt").is_none());
        }
        Err(refusal) => {
            assert!(req.caller.is_none());
            assert_eq!(refusal, te::Refusal::CallerMissing);
        }
    }

    // The receipt replays on the submission (when the replay is cheap enough).
    let work = (receipt.len() as u64 + 1) * submitted_chars.max(shaped_chars);
    if work > REPLAY_WORK {
        return;
    }
    let Some(payload) = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|b| b.get("payload").and_then(Value::as_str).map(str::to_owned))
    else {
        return;
    };
    match replay(&payload, budget, &req.keep_fields, report) {
        Ok(Replay::Verified { .. }) | Ok(Replay::Skipped(_)) => {}
        Err(why) => panic!("receipt replay: {why}"),
    }
}
