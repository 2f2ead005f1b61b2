//! token-efficiency/v1: fit one tool-result payload to a token budget (S-1..S-4) with an exact receipt.
//!
//! Family API (called by the edge): [`parse`] validates the raw body for free, [`precheck`] returns
//! the free headline (verdict, counts, excess, operation set — never a shaped payload or receipt),
//! [`run`] is the paid budget op (verdict, shaped payload, drop receipt, ledger columns), and
//! [`criteria`] is the served criteria document.
//!
//! Invariants: pure and deterministic (the clock comes in as `now_ms`); counts are exact under the
//! published tokenizer; characters are Unicode code points; the canonical form is JavaScript's
//! `JSON.stringify(JSON.parse(payload))` ([`payload`]); every shaped payload is reconciled against
//! its receipt before it leaves ([`receipt::reconcile`]), failing closed with
//! [`Refusal::ReceiptUnreconciled`]; no refusal or ledger value carries any part of the submission.
//!
//! Pieces, each one idea, imported downwards only: [`request`] (free validation; [`body`] its fast
//! path, [`payload`] the canonical form), [`published`] (caps and ledger columns), [`census`] (the proof S-1..S-3 find nothing), [`ops`]
//! (the operations' names and constants), [`shape`] (the tree, its edits, S-1..S-4),
//! [`receipt`] (entries and reconciliation), [`report`] (verdicts and report bodies).

pub mod body;
pub mod criteria_doc;
pub mod payload;
pub mod published;
pub mod refusal;
pub mod report;
pub mod request;
/// The engine of the budget op (census, operations, tree and S-1..S-4, receipt): its own package
/// (src/engine/token_efficiency/shaping), built for speed; its modules are re-exported here.
pub use context_meter_te_shaping::{census, ops, receipt, shape};

pub use criteria_doc::criteria;
pub use published::{BODY_CAP, LEDGER_COLUMNS};
pub use refusal::Refusal;
pub use request::{parse, parse_for_budget, parse_general, Request};

use crate::engine::{tokenizer, Delivery};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The free pre-check: the headline only (unsigned; the edge signs it). Requires a caller wallet.
///
/// Its verdict line is the one [`run`] returns for the same body (check-end time aside): an OVER
/// payload is graded by running the budget op's engine ([`grade`]), so where the op cannot shape
/// it within the stated constraints the pre-check says NOT SHAPABLE before any payment. The shaped
/// payload and the receipt stay the paid substance: neither leaves this function.
pub fn precheck(req: &Request, now_ms: u64) -> Result<Map<String, Value>, Refusal> {
    if req.caller.is_none() {
        return Err(Refusal::CallerMissing);
    }
    let (tokens, grade) = grade(req)?;
    Ok(report::precheck_report(
        req,
        tokens,
        req.canonical_chars,
        grade,
        now_ms,
    ))
}

/// The submitted token count and the grade the budget op gives `req`: FITS without shaping when
/// the payload is within the effective budget, otherwise the op's own engine decides between OVER
/// by E and NOT SHAPABLE ([`report::grade`] of [`shape_submission`]'s result).
///
/// Cost: a token is at least one byte, so a canonical text of at most B bytes fits and is only
/// counted. Any other text is tokenized once with the prefix analysis the S-4 search needs (which
/// costs what a plain count costs), so an OVER payload is not tokenized twice.
pub fn grade(req: &Request) -> Result<(u64, report::Grade), Refusal> {
    let budget = req.effective_budget();
    if req.canonical.len() as u64 <= budget {
        let tokens = tokenizer::count(&req.canonical) as u64;
        return Ok((tokens, report::Grade::Fits));
    }
    let submitted = tokenizer::Tokenized::new(&req.canonical);
    let tokens = submitted.count() as u64;
    if tokens <= budget {
        return Ok((tokens, report::Grade::Fits));
    }
    let shaping = shape_submission(req, &submitted)?;
    Ok((tokens, report::grade(&shaping, budget)))
}

/// The budget op's engine over `req`'s text, tokenized once as `submitted`: S-1..S-4 within the
/// effective budget, reconciled (an unreconciled receipt fails closed).
fn shape_submission(
    req: &Request,
    submitted: &tokenizer::Tokenized<'_>,
) -> Result<receipt::Shaping, Refusal> {
    let keep: HashSet<String> = req.keep_fields.iter().cloned().collect();
    let submission = shape::Submission {
        text: submitted,
        chars: req.canonical_chars,
        json: req.is_json,
        untouched: req.untouched,
    };
    shape::shape(&submission, &keep, req.effective_budget())
        .map_err(|_| Refusal::ReceiptUnreconciled)
}

/// The paid budget op: verdict, shaped payload, drop receipt; fails closed if the receipt does not
/// reconcile.
pub fn run(req: &Request, now_ms: u64) -> Result<Delivery, Refusal> {
    // Tokenized once: the submitted count, and the S-4 search when nothing edits the text first.
    // The json operation set reads its tree straight from the canonical text.
    let submitted = tokenizer::Tokenized::new(&req.canonical);
    let shaping = shape_submission(req, &submitted)?;
    let (report, ledger) = report::budget_report(req, shaping, now_ms);
    Ok(Delivery::delivered(report, ledger))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ClosedError;
    use serde_json::json;

    const CALLER: &str = "11111111111111111111111111111111";

    fn refusal(body: &str) -> &'static str {
        parse(body.as_bytes()).unwrap_err().code()
    }

    #[test]
    fn bad_input_is_refused_with_closed_codes() {
        assert_eq!(parse(&[0xff, 0x7b]).unwrap_err().code(), "body_not_utf8");
        assert_eq!(refusal("{"), "body_not_json");
        assert_eq!(refusal("[1]"), "body_not_object");
        assert_eq!(
            refusal(r#"{"payload":"\ud800","budget_tokens":5}"#),
            "body_lone_surrogate"
        );
        assert_eq!(
            refusal(r#"{"payload":"x","budget_tokens":5,"extra":1}"#),
            "body_unknown_field"
        );
        assert_eq!(refusal(r#"{"budget_tokens":5}"#), "payload_missing");
        assert_eq!(
            refusal(r#"{"payload":{"a":1},"budget_tokens":5}"#),
            "payload_not_string"
        );
        assert_eq!(refusal(r#"{"payload":"x"}"#), "budget_tokens_missing");
        for (budget, code) in [
            ("0", "budget_tokens_not_positive"),
            ("-0", "budget_tokens_not_positive"),
            ("-3", "budget_tokens_not_positive"),
            ("2.5", "budget_tokens_fractional"),
            ("\"5\"", "budget_tokens_not_number"),
            ("null", "budget_tokens_not_number"),
            ("9007199254740994", "budget_tokens_too_large"),
            ("1e400", "budget_tokens_too_large"),
        ] {
            let body = format!(r#"{{"payload":"x","budget_tokens":{budget}}}"#);
            assert_eq!(refusal(&body), code, "{budget}");
        }
        assert!(parse(br#"{"payload":"x","budget_tokens":9007199254740992}"#).is_ok());
        assert!(parse(br#"{"payload":"x","budget_tokens":1e3}"#).is_ok());
        assert_eq!(
            refusal(r#"{"payload":"x","budget_tokens":5,"reserve_tokens":-1}"#),
            "reserve_tokens_invalid"
        );
        assert_eq!(
            refusal(r#"{"payload":"x","budget_tokens":5,"reserve_tokens":5}"#),
            "reserve_tokens_not_below_budget"
        );
        assert_eq!(
            refusal(r#"{"payload":"x","budget_tokens":5,"keep_fields":["a",""]}"#),
            "keep_fields_invalid"
        );
        assert_eq!(
            refusal(r#"{"payload":"x","budget_tokens":5,"keep_fields":"a"}"#),
            "keep_fields_invalid"
        );
        assert_eq!(
            refusal(r#"{"payload":"x","budget_tokens":5,"caller":"0OIl"}"#),
            "caller_invalid"
        );
        let deep = format!(
            r#"{{"payload":"{}","budget_tokens":5}}"#,
            "[".repeat(published::MAX_DEPTH + 1)
        );
        // Unbalanced brackets are simply not JSON: the payload is text-only.
        assert!(parse(deep.as_bytes()).is_ok());
        let deep = format!(
            r#"{{"payload":"{}{}","budget_tokens":5}}"#,
            "[".repeat(published::MAX_DEPTH + 1),
            "]".repeat(published::MAX_DEPTH + 1)
        );
        assert_eq!(refusal(&deep), "payload_too_deep");
        let over = vec![b' '; BODY_CAP + 1];
        let r = parse(&over).unwrap_err();
        assert_eq!((r.code(), r.status()), ("CAP-EXCEEDED:body_bytes", 413));
        assert_eq!(r.figures(), vec![("cap_bytes", 262_144)]);
    }

    #[test]
    fn refusal_messages_are_static_and_distinct() {
        let codes: HashSet<&str> = Refusal::ALL.iter().map(|r| r.code()).collect();
        assert_eq!(codes.len(), Refusal::ALL.len());
        assert!(Refusal::ALL.iter().all(|r| r.status() != 500));
    }

    #[test]
    fn precheck_is_headline_only_and_needs_a_caller() {
        let body =
            format!(r#"{{"payload":"{{\"a\":[1,1,1]}}","budget_tokens":3,"caller":"{CALLER}"}}"#);
        let req = parse(body.as_bytes()).unwrap();
        let report = precheck(&req, 0).unwrap();
        assert!(report.get("shaped_payload").is_none() && report.get("receipt").is_none());
        let tokens = tokenizer::count(r#"{"a":[1,1,1]}"#);
        assert!(tokens > 3);
        // Three tokens hold neither the deduplicated payload nor the S-4 marker.
        assert_eq!(
            report["verdict"].as_str().unwrap(),
            format!(
                "PAYLOAD BUDGET — payload tokens: {tokens} — effective budget: 3 — OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS — 1970-01-01T00:00:00.000Z"
            )
        );
        assert_eq!(report["excess_tokens"], json!(tokens - 3));
        assert_eq!(report["operation_set"], "json");
        let mut anonymous = req.clone();
        anonymous.caller = None;
        assert_eq!(precheck(&anonymous, 0), Err(Refusal::CallerMissing));
    }

    /// The pre-check's verdict line is the budget op's, on each grade: FITS, OVER by E (S-4 can
    /// cut), and NOT SHAPABLE in each of its ways.
    #[test]
    fn precheck_says_what_the_budget_op_says() {
        let words = "alpha beta gamma delta ".repeat(40);
        let object = |members: Value| members.to_string();
        let cases = [
            // (payload, budget, keep, expected grade)
            (object(json!({"a": words})), 1000, None, "FITS"),
            (object(json!({"a": words})), 60, None, "OVER by"),
            // The marker alone is over five tokens.
            (object(json!({"a": words})), 5, None, "NOT SHAPABLE"),
            // Kept content alone over the budget.
            (
                object(json!({"a": words, "k": 1})),
                60,
                Some("a"),
                "NOT SHAPABLE",
            ),
            // The prefix must reach the kept field, last and far over the budget.
            (
                object(json!({"a": words, "k": 1})),
                60,
                Some("k"),
                "NOT SHAPABLE",
            ),
            (
                object(json!({"k": 1, "a": words})),
                60,
                Some("k"),
                "OVER by",
            ),
            (words.clone(), 60, None, "OVER by"),
            (words.clone(), 2, None, "NOT SHAPABLE"),
        ];
        for (payload, budget, keep, expected) in cases {
            let mut body = json!({"payload": payload, "budget_tokens": budget, "caller": CALLER});
            if let Some(keep) = keep {
                body["keep_fields"] = json!([keep]);
            }
            let body = body.to_string();
            let pre = precheck(&parse(body.as_bytes()).unwrap(), 7).unwrap();
            let paid = run(&parse_for_budget(body.as_bytes()).unwrap(), 7).unwrap();
            assert_eq!(pre["verdict"], paid.report["verdict"], "{body}");
            assert!(
                pre["verdict"].as_str().unwrap().contains(expected),
                "{expected}: {}",
                pre["verdict"]
            );
        }
    }

    /// The request numbers (budget_tokens, reserve_tokens) are read into u64 as JavaScript reads
    /// them and compared in u64; none passes through usize or u32, which are 32 bits in workerd.
    /// At 2^32 − 1, 2^32 and 2^53 − 1 they are exact: a wrap at 2^32 would print another effective
    /// budget, grade the payload OVER, or refuse a reserve below the budget.
    #[test]
    fn request_numbers_at_the_32_bit_edges_are_exact() {
        const EDGES: [u64; 3] = [(1 << 32) - 1, 1 << 32, (1 << 53) - 1];
        let payload = json!({"a": "alpha beta gamma ".repeat(30)}).to_string();
        let tokens = tokenizer::count(&payload) as u64;
        let body = |budget: u64, reserve: Option<u64>| {
            let mut body = json!({"payload": payload, "budget_tokens": budget, "caller": CALLER});
            if let Some(reserve) = reserve {
                body["reserve_tokens"] = json!(reserve);
            }
            body.to_string()
        };
        let verdict = |budget: u64, reserve: Option<u64>| {
            let body = body(budget, reserve);
            let fast = parse(body.as_bytes()).unwrap();
            let general = parse_general(body.as_bytes()).unwrap();
            for req in [&fast, &general] {
                assert_eq!(req.budget_tokens, budget);
                assert_eq!(req.reserve_tokens, reserve.unwrap_or(0));
            }
            let pre = precheck(&fast, 0).unwrap();
            let paid = run(&parse_for_budget(body.as_bytes()).unwrap(), 0).unwrap();
            assert_eq!(pre["verdict"], paid.report["verdict"]);
            assert_eq!(pre["budget_tokens"], json!(budget));
            assert_eq!(pre["effective_budget"], json!(fast.effective_budget()));
            pre["verdict"].as_str().unwrap().to_owned()
        };
        let line = |budget: u64, middle: &str| {
            format!("PAYLOAD BUDGET — payload tokens: {tokens} — effective budget: {budget} — {middle} — 1970-01-01T00:00:00.000Z")
        };
        for edge in EDGES {
            // The whole figure is the effective budget, and the payload fits it.
            assert_eq!(verdict(edge, None), line(edge, "FITS"));
            // A reserve just below a budget at the edge leaves a few tokens: exact subtraction.
            assert_eq!(
                verdict(edge + 1, Some(edge - 1)),
                line(2, "OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS")
            );
            assert_eq!(verdict(edge, Some(edge - tokens)), line(tokens, "FITS"));
            assert_eq!(
                verdict(edge, Some(edge - 40)),
                line(40, &format!("OVER by {}", tokens - 40))
            );
            // A reserve at the budget is refused, not wrapped into a positive budget.
            assert_eq!(
                parse(body(edge, Some(edge)).as_bytes()).unwrap_err(),
                Refusal::ReserveNotBelowBudget
            );
        }
        // 2^53 is the cap; 2^53 + 2 (the next JavaScript number) is refused.
        assert_eq!(verdict(1 << 53, None), line(1 << 53, "FITS"));
        let over = br#"{"payload":"x","budget_tokens":9007199254740994}"#;
        assert_eq!(parse(over).unwrap_err(), Refusal::BudgetTooLarge);
        let over = br#"{"payload":"x","budget_tokens":5,"reserve_tokens":9007199254740994}"#;
        assert_eq!(parse(over).unwrap_err(), Refusal::ReserveInvalid);
    }

    #[test]
    fn run_delivers_ledger_columns_in_order() {
        let budget = tokenizer::count(r#"{"a":[1],"c":"some words here"}"#);
        let body = format!(
            r#"{{"payload":"{{\"a\":[1,1,1],\"b\":null,\"c\":\"some words here\"}}","budget_tokens":{budget}}}"#
        );
        let req = parse(body.as_bytes()).unwrap();
        let delivery = run(&req, 1_796_216_991_123).unwrap();
        let names: Vec<&str> = delivery.ledger.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, LEDGER_COLUMNS);
        assert!(delivery.chargeable);
        let ops: Vec<&str> = delivery.report["receipt"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["op"].as_str().unwrap())
            .collect();
        assert_eq!(ops, ["S-1", "S-1", "S-2"]);
    }

    /// A random compact JSON value over the shapes S-1..S-3 act on: nulls, empty strings and
    /// containers, repeated array entries, strings near the S-3 cap, escapes and wide characters.
    fn random_value(rng: &mut context_meter_test_rng::Lcg, depth: usize) -> Value {
        let leaf = |rng: &mut context_meter_test_rng::Lcg| match rng.below(9) {
            0 => Value::Null,
            1 => Value::from(""),
            2 => Value::from(rng.below(3) as u64),
            3 => Value::from(rng.below(2) == 0),
            4 => Value::from("x".repeat(ops::S3_CAP_CHARS - 1 + rng.below(3))),
            5 => Value::from("é\\\"\u{1}".repeat(1 + rng.below(3))),
            _ => Value::from(["a", "b", "cd"][rng.below(3)]),
        };
        if depth == 0 || rng.below(3) == 0 {
            return leaf(rng);
        }
        let n = rng.below(4);
        if rng.below(2) == 0 {
            Value::Array((0..n).map(|_| random_value(rng, depth - 1)).collect())
        } else {
            let mut map = Map::new();
            for _ in 0..n {
                let key = ["k", "1", "z", "0", "k2"][rng.below(5)];
                map.insert(key.to_owned(), random_value(rng, depth - 1));
            }
            Value::Object(map)
        }
    }

    /// The census the budget parse takes inside its canonical check must say what the
    /// standalone census says of the same canonical text, whenever it says anything.
    #[test]
    fn the_fused_census_agrees_with_the_standalone_one() {
        let corpus: Value =
            serde_json::from_str(include_str!("../../../corpus/token-efficiency/corpus.json"))
                .unwrap();
        let mut bodies: Vec<String> = corpus["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|case| case["body"].as_str().map(str::to_owned))
            .collect();
        let mut rng = context_meter_test_rng::Lcg(11);
        for _ in 0..3000 {
            let payload = serde_json::to_string(&random_value(&mut rng, 4)).unwrap();
            bodies.push(
                serde_json::to_string(&serde_json::json!({"payload": payload, "budget_tokens": 5}))
                    .unwrap(),
            );
        }
        let (mut told, mut untouched, mut touched) = (0, 0, 0);
        for body in &bodies {
            let Ok(req) = parse_for_budget(body.as_bytes()) else {
                continue;
            };
            assert_eq!(parse(body.as_bytes()).unwrap().canonical, req.canonical);
            if let Some(fused) = req.untouched {
                told += 1;
                let standalone = census::untouched_by_s1_to_s3(&req.canonical);
                assert_eq!(fused, standalone, "{}", req.canonical);
                if fused {
                    untouched += 1;
                } else {
                    touched += 1;
                }
            }
        }
        // The fused census must actually speak, both ways, on a good share of the cases.
        assert!(told > bodies.len() / 3, "{told} of {}", bodies.len());
        assert!(untouched > 100 && touched > 100, "{untouched} {touched}");
    }
}
