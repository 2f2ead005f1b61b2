//! Shape of the levers report: auditable context lines, labelled estimates beside exact figures,
//! itemised overhead, the gate, the verdict line and the closed ledger columns.

use context_meter::engine::token_opt::{parse_levers, run_levers, LEDGER_COLUMNS};
use context_meter::engine::LedgerValue;
use serde_json::{json, Value};

fn run(body: Value) -> (Value, Vec<(&'static str, LedgerValue)>) {
    let req = parse_levers(body.to_string().as_bytes()).unwrap();
    let d = run_levers(&req, 1_764_633_600_000).unwrap();
    assert_eq!((d.status, d.chargeable), (200, true));
    (Value::Object(d.report), d.ledger)
}

#[test]
fn c9_context_lines_are_one_per_selected_chunk_even_with_multiline_text() {
    let (r, _) = run(json!({"c9": {"candidates": [
        {"id": "a", "category": "docs", "score": 1, "text": "line one\nline two"},
        {"id": "b", "category": "docs", "score": 0.5, "text": "other"},
        {"id": "c", "category": "docs", "score": 0.1, "text": "dropped"}
    ]}}));
    let c9 = &r["outputs"]["c9"];
    assert_eq!(
        c9["context_lines"],
        json!(["[docs:a|1] line one\nline two", "[docs:b|0.5] other"])
    );
    assert_eq!(
        c9["context"],
        "[docs:a|1] line one\nline two\n[docs:b|0.5] other"
    );
    assert_eq!(c9["selected"][0]["score"], json!(1));
    assert_eq!(
        c9["recall"],
        json!({"value": 1, "eligible_selected": 2, "eligible": 2})
    );
    assert_eq!(c9["signal"], "ok");
    assert_eq!(c9["notice"], Value::Null);
    let m = &r["measurements"][0];
    assert_eq!(
        m["tokens"]["overhead"],
        m["tokens"]["overhead_items"]["retrieval"]
    );
    assert_eq!(m["tokens"]["after"], 0);
    assert_eq!(m["chars"]["overhead_items"]["retrieval"], 47);
    assert_eq!(m["estimate"]["overhead"], "est:~12");
    let net = m["tokens"]["net"].as_i64().unwrap();
    assert_eq!(r["gate"]["c9"], json!(net > 0));
}

#[test]
fn truncation_and_schema_report_itemised_overhead_and_labelled_estimates() {
    let (r, ledger) = run(json!({
        "truncate": {"blocks": ["a summary of the turn", "x".repeat(400), "y".repeat(400), "the tail"], "max_chars": 60},
        "schema": {"tools": [{"name": "search", "full": "search: ".to_string() + &"detail ".repeat(40), "slim": "search: find", "detail_fetches": 1}]},
    }));
    let t = &r["outputs"]["truncate"];
    assert_eq!(
        t["blocks"],
        json!(["a summary of the turn", "…[+2 truncated]…", "the tail"])
    );
    assert!(t["output_chars"].as_u64().unwrap() <= 60);
    assert_eq!(t["marker_chars"], 16);
    let mt = &r["measurements"][0];
    assert_eq!(
        (mt["lever"].as_str(), mt["part"].as_str()),
        (Some("filter-truncate"), Some("truncate"))
    );
    assert!(mt["tokens"]["overhead_items"]["marker"].as_u64().unwrap() > 0);
    for k in ["before", "after", "overhead", "gross", "net"] {
        assert!(mt["estimate"][k].as_str().unwrap().starts_with("est:~"));
    }
    let ms = &r["measurements"][1];
    assert_eq!(ms["part"], "schema");
    // One detail fetch debits exactly the full description once: gross − detail = net.
    assert_eq!(
        ms["tokens"]["net"].as_i64().unwrap(),
        ms["tokens"]["gross"].as_i64().unwrap()
            - ms["tokens"]["overhead_items"]["detail"].as_i64().unwrap()
    );
    assert_eq!(
        ms["tokens"]["overhead_items"]["detail"],
        ms["tokens"]["before"]
    );
    assert_eq!(
        r["outputs"]["schema"]["tools"][0]["description"],
        "search: find"
    );
    assert!(r["verdict"]
        .as_str()
        .unwrap()
        .starts_with("TOKEN-OPT LEVERS — measured: 2 — enabled: "));
    assert!(r["verdict"]
        .as_str()
        .unwrap()
        .ends_with(" — 2025-12-02T00:00:00.000Z"));
    assert_eq!(
        ledger.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        LEDGER_COLUMNS
    );
    assert_eq!(ledger[1].1, LedgerValue::Text("levers".into()));
    assert_eq!(ledger[4].1, LedgerValue::Int(2));
    assert_eq!(ledger[10].1, LedgerValue::Null);
}

#[test]
fn the_criteria_cite_the_pinned_corpora() {
    use context_meter::engine::token_opt::{
        criteria, LEVERS_CORPUS_SHA256, TOON_CROSSCHECK_SHA256,
    };
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/token-opt");
    for (file, pin) in [
        ("levers-corpus.json", LEVERS_CORPUS_SHA256),
        ("toon-crosscheck.json", TOON_CROSSCHECK_SHA256),
    ] {
        let corpus: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        assert_eq!(corpus["sha256"], pin, "{file}");
        let served = &criteria()["corpus"][if file.starts_with("levers") {
            "levers"
        } else {
            "toon_crosscheck"
        }]["cases"];
        assert_eq!(
            Some(corpus["cases"].as_array().unwrap().len() as u64),
            served.as_u64(),
            "{file}: the criteria state the case count"
        );
    }
    let c = criteria();
    assert_eq!(c["corpus"]["levers"]["sha256"], LEVERS_CORPUS_SHA256);
    assert_eq!(
        c["corpus"]["toon_crosscheck"]["sha256"],
        TOON_CROSSCHECK_SHA256
    );
}

#[test]
fn a_body_near_the_cap_of_distinct_categories_runs_the_fallback_over_every_chunk() {
    // 2,500 low-score chunks, each its own category: everything falls under the cutoff, the query
    // matches every chunk, so the fallback keeps each chunk (top-3 of a one-chunk category).
    let candidates: Vec<Value> = (0..2500)
        .map(|i| json!({"id": format!("c{i}"), "category": format!("cat{i}"), "score": 0.1, "text": format!("shared term {i}")}))
        .collect();
    let body = json!({"c9": {"candidates": candidates, "query": "shared"}});
    assert!(body.to_string().len() < context_meter::engine::token_opt::LEVERS_BODY_CAP);
    let started = std::time::Instant::now();
    let (r, _) = run(body);
    let c9 = &r["outputs"]["c9"];
    assert_eq!(c9["signal"], "fallback-relative");
    assert_eq!(
        c9["counts"],
        json!({"candidates": 2500, "selected": 2500, "dropped": 0})
    );
    assert_eq!(c9["recall"]["value"], 1);
    assert!(
        started.elapsed().as_secs() < 20,
        "took {:?}",
        started.elapsed()
    );
}
