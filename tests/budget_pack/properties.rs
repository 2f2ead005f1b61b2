//! Property tests for context-budget-pack over thousands of random inputs — drawn from a small seeded
//! PRNG (4,000 fixed cases, with branch-coverage counts) and by proptest (fresh cases each run,
//! shrunk to a minimal input on failure) — against a naive reference packer written here on a different code path: the ranking is a
//! repeated linear scan for the best remaining candidate (no sort), slices are cut from the source's
//! `char`s re-encoded unit by unit, duplicates are found by scanning the selected list, and the
//! result document is assembled with `json!` from the contract's field list.
//!
//! Properties: engine == reference (whole `result`, byte for byte); never over budget (unless
//! reservedUnits alone is); requiredSatisfied or the explicit finding; selected texts are exact
//! source slices; same input → same bytes, whatever the whitespace or member order of the body;
//! reordering the candidates changes neither selection nor exclusions; outputSha256 is the SHA-256
//! of the compact result.

use context_meter::engine::budget_pack::{parse, report::compact_json, run};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// SplitMix64: small, seeded, good enough to spread cases.
struct Prng(u64);

impl Prng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.next() as usize % items.len()]
    }
    fn index(&mut self, len: usize) -> usize {
        self.next() as usize % len
    }
}

const PIECES: &[&str] = &[
    "a", "b", "the ", " ", ".", "\"", "\\", "\n", "\u{1}", "\u{2028}", "é", "€", "😀", "𝄞",
    "\u{ff61}",
];
const ID_CHARS: &[&str] = &["a", "b", "Z", "0", "_", "\u{ff61}", "😀", "é", "\u{10000}"];

fn random_id(rng: &mut Prng, prefix: &str) -> String {
    let mut id = prefix.to_owned();
    for _ in 0..rng.int(0, 3) {
        id.push_str(rng.pick(ID_CHARS));
    }
    id
}

fn utf16_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

/// A random input (a JSON object), with duplicates and broken spans likely.
fn random_input(rng: &mut Prng) -> Value {
    let mut sources: Vec<Value> = Vec::new();
    let mut source_texts: Vec<(String, String)> = Vec::new();
    for _ in 0..rng.int(0, 4) {
        let id = random_id(rng, "s");
        if source_texts.iter().any(|(known, _)| *known == id) {
            continue;
        }
        let mut text = String::new();
        if rng.chance(50) {
            for _ in 0..rng.int(0, 12) {
                text.push_str(rng.pick(PIECES));
            }
        } else {
            let mut unit = String::new();
            for _ in 0..rng.int(1, 3) {
                unit.push_str(rng.pick(PIECES));
            }
            text = unit.repeat(rng.int(1, 4) as usize);
        }
        sources.push(json!({"id": id, "text": text}));
        source_texts.push((id, text));
    }
    let mut candidates: Vec<Value> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for _ in 0..rng.int(0, 14) {
        let id = random_id(rng, "c");
        if ids.contains(&id) {
            continue;
        }
        ids.push(id.clone());
        let (source_id, len) = if !source_texts.is_empty() && rng.chance(92) {
            let (sid, text) = source_texts[rng.index(source_texts.len())].clone();
            let len = utf16_len(&text);
            (sid, len)
        } else {
            (random_id(rng, "missing"), 5)
        };
        let mut start = rng.int(0, len + 1);
        let mut end = if rng.chance(85) {
            rng.int(start, len + 1)
        } else {
            rng.int(0, len + 1)
        };
        if rng.chance(20) {
            start = 0;
            end = len;
        }
        let cost_max = if rng.chance(80) { 6 } else { 40 };
        let mut c = Map::new();
        c.insert("id".into(), json!(id));
        c.insert("sourceId".into(), json!(source_id));
        c.insert("start".into(), json!(start));
        c.insert("end".into(), json!(end));
        c.insert("costUnits".into(), json!(rng.int(1, cost_max)));
        if rng.chance(60) {
            let scale = if rng.chance(20) { 33 } else { 1 };
            c.insert("priority".into(), json!(rng.int(0, 3) * scale));
        }
        if rng.chance(30) {
            c.insert("required".into(), json!(rng.chance(60)));
        }
        candidates.push(Value::Object(c));
    }
    let mut input = Map::new();
    input.insert("sources".into(), Value::Array(sources));
    input.insert("candidates".into(), Value::Array(candidates));
    input.insert("budgetUnits".into(), json!(rng.int(0, 40)));
    if rng.chance(50) {
        let reserved_max = if rng.chance(80) { 6 } else { 50 };
        input.insert("reservedUnits".into(), json!(rng.int(0, reserved_max)));
    }
    if rng.chance(30) {
        input.insert("deduplicate".into(), json!(rng.chance(50)));
    }
    Value::Object(input)
}

// ---------------------------------------------------------------- the naive reference packer

struct RefCandidate {
    index: usize,
    id: String,
    source_id: String,
    start: u64,
    end: u64,
    cost: u64,
    priority: u64,
    required: bool,
    /// The slice (as UTF-16 units) or the exclusion reason.
    slice: Result<Vec<u16>, &'static str>,
}

/// UTF-16 units of `text`, built char by char.
fn units_of(text: &str) -> Vec<u16> {
    let mut out = Vec::new();
    for ch in text.chars() {
        let mut buf = [0u16; 2];
        out.extend_from_slice(ch.encode_utf16(&mut buf));
    }
    out
}

fn reference_slice(
    sources: &[Value],
    source_id: &str,
    start: u64,
    end: u64,
) -> Result<Vec<u16>, &'static str> {
    let Some(source) = sources.iter().find(|s| s["id"] == source_id) else {
        return Err("source_missing");
    };
    let units = units_of(source["text"].as_str().unwrap());
    let (start, end) = (start as usize, end as usize);
    if start > end || end > units.len() {
        return Err("invalid_span");
    }
    let is_high = |u: u16| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u16| (0xDC00..0xE000).contains(&u);
    for cut in [start, end] {
        if cut > 0 && cut < units.len() && is_high(units[cut - 1]) && is_low(units[cut]) {
            return Err("invalid_span");
        }
    }
    Ok(units[start..end].to_vec())
}

/// True when `a` ranks before `b`.
fn ranks_before(a: &RefCandidate, b: &RefCandidate) -> bool {
    if a.required != b.required {
        return a.required;
    }
    if a.priority != b.priority {
        return a.priority > b.priority;
    }
    units_of(&a.id) < units_of(&b.id)
}

fn reference_result(input: &Value) -> Value {
    let sources = input["sources"].as_array().unwrap();
    let budget = input["budgetUnits"].as_u64().unwrap();
    let reserved = input
        .get("reservedUnits")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let dedupe = input
        .get("deduplicate")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let mut pool: Vec<RefCandidate> = input["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let source_id = c["sourceId"].as_str().unwrap().to_owned();
            let start = c["start"].as_u64().unwrap();
            let end = c["end"].as_u64().unwrap();
            RefCandidate {
                index,
                id: c["id"].as_str().unwrap().to_owned(),
                slice: reference_slice(sources, &source_id, start, end),
                source_id,
                start,
                end,
                cost: c["costUnits"].as_u64().unwrap(),
                priority: c.get("priority").and_then(Value::as_u64).unwrap_or(0),
                required: c.get("required").and_then(Value::as_bool).unwrap_or(false),
            }
        })
        .collect();
    // Ranking by repeated scan for the best remaining candidate.
    let mut ranked: Vec<RefCandidate> = Vec::new();
    while !pool.is_empty() {
        let mut best = 0;
        for i in 1..pool.len() {
            if ranks_before(&pool[i], &pool[best]) {
                best = i;
            }
        }
        ranked.push(pool.remove(best));
    }
    let valid_required: Vec<&RefCandidate> = ranked
        .iter()
        .filter(|c| c.required && c.slice.is_ok())
        .collect();
    let required_over = !valid_required.is_empty()
        && reserved + valid_required.iter().map(|c| c.cost).sum::<u64>() > budget;

    let mut selected: Vec<(&RefCandidate, Vec<u16>)> = Vec::new();
    let mut excluded: Vec<Value> = Vec::new();
    let mut used = reserved;
    for c in &ranked {
        let text = match &c.slice {
            Err(reason) => {
                excluded.push(json!({"id": c.id, "reason": reason, "duplicateOf": null}));
                continue;
            }
            Ok(text) => text.clone(),
        };
        if required_over {
            excluded.push(
                json!({"id": c.id, "reason": "required_set_over_budget", "duplicateOf": null}),
            );
            continue;
        }
        if !c.required && dedupe {
            if let Some((twin, _)) = selected.iter().find(|(_, t)| *t == text) {
                excluded
                    .push(json!({"id": c.id, "reason": "duplicate_text", "duplicateOf": twin.id}));
                continue;
            }
        }
        if c.required || used + c.cost <= budget {
            used += c.cost;
            selected.push((c, text));
        } else {
            excluded.push(json!({"id": c.id, "reason": "budget", "duplicateOf": null}));
        }
    }
    let mut findings: Vec<Value> = Vec::new();
    if reserved > budget {
        findings.push(json!({"code": "RESERVED_UNITS_OVER_BUDGET", "severity": "error", "path": "/reservedUnits",
            "message": "reservedUnits exceeds budgetUnits; no candidate can be packed within the budget."}));
    }
    if required_over {
        findings.push(json!({"code": "REQUIRED_SET_OVER_BUDGET", "severity": "error", "path": "/candidates",
            "message": "reservedUnits plus the costs of the required candidates exceed budgetUnits; no content was packed."}));
    }
    for c in &ranked {
        let severity = if c.required { "error" } else { "warning" };
        let path = format!("/candidates/{}", c.index);
        match c.slice {
            Err("source_missing") => findings.push(json!({"code": "SOURCE_MISSING", "severity": severity, "path": path,
                "message": "The candidate's sourceId names no source; the candidate was excluded."})),
            Err(_) => findings.push(json!({"code": "INVALID_SPAN", "severity": severity, "path": path,
                "message": "The candidate's span is reversed, runs past its source, or splits a surrogate pair; the candidate was excluded."})),
            Ok(_) => {}
        }
    }
    let required_satisfied = ranked
        .iter()
        .filter(|c| c.required)
        .all(|c| selected.iter().any(|(s, _)| s.id == c.id));
    let error_count = findings.iter().filter(|f| f["severity"] == "error").count();
    let finding_count = findings.len();
    findings.truncate(200);
    json!({
        "profile": "caller-cost-context-pack-v1",
        "requiredSatisfied": required_satisfied,
        "withinBudget": used <= budget,
        "usedUnits": used,
        "remainingUnits": budget.saturating_sub(used),
        "offsetUnit": "UTF-16-code-units",
        "selected": selected.iter().map(|(c, text)| json!({
            "id": c.id, "sourceId": c.source_id, "start": c.start, "end": c.end,
            "text": String::from_utf16(text).unwrap(), "costUnits": c.cost, "priority": c.priority,
        })).collect::<Vec<_>>(),
        "excluded": excluded,
        "findings": findings,
        "findingCount": finding_count,
        "errorCount": error_count,
        "truncated": finding_count > 200,
    })
}

// ---------------------------------------------------------------- the properties

fn engine_report(body: &str) -> Value {
    let req = parse(body.as_bytes()).expect("random inputs are valid");
    Value::Object(
        run(&req, 0)
            .expect("random inputs are within the limits")
            .report,
    )
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The same object with members in reverse order at every level.
fn reversed_members(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed_members(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed_members).collect()),
        other => other.clone(),
    }
}

/// How often each branch was reached (so the generators are shown to reach them).
#[derive(Default)]
struct Seen {
    required_over: u64,
    duplicates: u64,
    broken: u64,
    budget_skips: u64,
}

/// Every property, on one input: engine == reference, the budget, required or explained,
/// exact slices, outputSha256, determinism under whitespace/member order, candidate order.
fn check_input(input: &Value, label: &str, seen: &mut Seen) {
    let body = serde_json::to_string(input).unwrap();
    let report = engine_report(&body);
    let result = &report["result"];
    let want = reference_result(input);
    assert_eq!(compact_json(result), compact_json(&want), "{label}: {body}");

    // Never over budget, unless the reserved units alone are.
    let budget = input["budgetUnits"].as_u64().unwrap();
    let reserved = input
        .get("reservedUnits")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let costs: u64 = result["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["costUnits"].as_u64().unwrap())
        .sum();
    assert_eq!(
        result["usedUnits"].as_u64().unwrap(),
        reserved + costs,
        "{label}"
    );
    if reserved <= budget {
        assert!(reserved + costs <= budget, "{label}");
        assert_eq!(result["withinBudget"], true);
    }

    // Required satisfied, or the explicit reason why not.
    let findings = result["findings"].as_array().unwrap();
    if result["requiredSatisfied"] == false {
        let explained = findings
            .iter()
            .any(|f| f["code"] == "REQUIRED_SET_OVER_BUDGET")
            || findings.iter().any(|f| {
                f["severity"] == "error" && f["path"].as_str().unwrap().starts_with("/candidates/")
            });
        assert!(explained, "{label}");
    }
    if findings
        .iter()
        .any(|f| f["code"] == "REQUIRED_SET_OVER_BUDGET")
    {
        assert_eq!(result["selected"], json!([]), "{label}");
        seen.required_over += 1;
    }

    // Selected texts are exact source slices.
    for s in result["selected"].as_array().unwrap() {
        let source = input["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|src| src["id"] == s["sourceId"])
            .unwrap();
        let units: Vec<u16> = source["text"].as_str().unwrap().encode_utf16().collect();
        let (start, end) = (
            s["start"].as_u64().unwrap() as usize,
            s["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            String::from_utf16(&units[start..end]).unwrap(),
            s["text"].as_str().unwrap(),
            "{label}"
        );
    }
    for e in result["excluded"].as_array().unwrap() {
        match e["reason"].as_str().unwrap() {
            "duplicate_text" => seen.duplicates += 1,
            "invalid_span" | "source_missing" => seen.broken += 1,
            "budget" => seen.budget_skips += 1,
            _ => {}
        }
    }

    // outputSha256 is the SHA-256 of the compact result.
    assert_eq!(
        report["provenance"]["outputSha256"],
        sha256_hex(compact_json(result).as_bytes())
    );

    // Deterministic: again, pretty-printed, and with members reordered → the same bytes.
    assert_eq!(compact_json(&engine_report(&body)), compact_json(&report));
    let pretty = serde_json::to_string_pretty(&reversed_members(input)).unwrap();
    assert_eq!(
        compact_json(&engine_report(&pretty)),
        compact_json(&report),
        "{label}"
    );

    // Candidate order in the body does not change the packing.
    let mut shuffled = input.clone();
    let list = shuffled["candidates"].as_array_mut().unwrap();
    list.reverse();
    if list.len() > 2 {
        list.swap(0, 1);
    }
    let other = engine_report(&serde_json::to_string(&shuffled).unwrap());
    assert_eq!(other["result"]["selected"], result["selected"], "{label}");
    assert_eq!(other["result"]["excluded"], result["excluded"], "{label}");
}

const CASES: u64 = 4000;

#[test]
fn engine_equals_reference_and_keeps_every_invariant() {
    let mut rng = Prng(0x5EED_2026_1202);
    let mut seen = Seen::default();
    for case in 0..CASES {
        let input = random_input(&mut rng);
        check_input(&input, &format!("case {case}"), &mut seen);
    }
    // The generator reaches every branch often.
    assert!(seen.required_over > 50, "{}", seen.required_over);
    assert!(seen.duplicates > 200, "{}", seen.duplicates);
    assert!(seen.broken > 200, "{}", seen.broken);
    assert!(seen.budget_skips > 200, "{}", seen.budget_skips);
}

// ---------------------------------------------------------------- the same properties under proptest

/// An id: the prefix and up to three characters from `ID_CHARS`.
fn id_strategy(prefix: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ID_CHARS), 0..4)
        .prop_map(move |chars| format!("{prefix}{}", chars.concat()))
}

/// Source text: pieces, or a short unit repeated (duplicate spans likely).
fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(PIECES), 0..13).prop_map(|p| p.concat()),
        (
            prop::collection::vec(prop::sample::select(PIECES), 1..4),
            1usize..5
        )
            .prop_map(|(unit, n)| unit.concat().repeat(n)),
    ]
}

/// One candidate's raw draws: id, source pick, span draws, cost, priority, required.
type CandidateDraw = (
    String,
    usize,
    u64,
    u64,
    bool,
    u64,
    Option<u64>,
    Option<bool>,
);

fn candidate_strategy() -> impl Strategy<Value = CandidateDraw> {
    (
        id_strategy("c"),
        0usize..8,
        0u64..40,
        0u64..40,
        prop::bool::weighted(0.2),
        prop_oneof![4 => 1u64..7, 1 => 1u64..41],
        prop::option::of(prop_oneof![3 => 0u64..4, 1 => (0u64..4).prop_map(|p| p * 33)]),
        prop::option::weighted(0.3, any::<bool>()),
    )
}

/// A random input with the same shape as `random_input`, drawn (and shrunk) by proptest.
fn input_strategy() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec((id_strategy("s"), text_strategy()), 0..5),
        prop::collection::vec(candidate_strategy(), 0..15),
        0u64..41,
        prop::option::of(prop_oneof![4 => 0u64..7, 1 => 0u64..51]),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(raw_sources, raw_candidates, budget, reserved, dedupe)| {
            let mut sources: Vec<(String, String)> = Vec::new();
            for (id, text) in raw_sources {
                if !sources.iter().any(|(known, _)| *known == id) {
                    sources.push((id, text));
                }
            }
            let mut ids: Vec<String> = Vec::new();
            let mut candidates: Vec<Value> = Vec::new();
            for (id, pick, a, b, whole, cost, priority, required) in raw_candidates {
                if ids.contains(&id) {
                    continue;
                }
                ids.push(id.clone());
                let (source_id, len) = match sources.get(pick) {
                    Some((sid, text)) => (sid.clone(), utf16_len(text)),
                    None => ("missing".to_owned(), 5),
                };
                let (start, end) = if whole {
                    (0, len)
                } else {
                    (a % (len + 2), b % (len + 2))
                };
                let mut c = Map::new();
                c.insert("id".into(), json!(id));
                c.insert("sourceId".into(), json!(source_id));
                c.insert("start".into(), json!(start));
                c.insert("end".into(), json!(end));
                c.insert("costUnits".into(), json!(cost));
                if let Some(p) = priority {
                    c.insert("priority".into(), json!(p));
                }
                if let Some(r) = required {
                    c.insert("required".into(), json!(r));
                }
                candidates.push(Value::Object(c));
            }
            let mut input = Map::new();
            input.insert(
                "sources".into(),
                Value::Array(
                    sources
                        .into_iter()
                        .map(|(id, text)| json!({"id": id, "text": text}))
                        .collect(),
                ),
            );
            input.insert("candidates".into(), Value::Array(candidates));
            input.insert("budgetUnits".into(), json!(budget));
            if let Some(r) = reserved {
                input.insert("reservedUnits".into(), json!(r));
            }
            if let Some(d) = dedupe {
                input.insert("deduplicate".into(), json!(d));
            }
            Value::Object(input)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The pack never exceeds its budget (unless reservedUnits alone does), and every other
    /// property of `check_input` holds, on proptest's inputs with shrinking to a minimal failure.
    #[test]
    fn pack_never_exceeds_its_budget(input in input_strategy()) {
        check_input(&input, "proptest case", &mut Seen::default());
    }
}

#[test]
fn reference_agrees_with_the_contract_example() {
    // The reference packer itself is checked against the published example before it judges anything.
    let contract: Value = serde_json::from_str(include_str!(
        "../../corpus/context-budget-pack/contract.json"
    ))
    .unwrap();
    let want = &contract["exampleResponse"]["result"];
    assert_eq!(
        compact_json(&reference_result(&contract["exampleInput"])),
        compact_json(want)
    );
}

#[test]
fn many_findings_are_truncated_at_the_limit_with_full_counts() {
    // 200 broken candidates plus reserved over budget → 201 findings, 200 listed.
    let candidates: Vec<Value> = (0..200)
        .map(|i| json!({"id": format!("c{i:03}"), "sourceId": "nowhere", "start": 0, "end": 1, "costUnits": 1, "required": i % 2 == 0}))
        .collect();
    let input =
        json!({"sources": [], "candidates": candidates, "budgetUnits": 1, "reservedUnits": 2});
    let report = engine_report(&serde_json::to_string(&input).unwrap());
    let result = &report["result"];
    assert_eq!(result["findings"].as_array().unwrap().len(), 200);
    assert_eq!(result["findingCount"], 201);
    assert_eq!(result["errorCount"], 101);
    assert_eq!(result["truncated"], true);
    assert_eq!(
        compact_json(result),
        compact_json(&reference_result(&input))
    );
}
