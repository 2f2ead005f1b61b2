//! token-efficiency benchmark (release profile, one run): `cargo bench --bench token_efficiency`.
//!
//! For every `cap-*` case of corpus/token-efficiency/corpus.json that is not a refusal (bodies at or
//! near the 262,144-byte cap), for the real-record bodies built beside them ([`real_cases`]) and for
//! payloads that are one long piece ([`single_piece_cases`]),
//! measures 200 runs of: one tokenization of the canonical payload
//! (`tokenizer::count`), the same text tokenized with the prefix analysis the budget op's S-4
//! search needs (`Tokenized::new`: a floor under the budget path, owned by the tokenizer), the free
//! precheck path (`parse` + `precheck` + the signed response body) on the case's body (whose
//! payload is over its budget, except `cap-json-fits`) and on the same body with the budget set to
//! the payload's own count (the fits path: P = B), and the paid path (`parse` + `run` + the signed
//! response body), and prints each as a ratio of the one tokenization — the
//! figures the token-efficiency issue sets targets for (precheck ≤ 1.1×, budget needing S-4 ≤
//! 1.5×). The signed body is what the worker answers (`ReportSigner::signed_body`: the report's
//! JCS bytes, RFC 8032 Ed25519 over them as the edge signs, the signature spliced in); its share of
//! the budget path is printed too, since Ed25519 hashes the whole report, shaped payload included
//! (RFC 8032 hashes it twice: for the nonce and for the challenge). So is the least any budget path
//! can cost, its floor: one tokenization (the submitted count is exact) plus one SHA-512 over the
//! bytes the signature covers (any Ed25519 hashes its message; the report carries the shaped
//! payload). Where that floor is above 1.5x, the budget
//! target is out of reach for the payload, whatever the engine does.
//! Runs are interleaved so machine noise touches all four alike, and each figure is the fastest of
//! its runs: on a small shared machine preemption only ever adds time, so the minimum is the
//! steadiest estimate of the work itself. `TE_BENCH_CASE=<id>` runs one case (for profiling);
//! `TE_BENCH_DUMP=<dir>` writes each case's body there. With `BENCH_OUT=<dir>` (scripts/bench.sh
//! sets it) a run of every case also writes its figures as data to `<dir>/token-efficiency-native.json`,
//! one section of docs/bench/latest.json (scripts/bench-data.mjs).

use base64::{engine::general_purpose::STANDARD, Engine as _};
use context_meter::engine::sign::{signed_bytes, ReportSigner};
use context_meter::engine::token_efficiency as te;
use context_meter::engine::tokenizer;
use serde_json::{json, Value};
use sha2::{Digest as _, Sha512};
use std::hint::black_box;
use std::time::{Duration, Instant};

const RUNS: usize = 200;

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

/// Cap-size bodies built from the real records in `../shared/samples` (when they are beside the
/// checkout): the corpus's cap payloads repeat a vocabulary of twenty words, which the tokenizer
/// counts several times faster than real prose, so they alone would flatter the tokenizer and
/// magnify everything around it. Each body stays under the cap; budgets are half the payload.
/// - `real-json-s4`: search-result records whose titles and snippets are the TOON specification's
///   own headings and paragraphs (no nulls, no empties, no repeats, no string over the S-3 cap:
///   it needs S-4 alone, as `cap-json-s4` does);
/// - `real-text-s4`: the specification's text itself, text-only;
/// - `real-json-mixed`: the Letta agent files and the Anthropic SDK recording as records (real
///   nulls, empties and long strings: S-1..S-4).
fn real_cases() -> Vec<(String, Vec<u8>)> {
    let samples = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples");
    let Ok(spec) = std::fs::read_to_string(format!("{samples}/toon-spec/SPEC.md")) else {
        eprintln!("(../shared/samples not found: real-record cases skipped)");
        return Vec::new();
    };
    let body_of = |payload: String| {
        let canonical = canonical(&payload);
        let budget = tokenizer::count(&canonical) / 2;
        serde_json::to_vec(&serde_json::json!({
            "payload": payload,
            "budget_tokens": budget,
            "caller": "11111111111111111111111111111111",
        }))
        .unwrap()
    };
    let fill = |make: &dyn Fn(usize) -> String| {
        // The largest n whose body stays under the cap.
        let (mut lo, mut hi) = (1, 4096);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if body_of(make(mid)).len() <= te::BODY_CAP {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        body_of(make(lo))
    };
    let mut heading = String::new();
    let paragraphs: Vec<(String, String)> = spec
        .split("\n\n")
        .filter_map(|block| {
            let block = block.trim();
            if block.starts_with('#') {
                heading = block.trim_start_matches('#').trim().to_owned();
                return None;
            }
            (!block.is_empty() && block.chars().count() < 2000)
                .then(|| (heading.clone(), block.to_owned()))
        })
        .collect();
    let results = |n: usize| {
        let records: Vec<Value> = (0..n)
            .map(|i| {
                let (title, snippet) = &paragraphs[i % paragraphs.len()];
                serde_json::json!({
                    "id": i,
                    "title": title,
                    "url": format!("https://spec.example/toon#p{i}"),
                    "snippet": snippet,
                })
            })
            .collect();
        serde_json::to_string(&serde_json::json!({ "results": records })).unwrap()
    };
    let text = |n: usize| spec.repeat(4).chars().take(n * 64).collect::<String>();
    let records: Vec<Value> = [
        "letta-af/loop.af",
        "letta-af/customer_service.af",
        "letta-af/memgpt_agent_with_convo.af",
    ]
    .iter()
    .filter_map(|f| std::fs::read_to_string(format!("{samples}/{f}")).ok())
    .chain(
        std::fs::read_dir(format!("{samples}/anthropic-messages"))
            .into_iter()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()),
    )
    .filter_map(|t| serde_json::from_str(&t).ok())
    .collect();
    let mixed = |n: usize| {
        let items: Vec<Value> = (0..n)
            .map(|i| serde_json::json!({"n": i, "record": records[i % records.len()]}))
            .collect();
        serde_json::to_string(&serde_json::json!({ "records": items })).unwrap()
    };
    vec![
        ("real-json-s4".to_owned(), fill(&results)),
        ("real-text-s4".to_owned(), fill(&text)),
        ("real-json-mixed".to_owned(), fill(&mixed)),
    ]
}

/// Cap-size bodies whose payload is one pre-tokenizer piece: a run of one letter, of `-`, of
/// spaces (then `x`). A long piece is the tokenizer's slowest input per byte, and the S-4 search
/// inside it used to probe every code point from the end (0.2–0.8 s); the search now jumps to a
/// bound ([`tokenizer::Tokenized`]'s long-piece jump). Budget 1,000 tokens; fewer runs each.
fn single_piece_cases() -> Vec<(String, Vec<u8>)> {
    [
        ("piece-letters", "a"),
        ("piece-dashes", "-"),
        ("piece-spaces", " "),
    ]
    .into_iter()
    .map(|(id, unit)| {
        let body = |n: usize| {
            let mut payload = unit.repeat(n);
            if unit == " " {
                payload.push('x');
            }
            serde_json::to_vec(&serde_json::json!({
                "payload": payload,
                "budget_tokens": 1000,
                "caller": "11111111111111111111111111111111",
            }))
            .unwrap()
        };
        let overhead = body(0).len() + 1;
        (id.to_owned(), body(te::BODY_CAP - overhead))
    })
    .collect()
}

/// Runs per case: single-piece payloads cost tens of milliseconds per tokenization.
fn runs_for(id: &str) -> usize {
    if id.starts_with("piece-") {
        10
    } else {
        RUNS
    }
}

/// `body` with its budget set to the payload's own count and no reserve: the precheck's fits
/// path at its tightest (P = B, and the payload's bytes above the budget).
fn fits_body(body: &Value, canonical: &str) -> Vec<u8> {
    let mut fits = body.clone();
    let members = fits.as_object_mut().unwrap();
    members.shift_remove("reserve_tokens");
    members.insert(
        "budget_tokens".into(),
        Value::from(tokenizer::count(canonical)),
    );
    serde_json::to_vec(&fits).unwrap()
}

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/token-efficiency/corpus.json"
    );
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    println!("token-efficiency at the cap: fastest of {RUNS} interleaved runs (single-piece cases: 10); ratios to one tokenization of the canonical payload");
    let corpus_cases = corpus["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| {
            case["id"].as_str().unwrap().starts_with("cap-") && case["expect"]["refusal"].is_null()
        })
        .map(|case| (case["id"].as_str().unwrap().to_owned(), body_bytes(case)));
    let cases: Vec<(String, Vec<u8>)> = corpus_cases
        .chain(real_cases())
        .chain(single_piece_cases())
        .collect();
    let signer = ReportSigner::from_seed(&[7; 32]);
    let mut kept = Vec::new();
    let every_case = std::env::var("TE_BENCH_CASE").is_err();
    for (id, bytes) in cases {
        let wanted = std::env::var("TE_BENCH_CASE").map_or(true, |only| only == id);
        if !wanted {
            continue;
        }
        if let Ok(dir) = std::env::var("TE_BENCH_DUMP") {
            std::fs::write(format!("{dir}/{id}.json"), &bytes).unwrap();
        }
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let text = canonical(body["payload"].as_str().unwrap());
        let fits_bytes = fits_body(&body, &text);
        let (mut one, mut analysed, mut pre, mut run) = (vec![], vec![], vec![], vec![]);
        let mut pre_fits = vec![];
        let (mut tail, mut digest) = (vec![], vec![]);
        let mut applications = Value::Null;
        for _ in 0..runs_for(&id) {
            one.push(timed(|| tokenizer::count(black_box(&text))));
            analysed.push(timed(|| {
                tokenizer::Tokenized::new(black_box(&text)).count()
            }));
            pre.push(timed(|| {
                let req = te::parse(black_box(&bytes)).unwrap();
                signer.signed_body(te::precheck(&req, 0).expect("a precheck body"))
            }));
            pre_fits.push(timed(|| {
                let req = te::parse(black_box(&fits_bytes)).unwrap();
                let report = te::precheck(&req, 0).expect("a precheck body");
                assert_eq!(report["fits"], Value::Bool(true));
                signer.signed_body(report)
            }));
            let start = Instant::now();
            let req = te::parse_for_budget(black_box(&bytes)).unwrap();
            let delivery = te::run(&req, 0).unwrap();
            applications = delivery.report["applications"].clone();
            let signed = signed_bytes(&delivery.report);
            let signing = Instant::now();
            black_box(signer.signed_body(delivery.report));
            run.push(start.elapsed());
            tail.push(signing.elapsed());
            digest.push(timed(|| Sha512::digest(black_box(signed.as_bytes()))));
        }
        let (one, analysed) = (fastest(one), fastest(analysed));
        let (pre, run, tail) = (fastest(pre), fastest(run), fastest(tail));
        let pre_fits = fastest(pre_fits);
        let digest = fastest(digest);
        let round = |d: Duration| (ms(d) * 1e4).round() / 1e4;
        kept.push(json!({
            "id": id, "body_bytes": bytes.len(), "runs": runs_for(&id),
            "ms": {
                "count": round(one), "analyse": round(analysed), "precheck": round(pre),
                "fits": round(pre_fits), "budget": round(run), "signed_body": round(tail),
                "digest": round(digest),
            },
            "applications": applications.clone(),
        }));
        println!(
            "{id}: {} bytes; one tokenization {:.2} ms (with the S-4 prefix analysis {:.2}x); precheck {:.2} ms ({:.2}x; fits path {:.2}x); budget {:.2} ms ({:.2}x, signed body {:.2}x; floor {:.2}x: SHA-512 of the signed bytes {:.2}x); applications {applications}",
            bytes.len(),
            ms(one),
            analysed.as_secs_f64() / one.as_secs_f64(),
            ms(pre),
            pre.as_secs_f64() / one.as_secs_f64(),
            pre_fits.as_secs_f64() / one.as_secs_f64(),
            ms(run),
            run.as_secs_f64() / one.as_secs_f64(),
            tail.as_secs_f64() / one.as_secs_f64(),
            1.0 + digest.as_secs_f64() / one.as_secs_f64(),
            digest.as_secs_f64() / one.as_secs_f64(),
        );
    }
    if let (Ok(dir), true) = (std::env::var("BENCH_OUT"), every_case) {
        std::fs::create_dir_all(&dir).expect("BENCH_OUT");
        let data = json!({ "runs": RUNS, "cases": kept });
        let text = serde_json::to_string_pretty(&data).unwrap() + "\n";
        std::fs::write(format!("{dir}/token-efficiency-native.json"), text)
            .expect("BENCH_OUT section");
    }
}
