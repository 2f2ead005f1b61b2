//! token-opt/v1: the token-reduction levers of the TypeScript reference measured in exact cl100k
//! tokens (the reference's chars/4 estimate printed beside every figure, labelled `est:~N`), and TOON
//! encoding of a JSON payload with compact JSON as the fallback whenever TOON is not fewer tokens.
//!
//! Two paid ops, no free precheck: `parse_levers` / `parse_toon` are the free validation of the raw
//! body (every refusal is static text plus numbers, nothing of the body is echoed), `run_levers` /
//! `run_toon` the paid substance. Pure: the clock arrives as `now_ms`; the same body and `now_ms`
//! always yield the same bytes. Bodies are parsed into JavaScript's key order (array-index keys
//! first), the order the reference implementations see after `JSON.parse`.

mod criteria;
pub mod json_js;
pub mod levers;
mod marks;
pub mod measure;
mod refusal;
pub mod toon;

pub use criteria::{criteria, LEVERS_CORPUS_SHA256, TOON_CROSSCHECK_SHA256};
pub use refusal::Refusal;

use crate::engine::jsjson::js_number;
use crate::engine::time::iso8601_millis;
use crate::engine::{Delivery, LedgerValue};
use json_js::{compact, js_length, to_js_key_order};
use levers::{CategoryConfig, Chunk, Measurement, Tool};
use serde_json::{json, Map, Value};
use toon::{Delimiter, ToonOptions};

/// The criteria id every report carries.
pub const CRITERIA_ID: &str = "token-opt/v1";
/// Request body cap of `POST /token-opt/levers` (bytes).
pub const LEVERS_BODY_CAP: usize = 262_144;
/// Request body cap of `POST /token-opt/toon` (bytes): a 256 KiB payload plus 8 KiB of envelope.
pub const TOON_BODY_CAP: usize = 270_336;
/// Price of one levers call, USDC base units ($0.01).
pub const LEVERS_PRICE_USDC_UNITS: u64 = 10_000;
/// Price of one toon call, USDC base units ($0.005).
pub const TOON_PRICE_USDC_UNITS: u64 = 5_000;
/// Largest indentation the toon op accepts (spaces per level).
pub const MAX_INDENT_SIZE: u64 = 8;

/// The family's closed ledger columns, in order (the edge adds the payment columns).
pub const LEDGER_COLUMNS: &[&str] = &[
    "criteria_version",
    "op",
    "verdict",
    "body_bytes",
    "levers_measured",
    "levers_enabled",
    "tokens_before",
    "tokens_after",
    "tokens_overhead",
    "tokens_net",
    "json_tokens",
    "toon_tokens",
    "returned_format",
];

const HONESTY_LINE: &str = "Counts are exact under the published tokenizer (cl100k_base); another model's tokenizer will count the same text differently, so a saving under token-opt/v1 is a figure under the published rules, not a promised bill reduction on any specific provider. The est:~ figures are the reference module's chars/4 estimate, printed for comparison only; the gate reads the exact figures.";

// ─── Shared body handling ────────────────────────────────────────────────────────────────────────

fn parse_object(body: &[u8], cap: usize) -> Result<Map<String, Value>, Refusal> {
    if body.len() > cap {
        return Err(Refusal::BodyTooLarge { cap });
    }
    let text = std::str::from_utf8(body).map_err(|_| Refusal::BodyNotUtf8)?;
    let mut value: Value = serde_json::from_str(text).map_err(|_| Refusal::MalformedBody)?;
    to_js_key_order(&mut value);
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Refusal::BodyNotObject),
    }
}

fn only_members(map: &Map<String, Value>, allowed: &[&str]) -> Result<(), Refusal> {
    if map.keys().all(|k| allowed.contains(&k.as_str())) {
        Ok(())
    } else {
        Err(Refusal::UnknownField)
    }
}

fn string_list(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The largest count the contract accepts: 2^53, the end of the integers a double holds exactly.
pub const COUNT_LIMIT: u64 = 1 << 53;

/// A count: the JSON number read as JavaScript reads it (the nearest double, so `3.0` is 3 and
/// 9007199254740993 is 2^53), accepted when it is a non-negative integer no larger than 2^53. Kept as
/// `u64`, never `usize`: on wasm32 a `usize` is 32 bits and 2^32 would wrap to 0.
fn count_value(value: &Value) -> Option<u64> {
    let x = value.as_f64()?;
    (x >= 0.0 && x.fract() == 0.0 && x <= COUNT_LIMIT as f64).then_some(x as u64)
}

/// `x ?? default` reading: absent and null both mean "use the default".
fn present(map: &Map<String, Value>, key: &str) -> Option<Value> {
    map.get(key).filter(|v| !v.is_null()).cloned()
}

/// The reference's estimate as printed beside a figure: `est:~` and the number as JavaScript prints it.
fn est(n: f64) -> Value {
    Value::String(format!("est:~{}", js_number(n)))
}

/// A figure for the ledger's integer column: the double's integer value (every figure is integral),
/// saturated at the i64 range, which only detail_fetches near 2^53 times a long description can reach.
fn ledger_figure(x: f64) -> LedgerValue {
    LedgerValue::Int(x as i64)
}

/// The ledger row: `LEDGER_COLUMNS` paired with one value each, in order.
fn ledger_row(values: [LedgerValue; LEDGER_COLUMNS.len()]) -> Vec<(&'static str, LedgerValue)> {
    LEDGER_COLUMNS.iter().copied().zip(values).collect()
}

// ─── levers ──────────────────────────────────────────────────────────────────────────────────────

/// C9 input: candidates in submitted order, optional per-category overrides, optional query.
#[derive(Debug, Clone, PartialEq)]
pub struct C9Request {
    pub candidates: Vec<Chunk>,
    pub per_category: Vec<(String, CategoryConfig)>,
    pub query: Option<String>,
}

/// Filtering input (the required fields are checked free, at parse time).
#[derive(Debug, Clone, PartialEq)]
pub struct FilterRequest {
    pub response: Map<String, Value>,
    pub allowed: Vec<String>,
    pub required: Vec<String>,
}

/// Truncation input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncateRequest {
    pub blocks: Vec<String>,
    pub max_chars: u64,
}

/// A validated levers call: any non-empty subset of the levers.
#[derive(Debug, Clone, PartialEq)]
pub struct LeversRequest {
    pub body_bytes: usize,
    pub c9: Option<C9Request>,
    pub filter: Option<FilterRequest>,
    pub truncate: Option<TruncateRequest>,
    pub schema: Option<Vec<Tool>>,
}

fn parse_c9(value: &Value) -> Result<C9Request, Refusal> {
    let map = value
        .as_object()
        .ok_or(Refusal::C9CandidateInvalid { index: 0 })?;
    only_members(map, &["candidates", "query", "per_category"])?;
    let query = match map.get("query") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(Refusal::C9QueryInvalid),
    };
    let items = map
        .get("candidates")
        .and_then(Value::as_array)
        .ok_or(Refusal::C9CandidateInvalid { index: 0 })?;
    let mut candidates = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let bad = Refusal::C9CandidateInvalid { index };
        let c = item.as_object().ok_or(bad)?;
        only_members(c, &["id", "category", "score", "text"])?;
        let text_of = |k: &str| {
            c.get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(bad)
        };
        candidates.push(Chunk {
            id: text_of("id")?,
            category: text_of("category")?,
            score: c.get("score").and_then(Value::as_f64).ok_or(bad)?,
            text: text_of("text")?,
        });
    }
    let mut per_category = Vec::new();
    match map.get("per_category") {
        None | Some(Value::Null) => {}
        Some(Value::Object(cats)) => {
            for (name, cfg) in cats {
                let cfg = cfg.as_object().ok_or(Refusal::C9PerCategoryInvalid)?;
                only_members(cfg, &["top_k", "cutoff"])?;
                let top_k = match present(cfg, "top_k") {
                    None => None,
                    Some(v) => Some(count_value(&v).ok_or(Refusal::C9PerCategoryInvalid)?),
                };
                let cutoff = match present(cfg, "cutoff") {
                    None => None,
                    Some(v) => Some(v.as_f64().ok_or(Refusal::C9PerCategoryInvalid)?),
                };
                per_category.push((name.clone(), CategoryConfig { top_k, cutoff }));
            }
        }
        Some(_) => return Err(Refusal::C9PerCategoryInvalid),
    }
    Ok(C9Request {
        candidates,
        per_category,
        query,
    })
}

fn parse_filter(value: &Value) -> Result<FilterRequest, Refusal> {
    let map = value.as_object().ok_or(Refusal::FilterInvalid)?;
    only_members(map, &["response", "allowed", "required"])?;
    let response = map
        .get("response")
        .and_then(Value::as_object)
        .cloned()
        .ok_or(Refusal::FilterInvalid)?;
    let allowed = map
        .get("allowed")
        .and_then(string_list)
        .ok_or(Refusal::FilterInvalid)?;
    let required = match map.get("required") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => string_list(v).ok_or(Refusal::FilterInvalid)?,
    };
    levers::filter_fields(&response, &[], &required)?;
    Ok(FilterRequest {
        response,
        allowed,
        required,
    })
}

fn parse_truncate(value: &Value) -> Result<TruncateRequest, Refusal> {
    let map = value.as_object().ok_or(Refusal::TruncateInvalid)?;
    only_members(map, &["blocks", "max_chars"])?;
    Ok(TruncateRequest {
        blocks: map
            .get("blocks")
            .and_then(string_list)
            .ok_or(Refusal::TruncateInvalid)?,
        max_chars: map
            .get("max_chars")
            .and_then(count_value)
            .ok_or(Refusal::TruncateInvalid)?,
    })
}

fn parse_schema(value: &Value) -> Result<Vec<Tool>, Refusal> {
    let map = value
        .as_object()
        .ok_or(Refusal::SchemaToolInvalid { index: 0 })?;
    only_members(map, &["tools"])?;
    let items = map
        .get("tools")
        .and_then(Value::as_array)
        .ok_or(Refusal::SchemaToolInvalid { index: 0 })?;
    let mut tools = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let bad = Refusal::SchemaToolInvalid { index };
        let t = item.as_object().ok_or(bad)?;
        only_members(t, &["name", "full", "slim", "detail_fetches"])?;
        let optional_text = |k: &str| match t.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad),
        };
        tools.push(Tool {
            name: t.get("name").and_then(Value::as_str).ok_or(bad)?.to_owned(),
            full: optional_text("full")?,
            slim: optional_text("slim")?,
            detail_fetches: match present(t, "detail_fetches") {
                None => 0,
                Some(v) => count_value(&v).ok_or(bad)?,
            },
        });
    }
    Ok(tools)
}

/// Free validation of a levers body: UTF-8, a JSON object of known members, at least one lever,
/// every lever's input well-formed, and the filter's required fields present.
pub fn parse_levers(body: &[u8]) -> Result<LeversRequest, Refusal> {
    let map = parse_object(body, LEVERS_BODY_CAP)?;
    only_members(&map, &["c9", "filter", "truncate", "schema"])?;
    if map.is_empty() {
        return Err(Refusal::NoLeverRequested);
    }
    Ok(LeversRequest {
        body_bytes: body.len(),
        c9: map.get("c9").map(parse_c9).transpose()?,
        filter: map.get("filter").map(parse_filter).transpose()?,
        truncate: map.get("truncate").map(parse_truncate).transpose()?,
        schema: map.get("schema").map(parse_schema).transpose()?,
    })
}

fn measurement_report(m: &Measurement) -> Value {
    let [e_before, e_after, e_overhead, e_gross, e_net] = m.estimates();
    let total = m.overhead.total();
    json!({
        "lever": m.lever,
        "part": m.part,
        "tokens": {
            "before": js_value(m.before.tokens),
            "after": js_value(m.after.tokens),
            "overhead": js_value(total.tokens),
            "overhead_items": {
                "retrieval": js_value(m.overhead.retrieval.tokens),
                "discovery": js_value(m.overhead.discovery.tokens),
                "detail": js_value(m.overhead.detail.tokens),
                "marker": js_value(m.overhead.marker.tokens),
            },
            "gross": js_value(m.gross()),
            "net": js_value(m.net()),
        },
        "chars": {
            "before": js_value(m.before.chars),
            "after": js_value(m.after.chars),
            "overhead": js_value(total.chars),
            "overhead_items": {
                "retrieval": js_value(m.overhead.retrieval.chars),
                "discovery": js_value(m.overhead.discovery.chars),
                "detail": js_value(m.overhead.detail.chars),
                "marker": js_value(m.overhead.marker.chars),
            },
        },
        "estimate": {
            "before": est(e_before),
            "after": est(e_after),
            "overhead": est(e_overhead),
            "gross": est(e_gross),
            "net": est(e_net),
        },
        "enabled": m.enabled(),
        "enabled_by_estimate": e_net > 0.0,
    })
}

/// A double as JSON the way JavaScript would print it: integral values as integers (`1`, not `1.0`).
fn js_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() <= (1u64 << 53) as f64 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

fn chunk_ref(c: &Chunk) -> Value {
    json!({ "id": c.id, "category": c.category, "score": js_value(c.score) })
}

/// The paid levers op: runs every requested lever, measures each, applies the gate.
pub fn run_levers(req: &LeversRequest, now_ms: u64) -> Result<Delivery, Refusal> {
    let mut measurements: Vec<Measurement> = Vec::new();
    let mut report = Map::new();
    report.insert("criteria_id".into(), json!(CRITERIA_ID));
    report.insert("op".into(), json!("levers"));
    report.insert("checked_at".into(), json!(iso8601_millis(now_ms)));
    report.insert("tokenizer".into(), json!(criteria::TOKENIZER_ID));
    let mut outputs = Map::new();

    if let Some(c9) = &req.c9 {
        let out = levers::c9_filter(&c9.candidates, &c9.per_category, c9.query.as_deref());
        let m = levers::measure_c9(&c9.candidates, &out);
        let lines: Vec<Value> = out
            .selected
            .iter()
            .map(|&i| json!(levers::build_context(&c9.candidates, &[i])))
            .collect();
        outputs.insert(
            "c9".into(),
            json!({
                "signal": out.signal.as_str(),
                "notice": out.notice,
                "recall": {
                    "value": js_value(out.recall()),
                    "eligible_selected": out.eligible_selected,
                    "eligible": out.eligible_total,
                },
                "counts": {
                    "candidates": c9.candidates.len(),
                    "selected": out.selected.len(),
                    "dropped": out.dropped.len(),
                },
                "selected": out.selected.iter().map(|&i| chunk_ref(&c9.candidates[i])).collect::<Vec<_>>(),
                "dropped": out.dropped.iter().map(|&i| chunk_ref(&c9.candidates[i])).collect::<Vec<_>>(),
                "context": out.context,
                "context_lines": lines,
                "injected": { "chars": js_value(m.overhead.retrieval.chars), "tokens": js_value(m.overhead.retrieval.tokens),
                              "estimate": est(levers::estimate(m.overhead.retrieval.chars)) },
            }),
        );
        measurements.push(m);
    }
    if let Some(f) = &req.filter {
        let filtered = levers::filter_fields(&f.response, &f.allowed, &f.required)?;
        let m = levers::measure_filter(&f.response, &filtered);
        outputs.insert(
            "filter".into(),
            json!({
                "kept_fields": filtered.len(),
                "dropped_fields": f.response.len() - filtered.len(),
                "response": Value::Object(filtered),
            }),
        );
        measurements.push(m);
    }
    if let Some(t) = &req.truncate {
        let out = levers::truncate_turn(&t.blocks, t.max_chars);
        let m = levers::measure_truncate(&t.blocks, &out);
        outputs.insert(
            "truncate".into(),
            json!({
                "truncated": out.truncated,
                "max_chars": t.max_chars,
                "output_chars": js_length(&out.blocks.join("\n")),
                "marker_chars": out.marker.as_deref().map(js_length).unwrap_or(0),
                "blocks": out.blocks,
            }),
        );
        measurements.push(m);
    }
    if let Some(tools) = &req.schema {
        let m = levers::measure_schema(tools);
        outputs.insert(
            "schema".into(),
            json!({
                "tools": tools.iter().map(|t| json!({
                    "name": t.name,
                    "description": t.describe(false),
                    "detail_fetches": t.detail_fetches,
                })).collect::<Vec<_>>(),
            }),
        );
        measurements.push(m);
    }

    // The gate: a lever is disabled (kept, never removed) when any of its measurements nets <= 0.
    let mut gate = Map::new();
    for m in &measurements {
        let entry = gate.entry(m.lever).or_insert(Value::Bool(true));
        if !m.enabled() {
            *entry = Value::Bool(false);
        }
    }
    let enabled = gate.values().filter(|v| v.as_bool() == Some(true)).count();
    let sum = |f: &dyn Fn(&Measurement) -> f64| measurements.iter().map(f).fold(0.0, |a, b| a + b);
    let before = sum(&|m| m.before.tokens);
    let after = sum(&|m| m.after.tokens);
    let overhead = sum(&|m| m.overhead.total().tokens);
    let net = sum(&|m| m.net());
    let verdict = format!(
        "TOKEN-OPT LEVERS — measured: {} — enabled: {} of {} — net tokens: {} — {}",
        measurements.len(),
        enabled,
        gate.len(),
        js_number(net),
        iso8601_millis(now_ms)
    );
    report.insert("verdict".into(), json!(verdict));
    report.insert(
        "measurements".into(),
        Value::Array(measurements.iter().map(measurement_report).collect()),
    );
    report.insert("gate".into(), Value::Object(gate.clone()));
    report.insert(
        "totals".into(),
        json!({ "tokens_before": js_value(before), "tokens_after": js_value(after),
                "tokens_overhead": js_value(overhead), "tokens_net": js_value(net) }),
    );
    report.insert("outputs".into(), Value::Object(outputs));
    report.insert("honesty_line".into(), json!(HONESTY_LINE));

    let ledger = ledger_row([
        LedgerValue::Text(CRITERIA_ID.into()),       // criteria_version
        LedgerValue::Text("levers".into()),          // op
        LedgerValue::Text(verdict),                  // verdict
        LedgerValue::Int(req.body_bytes as i64),     // body_bytes
        LedgerValue::Int(measurements.len() as i64), // levers_measured
        LedgerValue::Int(enabled as i64),            // levers_enabled
        ledger_figure(before),                       // tokens_before
        ledger_figure(after),                        // tokens_after
        ledger_figure(overhead),                     // tokens_overhead
        ledger_figure(net),                          // tokens_net
        LedgerValue::Null,                           // json_tokens
        LedgerValue::Null,                           // toon_tokens
        LedgerValue::Null,                           // returned_format
    ]);
    Ok(Delivery::delivered(report, ledger))
}

// ─── toon ────────────────────────────────────────────────────────────────────────────────────────

/// A validated toon call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToonRequest {
    pub body_bytes: usize,
    /// The payload in JavaScript's key order.
    pub payload: Value,
    pub options: ToonOptions,
}

/// Free validation of a toon body: `{ payload, delimiter?, indent_size? }`.
pub fn parse_toon(body: &[u8]) -> Result<ToonRequest, Refusal> {
    let mut map = parse_object(body, TOON_BODY_CAP)?;
    only_members(&map, &["payload", "delimiter", "indent_size"])?;
    let mut options = ToonOptions::default();
    match map.get("delimiter") {
        None | Some(Value::Null) => {}
        Some(v) => {
            options.delimiter = v
                .as_str()
                .and_then(Delimiter::from_option)
                .ok_or(Refusal::ToonOptionsInvalid)?
        }
    }
    match map.get("indent_size") {
        None | Some(Value::Null) => {}
        Some(v) => match count_value(v) {
            Some(n) if (1..=MAX_INDENT_SIZE).contains(&n) => options.indent_size = n as usize,
            _ => return Err(Refusal::ToonOptionsInvalid),
        },
    }
    let payload = map.shift_remove("payload").ok_or(Refusal::PayloadMissing)?;
    Ok(ToonRequest {
        body_bytes: body.len(),
        payload,
        options,
    })
}

/// The paid toon op: TOON of the payload, or its compact JSON whenever TOON is not fewer tokens.
pub fn run_toon(req: &ToonRequest, now_ms: u64) -> Result<Delivery, Refusal> {
    let toon_text = toon::encode(&req.payload, &req.options);
    let json_text = compact(&req.payload);
    let toon_tokens = crate::engine::tokenizer::count(&toon_text);
    let json_tokens = crate::engine::tokenizer::count(&json_text);
    let use_toon = toon_tokens < json_tokens;
    let returned = if use_toon { "toon" } else { "json" };
    let verdict = format!(
        "TOKEN-OPT TOON — json tokens: {} — toon tokens: {} — RETURNED {} — {}",
        json_tokens,
        toon_tokens,
        returned.to_uppercase(),
        iso8601_millis(now_ms)
    );
    let size = |text: &str, tokens: usize| {
        json!({
            "tokens": tokens,
            "chars": js_length(text),
            "bytes": text.len(),
            "estimate": est(levers::estimate(js_length(text) as f64)),
        })
    };
    let mut report = Map::new();
    report.insert("criteria_id".into(), json!(CRITERIA_ID));
    report.insert("op".into(), json!("toon"));
    report.insert("checked_at".into(), json!(iso8601_millis(now_ms)));
    report.insert("tokenizer".into(), json!(criteria::TOKENIZER_ID));
    report.insert("toon_spec".into(), json!(criteria::TOON_SPEC));
    report.insert("verdict".into(), json!(verdict));
    report.insert("returned".into(), json!(returned));
    report.insert(
        "options".into(),
        json!({ "delimiter": req.options.delimiter.as_str(), "indent_size": req.options.indent_size }),
    );
    report.insert("toon".into(), size(&toon_text, toon_tokens));
    report.insert("json".into(), size(&json_text, json_tokens));
    report.insert(
        "saving_tokens".into(),
        json!(json_tokens as i64 - toon_tokens as i64),
    );
    report.insert(
        "output".into(),
        json!(if use_toon { toon_text } else { json_text }),
    );
    report.insert("honesty_line".into(), json!(HONESTY_LINE));
    let ledger = ledger_row([
        LedgerValue::Text(CRITERIA_ID.into()),   // criteria_version
        LedgerValue::Text("toon".into()),        // op
        LedgerValue::Text(verdict),              // verdict
        LedgerValue::Int(req.body_bytes as i64), // body_bytes
        LedgerValue::Null,                       // levers_measured
        LedgerValue::Null,                       // levers_enabled
        LedgerValue::Null,                       // tokens_before
        LedgerValue::Null,                       // tokens_after
        LedgerValue::Null,                       // tokens_overhead
        LedgerValue::Null,                       // tokens_net
        LedgerValue::Int(json_tokens as i64),    // json_tokens
        LedgerValue::Int(toon_tokens as i64),    // toon_tokens
        LedgerValue::Text(returned.into()),      // returned_format
    ]);
    Ok(Delivery::delivered(report, ledger))
}
