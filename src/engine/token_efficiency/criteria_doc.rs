//! The served criteria document: the published token-efficiency/v1 text (embedded verbatim from
//! `criteria-v1.json`), with this build's version, the tokenizer block naming the reference actually
//! used, our corpus pin, every interpretation note the engine relies on, the closed refusals and the
//! ledger column mapping. The edge adds `"signing": {public_key, key_id}`.

use super::published::{BODY_CAP, LEDGER_COLUMNS};
use super::refusal::Refusal;
use crate::engine::ClosedError;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

pub const CRITERIA_ID: &str = "token-efficiency/v1";
pub const CRITERIA_VERSION: &str = "1.0.0";
/// This implementation's version (bumped whenever any served figure could change).
pub const ENGINE_VERSION: &str = "context-meter/token-efficiency 1.1.0";
pub const DATA_SHA256: &str = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7";
pub const TOKENIZER_ID: &str = "cl100k_base/gpt-tokenizer@4.0.0/data-sha256:223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7";
/// SHA-256 of the JCS form of corpus/token-efficiency/corpus.json without its `sha256` member.
pub const CORPUS_SHA256: &str = "859c4c46d8bc1d64af84e64a9784306e1ad12c0980b9c683b6e75e5e5bbb85cf";

const SPEC_TEXT: &str = include_str!("criteria-v1.json");

/// The published criteria text, parsed.
pub fn spec() -> &'static Value {
    static SPEC: OnceLock<Value> = OnceLock::new();
    SPEC.get_or_init(|| serde_json::from_str(SPEC_TEXT).expect("embedded criteria text is JSON"))
}

/// Every reading this engine relies on where the criteria text is open.
pub const INTERPRETATION_NOTES: &[&str] = &[
    "Tokenizer reference: the criteria name gpt-tokenizer 4.1.0; the reference actually used is gpt-tokenizer 4.0.0 (the newest the registry served at build time) with the identical cl100k_base data file (sha256 223921b7…). Counts equal gpt-tokenizer's encode(text, {disallowedSpecial: new Set()}) token for token under Node 20's V8 (Unicode 17.0): special-token spellings are ordinary text.",
    "Canonical form is JavaScript taken literally: JSON.stringify(JSON.parse(payload)). Array-index keys (\"0\" … \"4294967294\"; not \"01\", \"-1\", \"4294967295\") come first in ascending order, other keys in first-insertion order; a duplicate key keeps its first position and takes the last value; __proto__ is an ordinary key; numbers print as Number#toString (1e21 → 1e+21, 1e-7, -0 → 0, 2^53+1 → 9007199254740992, 1E400 → null); a lone-surrogate escape parses and is written back as its six-character escape.",
    "A leading U+FEFF is not JSON whitespace: such a payload is text-only. An empty or whitespace-only payload is text-only. A payload that does not parse as JSON is counted over the raw submitted string, and only S-4 applies (operation set \"text-only\").",
    "A payload nested deeper than 1,000 arrays/objects is refused (payload_too_deep) rather than graded: JavaScript's own JSON.stringify overflows its stack on very deep values, and this family never grades a partially processed submission.",
    "A payload that parses to a scalar is operation set \"json\"; the root is neither a field nor an array element, so S-1..S-3 never touch it (not even a 3,000-character root string); S-4 may.",
    "Flow: payload tokens P <= effective budget B → FITS and nothing runs. Otherwise S-1, S-2, S-3 start in order, each only if the payload is still over; a started operation runs over the whole payload; S-4 only if still over after S-3; nothing is re-run.",
    "Paths: object keys joined with \".\", written raw; array positions as [i] with no dot (a[0].b); the root is \"\"; [i] is the position at the time of the application; a lone surrogate in a key is written in a path as its six-character escape. delta_tokens and delta_chars are before − after (positive = reduction; S-3 can make them negative).",
    "S-1: one pre-order pass; an array is deduplicated (entries in index order, compared by canonical serialisation) before its surviving entries are visited; no revisits; S-1 ignores keep_fields; index = the removed entry's position at removal; path = the array's path.",
    "S-2: one post-order pass in key order (a field's children, then the field, then its next sibling); removes fields whose value is null, \"\", [] or {} (not 0, false or \" \"); never removes array elements or the root; emptiness cascades within the pass.",
    "keep_fields: a field's keep path is its object keys only, joined with \".\", array positions skipped (\"results.title\" protects title in every element of results); whole-string equality; protection covers the field and everything under it (including array elements below it); a field holding a protected descendant is never removed by S-2; a path naming nothing protects nothing. Each entry must be a non-empty string.",
    "S-3: string values of fields and of array elements only (never keys, never the root), longer than 2,000 characters → the first 2,000 characters plus the marker, even when that makes the string longer (2,001–2,059 characters grow). Characters are Unicode code points; a lone surrogate counts as one.",
    "S-4: L ranges over [floor, total − 1] in characters of the post-S-3 canonical text (at least one character is removed; L = 0 is allowed when the floor is 0); floor = end of the last keep-protected field's \"key\":value span in that text (0 when none); the text counted is the joined prefix + marker, never a sum of parts; N in the marker counts only what S-4 removed. Token counts are not monotone over prefixes, so L is the TRUE largest fitting boundary, not a bisection.",
    "Exhaustion (no L fits): the verdict is OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS, the shaped payload is the submitted canonical form unchanged, the receipt is empty, and the exhaustion block carries: protected_fields (outermost keep-protected fields present after S-1..S-3), protected_tokens and protected_chars (their \"key\":value spans, each counted alone, summed), floor_chars and floor_tokens (the shortest prefix S-4 may keep), the effective budget and the submitted totals. The excess is still P − B.",
    "The free pre-check \"returns the verdict line\": read as the verdict line the paid budget op returns for the same body, check-end time aside. Where P > B the pre-check runs the op's own engine (S-1..S-4, the same code) to decide, and says OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS wherever the op would exhaust (kept content alone over the effective budget, a budget that cannot hold the S-4 marker outside the protected spans, a prefix that must reach a kept field far over the budget), so no payment is invited that cannot help. The shaped payload, the receipt and the exhaustion block stay the paid substance: the pre-check returns none of them; its excess figure is still P − B. The alternative reading — the pre-check grades the submission alone (FITS or OVER by E) and leaves shapability to the paid call — was this build's until engine 1.1.0. If the engine fails closed (receipt_unreconciled), the pre-check refuses with the same code, as the op would.",
    "The check-end time in the verdict is the request's processing time in ISO 8601 UTC with milliseconds and Z (JavaScript's toISOString).",
    "Whole-payload counts in each receipt entry are exact: the published tokenizer counts each regex piece alone, so an application's token change is computed over a window between piece boundaries that no piece can cross; the chain is then checked against full counts of the shaped text (the reconciliation self-check); any disagreement fails closed with receipt_unreconciled and nothing is charged.",
    "The budget op returns the shaped payload also when the payload FITS (it is then the canonical form, with an empty receipt).",
    "budget_tokens and reserve_tokens are read as JavaScript numbers: 1e3 is 1000, 5.0 is 5; a figure above 2^53 is refused; reserve_tokens 0 (or -0) means no reserve.",
    "The request body must be a JSON object with no members other than payload, budget_tokens, keep_fields, reserve_tokens and caller; a body caller must be a Solana address (base58 of 32 bytes) or an EVM address (0x and 40 hex digits, counted under its lower-case form); it is accepted and unused on the paid op.",
    "The pre-check's wallet: the input contract lists \"caller? (free pre-check only)\" as optional, and the free allowance is counted \"per caller wallet\". The pre-check takes the body's caller, else the X-Caller header, as every family's free check does; with both, the body's caller is the wallet; with neither, caller_missing; an X-Caller that is neither a Solana nor an EVM address, caller_invalid. The alternative, a body caller required on the pre-check, was declined: it makes the contract's optional member mandatory. Every refusal is decided before the free allowance is spent.",
];

fn tokenizer_block() -> Value {
    json!({
        "id": TOKENIZER_ID,
        "stub": false,
        "real": true,
        "encoding": "cl100k_base",
        "implementation": "gpt-tokenizer",
        "version": "4.0.0",
        "criteria_pin": spec()["tokenizer"]["id"].clone(),
        "data_sha256": DATA_SHA256,
        "unicode_version": "17.0 (letter/number/space classes of Node 20's V8 and ICU 78)",
        "special_tokens": "none allowed: special-token spellings in submitted text are counted as ordinary text (encode(text, {disallowedSpecial: new Set()}))",
        "deviations_from_tiktoken": [
            "gpt-tokenizer never produces the 8 cl100k_base tokens whose bytes start EF BB BF (U+FEFF): its byte-pair lookup misses them, so text holding U+FEFF encodes differently from OpenAI's tiktoken.",
            "gpt-tokenizer's split uses JavaScript's \\s, which includes U+FEFF and excludes U+0085; tiktoken's regex uses Rust's Unicode White_Space.",
            "Letter and number classes are Unicode 17.0 (V8/ICU) where tiktoken's Rust regex crate has Unicode 16.0.",
        ],
        "character_counts": spec()["tokenizer"]["character_counts"].clone(),
    })
}

fn refusal_list() -> Value {
    Value::Array(
        Refusal::ALL
            .iter()
            .map(|r| {
                let figures: Map<String, Value> = r
                    .figures()
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), json!(v)))
                    .collect();
                json!({"code": r.code(), "status": r.status(), "message": r.message(), "figures": figures})
            })
            .collect(),
    )
}

fn ledger_mapping() -> Value {
    let edge = "filled by the edge (payment columns)";
    json!({
        "payer wallet": {"columns": ["payer"], "by": edge},
        "timestamp/day": {"columns": ["ts_ms", "day"], "by": edge},
        "price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)":
            {"columns": ["price_usdc_units", "cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund_usdc_units"], "by": edge},
        "payment tx id + Solana fee (lamports)": {"columns": ["tx_sig", "fee_lamports"], "by": edge},
        "criteria version": {"columns": ["criteria_version"], "by": "engine"},
        "op": {"columns": ["op"], "by": "engine"},
        "verdict line": {"columns": ["verdict"], "by": "engine"},
        "input size (request body bytes, payload characters)": {"columns": ["body_bytes", "payload_chars"], "by": "engine", "note": "payload_chars counts the payload string as submitted"},
        "house flag": {"columns": ["house"], "by": edge},
        "per-op aggregate counts (applications per operation, ops applied in total, tokens before/after, characters before/after)": {
            "columns": ["applications_s1", "applications_s2", "applications_s3", "applications_s4", "applications_total", "tokens_before", "tokens_after", "chars_before", "chars_after"],
            "by": "engine",
            "note": "applications_total is the number of receipt entries; tokens/chars are of the canonical form submitted and shaped"
        },
    })
}

/// The served criteria document (without the edge's `signing` member).
pub fn criteria() -> Value {
    let mut doc = spec().clone();
    let m = doc.as_object_mut().expect("criteria text is an object");
    m.insert("engine_version".into(), json!(ENGINE_VERSION));
    m.insert("tokenizer".into(), tokenizer_block());
    m.insert(
        "corpus".into(),
        json!({
            "id": "token-efficiency-corpus/v1",
            "sha256": CORPUS_SHA256,
            "token_figures_status": "PINNED-REAL-TOKENIZER",
            "published_pin": spec()["corpus"]["sha256"].clone(),
            "note": "sha256 is this build's corpus (corpus/token-efficiency/corpus.json, generated by an independent JavaScript implementation with gpt-tokenizer 4.0.0); published_pin is the pin printed in the criteria text.",
        }),
    );
    m.insert("interpretation_notes".into(), json!(INTERPRETATION_NOTES));
    m.insert("refusals".into(), refusal_list());
    m.insert("body_cap_bytes".into(), json!(BODY_CAP));
    m.insert("ledger_columns".into(), json!(LEDGER_COLUMNS));
    m.insert("ledger_mapping".into(), ledger_mapping());
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_carry_the_text_and_our_readings() {
        let doc = criteria();
        assert_eq!(doc["criteria_id"], CRITERIA_ID);
        assert_eq!(doc["version"], CRITERIA_VERSION);
        assert_eq!(doc["tokenizer"]["version"], "4.0.0");
        assert_eq!(
            doc["tokenizer"]["deviations_from_tiktoken"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            doc["refusals"].as_array().unwrap().len(),
            Refusal::ALL.len()
        );
        let spec_fields = spec()["custody"]["ledger_closed_fields"]
            .as_array()
            .unwrap();
        let mapping = doc["ledger_mapping"].as_object().unwrap();
        assert_eq!(mapping.len(), spec_fields.len());
        for field in spec_fields {
            assert!(mapping.contains_key(field.as_str().unwrap()), "{field}");
        }
        let engine_columns: Vec<&str> = mapping
            .values()
            .filter(|v| v["by"] == "engine")
            .flat_map(|v| {
                v["columns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap())
            })
            .collect();
        assert_eq!(engine_columns, LEDGER_COLUMNS);
    }
}
