//! token-opt/v1 toon: `parse_toon` → `run_toon`.
//!
//! Mode byte even: the rest is the raw request body. Odd: the next byte picks the delimiter and
//! indentation and the rest is the payload (as JSON when it parses, else as a string), so mutations
//! reach the encoder.
//!
//! Checks: refusals closed and deterministic; a parsed body is always delivered; TOON is returned
//! exactly when it is fewer tokens than the compact JSON, and the output is that text; every size
//! figure (tokens through the public tokenizer, UTF-16 chars, bytes) is the text's own; the JSON
//! text re-parses to itself; the TOON text has LF lines, no trailing spaces, no trailing newline and
//! indentation in whole levels; same body → same bytes.

use super::{
    delivered_deterministically, parsed_or_closed_refusal, raw_or_built_body, Cursor, NOW_MS,
};
use context_meter::engine::jsjson::to_js_compact;
use context_meter::engine::token_opt::{self as to, json_js, toon};
use context_meter::engine::tokenizer;
use serde_json::{json, Value};

pub fn check(data: &[u8]) {
    check_body(&raw_or_built_body(data, |rest, _| built_body(rest)));
}

/// A toon body around `rest`: options from its first byte, the payload from the remainder (JSON
/// when it parses, else the bytes as a string).
fn built_body(rest: &[u8]) -> Vec<u8> {
    let mut c = Cursor::new(rest);
    let options = c.byte();
    let rest = c.rest();
    let payload = serde_json::from_slice::<Value>(rest)
        .unwrap_or_else(|_| json!(String::from_utf8_lossy(rest)));
    let delimiter =
        [json!(","), json!("\t"), json!("|"), Value::Null][usize::from(options % 4)].clone();
    let indent = u64::from((options >> 2) % 8) + 1;
    serde_json::to_vec(&json!({"payload": payload, "delimiter": delimiter, "indent_size": indent}))
        .expect("a built body serialises")
}

pub fn check_body(body: &[u8]) {
    let Some(req) = parsed_or_closed_refusal(|| to::parse_toon(body)) else {
        return;
    };
    let delivery = delivered_deterministically(|| to::run_toon(&req, NOW_MS), to::LEDGER_COLUMNS);
    let report = &delivery.report;

    let toon_text = toon::encode(&req.payload, &req.options);
    let json_text = to_js_compact(&req.payload);
    for (name, text) in [("toon", &toon_text), ("json", &json_text)] {
        let size = &report[name];
        assert_eq!(
            size["tokens"],
            json!(tokenizer::count(text)),
            "{name} tokens"
        );
        assert_eq!(
            size["chars"],
            json!(json_js::js_length(text)),
            "{name} chars"
        );
        assert_eq!(size["bytes"], json!(text.len()), "{name} bytes");
    }
    let (toon_tokens, json_tokens) = (tokenizer::count(&toon_text), tokenizer::count(&json_text));
    let use_toon = toon_tokens < json_tokens;
    assert_eq!(
        report["returned"],
        json!(if use_toon { "toon" } else { "json" })
    );
    assert_eq!(
        report["output"].as_str(),
        Some(if use_toon { &toon_text } else { &json_text }.as_str())
    );
    assert_eq!(
        report["saving_tokens"],
        json!(json_tokens as i64 - toon_tokens as i64)
    );

    // The JSON fallback is JSON.stringify of the payload: it re-parses to the same text.
    let mut reparsed: Value = serde_json::from_str(&json_text).expect("the JSON text parses");
    json_js::to_js_key_order(&mut reparsed);
    assert_eq!(
        to_js_compact(&reparsed),
        json_text,
        "JSON text not a fixed point"
    );

    // TOON layout.
    assert!(!toon_text.ends_with('\n') && !toon_text.contains('\r'));
    for line in toon_text.split('\n') {
        assert!(!line.ends_with(' '), "trailing space in a TOON line");
        let indent = line.len() - line.trim_start_matches(' ').len();
        assert_eq!(
            indent % req.options.indent_size,
            0,
            "indentation off the level grid"
        );
    }
}
