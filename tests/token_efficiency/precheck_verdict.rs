//! The free pre-check's verdict line is the verdict line the paid budget op returns for the same
//! body, check-end time aside (the criteria: the pre-check "returns the verdict line"; issue 25).
//! Where the op cannot shape the payload within the stated constraints it answers
//! `OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS`, and so must the pre-check, before any payment.
//!
//! Checked over every corpus case (a caller is supplied where the body has none: the pre-check
//! needs one, the op ignores it) and over thousands of random payloads built to exhaust the op in
//! each of its ways: keep_fields-protected content alone over the budget, a budget that cannot hold
//! the S-4 marker outside the protected spans, a kept field that the retained prefix must reach far
//! over the budget; with reserves (some above 2^32) and tiny budgets. Each side is run as its route
//! runs it: the pre-check on `parse`, the op on `parse_for_budget`, at different check-end times.
//! The headline figures the two share (payload tokens, effective budget, excess, fits, operation
//! set) must agree too.

use context_meter::engine::token_efficiency as te;
use context_meter::engine::tokenizer;
use context_meter::engine::ClosedError;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Map, Value};

const CALLER: &str = "11111111111111111111111111111111";
const PRECHECK_AT: u64 = 1_796_216_991_123;
const BUDGET_AT: u64 = PRECHECK_AT + 86_400_000 + 4_567;

/// The verdict line without its check-end time (the last ` — ` field).
fn without_time(verdict: &str) -> &str {
    let (line, time) = verdict.rsplit_once(" — ").expect("a verdict line");
    assert!(time.ends_with('Z'), "{verdict}");
    line
}

/// A route's headline figures, or its refusal code.
type Answer = Result<Value, &'static str>;

/// What the two routes answer for `body`: the pre-check's and the op's verdict lines (time aside)
/// and their shared headline figures, or the refusal code each gave. `None` when free validation
/// refuses the body (both routes then refuse it alike, before any engine runs).
fn answers(body: &[u8]) -> Option<(Answer, Answer)> {
    let mut free = te::parse(body).ok()?;
    free.caller.get_or_insert_with(|| CALLER.to_owned());
    let paid = te::parse_for_budget(body).expect("the budget parse accepts what parse accepts");
    let headline = |report: &Map<String, Value>, tokens: &Value| {
        json!({
            "verdict": without_time(report["verdict"].as_str().unwrap()),
            "payload_tokens": tokens,
            "effective_budget": report["effective_budget"],
            "excess_tokens": report["excess_tokens"],
            "fits": report["fits"],
            "operation_set": report["operation_set"],
        })
    };
    let pre = te::precheck(&free, PRECHECK_AT)
        .map(|report| headline(&report, &report["payload_tokens"]))
        .map_err(|refusal| refusal.code());
    let op = te::run(&paid, BUDGET_AT)
        .map(|delivery| headline(&delivery.report, &delivery.report["submitted"]["tokens"]))
        .map_err(|refusal| refusal.code());
    Some((pre, op))
}

/// The grade a verdict line states.
fn grade(answer: &Answer) -> &'static str {
    match answer {
        Ok(headline) => {
            let line = headline["verdict"].as_str().unwrap();
            if line.ends_with("NOT SHAPABLE WITHIN STATED CONSTRAINTS") {
                "not shapable"
            } else if line.ends_with("FITS") {
                "fits"
            } else {
                "over"
            }
        }
        Err(_) => "refused",
    }
}

#[test]
fn every_corpus_case_gets_the_same_verdict_from_both_routes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/token-efficiency/corpus.json"
    );
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut graded = std::collections::BTreeMap::new();
    for case in corpus["cases"].as_array().unwrap() {
        let Some(body) = case["body"].as_str() else {
            continue;
        };
        let Some((pre, op)) = answers(body.as_bytes()) else {
            continue;
        };
        assert_eq!(pre, op, "{}", case["id"]);
        *graded.entry(grade(&op)).or_insert(0) += 1;
    }
    // The corpus holds every grade, exhaustion included, in numbers.
    assert!(
        graded.get("fits") >= Some(&20)
            && graded.get("over") >= Some(&40)
            && graded.get("not shapable") >= Some(&12),
        "{graded:?}"
    );
}

const KEYS: [&str; 8] = ["id", "a", "b", "body", "results", "t", "tail", "2"];
const KEEP: [&str; 7] = ["id", "a", "a.b", "results", "results.t", "tail", "body"];
const WORDS: [&str; 9] = [
    "alpha ", "beta ", "gamma ", "\"q\" ", "é", "😀", "\n", "123 ", "[x] ",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => (-50i64..5000).prop_map(Value::from),
        2 => Just(json!("")),
        6 => prop::collection::vec(prop::sample::select(&WORDS[..]), 1..40)
            .prop_map(|w| Value::String(w.concat())),
        1 => (prop::sample::select(&WORDS[..]), 1990usize..2100)
            .prop_map(|(w, n)| Value::String(w.repeat(n / w.chars().count() + 1))),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            2 => prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            1 => (inner.clone(), 1usize..3).prop_map(|(v, n)| Value::Array(vec![v; n + 1])),
            4 => prop::collection::vec((prop::sample::select(&KEYS[..]), inner), 0..5).prop_map(
                |members| {
                    Value::Object(
                        members
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect::<Map<_, _>>(),
                    )
                }
            ),
        ]
    })
}

/// A payload: JSON most of the time, plain text sometimes; often a short `tail` field after a
/// long `body` (kept, it puts the S-4 floor far over a small budget).
fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        5 => value().prop_map(|v| serde_json::to_string(&v).unwrap()),
        3 => (value(), prop::collection::vec(prop::sample::select(&WORDS[..]), 20..200), leaf())
            .prop_map(|(before, body, tail)| {
                json!({"a": before, "body": body.concat(), "tail": tail}).to_string()
            }),
        1 => value().prop_map(|v| serde_json::to_string_pretty(&v).unwrap()),
        2 => prop::collection::vec(prop::sample::select(&WORDS[..]), 0..300)
            .prop_map(|w| w.concat()),
    ]
}

/// How the budget is stated.
#[derive(Debug, Clone, Copy)]
enum Budget {
    /// 1 ..= 40 tokens: below, at and above the S-4 marker's own count.
    Tiny(u64),
    /// A fraction of the payload's count (beyond it: fits).
    Fraction(f64),
}

#[derive(Debug)]
struct Case {
    payload: String,
    budget: Budget,
    /// Held back from the stated budget: 0 ..= 3, or 2^32 (the stated budget then carries it).
    reserve: u64,
    keep: Vec<&'static str>,
}

impl Case {
    fn body(&self) -> Vec<u8> {
        let effective = match self.budget {
            Budget::Tiny(b) => b,
            Budget::Fraction(f) => (tokenizer::count(&self.payload) as f64 * f).round() as u64 + 1,
        };
        let mut body = json!({
            "payload": self.payload,
            "budget_tokens": effective + self.reserve,
        });
        if self.reserve > 0 {
            body["reserve_tokens"] = json!(self.reserve);
        }
        if !self.keep.is_empty() {
            body["keep_fields"] = json!(self.keep);
        }
        serde_json::to_vec(&body).unwrap()
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        payload(),
        prop_oneof![
            1 => (1u64..=40).prop_map(Budget::Tiny),
            1 => (0.0f64..1.2).prop_map(Budget::Fraction),
        ],
        prop_oneof![3 => 0u64..4, 1 => Just(1u64 << 32)],
        prop::collection::vec(prop::sample::select(&KEEP[..]), 0..3),
    )
        .prop_map(|(payload, budget, reserve, keep)| Case {
            payload,
            budget,
            reserve,
            keep,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn a_random_body_gets_the_same_verdict_from_both_routes(case in case()) {
        let (pre, op) = answers(&case.body()).expect("generated bodies are valid");
        prop_assert_eq!(pre, op);
    }
}

/// The generator reaches every grade and every kind of exhaustion often (so the property above is
/// not vacuous), read from the op's exhaustion block: kept content alone over the budget; kept
/// content within it but the prefix that must reach the last kept field over it; that prefix
/// within it but not with the marker after it.
#[test]
fn the_generator_reaches_every_grade_and_every_kind_of_exhaustion() {
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..1000 {
        let case = case().new_tree(&mut runner).unwrap().current();
        let req = te::parse_for_budget(&case.body()).unwrap();
        let report = te::run(&req, 0).unwrap().report;
        let budget = req.effective_budget();
        let kind = match report.get("exhaustion") {
            None if report["fits"] == json!(true) => "fits",
            None => "over",
            Some(e) if e["protected_tokens"].as_u64().unwrap() > budget => "protected over",
            Some(e) if e["floor_tokens"].as_u64().unwrap() > budget => "floor over",
            Some(_) => "marker over",
        };
        *seen.entry(kind).or_insert(0) += 1;
    }
    eprintln!("grades of 1,000 generated cases: {seen:?}");
    for kind in [
        "fits",
        "over",
        "protected over",
        "floor over",
        "marker over",
    ] {
        assert!(seen.get(kind) >= Some(&20), "{kind}: {seen:?}");
    }
}
