//! token-opt/v1 levers: `parse_levers` → `run_levers`.
//!
//! Mode byte even: the rest is the raw request body. Odd: a body is built from the rest with the
//! levers the mode's bits name (c9 candidates, scores, categories, overrides and query; a filter
//! response with allowed and required fields; truncation blocks and cap; schema tools), so
//! mutations reach the levers themselves.
//!
//! Checks: refusals closed and deterministic; a parsed body is always delivered; for every
//! measurement gross = before − after, net = gross − overhead, overhead = the sum of its items,
//! enabled ⇔ net > 0, and each est:~ figure is ceil(chars / 4); the gate disables a lever exactly
//! when one of its measurements nets ≤ 0; totals are the sums; C9's selected and dropped partition
//! the candidates, at most top-k per category; the filtered response holds only allowed members
//! with their submitted values; truncation never exceeds its hard cap and leaves a fitting turn
//! alone; the ledger carries nothing of the body; same body → same bytes.

use super::{
    delivered_deterministically, parsed_or_closed_refusal, raw_or_built_body, Cursor, NOW_MS,
};
use context_meter::engine::token_opt::{self as to, json_js::js_length};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

const WORDS: [&str; 10] = [
    "alpha", "Beta", "café", "x2", " ", "\n", "😀", "the", "\u{E000}", "…",
];
const KEYS: [&str; 6] = ["id", "name", "2", "b", "0", "value"];

fn words(c: &mut Cursor, max: u8) -> String {
    let mut out = String::new();
    for _ in 0..c.byte() % max {
        out.push_str(WORDS[usize::from(c.byte()) % WORDS.len()]);
    }
    out
}

fn built_body(rest: &[u8], mode: u8) -> Vec<u8> {
    let mut c = Cursor::new(rest);
    let mut body = Map::new();
    if mode & 0x02 != 0 {
        let mut candidates = Vec::new();
        for i in 0..c.byte() % 10 {
            let category = ["a", "b", "c"][usize::from(c.byte() % 3)];
            let score = (f64::from(c.byte()) - 40.0) / 100.0;
            candidates.push(json!({"id": format!("k{i}"), "category": category, "score": score, "text": words(&mut c, 8)}));
        }
        let mut c9 = Map::new();
        c9.insert("candidates".into(), Value::Array(candidates));
        let flags = c.byte();
        if flags & 1 != 0 {
            c9.insert("query".into(), json!(words(&mut c, 6)));
        }
        if flags & 2 != 0 {
            c9.insert(
                "per_category".into(),
                json!({"a": {"top_k": c.byte() % 4, "cutoff": f64::from(c.byte()) / 200.0}, "b": {"top_k": null}}),
            );
        }
        body.insert("c9".into(), Value::Object(c9));
    }
    if mode & 0x04 != 0 {
        let mut response = Map::new();
        for key in KEYS {
            if c.byte() & 1 != 0 {
                response.insert(key.into(), json!(words(&mut c, 4)));
            }
        }
        let pick = |c: &mut Cursor| -> Vec<&str> {
            let mask = c.byte();
            KEYS.iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, k)| *k)
                .collect()
        };
        let allowed = pick(&mut c);
        let required: Vec<&str> = pick(&mut c)
            .into_iter()
            .filter(|k| response.contains_key(*k))
            .collect();
        body.insert(
            "filter".into(),
            json!({"response": response, "allowed": allowed, "required": required}),
        );
    }
    if mode & 0x08 != 0 {
        let blocks: Vec<String> = (0..c.byte() % 6).map(|_| words(&mut c, 10)).collect();
        body.insert(
            "truncate".into(),
            json!({"blocks": blocks, "max_chars": c.byte() % 64}),
        );
    }
    if mode & 0x10 != 0 || body.is_empty() {
        let tools: Vec<Value> = (0..c.byte() % 5)
            .map(|i| {
                let flags = c.byte();
                let mut t = Map::new();
                t.insert("name".into(), json!(format!("tool{i}")));
                if flags & 1 != 0 {
                    t.insert("full".into(), json!(words(&mut c, 12)));
                }
                if flags & 2 != 0 {
                    t.insert("slim".into(), json!(words(&mut c, 4)));
                }
                if flags & 4 != 0 {
                    t.insert("detail_fetches".into(), json!(flags >> 4));
                }
                Value::Object(t)
            })
            .collect();
        body.insert("schema".into(), json!({ "tools": tools }));
    }
    serde_json::to_vec(&Value::Object(body)).expect("a built body serialises")
}

pub fn check(data: &[u8]) {
    check_body(&raw_or_built_body(data, built_body));
}

fn int(v: &Value) -> i64 {
    v.as_i64().expect("an integer figure")
}

fn est(chars: i64) -> Value {
    json!(format!("est:~{}", (chars + 3).div_euclid(4)))
}

pub fn check_body(body: &[u8]) {
    let Some(req) = parsed_or_closed_refusal(|| to::parse_levers(body)) else {
        return;
    };
    let delivery = delivered_deterministically(|| to::run_levers(&req, NOW_MS), to::LEDGER_COLUMNS);
    let report = &delivery.report;

    // Each measurement's arithmetic, and the gate over them.
    let measurements = report["measurements"].as_array().expect("measurements");
    let mut gate: HashMap<String, bool> = HashMap::new();
    let (mut before, mut after, mut overhead, mut net) = (0, 0, 0, 0);
    for m in measurements {
        let t = &m["tokens"];
        assert_eq!(int(&t["gross"]), int(&t["before"]) - int(&t["after"]));
        assert_eq!(int(&t["net"]), int(&t["gross"]) - int(&t["overhead"]));
        for unit in ["tokens", "chars"] {
            let items = m[unit]["overhead_items"]
                .as_object()
                .expect("overhead items");
            assert_eq!(
                items.values().map(int).sum::<i64>(),
                int(&m[unit]["overhead"])
            );
        }
        assert_eq!(m["enabled"], json!(int(&t["net"]) > 0));
        let ch = &m["chars"];
        assert_eq!(m["estimate"]["before"], est(int(&ch["before"])));
        assert_eq!(m["estimate"]["after"], est(int(&ch["after"])));
        assert_eq!(m["estimate"]["overhead"], est(int(&ch["overhead"])));
        let lever = m["lever"].as_str().expect("lever").to_owned();
        let enabled = m["enabled"] == json!(true);
        *gate.entry(lever).or_insert(true) &= enabled;
        before += int(&t["before"]);
        after += int(&t["after"]);
        overhead += int(&t["overhead"]);
        net += int(&t["net"]);
    }
    let served_gate = report["gate"].as_object().expect("gate");
    assert_eq!(served_gate.len(), gate.len());
    for (lever, enabled) in &gate {
        assert_eq!(served_gate[lever], json!(*enabled), "gate of {lever}");
    }
    let totals = &report["totals"];
    assert_eq!(
        [
            int(&totals["tokens_before"]),
            int(&totals["tokens_after"]),
            int(&totals["tokens_overhead"]),
            int(&totals["tokens_net"])
        ],
        [before, after, overhead, net]
    );

    let outputs = &report["outputs"];
    if let Some(c9) = &req.c9 {
        let out = &outputs["c9"];
        let mut seen = HashSet::new();
        let ids = |list: &Value| -> Vec<String> {
            list.as_array()
                .expect("chunk list")
                .iter()
                .map(|c| c["id"].as_str().expect("id").to_owned())
                .collect()
        };
        let (selected, dropped) = (ids(&out["selected"]), ids(&out["dropped"]));
        let positions: Vec<usize> = selected
            .iter()
            .chain(&dropped)
            .map(|id| {
                c9.candidates
                    .iter()
                    .position(|c| c.id == *id)
                    .expect("a listed chunk is a candidate")
            })
            .collect();
        // Ids may repeat in a raw body; count positions by id multiplicity instead of identity.
        for p in &positions {
            seen.insert(*p);
        }
        assert_eq!(selected.len() + dropped.len(), c9.candidates.len());
        let distinct_ids: HashSet<&str> = c9.candidates.iter().map(|c| c.id.as_str()).collect();
        if distinct_ids.len() == c9.candidates.len() {
            assert_eq!(seen.len(), c9.candidates.len(), "selected ∪ dropped");
        }
        let mut per_category: HashMap<&str, usize> = HashMap::new();
        for id in &selected {
            let chunk = c9.candidates.iter().find(|c| c.id == *id).expect("chunk");
            *per_category.entry(chunk.category.as_str()).or_default() += 1;
        }
        if distinct_ids.len() == c9.candidates.len() {
            for (category, n) in per_category {
                let top_k = c9
                    .per_category
                    .iter()
                    .rev()
                    .find(|(name, _)| name == category)
                    .and_then(|(_, cfg)| cfg.top_k)
                    .unwrap_or(to::levers::C9_DEFAULT_TOP_K);
                assert!(n as u64 <= top_k, "more than top-k selected in a category");
            }
        }
    }
    if let Some(f) = &req.filter {
        let out = &outputs["filter"];
        let filtered = out["response"].as_object().expect("filtered response");
        for (k, v) in filtered {
            assert!(f.allowed.contains(k), "a filtered member is not allowed");
            assert_eq!(f.response.get(k), Some(v), "a filtered member changed");
        }
        assert_eq!(
            int(&out["kept_fields"]) + int(&out["dropped_fields"]),
            f.response.len() as i64
        );
    }
    if let Some(t) = &req.truncate {
        let out = &outputs["truncate"];
        let blocks: Vec<String> = out["blocks"]
            .as_array()
            .expect("blocks")
            .iter()
            .map(|b| b.as_str().expect("block").to_owned())
            .collect();
        let joined = js_length(&blocks.join("\n"));
        assert_eq!(int(&out["output_chars"]), joined as i64);
        assert!(joined as u64 <= t.max_chars, "truncation over its hard cap");
        if out["truncated"] == json!(false) {
            assert_eq!(blocks, t.blocks);
        }
    }
}
