//! The served `token-opt/v1` criteria document: ops, input contract, caps, refusals with their codes,
//! measurement rules, prices, free tier (none), retention, never-list, honesty line, the closed ledger
//! fields with their column mapping, and the interpretation notes where the reference module was read.
//! Static: the same document on every call (the edge adds `signing`).

use super::{
    Refusal, LEDGER_COLUMNS, LEVERS_BODY_CAP, LEVERS_PRICE_USDC_UNITS, MAX_INDENT_SIZE,
    TOON_BODY_CAP, TOON_PRICE_USDC_UNITS,
};
use crate::engine::ClosedError;
use serde_json::{json, Value};

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

fn refusal_entry(r: Refusal) -> Value {
    json!({
        "code": r.code(),
        "status": r.status(),
        "message": r.message(),
        "figures": r.figures().iter().map(|(name, _)| *name).collect::<Vec<_>>(),
    })
}

/// The criteria document.
pub fn criteria() -> Value {
    let refusals: Vec<Value> = Refusal::ALL.into_iter().map(refusal_entry).collect();

    json!({
        "criteria_id": "token-opt/v1",
        "family": "token-opt",
        "version": "1.0.0",
        "ops": ["levers", "toon"],
        "ops_not_offered": ["tools-ceiling"],
        "source": "Derived from the TypeScript reference module pantheon-opencode src/pantheon/token-opt.ts (1.5.0-beta.2; spec/token-opt.reference.ts.diff): its levers' selection, filtering, truncation and slimming rules are reproduced case by case; its chars/4 estimate is replaced by exact token counts and printed beside them.",
        "corpus": {
            "levers": { "id": "token-opt-levers-corpus/v1", "sha256": LEVERS_CORPUS_SHA256, "cases": 461,
                        "derivation": "expected behaviour produced by running the reference module itself; token figures by gpt-tokenizer" },
            "toon_crosscheck": { "id": "token-opt-toon-crosscheck/v1", "sha256": TOON_CROSSCHECK_SHA256, "cases": 1500,
                                 "derivation": "expected TOON produced by @toon-format/toon 4.4.0; token figures by gpt-tokenizer" },
            "toon_fixtures": "the specification's official encode fixtures (138 cases), read unchanged",
            "pin_definition": "sha256 = SHA-256 of the RFC 8785 canonical form of the corpus object without its sha256 member."
        },
        "tokenizer": {
            "id": TOKENIZER_ID,
            "encoding": "cl100k_base",
            "implementation": "gpt-tokenizer",
            "version": "4.0.0",
            "data_sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            "special_tokens": "none allowed: special-token spellings in submitted text are counted as ordinary text",
            "estimate": "Beside every exact figure the reference's own estimate is printed as a string \"est:~N\", N = ceil(chars / 4) (0 for an empty text), chars counted as JavaScript counts them (UTF-16 code units). Estimates are for comparison only; nothing is decided on them."
        },
        "price": {
            "levers": { "usdc_units_per_call": LEVERS_PRICE_USDC_UNITS, "label": "$0.01", "basis": "per call, any subset of the levers" },
            "toon": { "usdc_units_per_call": TOON_PRICE_USDC_UNITS, "label": "$0.005", "basis": "per call" }
        },
        "free_tier": "none. Both ops are paid; free validation (caps, UTF-8, JSON, the input contract, the filter's required fields) runs before any payment is looked at and refuses for free. There is no free precheck: a headline of either op would be the whole paid substance (a lever's net figure is its measurement; the toon verdict is the choice of format).",
        "endpoints": {
            "criteria": "GET /token-opt/criteria (free)",
            "levers": "POST /token-opt/levers (paid, $0.01)",
            "toon": "POST /token-opt/toon (paid, $0.005)"
        },
        "input_contract": {
            "levers": {
                "body": "One JSON object with any non-empty subset of the members c9, filter, truncate, schema. No other member exists.",
                "c9": "{ candidates: [{ id: string, category: string, score: number, text: string }], query?: string, per_category?: { <category>: { top_k?: integer >= 0, cutoff?: number } } }. Absent or null top_k / cutoff take the defaults 3 and 0.3.",
                "filter": "{ response: object, allowed: [string], required?: [string] } — allowed names the members kept (in that order); required names members that must be present.",
                "truncate": "{ blocks: [string], max_chars: integer >= 0 } — one turn's blocks, first = summary, last = tail.",
                "schema": "{ tools: [{ name: string, full?: string, slim?: string, detail_fetches?: integer >= 0 }] } — the caller's own full and slim descriptions; detail_fetches = how many times the full description is fetched on demand."
            },
            "toon": {
                "body": "{ payload: <any JSON value>, delimiter?: \",\" | \"\\t\" | \"|\", indent_size?: integer 1..8 }. Defaults: comma, 2.",
                "payload": "Any JSON value, taken as JavaScript's JSON.parse holds it: object members in JavaScript's own-key order (array-index keys first, ascending), duplicate members keep the first position and the last value."
            },
            "caps": { "levers_body_bytes": LEVERS_BODY_CAP, "toon_body_bytes": TOON_BODY_CAP, "toon_max_indent_size": MAX_INDENT_SIZE },
            "over_cap": "A body over its op's cap is a free refusal naming the cap (CAP-EXCEEDED:body_bytes, 413). Nothing partial exists in this family.",
            "unknown_members": "A member the contract does not define, at the top level or inside a lever, is a free refusal (unknown_field): a misspelt option never silently falls back to a default."
        },
        "refusals": refusals,
        "levers": [
            {
                "id": "c9",
                "reference_lever": "c9",
                "name": "C9 pre-retrieval selection",
                "text": "Candidates are grouped by category (first-appearance order). Per category: drop score < cutoff; sort the rest by score descending (stable: ties keep submitted order); keep the first top_k; the rest are dropped. Selected order: categories in first-appearance order, each in sorted order. Dropped order: per category, below-cutoff in submitted order, then over-top-k in sorted order. Recall = eligible selected / eligible (1 when nothing was eligible), computed before any fallback.",
                "fallback": "Only when candidates exist, nothing was selected and a query is given: query terms = NFKD, combining marks removed, lower-cased, maximal runs of letters and numbers, longer than one UTF-16 unit, de-duplicated. With terms, per category the chunks sharing at least one term are ranked by share of query terms matched, then score / category maximum (0 when the maximum is <= 0), then score, then position, and the first top_k are selected: signal fallback-relative, and every unselected candidate is dropped. With no selection and a query that is not blank (JavaScript trim): signal nonsense.",
                "signals": {
                    "ok": "at least one chunk selected; notice null",
                    "empty-input": "C9: empty input — no chunks retrieved; fallback: proceed without injected context",
                    "all-dropped": "C9: all chunks dropped by cutoff/top-k; fallback: relax cutoff/top-k or proceed without context",
                    "fallback-relative": "C9: absolute cutoff 0.3 yielded no eligible chunks; lexical/relative fallback selected <n> auditable low-score chunk(s) (<t> query term(s)); selected scores remain below cutoff",
                    "nonsense": "C9: query has no lexical overlap with low-score chunks; fallback returned zero and no context was injected"
                },
                "injected_context": "One auditable line per selected chunk, \"[<category>:<id>|<score>] <text>\" (score as JavaScript prints the number), joined with \\n; returned whole and as lines.",
                "measurement": "before = the context every candidate would inject (all candidates as auditable lines, submitted order); after = 0 (nothing of the candidate set remains); overhead.retrieval = the context actually injected."
            },
            {
                "id": "filter",
                "reference_lever": "filter-truncate",
                "name": "response field filtering",
                "text": "Keep only the allowed members present in the response, in allowed order (then JavaScript's key order); a member named __proto__ is never kept (the reference's out[key] = raw[key] runs the __proto__ setter instead of creating a member). Every required member must be an own member of the response, or the call is refused free (filter_required_missing, 422, with the count missing and the position of the first in required) — never filtered silently.",
                "measurement": "before = JSON.stringify(response); after = JSON.stringify(filtered); no overhead."
            },
            {
                "id": "truncate",
                "reference_lever": "filter-truncate",
                "name": "per-turn truncation with a hard cap",
                "text": "If the blocks joined with \\n fit max_chars they are returned unchanged. Otherwise: one block → its head fitted to max_chars; two blocks → the tail fitted first, then the head in what remains after the join newline; three or more → [head, \"…[+N truncated]…\", tail] with N = blocks − 2, head fitted to max_chars − marker − 2 and the tail in what the head leaves, or the marker alone (fitted) when even it does not fit. Fitting a text to a budget keeps it whole when it fits, else its first budget − 1 units plus \"…\" (\"…\" alone for 1, nothing for 0). HARD CAP: the \\n-joined output never exceeds max_chars.",
                "measurement": "before = the joined input turn; after = the joined output turn; overhead.marker = the marker text (debited again, as the reference debits markerChars)."
            },
            {
                "id": "schema",
                "reference_lever": "schema",
                "name": "schema slimming with detail on demand",
                "text": "Each tool is described slim by default (slim, else full, else its name); the full description (full, else slim, else name) is what the unslimmed schema carries.",
                "measurement": "before = Σ full description per tool; after = Σ default description per tool; overhead.detail = Σ detail_fetches × the tool's own full description (0 when it has none). Each description is counted on its own and summed."
            }
        ],
        "measurement": {
            "figures": "Each measured lever reports tokens {before, after, overhead, overhead_items {retrieval, discovery, detail, marker}, gross = before − after, net = gross − overhead}, the same in chars (UTF-16 units), and estimate {before, after, overhead, gross, net} as \"est:~N\" strings computed exactly as the reference's measureLeverFull does (overhead = one ceiling over the summed overhead chars).",
            "gate": "enabled = exact net > 0. The gate object maps each measured reference lever name to enabled; a lever with any measurement netting <= 0 is disabled — kept, never removed (the reference's applyGate). enabled_by_estimate shows what the reference's estimate would have decided.",
            "tokenization": "Every measured text is tokenized once; sums are sums of those counts, so a lever costs at most one tokenization per text it measures.",
            "receipt_like": "Every figure is reproducible from the request: the texts measured are named above and the returned outputs (injected context, filtered response, output blocks, default descriptions) are the exact texts counted as after / overhead."
        },
        "toon": {
            "spec": TOON_SPEC,
            "conformance": "Every encode fixture of the TOON specification passes unchanged, and the output is byte-identical to @toon-format/toon on the pinned generated cross-check corpus (corpus/token-opt/toon-crosscheck.json).",
            "choice": "toon tokens and json tokens (JSON.stringify of the payload) are both counted; the output is the TOON text when toon tokens < json tokens, else the compact JSON (returned = \"json\"). Both counts are always reported, with chars, bytes and the est:~ estimate.",
            "numbers": "Numbers print as JavaScript's Number#toString of the double (-0 → 0, exponent forms outside 1e-6 <= |n| < 1e21)."
        },
        "interpretation_notes": [
            "tools-ceiling (the reference's lever 2) is bound to the reference project's own four tool names and a code-mode route; it measures nothing a caller submits and is not offered.",
            "The reference's prepareC9Context boundary (environment kill-switch, empty-query and overlap gate) is not part of this service: the c9 lever is the reference's c9Filter with the optional query, whose five signals are reported as the reference names them.",
            "Lengths, slicing and estimates use JavaScript string length (UTF-16 code units), as the reference does; where the reference would slice between the two halves of a surrogate pair (leaving a lone surrogate), the cut is made one unit earlier.",
            "The reference's two-block truncation can exceed its own hard cap by the join newline (tail fitted to the whole cap, head emptied). Here the tail is then fitted to max_chars − 1, and a zero cap yields one empty block, so the cap always holds; every case the reference keeps within the cap is unchanged.",
            "filterFields tests membership with JavaScript's `in`, which also sees inherited names (toString, constructor, __proto__): a required name that is only inherited passes there and is refused here (filter_required_missing), since membership here is own members only, the only reading that fits JSON data. The output follows the reference: an own __proto__ member of the response is dropped, as the reference's assignment drops it.",
            "Scores compare as the reference's comparators compute them (b.score - a.score, and right - left for each fallback key): -0 and 0 are equal, so they tie and keep submitted order, in the selection and in the fallback ranking.",
            "Request numbers (top_k, max_chars, detail_fetches, indent_size) are read as JavaScript reads them, the nearest double, and accepted as counts when they are non-negative integers up to 2^53; they are never narrowed to the platform's word, so 2^32 is 2^32 on the 32-bit worker too. Figures are doubles as in the reference: exact below 2^53, and a detail overhead that detail_fetches pushes past 2^53 is rounded exactly as JavaScript rounds the same products and sums (the ledger's integer columns saturate at the 64-bit range).",
            "C9 terms use Node's Unicode 17 tables: letters and numbers from V8's \\p{L} and \\p{N} (the tokenizer's table), marks from V8's \\p{M}, NFKD from unicode-normalization except at the code points Node holds unassigned (the crate's newer tables decompose 68 of them), which stay as they are, as String#normalize leaves them. Checked against Node at every code point.",
            "The fallback notice prints the default cutoff 0.3 even where a per-category cutoff was set, exactly as the reference does.",
            "C9 measurement: the reference leaves the C9 baseline to its caller; here the baseline is the unselected injection (every candidate as an auditable line) and the injected context is debited as retrieval overhead, so net = baseline − injected.",
            "A JSON number outside the double range (e.g. 1e400) is a malformed body here; JavaScript would read it as Infinity."
        ],
        "custody": {
            "construction": "In-memory processing within a single request lifetime; nothing about a submission persists, on any path including errors.",
            "ledger_closed_fields": [
                "payer wallet",
                "timestamp/day",
                "price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)",
                "payment tx id + Solana fee (lamports)",
                "house flag",
                "criteria version",
                "op",
                "verdict line",
                "input size (request body bytes)",
                "lever aggregates (levers measured, levers enabled, tokens before/after/overhead/net)",
                "toon aggregates (json tokens, toon tokens, returned format)"
            ],
            "ledger_columns": {
                "payer wallet": ["payer"],
                "timestamp/day": ["ts_ms", "day"],
                "price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)": ["price_usdc_units", "cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund_usdc_units"],
                "payment tx id + Solana fee (lamports)": ["tx_sig", "fee_lamports"],
                "house flag": ["house"],
                "criteria version": ["criteria_version"],
                "op": ["op"],
                "verdict line": ["verdict"],
                "input size (request body bytes)": ["body_bytes"],
                "lever aggregates (levers measured, levers enabled, tokens before/after/overhead/net)": ["levers_measured", "levers_enabled", "tokens_before", "tokens_after", "tokens_overhead", "tokens_net"],
                "toon aggregates (json tokens, toon tokens, returned format)": ["json_tokens", "toon_tokens", "returned_format"]
            },
            "family_columns": LEDGER_COLUMNS,
            "ledger_note": "The ledger list above is closed: adding a field is a criteria version change. Columns an op does not produce are NULL. The ledger never carries submitted content, any fragment of it, or any hash of a submitted value.",
            "errors": "Error handling is closed-form: static strings plus numeric facts only (caps, counts, positions). No error path interpolates any part of a submission."
        },
        "verdict_grammar": {
            "levers": "TOKEN-OPT LEVERS — measured: M — enabled: E of L — net tokens: N — <check-end UTC>",
            "toon": "TOKEN-OPT TOON — json tokens: J — toon tokens: T — RETURNED TOON|JSON — <check-end UTC>"
        },
        "fence": "token-opt is mechanical: no model is called anywhere in this family. C9 selects by the caller's own scores and by literal term overlap with the caller's own query; filtering keeps the members the caller names; truncation keeps head and tail by length; slimming uses the caller's own descriptions; TOON re-encodes the same data losslessly. Nothing is selected, summarised, re-ranked or rewritten by meaning.",
        "retention": "Submitted material is processed in memory only and never stored — not in logs, not in the payments ledger, not in metrics, not in error records. The outputs (injected context, filtered response, truncated blocks, slim descriptions, TOON or JSON text) are returned to the submitter on the paid call only and never logged or ledgered. Because nothing is kept, a paid retry re-sends the material.",
        "disclosure_sentence": "Submitting material to any third party, this service included, gives its contents to a new holder however briefly; it is processed in memory only and never stored, but that does not undo the disclosure, and an operator who suspects a live credential in the material should rotate it at its issuer rather than submit it.",
        "honesty_line": super::HONESTY_LINE,
        "never": "This service never calls a model; never selects, summarises, re-ranks or rewrites content by meaning; never gates a lever on the estimate; never removes a disabled lever (it is reported disabled, kept); never filters out a required field silently; never returns output longer than a stated truncation cap; never returns TOON that is not fewer tokens than the compact JSON; never promises a bill reduction on any specific provider; and never retains submitted material beyond the request lifetime."
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
