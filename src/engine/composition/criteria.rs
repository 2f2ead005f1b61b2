//! The served criteria document: the published context-composition/v1 criteria text (kept
//! byte-identical in corpus/context-composition/), with the corpus pin of the corpus this build
//! ships, the published class lists, the ledger column mapping and the interpretation notes that
//! settle what the text leaves open. The edge adds `signing`.

use super::classify::{KIND_LISTS, NEUTRAL_KINDS, P_CLASSES, RAW_MARKERS, ROLE_LISTS};
use super::LEDGER_COLUMNS;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

const PUBLISHED: &str =
    include_str!("../../../corpus/context-composition/context-composition-v1.criteria.json");

/// sha256 of the shipped corpus (JCS of corpus.json without its `sha256` member).
pub const CORPUS_SHA256: &str = "01042f958a89b16b8a0908b7d28d36eb34237d6011688f0af98c3d7b6064b885";

/// The published criteria text, parsed.
pub fn published() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(PUBLISHED).expect("the published criteria parse"))
}

/// How each `ledger_closed_fields` item maps to columns (family columns here; payment columns
/// are the edge's).
pub fn ledger_mapping() -> Value {
    json!([
        {"field": "payer wallet", "columns": ["payer"]},
        {"field": "timestamp/day", "columns": ["ts_ms", "day"]},
        {"field": "price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)",
         "columns": ["price_usdc_units", "cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund_usdc_units"]},
        {"field": "payment tx id + Solana fee (lamports)", "columns": ["tx_sig", "fee_lamports"]},
        {"field": "criteria version", "columns": [LEDGER_COLUMNS[0]]},
        {"field": "measurement line", "columns": [LEDGER_COLUMNS[1]]},
        {"field": "op", "columns": [LEDGER_COLUMNS[2]]},
        {"field": "declared format identifier", "columns": [LEDGER_COLUMNS[3]]},
        {"field": "entry count", "columns": [LEDGER_COLUMNS[4]]},
        {"field": "record byte size", "columns": [LEDGER_COLUMNS[5]]},
        {"field": "aggregate outcome (measured_full / measured_limited / could_not_measure + kind)",
         "columns": [LEDGER_COLUMNS[6], LEDGER_COLUMNS[7]]},
        {"field": "house flag", "columns": ["house"]}
    ])
}

/// The published class lists the P-axis tests use.
pub fn class_lists() -> Value {
    let kinds: Map<String, Value> = KIND_LISTS
        .iter()
        .map(|(c, list)| (P_CLASSES[*c].to_owned(), json!(list)))
        .collect();
    let roles: Map<String, Value> = ROLE_LISTS
        .iter()
        .map(|(c, list)| (P_CLASSES[*c].to_owned(), json!(list)))
        .collect();
    json!({
        "kinds": kinds,
        "content_only_kinds": NEUTRAL_KINDS,
        "roles": roles,
        "raw_export_markers": RAW_MARKERS,
    })
}

pub const INTERPRETATION_NOTES: &[&str] = &[
    "Factor to metric mapping: F-1 = M03, F-2 = M04, F-2b = M05, F-3 = M06, F-4 = M08, F-5 = M07, F-6 = M09, F-7 = M10, F-8 = M11, F-9 = M14, F-10 = M12, F-11 = not assessable by design, F-12 = M15; M01, M02 and M13 are always printed.",
    "Levels: L0 = roles only; L1 = roles plus structural part types (tool call / tool result); L2 = kinds or a tool-schema section present. letta-af is L2. anthropic-messages is L0 for F-1, F-2b and F-9 (PARTIAL); its F-8 is ASSESSABLE when a top-level tools[] is present, else PARTIAL. generic-message-list is L2 when tool_schemas is present or any message has a non-empty kind, L1 when any message has has_args true or role tool, else L0; below L2 F-1, F-2b, F-8 and F-9 are PARTIAL. Zero rows of structural classes a level cannot show print 'not identifiable at this level': at L0 (and for anthropic-messages) P-TDEF, P-CMPT, P-TCALL, P-TRES, P-RETR; at L1 P-TDEF, P-CMPT, P-RETR.",
    "LIMITED: the measurement line carries LIMITED, and the outcome is measured_limited, whenever any graded factor (F-1..F-10, F-12) is PARTIAL or NOT-ASSESSABLE; the line names each such factor. F-11 never triggers it.",
    "Entries are the record's messages (the schema pseudo-message is not an entry). The single-entry cap applies to the UTF-8 bytes of a message's adapted text, the schema pseudo-message included; over it the audit is could-not-measure R-7 with kind entry_too_large. Over 10,000 entries is R-7 too_many_entries; no message is R-8 zero_entries; no block with a text (a null text is not one; an empty string is) is R-9 nothing_assessable. They are checked in that order.",
    "Block order: the schema pseudo-message blocks first, then the messages in order; block and message indices count from 0 in that order.",
    "Axis P tests: P-TDEF fires for a schema pseudo-message block or a P-TDEF kind; P-CMPT for a P-CMPT kind or an adapter-recognised compaction marker; P-TCALL for a P-TCALL kind or has_args true; P-TRES, P-RETR, P-SYS, P-USER, P-ASST for a kind in their kind list or a role in their role list; P-OTHER when a non-empty role or kind is in no list (content-only kinds are in a list and fire nothing); P-UNK when nothing fires. Every test runs on every block, the role test included whatever the kind names: 'first test that fires wins; a block firing two classes is conflict-flagged' (taxonomy.axis_p.precedence). So a block with role user and an unlisted kind is P-USER with P-OTHER as loser, role user with kind assistant_message is P-USER with P-ASST as loser, and role user with kind tool_result is P-TRES with P-USER as loser (an anthropic-messages tool_result block; likewise a letta-af tool_call of an assistant message is P-TCALL with P-ASST as loser). The alternative, a role that counts only when the kind is absent or content-only, is not in the precedence text and is not used. The winner is the first firing class in precedence order; a block where two or more classes fire is a conflict, listed in M01 with winner and losers.",
    "Axis C tests on the NFC text: C-EMPTY = every character is White_Space (including the empty string); C-UNK = no text; C-BLOB = a media part (image, base64 document) or qualifying base64 segments of either alphabet covering >= 90% of the code points (M10 covered_characters: a character inside a standard and a URL-safe segment covers once); C-RAW = test R-1 of M10; C-STRUCT = the text parses as a JSON object or array; C-CODE = a line starting (after leading spaces) with three backticks; C-TEXT = none fired.",
    "EM-1: C(b) counts code points of the NFC text; E(b) = ceil(C(b)/4); T is the sum over every block including the schema pseudo-message. Shares, depths, means and percentages are computed in exact integers and rounded half up to the printed precision (negative differences half away from zero); means print as whole estimated tokens.",
    "Bytes: record.body_bytes (and the ledger's record byte size) is the request body's byte length; text_bytes is the UTF-8 length of all adapted texts as submitted (before NFC).",
    "Shares are of T: 'Shares are 100 x part / T' (measurement_rule), T being the 'Denominator of record for all shares' (M02). Every printed share, the M06 contributor shares and the M07 cumulative shares included, is 100 x part / T. The alternative, shares of the message total without the schema pseudo-message, is not used for any printed share.",
    "M06: the distribution (min, max, mean, lower median, p90) is over the messages, the schema pseudo-message excluded as M06 says; nearest ranks in integer arithmetic (lower median rank ceil(n/2), p90 rank ceil(9n/10)); top-3 ties go to the lower index; the contributor threshold is M06's own 'at >=10% of the message total': 10 x E >= message total (no message qualifies by the threshold when the total is 0); each contributor's printed share is of T; contributors are listed by estimate descending, ties to the lower index.",
    "M07: a message is P-USER when its first block is P-USER; turn 0 is printed even when empty. The schema pseudo-message belongs to turn 0: it precedes every message, so it is before the first P-USER message, and M07, unlike M06, does not exclude it; its estimate is in turn 0's increment (turn 0's messages figure counts messages only, and schema_pseudo_message says 'included in turn 0' or 'absent'), so the last cumulative figure is T and its share 100.00%. The alternative, turns over the messages only, would leave the last cumulative share short of 100% by the schema's share with nothing printed to say where it went.",
    "M08/M09: White_Space is the Unicode property; CRLF and lone CR read as LF; the excess estimate of a group is the estimate of every member except the lowest-index one. M09 lowercases as JavaScript's toLowerCase; stripped quotes are ASCII \" ' and backtick; Jaccard >= 0.80 is tested in exact integers (5 x shared >= 4 x union; exactly 0.80 qualifies); pairs of blocks with the same M08 normalisation are excluded; the pair list is printed when there are at most 1000 pairs, the counts always. No hash of any text is printed. The join is exact (PPJoin: prefix, size and positional filters, then exact verification) under a deterministic work budget of 250,000,000 steps (index entries scanned plus merge steps of verified candidates); a record whose join would exceed it gets F-6 NOT-ASSESSABLE (work budget), disclosed at pre-check, which runs the same join.",
    "M10: census on the NFC text, 'maximal runs, standard and URL-safe alphabets counted separately': a standard run is a maximal run of [A-Za-z0-9+/], a URL-safe run a maximal run of [A-Za-z0-9_-], each with at most two directly following '='. A run counts for its alphabet when it holds one of that alphabet's own characters ('+' or '/'; '-' or '_'); a run of letters and digits only counts once, as standard, when nothing of either alphabet touches it (it is then a maximal run of both and decodes alike), and otherwise is a piece of the other alphabet's run, not a run of its own. So a run mixing '+' or '/' with '-' or '_' is counted as each alphabet's maximal runs inside it (the alternative, such a run being neither alphabet and not counted, is not used), and a character can lie in a standard and a URL-safe segment at once. A qualifying segment is >= 40 long and a multiple of 4 long counting its padding (padding belongs to a run that ends where the '=' begin), and decodes strictly (canonical trailing bits) to >= 30 bytes. Printed per block and in total: segments, characters and decoded bytes per alphabet (standard_*, url_safe_*), their sums (segments, segment_characters, decoded_bytes), and covered_characters, the characters inside at least one qualifying segment (each once), which the C-BLOB test uses. Raw-export marker = a line exactly equal to BEGIN EXPORT, BEGIN RAW or BEGIN LOG; log line = ^[?YYYY-MM-DD[T ]HH:MM:SS with ASCII digits; '>= 80% of non-empty lines' means 5 x log lines >= 4 x non-empty lines, where a line is empty when every character is White_Space, the rule C-EMPTY applies to a block (one rule everywhere: a line of spaces or tabs is empty, not a non-log line; the alternative, only a zero-length line is empty, is not used); JSON = an object with >= 10 distinct keys or an array with >= 10 elements, with C >= 200.",
    "M12: per_message[i] addresses message i; entries past the last message are counted and ignored. Stated figures and their sums are exact integers (a sum of up to 10,000 figures of up to 2^53 - 1 is kept in 128 bits, never wrapped); a stated_tokens figure above 2^53 - 1, which only a sum can be, prints as a string of its decimal digits, because a larger JSON number is read rounded by JavaScript and by the JCS form the signature covers; diff and pct are computed from the exact integers. The envelope's harness_stated_counts members are used when present, else the record's own stated figures (generic-message-list stated_tokens / stated_total). Per unit: E = 0 and stated = 0 is EXACT; E = 0 and stated > 0 is DISAGREE (zero-measured); else WITHIN when 100 x |stated - E| <= 5 x E, else DISAGREE. The whole-record figure compares a stated total with T; without a stated total it compares the per-message sums when every message is covered, and is NOT-ASSESSABLE (partial coverage) otherwise.",
    "harness_stated_counts: null is absent; otherwise a plain object whose only members are per_message (an array of non-negative safe integers or null) and total (a non-negative safe integer), at most 65536 bytes as compact JSON; anything else is stated_counts_invalid (after R-5, before R-6).",
    "Envelope: a member given twice is ambiguous: a second record is R-4 record_required, any other known member is R-1 malformed_body. criteria_ack and declared_format_version are accepted and not used for measurement. caller, when present, must be a Solana address or an EVM address (0x and 40 hex digits) (R-6). A JSON number outside the binary64 range, or a string escape holding a lone surrogate, is malformed_body (the body is not parsed as JavaScript would there).",
    "letta-af: current AgentFileSchema (agents[].messages[]), legacy single-agent v1 (a top-level messages[]), or the double-encoded file (a JSON string holding the document, decoded once). Several agents are all taken, agent by agent in file order, messages concatenated; record.agents prints how many. Only messages and the top-level tools[] are measured (memory blocks, files and agent settings are not). Content parts take the message's message_type as kind when present, else the part's type; tool_calls entries are tool_call blocks (text = function.arguments when a string, else the entry as compact JSON); tool_returns entries are tool_return blocks (text = func_response when a string, else none); a text holding a JSON object {type: system_alert} whose message contains 'prior messages have been hidden' is a compaction marker.",
    "anthropic-messages: object form {messages, system?, tools?} (a full Messages API request; its other members are not part of the record) or a bare message array. tools[] is the schema pseudo-message; a top-level system is message 0 with role system. Block texts: text, thinking, redacted_thinking (data), compaction (content); image and document take source data/url/file_id (document also nested source content), base64 documents and every image are media; search_result joins its content texts with LF; tool_use, server_tool_use and mcp_tool_use take compact JSON of input; tool_result and mcp_tool_result take string content as one block, array content as one block per element (kind tool_result), absent or empty content as one empty block; other *_tool_result types take compact JSON of content; any other type has no text (C-UNK) and its kind, in no list, fires P-OTHER beside the role's class (the role class wins by precedence; a block without a type has no kind and its role decides).",
    "generic-message-list: one block per message; text null or absent is C-UNK (C = 0, E = 0) and \"\" is text; each tool_schemas entry is one P-TDEF block (the string, or compact JSON of the entry); name and source are not used.",
    "Compact JSON is JavaScript's JSON.stringify (no whitespace, array-index keys first, numbers as Number#toString).",
    "The report never prints a submitted string, a fragment or a hash of one: raw role and kind values are used for classification only, and P-OTHER rows count them without naming them.",
    "Corpus: corpus.sha256 below is the pin of the corpus this build ships (corpus/context-composition/corpus.json), derived by gen-corpus.mjs, an independent implementation, from this text.",
];

/// The served criteria document (the edge adds `signing`).
pub fn criteria() -> Value {
    let mut doc = published().clone();
    let m = doc.as_object_mut().expect("criteria is an object");
    m.insert(
        "corpus".into(),
        json!({"id": "context-composition-corpus/v1", "sha256": CORPUS_SHA256}),
    );
    m.insert("class_lists".into(), class_lists());
    m.insert("ledger_columns".into(), json!(LEDGER_COLUMNS));
    m.insert("ledger_mapping".into(), ledger_mapping());
    m.insert("interpretation_notes".into(), json!(INTERPRETATION_NOTES));
    doc
}
