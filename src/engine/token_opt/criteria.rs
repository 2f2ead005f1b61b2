//! The served `token-opt/v1` criteria document: ops, input contract, caps, refusals with their codes,
//! measurement rules, prices, free tier (none), retention, never-list, honesty line, the closed ledger
//! fields with their column mapping, and the interpretation notes where the reference module was read.
//! Static: the same document on every call (the edge adds `signing`).

use serde_json::Value;

/// The tokenizer every token figure is counted under.
pub const TOKENIZER_ID: &str = "cl100k_base/gpt-tokenizer@4.0.0/data-sha256:223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7";
/// Pin of corpus/token-opt/levers-corpus.json (JCS SHA-256 without its `sha256` member).
pub const LEVERS_CORPUS_SHA256: &str =
    "d0dec62935357792523f0dfbdbfae98e5101dc7288c6f6f82c74cd966606efce";
/// Pin of corpus/token-opt/toon-crosscheck.json.
pub const TOON_CROSSCHECK_SHA256: &str =
    "00e010da91eb23f1ec3183885ab4354aff1cf629e738a1007696825d6f4c28af";
/// The TOON specification version the encoder targets.
pub const TOON_SPEC: &str = "TOON specification 4.0 (working draft, https://github.com/toon-format/spec/blob/main/SPEC.md); reference implementation @toon-format/toon 4.4.0";

/// The document as data (`criteria.json`): text costs the bundle its compressed bytes, where the
/// same document as `json!` code cost 11 KB of wasm (issue 44). The values the code also holds
/// (caps, prices, pins, refusals, ledger columns) are held equal to it by a unit test.
const DOCUMENT: &str = include_str!("criteria.json");

/// The criteria document.
pub fn criteria() -> Value {
    serde_json::from_str(DOCUMENT).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::super::{
        Refusal, LEDGER_COLUMNS, LEVERS_BODY_CAP, LEVERS_PRICE_USDC_UNITS, MAX_INDENT_SIZE,
        TOON_BODY_CAP, TOON_PRICE_USDC_UNITS,
    };
    use super::*;
    use crate::engine::ClosedError;
    use serde_json::json;

    fn refusal_entry(r: Refusal) -> Value {
        json!({
            "code": r.code(),
            "status": r.status(),
            "message": r.message(),
            "figures": r.figures().iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        })
    }

    /// The document's figures are the code's: a cap, price, pin, refusal or column changed in one
    /// place and not the other fails here.
    #[test]
    fn the_documents_figures_are_the_codes_own() {
        let c = criteria();
        let refusals: Vec<Value> = Refusal::ALL.into_iter().map(refusal_entry).collect();
        let held: [(&str, Value); 12] = [
            ("/corpus/levers/sha256", json!(LEVERS_CORPUS_SHA256)),
            (
                "/corpus/toon_crosscheck/sha256",
                json!(TOON_CROSSCHECK_SHA256),
            ),
            ("/tokenizer/id", json!(TOKENIZER_ID)),
            (
                "/price/levers/usdc_units_per_call",
                json!(LEVERS_PRICE_USDC_UNITS),
            ),
            (
                "/price/toon/usdc_units_per_call",
                json!(TOON_PRICE_USDC_UNITS),
            ),
            (
                "/input_contract/caps/levers_body_bytes",
                json!(LEVERS_BODY_CAP),
            ),
            ("/input_contract/caps/toon_body_bytes", json!(TOON_BODY_CAP)),
            (
                "/input_contract/caps/toon_max_indent_size",
                json!(MAX_INDENT_SIZE),
            ),
            ("/toon/spec", json!(TOON_SPEC)),
            ("/custody/family_columns", json!(LEDGER_COLUMNS)),
            ("/honesty_line", json!(super::super::HONESTY_LINE)),
            ("/refusals", Value::Array(refusals)),
        ];
        for (pointer, value) in held {
            assert_eq!(c.pointer(pointer), Some(&value), "{pointer}");
        }
    }

    #[test]
    fn every_ledger_item_maps_to_columns_and_every_family_column_is_mapped() {
        let c = criteria();
        let items = c["custody"]["ledger_closed_fields"].as_array().unwrap();
        let mapping = c["custody"]["ledger_columns"].as_object().unwrap();
        assert_eq!(items.len(), mapping.len());
        let mapped: Vec<&str> = mapping
            .values()
            .flat_map(|v| v.as_array().unwrap())
            .map(|v| v.as_str().unwrap())
            .collect();
        for item in items {
            assert!(mapping.contains_key(item.as_str().unwrap()));
        }
        for column in LEDGER_COLUMNS {
            assert!(mapped.contains(column), "{column} unmapped");
        }
    }
}
