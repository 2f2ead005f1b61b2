//! token-efficiency benchmark (release profile, one run): `cargo bench --bench token_efficiency`.
//!
//! For every `cap-*` case of corpus/token-efficiency/corpus.json that is not a refusal (bodies at or
//! near the 262,144-byte cap), measures several runs of: one tokenization of the canonical payload
//! (`tokenizer::count`), the same text tokenized with the prefix analysis the budget op's S-4
//! search needs (`Tokenized::new`: a floor under the budget path, owned by the tokenizer), the free
//! precheck path (`parse` + `precheck`) and the paid path (`parse` + `run`), and prints each as a
//! ratio of the one tokenization — the figures the token-efficiency issue sets targets for
//! (precheck ≤ 1.1×, budget needing S-4 ≤ 1.5×).
//! Runs are interleaved so machine noise touches all four alike, and each figure is the fastest of
//! its runs: on a small shared machine preemption only ever adds time, so the minimum is the
//! steadiest estimate of the work itself. `TE_BENCH_CASE=<id>` runs one case (for profiling).

use base64::{engine::general_purpose::STANDARD, Engine as _};
use context_meter::engine::token_efficiency as te;
use context_meter::engine::tokenizer;
use serde_json::Value;
use std::hint::black_box;
use std::time::{Duration, Instant};

const RUNS: usize = 25;

fn fastest(samples: Vec<Duration>) -> Duration {
    samples.into_iter().min().expect("at least one run")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn timed<T>(f: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    black_box(f());
    start.elapsed()
}

fn body_bytes(case: &Value) -> Vec<u8> {
    match (case.get("body"), case.get("body_base64")) {
        (_, Some(b64)) => STANDARD.decode(b64.as_str().unwrap()).unwrap(),
        (Some(body), None) => body.as_str().unwrap().as_bytes().to_vec(),
        _ => panic!("case without body"),
    }
}

/// The canonical form the engine counts: `JSON.stringify(JSON.parse(payload))` for JSON (the
/// corpus payloads are already canonical text or plain text), else the payload itself.
fn canonical(payload: &str) -> String {
    match serde_json::from_str::<Value>(payload) {
        Ok(value) => serde_json::to_string(&value).unwrap(),
        Err(_) => payload.to_owned(),
    }
}

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/token-efficiency/corpus.json"
    );
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    println!("token-efficiency at the cap: fastest of {RUNS} interleaved runs; ratios to one tokenization of the canonical payload");
    for case in corpus["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let wanted = std::env::var("TE_BENCH_CASE").map_or(true, |only| only == id);
        if !wanted || !id.starts_with("cap-") || !case["expect"]["refusal"].is_null() {
            continue;
        }
        let bytes = body_bytes(case);
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let text = canonical(body["payload"].as_str().unwrap());
        let (mut one, mut analysed, mut pre, mut run) = (vec![], vec![], vec![], vec![]);
        let mut applications = Value::Null;
        for _ in 0..RUNS {
            one.push(timed(|| tokenizer::count(black_box(&text))));
            analysed.push(timed(|| {
                tokenizer::Tokenized::new(black_box(&text)).count()
            }));
            pre.push(timed(|| {
                let req = te::parse(black_box(&bytes)).unwrap();
                te::precheck(&req, 0).map(|r| r.len())
            }));
            let start = Instant::now();
            let req = te::parse(black_box(&bytes)).unwrap();
            let delivery = te::run(&req, 0).unwrap();
            run.push(start.elapsed());
            applications = delivery.report["applications"].clone();
        }
        let (one, analysed) = (fastest(one), fastest(analysed));
        let (pre, run) = (fastest(pre), fastest(run));
        println!(
            "{id}: {} bytes; one tokenization {:.2} ms (with the S-4 prefix analysis {:.2}x); parse+precheck {:.2} ms ({:.2}x); parse+budget {:.2} ms ({:.2}x); applications {applications}",
            bytes.len(),
            ms(one),
            analysed.as_secs_f64() / one.as_secs_f64(),
            ms(pre),
            pre.as_secs_f64() / one.as_secs_f64(),
            ms(run),
            run.as_secs_f64() / one.as_secs_f64(),
        );
    }
}
