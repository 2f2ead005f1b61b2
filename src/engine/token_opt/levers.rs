//! The token-reduction levers of the TypeScript reference (`spec/token-opt.reference.ts.diff`), one pure
//! function each, with the reference's behaviour case by case, and their measurement in exact cl100k
//! tokens beside the reference's chars/4 estimate.
//!
//! Invariants:
//! - Lengths are JavaScript string lengths (UTF-16 code units), the unit the reference slices and
//!   estimates in; slicing never splits a surrogate pair (it cuts one unit earlier instead).
//! - Every measured text is tokenized exactly once (`Measured::of`); sums are sums of those counts.
//! - The hard cap of `truncate_turn` holds for every input: the joined output never exceeds `max_chars`.
//! - Request numbers (top_k, max_chars, detail_fetches) are `u64`, never `usize`: on wasm32 a `usize`
//!   is 32 bits, and a cast would wrap 2^32 to 0. Figures are doubles, as the reference's numbers are:
//!   exact integers below 2^53 (every text-derived figure), and beyond it (only where a caller's
//!   detail_fetches multiplies a count) rounded exactly as JavaScript rounds the same operations.

use super::json_js::{compact, js_length, to_js_key_order};
use crate::engine::jsjson::{js_number, push_js_number};
use crate::engine::tokenizer;
use serde_json::{Map, Value};
use std::collections::HashMap;
use unicode_normalization::UnicodeNormalization;

/// The reference's default top-k per category.
pub const C9_DEFAULT_TOP_K: u64 = 3;
/// The reference's default relevance cutoff per category.
pub const C9_DEFAULT_CUTOFF: f64 = 0.3;
pub use super::measure::{estimate, Measured, Measurement, Overhead, CHARS_PER_TOKEN};

// ─── Lever 1: C9 selection ───────────────────────────────────────────────────────────────────────

/// One scored retrieval candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub id: String,
    pub category: String,
    pub score: f64,
    pub text: String,
}

/// Per-category override (absent members take the defaults).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CategoryConfig {
    pub top_k: Option<u64>,
    pub cutoff: Option<f64>,
}

/// The quality-floor signal of a selection (reference `C9FilterResult.signal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Ok,
    EmptyInput,
    AllDropped,
    FallbackRelative,
    Nonsense,
}

impl Signal {
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Ok => "ok",
            Signal::EmptyInput => "empty-input",
            Signal::AllDropped => "all-dropped",
            Signal::FallbackRelative => "fallback-relative",
            Signal::Nonsense => "nonsense",
        }
    }
}

/// The outcome of `c9_filter`: candidate positions (indices into the submitted list).
#[derive(Debug, Clone, PartialEq)]
pub struct C9Outcome {
    pub selected: Vec<usize>,
    pub dropped: Vec<usize>,
    pub signal: Signal,
    pub notice: Option<String>,
    /// Recall over cutoff-eligible chunks: (eligible selected, eligible); 1 when nothing was eligible.
    pub eligible_selected: usize,
    pub eligible_total: usize,
    /// The injected context: one auditable line per selected chunk.
    pub context: String,
}

impl C9Outcome {
    pub fn recall(&self) -> f64 {
        if self.eligible_total == 0 {
            1.0
        } else {
            self.eligible_selected as f64 / self.eligible_total as f64
        }
    }
}

/// Each category's override, by name.
fn config_index(per_category: &[(String, CategoryConfig)]) -> HashMap<&str, CategoryConfig> {
    per_category
        .iter()
        .map(|(c, cfg)| (c.as_str(), *cfg))
        .collect()
}

/// Chunks grouped by category in first-appearance order, each group in submitted order.
fn group_by_category(chunks: &[Chunk]) -> Vec<(&str, Vec<usize>)> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, chunk) in chunks.iter().enumerate() {
        match position.get(chunk.category.as_str()) {
            Some(&g) => groups[g].1.push(i),
            None => {
                position.insert(&chunk.category, groups.len());
                groups.push((&chunk.category, vec![i]));
            }
        }
    }
    groups
}

/// The reference's `c9Filter(chunks, perCategory, query)`.
pub fn c9_filter(
    chunks: &[Chunk],
    per_category: &[(String, CategoryConfig)],
    query: Option<&str>,
) -> C9Outcome {
    let groups = group_by_category(chunks);
    let configs = config_index(per_category);
    let mut selected = Vec::new();
    let mut dropped = Vec::new();
    let (mut eligible_total, mut eligible_selected) = (0, 0);
    for (category, members) in &groups {
        let config = configs.get(category).copied().unwrap_or_default();
        let top_k = config.top_k.unwrap_or(C9_DEFAULT_TOP_K);
        let cutoff = config.cutoff.unwrap_or(C9_DEFAULT_CUTOFF);
        let mut eligible: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| chunks[i].score >= cutoff)
            .collect();
        // A stable sort by score, descending (V8's Array#sort is stable), compared as the reference's
        // `b.score - a.score` compares: -0 and 0 tie, so they keep submitted order.
        eligible.sort_by(|&a, &b| js_descending(chunks[a].score, chunks[b].score));
        // `slice(0, topK)`: a top_k past the group keeps the whole group (compared as u64, so 2^32
        // is not 0 on wasm32; the result is at most the group's length).
        let kept = top_k.min(eligible.len() as u64) as usize;
        eligible_total += eligible.len();
        eligible_selected += kept;
        selected.extend_from_slice(&eligible[..kept]);
        dropped.extend(
            members
                .iter()
                .copied()
                .filter(|&i| chunks[i].score < cutoff),
        );
        dropped.extend_from_slice(&eligible[kept..]);
    }
    let mut signal = if chunks.is_empty() {
        Signal::EmptyInput
    } else if selected.is_empty() {
        Signal::AllDropped
    } else {
        Signal::Ok
    };
    let mut notice = match signal {
        Signal::EmptyInput => Some(
            "C9: empty input — no chunks retrieved; fallback: proceed without injected context".to_owned(),
        ),
        Signal::AllDropped => Some(
            "C9: all chunks dropped by cutoff/top-k; fallback: relax cutoff/top-k or proceed without context"
                .to_owned(),
        ),
        _ => None,
    };
    if let (false, true, Some(query)) = (chunks.is_empty(), selected.is_empty(), query) {
        let query_terms = lexical_terms(query);
        let fallback = if query_terms.is_empty() {
            Vec::new()
        } else {
            relative_lexical_selection(chunks, &groups, &configs, &query_terms)
        };
        if !fallback.is_empty() {
            notice = Some(format!(
                "C9: absolute cutoff {} yielded no eligible chunks; lexical/relative fallback selected {} auditable \
                 low-score chunk(s) ({} query term(s)); selected scores remain below cutoff",
                js_number(C9_DEFAULT_CUTOFF),
                fallback.len(),
                query_terms.len()
            ));
            let mut is_selected = vec![false; chunks.len()];
            fallback.iter().for_each(|&i| is_selected[i] = true);
            dropped = (0..chunks.len()).filter(|&i| !is_selected[i]).collect();
            selected = fallback;
            signal = Signal::FallbackRelative;
        } else if !js_trim(query).is_empty() {
            signal = Signal::Nonsense;
            notice = Some(
                "C9: query has no lexical overlap with low-score chunks; fallback returned zero and no context was injected"
                    .to_owned(),
            );
        }
    }
    let context = build_context(chunks, &selected);
    C9Outcome {
        selected,
        dropped,
        signal,
        notice,
        eligible_selected,
        eligible_total,
        context,
    }
}

/// The reference's `relativeLexicalSelection`: per category, query-matching chunks ranked by lexical
/// overlap, then score relative to the category maximum, then score, then position; top-k kept.
fn relative_lexical_selection(
    chunks: &[Chunk],
    groups: &[(&str, Vec<usize>)],
    configs: &HashMap<&str, CategoryConfig>,
    query_terms: &[String],
) -> Vec<usize> {
    let mut selected = Vec::new();
    for (category, members) in groups {
        let top_k = configs
            .get(category)
            .and_then(|c| c.top_k)
            .unwrap_or(C9_DEFAULT_TOP_K);
        let max_score = members
            .iter()
            .map(|&i| chunks[i].score)
            .fold(0.0_f64, f64::max);
        let mut ranked: Vec<(usize, usize, f64, f64)> = members
            .iter()
            .enumerate()
            .filter_map(|(index, &i)| {
                let terms = lexical_terms(&chunks[i].text);
                let overlap = query_terms.iter().filter(|t| terms.contains(t)).count();
                let lexical = overlap as f64 / query_terms.len() as f64;
                let relative = if max_score > 0.0 {
                    chunks[i].score / max_score
                } else {
                    0.0
                };
                (lexical > 0.0).then_some((i, index, lexical, relative))
            })
            .collect();
        // The reference's comparator: `right - left || …` for each key, so -0 and 0 tie and a NaN
        // difference (-Infinity − -Infinity of two relative scores) falls through to the next key.
        ranked.sort_by(|a, b| {
            js_descending(a.2, b.2)
                .then(js_descending(a.3, b.3))
                .then(js_descending(chunks[a.0].score, chunks[b.0].score))
                .then(a.1.cmp(&b.1))
        });
        let kept = top_k.min(ranked.len() as u64) as usize;
        selected.extend(ranked[..kept].iter().map(|r| r.0));
    }
    selected
}

/// The order of JavaScript's `right - left` comparator, descending: `Equal` when the difference is
/// 0 (so -0 and 0 tie) or NaN (which `||` skips, like 0). For finite and infinite doubles the
/// difference's sign is the order of the values, so this is `partial_cmp` with NaN read as a tie.
fn js_descending(left: f64, right: f64) -> std::cmp::Ordering {
    right
        .partial_cmp(&left)
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// The reference's `buildC9Context`: `[category:id|score] text`, one line per chunk.
pub fn build_context(chunks: &[Chunk], indices: &[usize]) -> String {
    let mut out = String::new();
    for (n, &i) in indices.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let c = &chunks[i];
        out.push('[');
        out.push_str(&c.category);
        out.push(':');
        out.push_str(&c.id);
        out.push('|');
        push_js_number(&mut out, c.score);
        out.push_str("] ");
        out.push_str(&c.text);
    }
    out
}

/// The reference's `lexicalTerms`: NFKD, combining marks (`\p{M}`) removed, lower-cased, maximal runs
/// of letters and numbers (`[\p{L}\p{N}]+`) longer than one UTF-16 unit, de-duplicated in first-seen
/// order. The classes are V8's (Unicode 17): letters and numbers from the tokenizer's table, marks
/// from [`super::marks`], both generated from Node.
pub fn lexical_terms(value: &str) -> Vec<String> {
    let unmarked: String = nfkd_as_node(value).filter(|&c| !is_mark(c)).collect();
    let lowered = unmarked.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for term in lowered
        .split(|c: char| !tokenizer::is_letter_or_number(c))
        .filter(|t| js_length(t) > 1)
    {
        if !out.iter().any(|t| t == term) {
            out.push(term.to_owned());
        }
    }
    out
}

/// Code points Node (Unicode 17) holds unassigned but the unicode-normalization crate's newer tables
/// decompose: `String#normalize` leaves an unassigned code point as it is, so these pass through.
/// tests/token_opt/unicode.rs compares the whole NFKD against Node's at every code point, so a crate
/// update that decomposes more shows there.
const NFKD_UNASSIGNED_IN_NODE: &[(char, char)] = &[
    ('\u{0558}', '\u{0558}'),
    ('\u{058B}', '\u{058C}'),
    ('\u{209D}', '\u{209F}'),
    ('\u{107BB}', '\u{107BF}'),
    ('\u{1B123}', '\u{1B126}'),
    ('\u{1D6A6}', '\u{1D6A6}'),
    ('\u{1DF95}', '\u{1DF95}'),
    ('\u{1DFCD}', '\u{1DFFF}'),
];

/// `String#normalize('NFKD')` as Node does it: unicode-normalization's NFKD over the runs between
/// code points Node holds unassigned, which stay as they are. An unassigned code point is a starter
/// (combining class 0) to Node, so canonical reordering never crosses it and the runs normalise
/// independently.
pub fn nfkd_as_node(value: &str) -> impl Iterator<Item = char> + '_ {
    let unassigned = |c: char| {
        NFKD_UNASSIGNED_IN_NODE
            .iter()
            .any(|&(lo, hi)| (lo..=hi).contains(&c))
    };
    value.split_inclusive(unassigned).flat_map(move |run| {
        let mut chars = run.chars();
        let kept = chars.next_back().filter(|&c| unassigned(c));
        let body = if kept.is_some() { chars.as_str() } else { run };
        body.nfkd().chain(kept)
    })
}

/// Whether V8's `/\p{M}/u` matches `c` (General_Category Mark, Unicode 17).
pub fn is_mark(c: char) -> bool {
    let cp = c as u32;
    super::marks::MARK_RANGES
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// ECMAScript `String#trim`: WhiteSpace (TAB VT FF SP NBSP ZWNBSP and category Zs) and LineTerminator.
pub fn js_trim(s: &str) -> &str {
    fn is_js_space(c: char) -> bool {
        matches!(
            c,
            '\t' | '\u{b}'
                | '\u{c}'
                | ' '
                | '\u{a0}'
                | '\u{feff}'
                | '\n'
                | '\r'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{1680}'
                | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
        )
    }
    s.trim_matches(is_js_space)
}

// ─── Lever 3a: response field filtering ──────────────────────────────────────────────────────────

/// Required fields absent from the response: how many, and the position of the first in `required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingRequired {
    pub missing: usize,
    pub first_index: usize,
}

/// The reference's `filterFields`: the allowed own members of `raw`, in `allowed` order (then
/// JavaScript's key order); any required member absent → `MissingRequired`. A member named
/// `__proto__` is never kept: the reference's `out[key] = raw[key]` with that key runs
/// Object.prototype's `__proto__` setter (setting the prototype, or doing nothing) instead of
/// creating a member, so `JSON.stringify` of its result never shows one.
pub fn filter_fields(
    raw: &Map<String, Value>,
    allowed: &[String],
    required: &[String],
) -> Result<Map<String, Value>, MissingRequired> {
    let absent: Vec<usize> = required
        .iter()
        .enumerate()
        .filter(|(_, k)| !raw.contains_key(k.as_str()))
        .map(|(i, _)| i)
        .collect();
    if let Some(&first_index) = absent.first() {
        return Err(MissingRequired {
            missing: absent.len(),
            first_index,
        });
    }
    let mut out = Map::new();
    for key in allowed.iter().filter(|k| k.as_str() != "__proto__") {
        if let Some(v) = raw.get(key.as_str()) {
            out.insert(key.clone(), v.clone());
        }
    }
    let mut value = Value::Object(out);
    to_js_key_order(&mut value);
    match value {
        Value::Object(m) => Ok(m),
        _ => unreachable!("an object stays an object"),
    }
}

// ─── Lever 3b: per-turn truncation ───────────────────────────────────────────────────────────────

/// The outcome of `truncate_turn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncateOutcome {
    pub blocks: Vec<String>,
    pub truncated: bool,
    /// The middle-block marker when one was used (its length is debited as overhead).
    pub marker: Option<String>,
}

/// The first `units` UTF-16 code units of `s`, one unit fewer when the cut would split a pair.
fn js_prefix(s: &str, units: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if used + w > units {
            return &s[..i];
        }
        used += w;
    }
    s
}

/// The reference's `fitBudget`: the text when it fits, else its head plus `…` within `budget`.
fn fit_budget(text: &str, budget: u64) -> String {
    let length = js_length(text);
    if length as u64 <= budget {
        return text.to_owned();
    }
    // Here budget < length, so it is a usize on every platform.
    match budget as usize {
        0 => String::new(),
        1 => "…".to_owned(),
        units => format!("{}…", js_prefix(text, units - 1)),
    }
}

/// The reference's `truncateTurn(blocks, maxChars)`: summary (first) and tail (last) kept, middle
/// blocks replaced by `…[+N truncated]…`, HARD cap on the `\n`-joined output. Where the reference's
/// two-block branch would overrun the cap by its join newline, the tail is fitted to `max_chars − 1`
/// (and a zero cap yields one empty block).
pub fn truncate_turn(blocks: &[String], max_chars: u64) -> TruncateOutcome {
    let joined_len = blocks.iter().map(|b| js_length(b) as u64).sum::<u64>()
        + blocks.len().saturating_sub(1) as u64;
    if joined_len <= max_chars {
        return TruncateOutcome {
            blocks: blocks.to_vec(),
            truncated: false,
            marker: None,
        };
    }
    let head = blocks.first().map(String::as_str).unwrap_or("");
    let tail = if blocks.len() > 1 {
        blocks[blocks.len() - 1].as_str()
    } else {
        ""
    };
    if blocks.len() == 1 {
        return TruncateOutcome {
            blocks: vec![fit_budget(head, max_chars)],
            truncated: true,
            marker: None,
        };
    }
    if blocks.len() == 2 {
        if max_chars == 0 {
            return TruncateOutcome {
                blocks: vec![String::new()],
                truncated: true,
                marker: None,
            };
        }
        let mut tail_out = fit_budget(tail, max_chars);
        if js_length(&tail_out) as u64 >= max_chars {
            tail_out = fit_budget(tail, max_chars - 1);
        }
        let head_out = fit_budget(
            head,
            max_chars.saturating_sub(js_length(&tail_out) as u64 + 1),
        );
        return TruncateOutcome {
            blocks: vec![head_out, tail_out],
            truncated: true,
            marker: None,
        };
    }
    let marker = format!("…[+{} truncated]…", blocks.len() - 2);
    let marker_len = js_length(&marker) as u64;
    if max_chars < marker_len + 2 {
        return TruncateOutcome {
            blocks: vec![fit_budget(&marker, max_chars)],
            truncated: true,
            marker: Some(marker),
        };
    }
    let budget = max_chars - marker_len - 2;
    let head_out = fit_budget(head, budget);
    let tail_out = fit_budget(tail, budget - js_length(&head_out) as u64);
    TruncateOutcome {
        blocks: vec![head_out, marker.clone(), tail_out],
        truncated: true,
        marker: Some(marker),
    }
}

// ─── Lever 5: schema slimming ────────────────────────────────────────────────────────────────────

/// One tool as the caller describes it: its full and slim descriptions, and how many times the full
/// detail is fetched on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub name: String,
    pub full: Option<String>,
    pub slim: Option<String>,
    pub detail_fetches: u64,
}

impl Tool {
    /// The reference's `describeTool(name, detail)`.
    pub fn describe(&self, detail: bool) -> &str {
        let (first, second) = if detail {
            (&self.full, &self.slim)
        } else {
            (&self.slim, &self.full)
        };
        first.as_deref().or(second.as_deref()).unwrap_or(&self.name)
    }
}

// ─── Measuring each lever ────────────────────────────────────────────────────────────────────────

/// C9: before = every candidate as an auditable line (unselected injection); after = nothing of the
/// candidate set; retrieval overhead = the context actually injected.
pub fn measure_c9(chunks: &[Chunk], outcome: &C9Outcome) -> Measurement {
    let all: Vec<usize> = (0..chunks.len()).collect();
    Measurement {
        lever: "c9",
        part: "c9",
        before: Measured::of(&build_context(chunks, &all)),
        after: Measured::default(),
        overhead: Overhead {
            retrieval: Measured::of(&outcome.context),
            ..Overhead::default()
        },
    }
}

/// Filtering: `JSON.stringify` of the response before and after.
pub fn measure_filter(raw: &Map<String, Value>, filtered: &Map<String, Value>) -> Measurement {
    Measurement {
        lever: "filter-truncate",
        part: "filter",
        before: Measured::of(&compact(&Value::Object(raw.clone()))),
        after: Measured::of(&compact(&Value::Object(filtered.clone()))),
        overhead: Overhead::default(),
    }
}

/// Truncation: the `\n`-joined turn before and after; the marker debited again as overhead, as the
/// reference's `markerChars` is.
pub fn measure_truncate(blocks: &[String], outcome: &TruncateOutcome) -> Measurement {
    Measurement {
        lever: "filter-truncate",
        part: "truncate",
        before: Measured::of(&blocks.join("\n")),
        after: Measured::of(&outcome.blocks.join("\n")),
        overhead: Overhead {
            marker: outcome
                .marker
                .as_deref()
                .map(Measured::of)
                .unwrap_or_default(),
            ..Overhead::default()
        },
    }
}

/// Schema: every tool's full description (before) and default description (after), summed per
/// description; each on-demand fetch debits the full description once more.
pub fn measure_schema(tools: &[Tool]) -> Measurement {
    let mut before = Measured::default();
    let mut after = Measured::default();
    let mut detail = Measured::default();
    for tool in tools {
        let full_text = tool.describe(true);
        let full = Measured::of(full_text);
        before = before.plus(full);
        let slim_text = tool.describe(false);
        after = after.plus(if slim_text == full_text {
            full
        } else {
            Measured::of(slim_text)
        });
        if let Some(own_full) = &tool.full {
            let own = if own_full == full_text {
                full
            } else {
                Measured::of(own_full)
            };
            detail = detail.plus(own.times(tool.detail_fetches));
        }
    }
    Measurement {
        lever: "schema",
        part: "schema",
        before,
        after,
        overhead: Overhead {
            detail,
            ..Overhead::default()
        },
    }
}

#[cfg(test)]
mod tests;
