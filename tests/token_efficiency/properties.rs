//! Property tests for token-efficiency/v1's budget op over random JSON payloads (and some text-only
//! ones), budgets from far below to above the payload's count, reserves and keep sets:
//!
//! (a) every delivered receipt reconciles: each entry's before-figures are the previous entry's
//!     after-figures, the token and character deltas telescope to submitted − shaped, and the shaped
//!     figures are the shaped text's own counts;
//! (b) replaying the receipt on the submitted payload reproduces the shaped payload exactly — the
//!     replayer (tests/support/src/receipt_replay.rs) is written from the published criteria and the
//!     served receipt fields, with its own parser order, `JSON.stringify` and operations;
//! and the shaped payload fits the effective budget unless the exhaustion block says why not.
//!
//! The generator favours what the operations act on: duplicate array entries, null/empty fields
//! nested so S-2 cascades, strings over S-3's 2,000 characters, array-index keys (JavaScript puts
//! them first), keep paths that protect some of those.

use context_meter::engine::token_efficiency as te;
use context_meter::engine::tokenizer;
use context_meter_test_support::receipt_replay::{replay, Replay};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const KEYS: [&str; 10] = [
    "id", "a", "b", "meta", "title", "results", "2", "10", "x y", "é",
];
const KEEP: [&str; 7] = ["a", "a.b", "meta", "results", "results.title", "id", "2"];
const WORDS: [&str; 8] = ["alpha ", "beta ", "\"q\" ", "\\", "é", "😀", "\n", "123 "];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        3 => (-50i64..50).prop_map(Value::from),
        1 => (-400i32..400).prop_map(|n| Value::from(f64::from(n) / 4.0)),
        3 => Just(json!("")),
        4 => prop::collection::vec(prop::sample::select(&WORDS[..]), 1..6)
            .prop_map(|w| Value::String(w.concat())),
        1 => (prop::sample::select(&WORDS[..]), 1900usize..2200)
            .prop_map(|(w, n)| Value::String(w.repeat(n / w.chars().count().max(1) + 1))),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            // Arrays of repeats: S-1's material.
            2 => (inner.clone(), 1usize..4, prop::collection::vec(inner.clone(), 0..3)).prop_map(
                |(v, n, rest)| {
                    let mut items = vec![v; n + 1];
                    items.extend(rest);
                    Value::Array(items)
                }
            ),
            4 => prop::collection::vec((prop::sample::select(&KEYS[..]), inner), 0..6).prop_map(
                |members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<_, _>>())
            ),
        ]
    })
}

/// A payload string: JSON (compact or pretty) most of the time, plain text sometimes.
fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => value().prop_map(|v| serde_json::to_string(&v).unwrap()),
        2 => value().prop_map(|v| serde_json::to_string_pretty(&v).unwrap()),
        1 => prop::collection::vec(prop::sample::select(&WORDS[..]), 0..400)
            .prop_map(|w| format!("text: {}", w.concat())),
    ]
}

#[derive(Debug)]
struct Case {
    payload: String,
    budget: u64,
    reserve: u64,
    keep: Vec<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        payload(),
        0.0f64..1.3,
        0u64..4,
        prop::collection::vec(prop::sample::select(&KEEP[..]), 0..3),
    )
        .prop_map(|(payload, fraction, reserve, keep)| {
            // Any budget is legal; sizing it against the payload's own count reaches every phase.
            let tokens = tokenizer::count(&payload) as f64;
            let budget = (tokens * fraction).round() as u64 + reserve + 1;
            let mut keep: Vec<String> = keep.into_iter().map(str::to_owned).collect();
            keep.dedup();
            Case {
                payload,
                budget,
                reserve,
                keep,
            }
        })
}

fn deliver(case: &Case) -> (te::Request, Map<String, Value>) {
    let mut body = json!({"payload": case.payload, "budget_tokens": case.budget, "reserve_tokens": case.reserve});
    if !case.keep.is_empty() {
        body["keep_fields"] = json!(case.keep);
    }
    let req =
        te::parse_for_budget(body.to_string().as_bytes()).expect("generated bodies are valid");
    let delivery = te::run(&req, 0).expect("the budget op delivers every valid body");
    (req, delivery.report)
}

fn figure(v: &Value, name: &str) -> u64 {
    v[name].as_u64().unwrap_or_else(|| panic!("missing {name}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn receipts_always_reconcile(case in case()) {
        let (req, report) = deliver(&case);
        let submitted = &report["submitted"];
        let shaped = &report["shaped"];
        let (mut tokens, mut chars) = (figure(submitted, "tokens"), figure(submitted, "chars"));
        let (mut sum_tokens, mut sum_chars) = (0i64, 0i64);
        for entry in report["receipt"].as_array().unwrap() {
            prop_assert_eq!(figure(entry, "tokens_before"), tokens);
            prop_assert_eq!(figure(entry, "chars_before"), chars);
            tokens = figure(entry, "tokens_after");
            chars = figure(entry, "chars_after");
            prop_assert_eq!(entry["delta_tokens"].as_i64().unwrap(), figure(entry, "tokens_before") as i64 - tokens as i64);
            prop_assert_eq!(entry["delta_chars"].as_i64().unwrap(), figure(entry, "chars_before") as i64 - chars as i64);
            sum_tokens += entry["delta_tokens"].as_i64().unwrap();
            sum_chars += entry["delta_chars"].as_i64().unwrap();
        }
        prop_assert_eq!((tokens, chars), (figure(shaped, "tokens"), figure(shaped, "chars")));
        prop_assert_eq!(sum_tokens, figure(submitted, "tokens") as i64 - figure(shaped, "tokens") as i64);
        prop_assert_eq!(sum_chars, figure(submitted, "chars") as i64 - figure(shaped, "chars") as i64);
        let text = report["shaped_payload"].as_str().unwrap();
        prop_assert_eq!(tokenizer::count(text) as u64, figure(shaped, "tokens"));
        prop_assert_eq!(text.chars().count() as u64, figure(shaped, "chars"));
        if report.get("exhaustion").is_none() {
            prop_assert!(figure(shaped, "tokens") <= req.effective_budget());
        }
    }

    #[test]
    fn replaying_the_receipt_reproduces_the_shaped_payload(case in case()) {
        let (req, report) = deliver(&case);
        let outcome = replay(&case.payload, req.effective_budget(), &req.keep_fields, &report);
        // The generator stays inside what the replayer mirrors: nothing may be skipped.
        prop_assert!(matches!(outcome, Ok(Replay::Verified { .. })), "{:?}", outcome);
    }
}

/// S-1 examines an array before its entries' contents (the criteria's visit order), so an outer
/// array may keep entries that became identical only when their own duplicates went: proptest found
/// `[[null,null],[null]]`, whose S-1 leaves `[[null],[null]]`. The replayer must accept that and
/// refuse a receipt that dedups the outer array as well.
#[test]
fn s1_examines_an_array_before_its_entries() {
    let case = Case {
        payload: "[[null,null],[null]]".to_owned(),
        budget: 5,
        reserve: 0,
        keep: Vec::new(),
    };
    let (req, report) = deliver(&case);
    let replayed = replay(
        &case.payload,
        req.effective_budget(),
        &req.keep_fields,
        &report,
    );
    assert!(
        matches!(replayed, Ok(Replay::Verified { .. })),
        "{replayed:?}"
    );
    let s1: Vec<&Value> = report["receipt"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["op"] == "S-1")
        .collect();
    assert_eq!(s1.len(), 1, "{s1:?}");
    assert_eq!(
        (s1[0]["path"].as_str(), s1[0]["index"].as_u64()),
        (Some("[0]"), Some(1))
    );
}

/// The generator reaches every operation (so the properties above are not vacuous).
#[test]
fn the_generator_reaches_every_operation() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeMap::new();
    let mut exhausted = 0;
    for _ in 0..200 {
        let case = case().new_tree(&mut runner).unwrap().current();
        let (_, report) = deliver(&case);
        for entry in report["receipt"].as_array().unwrap() {
            *seen
                .entry(entry["op"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
        exhausted += usize::from(report.get("exhaustion").is_some());
    }
    for op in ["S-1", "S-2", "S-3", "S-4"] {
        assert!(seen.get(op).copied().unwrap_or(0) >= 5, "{op}: {seen:?}");
    }
    assert!(exhausted >= 1, "no exhausted case");
}

/// The replayer is an oracle that can say no: a delivered report with every operation verifies, and
/// each single tampering of it (the shaped text, an S-1 index, an S-2 path, an S-3 figure, S-4's
/// cut) is caught.
#[test]
fn the_replayer_catches_every_tampering() {
    let words = "w ".repeat(1500);
    let payload = format!(
        r#"{{"id":"k","results":[{{"title":"a","text":"{words}"}},{{"title":"a"}},{{"title":"a"}}],"meta":null,"a":{{"b":""}},"z":{{"y":[]}}}}"#
    );
    let case = Case {
        payload,
        budget: 45,
        reserve: 0,
        keep: vec!["id".to_owned()],
    };
    let (req, report) = deliver(&case);
    let check = |report: &Map<String, Value>| {
        replay(
            &case.payload,
            req.effective_budget(),
            &req.keep_fields,
            report,
        )
    };
    let ops: Vec<&str> = report["receipt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["op"].as_str().unwrap())
        .collect();
    for op in ["S-1", "S-2", "S-3", "S-4"] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
    }
    assert_eq!(check(&report), Ok(Replay::Verified { entries: ops.len() }));

    let tamper = |edit: &dyn Fn(&mut Map<String, Value>)| {
        let mut bad = report.clone();
        edit(&mut bad);
        bad
    };
    let entry_of = |op: &str| ops.iter().position(|o| *o == op).unwrap();
    let tampered = [
        tamper(&|r| {
            let text = r["shaped_payload"].as_str().unwrap().replacen('k', "K", 1);
            r["shaped_payload"] = json!(text);
        }),
        tamper(&|r| r["receipt"][entry_of("S-1")]["index"] = json!(0)),
        tamper(&|r| r["receipt"][entry_of("S-2")]["path"] = json!("id")),
        tamper(&|r| {
            let e = &mut r["receipt"][entry_of("S-3")];
            e["chars_after"] = json!(e["chars_after"].as_u64().unwrap() + 1);
        }),
        tamper(&|r| {
            let e = &mut r["receipt"][entry_of("S-4")];
            e["tokens_after"] = json!(e["tokens_after"].as_u64().unwrap() - 1);
        }),
        tamper(&|r| {
            r["receipt"]
                .as_array_mut()
                .unwrap()
                .swap(0, entry_of("S-2"))
        }),
    ];
    for (i, bad) in tampered.iter().enumerate() {
        assert!(check(bad).is_err(), "tampering {i} not caught");
    }
}

/// Every delivery of the published corpus (expected outputs from the independent JavaScript
/// implementation) replays, where the replayer mirrors the payload; most of them do.
#[test]
fn corpus_deliveries_replay() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/token-efficiency/corpus.json"
    );
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut verified, mut with_receipt) = (0, 0);
    for case in corpus["cases"].as_array().unwrap() {
        let Some(body) = case["body"].as_str() else {
            continue;
        };
        let Ok(req) = te::parse_for_budget(body.as_bytes()) else {
            continue;
        };
        let report = te::run(&req, 0).unwrap().report;
        let entries = report["receipt"].as_array().unwrap().len() as u64;
        let chars = figure(&report["submitted"], "chars");
        if (entries + 1) * chars > 20_000_000 {
            continue;
        }
        let payload: Value = serde_json::from_str(body).unwrap();
        let outcome = replay(
            payload["payload"].as_str().unwrap(),
            req.effective_budget(),
            &req.keep_fields,
            &report,
        );
        match outcome {
            Ok(Replay::Verified { entries }) => {
                verified += 1;
                with_receipt += usize::from(entries > 0);
            }
            Ok(Replay::Skipped(_)) => {}
            Err(why) => panic!("{}: {why}", case["id"]),
        }
    }
    assert!(
        verified >= 60 && with_receipt >= 30,
        "{verified} / {with_receipt}"
    );
}
