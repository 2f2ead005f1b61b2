//! Every refusal code of context-budget-pack, reached through `parse` / `precheck` / `run` with a
//! body that carries a marker string, and checked for: the contract's code and HTTP status, a static
//! message, figures that are only the contract's limit values, and no trace of the marker (nothing
//! submitted is echoed). Boundaries are checked from both sides where a body can reach them.

use context_meter::engine::budget_pack::{
    check_idempotency_key, limits, parse, precheck, run, Refusal, BODY_CAP,
};
use context_meter::engine::ClosedError;
use serde_json::{json, Value};

const MARKER: &str = "ZQXJ-SECRET-MARKER";

/// The refusal for `body`, through the free path (parse, then precheck) and the paid path (run).
fn refusal_of(body: &[u8]) -> Refusal {
    let free = parse(body).and_then(|req| precheck(&req, 0).map(|_| ()));
    let paid = parse(body).and_then(|req| run(&req, 0).map(|_| ()));
    assert_eq!(free, paid, "free and paid paths disagree");
    free.expect_err("expected a refusal")
}

fn assert_static(refusal: Refusal, code: &str, status: u16) {
    assert_eq!(refusal.code(), code);
    assert_eq!(refusal.status(), status);
    let allowed = [
        limits::INPUT_BYTES as u64,
        limits::OUTPUT_BYTES as u64,
        limits::JSON_NODES as u64,
        limits::JSON_DEPTH as u64,
        limits::SOURCES as u64,
        limits::CANDIDATES as u64,
        u64::from(limits::BUDGET_UNITS),
        limits::CANDIDATE_SPAN_CHARACTERS,
        limits::PACKED_TEXT_JSON_BYTES as u64,
        BODY_CAP as u64,
        16,
        128,
    ];
    for (_, value) in refusal.figures() {
        assert!(allowed.contains(&value), "{code}: figure {value}");
    }
    let rendered = format!(
        "{} {} {:?} {:?}",
        refusal.code(),
        refusal.message(),
        refusal.figures(),
        refusal
    );
    assert!(!rendered.contains(MARKER), "{code} echoes input");
    assert!(!rendered.contains("ZQXJ"), "{code} echoes input");
}

fn valid() -> Value {
    json!({
        "sources": [{"id": "s", "text": format!("{MARKER} text")}],
        "candidates": [{"id": "c", "sourceId": "s", "start": 0, "end": 4, "costUnits": 1}],
        "budgetUnits": 5
    })
}

fn with(change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v = valid();
    change(&mut v);
    serde_json::to_vec(&v).unwrap()
}

/// A valid body of exactly `len` bytes (JSON whitespace pads it).
fn body_of_len(len: usize) -> Vec<u8> {
    let mut body = serde_json::to_vec(&valid()).unwrap();
    body.resize(len, b' ');
    body
}

#[test]
fn input_bytes_limit() {
    assert!(parse(&body_of_len(limits::INPUT_BYTES)).is_ok());
    assert_static(
        refusal_of(&body_of_len(limits::INPUT_BYTES + 1)),
        "INPUT_LIMIT",
        413,
    );
}

#[test]
fn edge_limit_is_the_http_request_cap() {
    assert_eq!(BODY_CAP, 131_072);
    assert_static(Refusal::EdgeLimit, "EDGE_LIMIT", 413);
    assert_eq!(Refusal::EdgeLimit.figures(), vec![("limit", 131_072)]);
}

#[test]
fn malformed_json() {
    for body in [
        format!("{{\"sources\":[{{\"id\":\"{MARKER}\"").into_bytes(),
        format!("\u{feff}{}", serde_json::to_string(&valid()).unwrap()).into_bytes(),
        b"".to_vec(),
        format!("{{\"a\":\"{MARKER}\t\"}}").into_bytes(),
    ] {
        assert_static(refusal_of(&body), "MALFORMED_JSON", 400);
    }
}

#[test]
fn invalid_unicode() {
    let mut bytes = serde_json::to_vec(&valid()).unwrap();
    let at = bytes.windows(4).position(|w| w == b"text").unwrap();
    bytes[at] = 0xff; // not UTF-8
    assert_static(refusal_of(&bytes), "INVALID_UNICODE", 422);
    let overlong = [b"{\"x\":\"".as_slice(), &[0xc0, 0x80], b"\"}"].concat();
    assert_static(refusal_of(&overlong), "INVALID_UNICODE", 422);
    for escape in ["\\ud800", "\\udfff", "\\udbff\\u0041", "a\\ude00"] {
        let body = format!(
            "{{\"sources\":[{{\"id\":\"s\",\"text\":\"{MARKER}{escape}\"}}],\"candidates\":[],\"budgetUnits\":1}}"
        );
        assert_static(refusal_of(body.as_bytes()), "INVALID_UNICODE", 422);
    }
    // A well-formed pair written as escapes is fine.
    let pair = "{\"sources\":[{\"id\":\"s\",\"text\":\"\\ud83d\\ude00\"}],\"candidates\":[],\"budgetUnits\":1}";
    assert!(parse(pair.as_bytes()).is_ok());
}

#[test]
fn unsafe_keys() {
    for key in ["__proto__", "constructor", "prototype"] {
        let nested = format!(
            "{{\"sources\":[{{\"id\":\"s\",\"text\":\"{MARKER}\",\"{key}\":{{}}}}],\"candidates\":[],\"budgetUnits\":1}}"
        );
        assert_static(refusal_of(nested.as_bytes()), "UNSAFE_KEY", 422);
        let top = format!(
            "{{\"{key}\":\"{MARKER}\",\"sources\":[],\"candidates\":[],\"budgetUnits\":1}}"
        );
        assert_static(refusal_of(top.as_bytes()), "UNSAFE_KEY", 422);
    }
    // As a value or an id, the words are ordinary text.
    let as_values = with(|v| {
        v["sources"][0]["id"] = json!("__proto__");
        v["candidates"][0]["sourceId"] = json!("__proto__");
        v["candidates"][0]["id"] = json!("constructor");
    });
    assert!(parse(&as_values).is_ok());
}

#[test]
fn complexity_limits() {
    let deep = format!(
        "{{\"sources\":[],\"candidates\":[],\"budgetUnits\":1,\"x\":{}\"{MARKER}\"{}}}",
        "[".repeat(20),
        "]".repeat(20)
    );
    assert_static(refusal_of(deep.as_bytes()), "COMPLEXITY_LIMIT", 413);
    let many = format!(
        "{{\"sources\":[],\"candidates\":[],\"budgetUnits\":1,\"x\":[\"{MARKER}\",{}]}}",
        vec!["0"; 7995].join(",")
    );
    assert_static(refusal_of(many.as_bytes()), "COMPLEXITY_LIMIT", 413);
}

#[test]
fn input_limits_named_in_the_contract() {
    let sources = with(|v| {
        v["sources"] = Value::Array(
            (0..101)
                .map(|i| json!({"id": format!("s{i}"), "text": MARKER}))
                .collect(),
        )
    });
    assert_static(refusal_of(&sources), "INPUT_LIMIT", 413);
    let candidates = with(|v| {
        v["candidates"] = Value::Array(
            (0..201)
                .map(|i| json!({"id": format!("c{i}"), "sourceId": "s", "start": 0, "end": 1, "costUnits": 1}))
                .collect(),
        )
    });
    assert_static(refusal_of(&candidates), "INPUT_LIMIT", 413);
    assert_static(
        refusal_of(&with(|v| v["budgetUnits"] = json!(1_000_001))),
        "INPUT_LIMIT",
        413,
    );
    assert!(parse(&with(|v| v["budgetUnits"] = json!(1_000_000))).is_ok());
    let at_limits = with(|v| {
        v["sources"] = Value::Array(
            (0..100)
                .map(|i| json!({"id": format!("s{i}"), "text": "x"}))
                .collect(),
        );
        v["candidates"] = Value::Array(
            (0..200)
                .map(|i| json!({"id": format!("c{i}"), "sourceId": "s0", "start": 0, "end": 1, "costUnits": 1}))
                .collect(),
        );
    });
    assert!(parse(&at_limits).is_ok());
}

#[test]
fn schema_violations() {
    let bodies: Vec<Vec<u8>> = vec![
        with(|v| v["extra"] = json!(MARKER)),
        with(|v| v["sources"][0]["extra"] = json!(MARKER)),
        with(|v| v["candidates"][0]["note"] = json!(MARKER)),
        with(|v| v["candidates"][0]["start"] = json!(0.5)),
        with(|v| v["candidates"][0]["end"] = json!(90_001)),
        with(|v| v["candidates"][0]["costUnits"] = json!(0)),
        with(|v| v["candidates"][0]["costUnits"] = json!(1_000_001)),
        with(|v| v["candidates"][0]["priority"] = json!(101)),
        with(|v| v["candidates"][0]["required"] = json!(1)),
        with(|v| v["candidates"][0]["sourceId"] = json!("")),
        with(|v| v["sources"][0]["id"] = json!("😀".repeat(81))),
        with(|v| v["sources"][0]["text"] = json!("a".repeat(90_001))),
        with(|v| v["reservedUnits"] = json!(1_000_001)),
        with(|v| v["deduplicate"] = json!("yes")),
        with(|v| v["budgetUnits"] = json!(-1)),
        with(|v| v["budgetUnits"] = json!(2.5)),
        with(|v| {
            v.as_object_mut().unwrap().shift_remove("candidates");
        }),
        with(|v| v["sources"] = json!({"id": MARKER})),
        format!("[\"{MARKER}\"]").into_bytes(),
        b"1e400".to_vec(),
    ];
    for body in bodies {
        assert_static(refusal_of(&body), "SCHEMA_VIOLATION", 422);
    }
    // Lengths count code points: 80 astral characters (160 UTF-16 units) make a valid id.
    assert!(parse(&with(
        |v| v["sources"][0]["text"] = json!("a".repeat(90_000))
    ))
    .is_ok());
    assert!(parse(&with(|v| v["sources"][0]["id"] = json!("😀".repeat(80)))).is_ok());
}

#[test]
fn duplicate_ids() {
    let sources =
        with(|v| v["sources"] = json!([{"id": "s", "text": MARKER}, {"id": "s", "text": "y"}]));
    assert_static(refusal_of(&sources), "DUPLICATE_ID", 422);
    let candidates = with(|v| {
        let c = v["candidates"][0].clone();
        v["candidates"].as_array_mut().unwrap().push(c);
    });
    assert_static(refusal_of(&candidates), "DUPLICATE_ID", 422);
    // A source and a candidate may share an id: separate namespaces.
    assert!(parse(&with(|v| v["candidates"][0]["id"] = json!("s"))).is_ok());
}

#[test]
fn evaluation_limit_on_span_characters() {
    let spans = |count: usize, end: u32| {
        with(|v| {
            v["candidates"] = Value::Array(
                (0..count)
                    .map(|i| json!({"id": format!("c{i}"), "sourceId": "s", "start": 0, "end": end, "costUnits": 1}))
                    .collect(),
            )
        })
    };
    assert!(parse(&spans(25, 80_000)).is_ok()); // exactly 2,000,000 (broken spans count too)
    assert_static(refusal_of(&spans(25, 80_001)), "EVALUATION_LIMIT", 413);
}

#[test]
fn output_limit_on_packed_text() {
    // Four selections of one 50,000-character source: 4 × (49,998 + 2 quotes) = 200,000 bytes fit.
    let packed = |extra: u32| {
        with(|v| {
            v["sources"][0]["text"] =
                json!(format!("{MARKER}{}", "a".repeat(50_000 - MARKER.len())));
            v["candidates"] = Value::Array(
                (0..4)
                    .map(|i| json!({"id": format!("c{i}"), "sourceId": "s", "start": 0, "end": 49_998 + if i == 0 { extra } else { 0 }, "costUnits": 1}))
                    .collect(),
            );
            v["deduplicate"] = json!(false);
        })
    };
    let fits = parse(&packed(0)).unwrap();
    assert!(precheck(&fits, 0).is_ok());
    assert!(run(&fits, 0).is_ok());
    assert_static(refusal_of(&packed(1)), "OUTPUT_LIMIT", 413);
}

#[test]
fn idempotency_key() {
    assert_static(
        check_idempotency_key(None).unwrap_err(),
        "IDEMPOTENCY_KEY_REQUIRED",
        400,
    );
    for key in [format!("{MARKER}!"), "short".to_owned(), "k".repeat(129)] {
        assert_static(
            check_idempotency_key(Some(&key)).unwrap_err(),
            "INVALID_IDEMPOTENCY_KEY",
            400,
        );
    }
    assert!(check_idempotency_key(Some("0123456789abcdef")).is_ok());
    assert!(check_idempotency_key(Some(&"k".repeat(128))).is_ok());
}

#[test]
fn every_refusal_code_is_in_the_served_contract() {
    let served = context_meter::engine::budget_pack::criteria();
    let codes = served["errorCodes"].as_array().unwrap();
    let table = served["refusals"].as_array().unwrap();
    for refusal in Refusal::catalogue() {
        assert!(codes.contains(&json!(refusal.code())), "{}", refusal.code());
        assert!(table
            .iter()
            .any(|row| row["code"] == refusal.code() && row["status"] == refusal.status()));
    }
    // Every status used is one the contract's errors table lists.
    let statuses: Vec<u64> = served["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_u64().unwrap())
        .collect();
    for refusal in Refusal::catalogue() {
        assert!(
            statuses.contains(&u64::from(refusal.status())),
            "{}",
            refusal.code()
        );
    }
}

/// Request numbers at 2^32 − 1, 2^32, 2^32 + 1 and 2^53 − 1 in every number member: each is past its
/// schema maximum and refused (budgetUnits, which the contract's limits block names, as
/// INPUT_LIMIT; every other member as SCHEMA_VIOLATION). The numbers are compared as doubles before
/// any narrowing, so none wraps into range on a 32-bit worker (tests/e2e/core/to_numbers.test.mjs runs
/// the same bodies in workerd).
#[test]
fn numbers_at_and_past_2_to_the_32_are_refused_never_narrowed() {
    let base = r#"{"sources":[{"id":"s","text":"abc"}],"candidates":[{"id":"c","sourceId":"s","start":0,"end":1,"costUnits":1,"priority":0}],"budgetUnits":5,"reservedUnits":0}"#;
    assert!(
        parse(base.as_bytes()).is_ok(),
        "control: the base body is accepted"
    );
    for value in ["4294967295", "4294967296", "4294967297", "9007199254740991"] {
        for (member, code, status) in [
            ("budgetUnits", "INPUT_LIMIT", 413),
            ("reservedUnits", "SCHEMA_VIOLATION", 422),
            ("start", "SCHEMA_VIOLATION", 422),
            ("end", "SCHEMA_VIOLATION", 422),
            ("costUnits", "SCHEMA_VIOLATION", 422),
            ("priority", "SCHEMA_VIOLATION", 422),
        ] {
            let from = if member == "costUnits" {
                format!("\"{member}\":1")
            } else if member == "budgetUnits" {
                format!("\"{member}\":5")
            } else if member == "end" {
                format!("\"{member}\":1")
            } else {
                format!("\"{member}\":0")
            };
            let body = base.replacen(&from, &format!("\"{member}\":{value}"), 1);
            assert_ne!(body, base, "{member}");
            assert_static(refusal_of(body.as_bytes()), code, status);
        }
    }
}
