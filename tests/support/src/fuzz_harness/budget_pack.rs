//! context-budget-pack: `parse` → `precheck` (free preflight) → `run` (the paid pack).
//!
//! Mode byte even: the rest is the raw request body. Odd: a valid-shaped body is built from the
//! rest (sources from a small piece alphabet with astral and escaped characters, candidates with
//! spans that may be reversed, run past their source or split a surrogate pair, duplicates,
//! required flags, priorities, reserved units), so mutations exercise the packing itself.
//!
//! Checks: refusals closed and deterministic; a valid preflight means the paid call does not refuse
//! (and a refused preflight means it does, with the same refusal); the pack never exceeds its
//! budget unless the reserved units alone do; `usedUnits` = reserved + the selected costs; every
//! candidate is selected or excluded exactly once; selected texts are exact UTF-16 slices of their
//! sources; `outputSha256` is the SHA-256 of the compact result; nothing of the input reaches the
//! ledger or the preflight's figures; same body → same bytes.

use super::{
    assert_closed_refusal, bytes_of, delivered_deterministically, parsed_or_closed_refusal,
    raw_or_built_body, Cursor, CANARY, NOW_MS,
};
use context_meter::engine::budget_pack::{self as bp, report::compact_json};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashSet;

const PIECES: [&str; 12] = [
    "a", "the ", " ", ".", "\"", "\\", "\n", "é", "😀", "\u{2028}", "\u{E000}", "𝄞",
];

pub fn check(data: &[u8]) {
    check_body(&raw_or_built_body(data, |rest, _| built_body(rest)));
}

fn built_body(rest: &[u8]) -> Vec<u8> {
    let mut c = Cursor::new(rest);
    let mut sources = Vec::new();
    let mut lengths = Vec::new();
    for s in 0..c.byte() % 4 {
        let mut text = String::new();
        for _ in 0..c.byte() % 16 {
            text.push_str(PIECES[usize::from(c.byte()) % PIECES.len()]);
        }
        lengths.push(text.encode_utf16().count() as u64);
        sources.push(json!({"id": format!("s{s}"), "text": text}));
    }
    let mut candidates = Vec::new();
    for i in 0..c.byte() % 16 {
        let which = usize::from(c.byte());
        let (source_id, len) = match lengths.get(which % (lengths.len() + 1)) {
            Some(&len) => (format!("s{}", which % (lengths.len() + 1)), len),
            None => ("missing".to_owned(), 4),
        };
        let start = u64::from(c.byte()) % (len + 2);
        let end = u64::from(c.byte()) % (len + 2);
        let flags = c.byte();
        let mut cand = Map::new();
        cand.insert("id".into(), json!(format!("c{}", i ^ (flags & 0x3))));
        cand.insert("sourceId".into(), json!(source_id));
        cand.insert("start".into(), json!(start));
        cand.insert("end".into(), json!(end));
        cand.insert("costUnits".into(), json!(u64::from(c.byte() % 24) + 1));
        if flags & 0x10 != 0 {
            cand.insert("priority".into(), json!(flags >> 6));
        }
        if flags & 0x20 != 0 {
            cand.insert("required".into(), json!(flags & 0x4 != 0));
        }
        candidates.push(Value::Object(cand));
    }
    let mut input = Map::new();
    input.insert("sources".into(), Value::Array(sources));
    input.insert("candidates".into(), Value::Array(candidates));
    input.insert("budgetUnits".into(), json!(c.byte() % 64));
    let flags = c.byte();
    if flags & 1 != 0 {
        input.insert("reservedUnits".into(), json!(c.byte() % 16));
    }
    if flags & 2 != 0 {
        input.insert("deduplicate".into(), json!(flags & 4 != 0));
    }
    serde_json::to_vec(&Value::Object(input)).expect("a built body serialises")
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn check_body(body: &[u8]) {
    let Some(req) = parsed_or_closed_refusal(|| bp::parse(body)) else {
        return;
    };
    let pre = bp::precheck(&req, NOW_MS);
    let paid = bp::run(&req, NOW_MS);
    let delivery = match (pre, paid) {
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "preflight and paid call refuse differently");
            assert_closed_refusal(&a);
            return;
        }
        (Ok(_), Err(_)) => panic!("a valid preflight, then the paid call refused"),
        (Err(_), Ok(_)) => panic!("a refused preflight, then the paid call delivered"),
        (Ok(pre), Ok(_)) => {
            assert!(pre.get("result").is_none(), "the preflight leaks the pack");
            assert!(
                !bytes_of(&pre).contains(CANARY),
                "the preflight echoes input"
            );
            delivered_deterministically(|| bp::run(&req, NOW_MS), bp::LEDGER_COLUMNS)
        }
    };

    let report = &delivery.report;
    let keys: Vec<&str> = report.keys().map(String::as_str).collect();
    assert_eq!(keys, ["operation", "version", "result", "provenance"]);
    let result = &report["result"];
    assert_eq!(
        report["provenance"]["outputSha256"],
        json!(sha256_hex(compact_json(result).as_bytes()))
    );

    // Never over budget (unless reserved alone is); usedUnits is what was selected.
    let budget = u64::from(req.budget_units);
    let reserved = u64::from(req.reserved_units);
    let selected = result["selected"].as_array().expect("selected");
    let costs: u64 = selected
        .iter()
        .map(|s| s["costUnits"].as_u64().expect("costUnits"))
        .sum();
    assert_eq!(result["usedUnits"].as_u64(), Some(reserved + costs));
    if reserved <= budget {
        assert!(reserved + costs <= budget, "pack over budget");
        assert_eq!(result["withinBudget"], json!(true));
    }
    assert_eq!(
        result["remainingUnits"].as_u64(),
        Some(budget.saturating_sub(reserved + costs))
    );

    // Each candidate once; selected texts are exact slices.
    let mut seen = HashSet::new();
    let excluded = result["excluded"].as_array().expect("excluded");
    for item in selected.iter().chain(excluded) {
        assert!(seen.insert(item["id"].as_str().expect("id").to_owned()));
    }
    let wanted: HashSet<String> = req.candidates.iter().map(|c| c.id.clone()).collect();
    assert_eq!(seen, wanted, "selected ∪ excluded is not the candidate set");
    for s in selected {
        let source = req
            .sources
            .iter()
            .find(|src| s["sourceId"] == json!(src.id))
            .expect("a selected span's source exists");
        let (start, end) = (
            s["start"].as_u64().expect("start") as usize,
            s["end"].as_u64().expect("end") as usize,
        );
        assert!(start <= end && end <= source.text.len());
        let slice = String::from_utf16(&source.text[start..end]).expect("no split surrogate");
        assert_eq!(s["text"].as_str(), Some(slice.as_str()));
    }
}
