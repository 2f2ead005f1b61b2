//! Runs every case of corpus/context-composition/corpus.json through the engine natively and
//! compares the refusal code/status, the pre-check report, the audit delivery (status,
//! chargeability, report, ledger columns) byte for byte (JCS) with the outputs the independent
//! JavaScript reading (reference.mjs via gen-corpus.mjs) derived. Also verifies the corpus pin and
//! that the served criteria carry it.

use context_meter::engine::canonical::to_jcs;
use context_meter::engine::composition::{self, criteria::CORPUS_SHA256};
use context_meter::engine::sign::sha256_hex;
use context_meter::engine::{ClosedError, LedgerValue};
use serde_json::{Map, Value};

fn corpus() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/context-composition/corpus.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("corpus.json"))
        .expect("corpus parses")
}

fn body_of(case: &Value) -> Vec<u8> {
    use base64::Engine;
    if let Some(b) = case.get("body_base64").and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD.decode(b).unwrap();
    }
    let mut body = case["body"].as_str().unwrap().to_owned();
    if let Some(fill) = case.get("body_fill") {
        let chunk = fill["char"]
            .as_str()
            .unwrap()
            .repeat(fill["count"].as_u64().unwrap() as usize);
        body = body.replacen("@@FILL@@", &chunk, 1);
    }
    body.into_bytes()
}

fn ledger_json(ledger: &[(&'static str, LedgerValue)]) -> Value {
    let mut m = Map::new();
    for (k, v) in ledger {
        m.insert(
            (*k).to_owned(),
            match v {
                LedgerValue::Int(i) => Value::from(*i),
                LedgerValue::Text(t) => Value::from(t.clone()),
                LedgerValue::Null => Value::Null,
            },
        );
    }
    Value::Object(m)
}

#[test]
fn corpus_pin_verifies_and_is_served() {
    let mut c = corpus();
    let pin = c["sha256"].as_str().unwrap().to_owned();
    c.as_object_mut().unwrap().remove("sha256");
    assert_eq!(sha256_hex(to_jcs(&c).as_bytes()), pin, "corpus.json pin");
    assert_eq!(CORPUS_SHA256, pin, "criteria::CORPUS_SHA256");
    assert_eq!(
        composition::criteria()["corpus"]["sha256"],
        Value::from(pin)
    );
}

#[test]
fn corpus_has_the_required_breadth() {
    let c = corpus();
    let cases = c["cases"].as_array().unwrap();
    assert!(cases.len() >= 60);
    assert!(cases
        .iter()
        .all(|k| k["provenance"].as_str().unwrap().starts_with("synthetic")));
}

#[test]
fn every_corpus_case_matches_byte_for_byte() {
    let c = corpus();
    let mut failures = Vec::new();
    for case in c["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let now = case["now_ms"].as_u64().unwrap();
        let expect = &case["expect"];
        let parsed = composition::parse(&body_of(case));
        match (parsed, expect.get("refusal")) {
            (Err(r), Some(want)) => {
                if want["code"] != r.code() || want["status"] != r.status() {
                    failures.push(format!("{name}: refusal {} {}", r.code(), r.status()));
                }
            }
            (Err(r), None) => failures.push(format!("{name}: unexpected refusal {}", r.code())),
            (Ok(_), Some(want)) => {
                failures.push(format!("{name}: expected refusal {}", want["code"]))
            }
            (Ok(req), None) => {
                let pre = Value::Object(composition::precheck(&req, now).unwrap());
                if to_jcs(&pre) != to_jcs(&expect["precheck"]) {
                    failures.push(format!(
                        "{name}: precheck differs\n got {}\nwant {}",
                        to_jcs(&pre),
                        to_jcs(&expect["precheck"])
                    ));
                }
                let d = composition::run(&req, now).unwrap();
                let want = &expect["audit"];
                let got = serde_json::json!({
                    "status": d.status,
                    "chargeable": d.chargeable,
                    "report": Value::Object(d.report.clone()),
                    "ledger": ledger_json(&d.ledger),
                });
                if to_jcs(&got) != to_jcs(want) {
                    failures.push(format!(
                        "{name}: audit differs\n got {}\nwant {}",
                        to_jcs(&got),
                        to_jcs(want)
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
