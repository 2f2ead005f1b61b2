//! The levers corpus: every case's expected behaviour was produced by the TypeScript reference module
//! itself (corpus/token-opt/gen-levers-corpus.mjs) and every token figure by npm gpt-tokenizer; each
//! case runs through `parse_levers` + `run_levers` natively and is compared member by member.

use context_meter::engine::jsjson::to_jcs;
use context_meter::engine::sign::sha256_hex;
use context_meter::engine::token_opt::{parse_levers, run_levers};
use context_meter::engine::ClosedError;
use serde_json::Value;
use std::path::PathBuf;

fn corpus() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/token-opt/levers-corpus.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn levers_corpus_pin_holds() {
    let mut c = corpus();
    let pinned = c.as_object_mut().unwrap().remove("sha256").unwrap();
    assert_eq!(sha256_hex(to_jcs(&c).as_bytes()), pinned.as_str().unwrap());
}

/// Equal values; two numbers are equal when they are the same double (a figure past 2^53 is a double
/// in the report and an integer literal in the corpus, as JSON.stringify writes it).
fn same(diffs: &mut Vec<String>, what: &str, got: &Value, want: &Value) {
    let equal = match (got, want) {
        (Value::Number(g), Value::Number(w)) => g.as_f64() == w.as_f64(),
        (Value::Object(g), Value::Object(w)) => {
            g.len() == w.len()
                && g.iter().all(|(k, v)| {
                    let mut inner = Vec::new();
                    w.get(k).is_some_and(|wv| {
                        same(&mut inner, what, v, wv);
                        inner.is_empty()
                    })
                })
        }
        _ => got == want,
    };
    if !equal {
        diffs.push(format!("{what}: got {got} want {want}"));
    }
}

fn check_case(case: &Value) -> Result<(), String> {
    let body = case["body"].as_str().unwrap();
    let expect = &case["expect"];
    let parsed = parse_levers(body.as_bytes());
    if let Some(code) = expect.get("refusal") {
        return match parsed {
            Err(r) if r.code() == code.as_str().unwrap() => Ok(()),
            Err(r) => Err(format!("refused {} instead of {code}", r.code())),
            Ok(_) => Err(format!("accepted; the reference refuses ({code})")),
        };
    }
    let req = parsed.map_err(|r| format!("refused {}", r.code()))?;
    let delivery =
        run_levers(&req, 1_764_633_600_000).map_err(|r| format!("run refused {}", r.code()))?;
    let report = Value::Object(delivery.report);
    let mut diffs = Vec::new();
    let mut n = 0;
    for lever in ["c9", "filter", "truncate", "schema"] {
        let Some(e) = expect.get(lever) else { continue };
        let m = &report["measurements"][n];
        n += 1;
        let want = &e["measurement"];
        for k in [
            "lever",
            "part",
            "enabled",
            "enabled_by_estimate",
            "estimate",
        ] {
            same(&mut diffs, &format!("{lever}.{k}"), &m[k], &want[k]);
        }
        for k in [
            "before",
            "after",
            "overhead",
            "overhead_items",
            "gross",
            "net",
        ] {
            same(
                &mut diffs,
                &format!("{lever}.tokens.{k}"),
                &m["tokens"][k],
                &want["tokens"][k],
            );
        }
        let out = &report["outputs"][lever];
        let w = &e["output"];
        match lever {
            "c9" => {
                for k in ["signal", "notice", "context"] {
                    same(&mut diffs, &format!("c9.{k}"), &out[k], &w[k]);
                }
                let recall = out["recall"]["value"].as_f64().unwrap();
                same(
                    &mut diffs,
                    "c9.recall",
                    &Value::from(recall),
                    &Value::from(w["recall"].as_f64().unwrap()),
                );
                same(
                    &mut diffs,
                    "c9.injected.chars",
                    &out["injected"]["chars"],
                    &w["injected_chars"],
                );
                same(
                    &mut diffs,
                    "c9.injected.estimate",
                    &out["injected"]["estimate"],
                    &w["injected_estimate"],
                );
                let cands: Vec<Value> = serde_json::from_str::<Value>(body).unwrap()["c9"]
                    ["candidates"]
                    .as_array()
                    .unwrap()
                    .clone();
                for k in ["selected", "dropped"] {
                    let want_ids: Vec<&Value> = w[k]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|i| &cands[i.as_u64().unwrap() as usize]["id"])
                        .collect();
                    let got_ids: Vec<&Value> = out[k]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| &c["id"])
                        .collect();
                    if got_ids != want_ids {
                        diffs.push(format!("c9.{k}: got {got_ids:?} want {want_ids:?}"));
                    }
                }
            }
            "filter" => {
                let got = context_meter::engine::token_opt::json_js::compact(&out["response"]);
                same(
                    &mut diffs,
                    "filter.response",
                    &Value::String(got),
                    &w["response"],
                );
            }
            "truncate" => {
                for k in ["blocks", "truncated", "marker_chars"] {
                    same(&mut diffs, &format!("truncate.{k}"), &out[k], &w[k]);
                }
                let joined: usize = out["output_chars"].as_u64().unwrap() as usize;
                if joined > out["max_chars"].as_u64().unwrap() as usize {
                    diffs.push("truncate: hard cap exceeded".into());
                }
            }
            "schema" => {
                let got: Vec<&Value> = out["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| &t["description"])
                    .collect();
                let want: Vec<&Value> = w["descriptions"].as_array().unwrap().iter().collect();
                if got != want {
                    diffs.push(format!("schema.descriptions: got {got:?} want {want:?}"));
                }
            }
            _ => unreachable!(),
        }
    }
    same(&mut diffs, "gate", &report["gate"], &expect["gate"]);
    if report["measurements"].as_array().unwrap().len() != n {
        diffs.push("extra measurements".into());
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

#[test]
fn every_levers_case_matches_the_reference() {
    let c = corpus();
    let cases = c["cases"].as_array().unwrap();
    assert!(cases.len() >= 400);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check_case(case)
                .err()
                .map(|e| format!("{}: {e}", case["name"]))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
