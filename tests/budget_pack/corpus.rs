//! Runs every case of the pinned corpus (`corpus/context-budget-pack/corpus.json`, expected outputs
//! derived by the independent Node implementation `gen-corpus.mjs` with real JSON.parse /
//! JSON.stringify and Node's SHA-256) through the engine natively: accepted bodies must give the
//! expected response byte for byte (both provenance hashes included), refused ones the expected code
//! and HTTP status.

use context_meter::engine::budget_pack::{parse, report::compact_json, run};
use context_meter::engine::jsjson::to_jcs;
use context_meter::engine::ClosedError;
use serde_json::Value;
use sha2::{Digest, Sha256};

const CORPUS: &str = include_str!("../../corpus/context-budget-pack/corpus.json");
const CONTRACT: &str = include_str!("../../corpus/context-budget-pack/contract.json");

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn corpus() -> Value {
    serde_json::from_str(CORPUS).unwrap()
}

#[test]
fn corpus_pin_holds() {
    let mut corpus = corpus();
    let pin = corpus["sha256"].as_str().unwrap().to_owned();
    corpus.as_object_mut().unwrap().shift_remove("sha256");
    assert_eq!(sha256_hex(to_jcs(&corpus).as_bytes()), pin);
    let contract: Value = serde_json::from_str(CONTRACT).unwrap();
    assert_eq!(
        corpus["contractSha256"],
        sha256_hex(to_jcs(&contract).as_bytes())
    );
}

#[test]
fn every_corpus_case_matches() {
    let corpus = corpus();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 180);
    let (mut accepted, mut refused) = (0, 0);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let body = case["body"].as_str().unwrap();
        let expect = &case["expect"];
        match parse(body.as_bytes()).and_then(|req| run(&req, 0)) {
            Ok(delivery) => {
                assert_eq!(
                    expect["status"], 200,
                    "{name}: accepted, expected a refusal"
                );
                assert_eq!(delivery.status, 200, "{name}");
                assert_eq!(
                    compact_json(&Value::Object(delivery.report)),
                    expect["response"].as_str().unwrap(),
                    "{name}"
                );
                accepted += 1;
            }
            Err(refusal) => {
                assert_eq!(
                    expect["code"].as_str(),
                    Some(refusal.code()),
                    "{name}: refused with {}",
                    refusal.code()
                );
                assert_eq!(expect["status"], refusal.status(), "{name}");
                refused += 1;
            }
        }
    }
    assert!(
        accepted > 150 && refused > 25,
        "{accepted} accepted, {refused} refused"
    );
}
