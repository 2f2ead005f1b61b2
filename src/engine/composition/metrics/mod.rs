//! Metric register M01–M15 over an analysed record, each rendered as a JSON object holding
//! indices, classes, counts and sizes only.
//!
//! Invariants: counts are JSON numbers; every EM-1-derived figure (tokens, shares, depths, means,
//! differences) is a string in estimate typography (`est:~N`, `est:~N.NN%`), computed from unrounded
//! integers with round-half-up (half away from zero for negative differences) in exact integer
//! arithmetic; a zero denominator prints `NOT-ASSESSABLE (zero denominator)`, never 0%.

use super::classify::{
    measure_block, BlockFacts, Census, C_CLASSES, C_UNK, P_CLASSES, P_CMPT, P_SYS, P_TDEF, P_UNK,
    P_USER,
};
use super::neardup;
use super::record::SessionRecord;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

pub const ZERO_DENOMINATOR: &str = "NOT-ASSESSABLE (zero denominator)";
pub const NOT_IDENTIFIABLE: &str = "not identifiable at this level";
pub const NO_TOOL_DEFINITIONS: &str = "no tool definitions present in the submitted record";
pub const NO_CMPT_AT_LEVEL: &str = "no P-CMPT block identified at this level";
pub const MECHANICAL_FACT: &str = "MECHANICAL FACT";
pub const FLEET_CONVENTION: &str = "LABELLED CONVENTION (fleet convention)";
/// M09 pair listings longer than this print the counts only.
pub const PAIR_LISTING_LIMIT: u64 = 1000;

/// `est:~N`.
pub fn est(n: u64) -> Value {
    Value::String(format!("est:~{n}"))
}

fn est_signed(n: i128) -> Value {
    Value::String(format!("est:~{n}"))
}

/// 100 × |num| / den in hundredths, rounded half up.
fn hundredths(num: u128, den: u128) -> u128 {
    (2 * 10_000 * num + den) / (2 * den)
}

fn pct_string(negative: bool, h: u128) -> Value {
    let sign = if negative && h > 0 { "-" } else { "" };
    Value::String(format!("est:~{sign}{}.{:02}%", h / 100, h % 100))
}

/// `est:~N.NN%` of part / whole, or the zero-denominator marker.
pub fn share(part: u64, whole: u64) -> Value {
    if whole == 0 {
        return Value::String(ZERO_DENOMINATOR.to_owned());
    }
    pct_string(false, hundredths(part as u128, whole as u128))
}

fn signed_share(num: i128, den: u64) -> Value {
    if den == 0 {
        return Value::String(ZERO_DENOMINATOR.to_owned());
    }
    pct_string(num < 0, hundredths(num.unsigned_abs(), den as u128))
}

/// Integer mean rounded half up.
fn mean(sum: u64, n: u64) -> u64 {
    ((2 * sum as u128 + n as u128) / (2 * n as u128)) as u64
}

/// The measured record: per-block facts plus per-message sums.
pub struct Analysis {
    pub facts: Vec<BlockFacts>,
    pub schema_blocks: usize,
    pub message_estimates: Vec<u64>,
    /// P class of each message's first block (None for a message with no blocks).
    pub message_first_p: Vec<Option<usize>>,
    pub total_estimate: u64,
    pub total_chars: u64,
    pub text_bytes: u64,
    /// Largest adapted text of one message (schema pseudo-message included), in UTF-8 bytes.
    pub largest_entry_bytes: u64,
    pub any_text: bool,
}

pub fn analyse(record: &SessionRecord) -> Analysis {
    let facts: Vec<BlockFacts> = record.blocks().map(|(m, b)| measure_block(m, b)).collect();
    let n = record.messages.len();
    let mut message_estimates = vec![0u64; n];
    let mut message_bytes = vec![0u64; n];
    let mut message_first_p = vec![None; n];
    let mut schema_bytes = 0u64;
    let mut schema_blocks = 0;
    for f in &facts {
        match f.message {
            Some(m) => {
                message_estimates[m] += f.estimate;
                message_bytes[m] += f.bytes;
                if message_first_p[m].is_none() {
                    message_first_p[m] = Some(f.p);
                }
            }
            None => {
                schema_blocks += 1;
                schema_bytes += f.bytes;
            }
        }
    }
    let largest_entry_bytes = message_bytes
        .iter()
        .copied()
        .chain([schema_bytes])
        .max()
        .unwrap_or(0);
    let any_text = record.blocks().any(|(_, b)| b.text.is_some());
    Analysis {
        total_estimate: facts.iter().map(|f| f.estimate).sum(),
        total_chars: facts.iter().map(|f| f.chars).sum(),
        text_bytes: facts.iter().map(|f| f.bytes).sum(),
        facts,
        schema_blocks,
        message_estimates,
        message_first_p,
        largest_entry_bytes,
        any_text,
    }
}

impl Analysis {
    pub fn has_user_message(&self) -> bool {
        self.message_first_p.contains(&Some(P_USER))
    }

    fn class_sum(&self, pred: impl Fn(&BlockFacts) -> bool) -> (u64, u64) {
        self.facts
            .iter()
            .filter(|f| pred(f))
            .fold((0, 0), |(n, e), f| (n + 1, e + f.estimate))
    }

    fn class_row(&self, blocks: u64, tokens: u64) -> Map<String, Value> {
        let mut row = Map::new();
        row.insert("blocks".into(), json!(blocks));
        row.insert("tokens".into(), est(tokens));
        row.insert("share".into(), share(tokens, self.total_estimate));
        row
    }
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

pub fn m01(a: &Analysis, messages: usize) -> Value {
    let mut conflicts = Vec::new();
    let (mut p_conflicts, mut c_conflicts) = (0u64, 0u64);
    for (i, f) in a.facts.iter().enumerate() {
        for (axis, fired, names) in [
            ("P", f.p_fired, &P_CLASSES[..]),
            ("C", f.c_fired, &C_CLASSES[..]),
        ] {
            if fired.count_ones() > 1 {
                if axis == "P" {
                    p_conflicts += 1;
                } else {
                    c_conflicts += 1;
                }
                let winner = fired.trailing_zeros() as usize;
                let losers: Vec<Value> = (0..names.len())
                    .filter(|&k| k != winner && fired & (1 << k) != 0)
                    .map(|k| json!(names[k]))
                    .collect();
                conflicts.push(obj(vec![
                    ("block_index", json!(i)),
                    ("axis", json!(axis)),
                    ("winner", json!(names[winner])),
                    ("losers", Value::Array(losers)),
                ]));
            }
        }
    }
    obj(vec![
        ("label", json!(MECHANICAL_FACT)),
        ("messages", json!(messages)),
        ("blocks", json!(a.facts.len())),
        ("schema_blocks", json!(a.schema_blocks)),
        (
            "empty_blocks",
            json!(a.facts.iter().filter(|f| f.c == 0).count()),
        ),
        (
            "conflicts",
            obj(vec![
                ("axis_p", json!(p_conflicts)),
                ("axis_c", json!(c_conflicts)),
            ]),
        ),
        ("conflict_list", Value::Array(conflicts)),
    ])
}

pub fn m02(a: &Analysis) -> Value {
    obj(vec![
        ("characters", json!(a.total_chars)),
        ("text_bytes", json!(a.text_bytes)),
        ("tokens", est(a.total_estimate)),
    ])
}

/// M03. Zero rows of the classes in `unidentifiable` print the not-identifiable note.
pub fn m03(a: &Analysis, unidentifiable: &[usize]) -> Value {
    let rows = (0..P_CLASSES.len())
        .map(|c| {
            let (n, e) = a.class_sum(|f| f.p == c);
            let mut row = Map::new();
            row.insert("class".into(), json!(P_CLASSES[c]));
            if n == 0 && unidentifiable.contains(&c) {
                row.insert("note".into(), json!(NOT_IDENTIFIABLE));
            } else {
                row.extend(a.class_row(n, e));
            }
            Value::Object(row)
        })
        .collect();
    obj(vec![("rows", Value::Array(rows))])
}

pub fn m04(a: &Analysis) -> Value {
    let rows = (0..C_CLASSES.len())
        .map(|c| {
            let (n, e) = a.class_sum(|f| f.c == c);
            let mut row = Map::new();
            row.insert("class".into(), json!(C_CLASSES[c]));
            row.extend(a.class_row(n, e));
            Value::Object(row)
        })
        .collect();
    obj(vec![("rows", Value::Array(rows))])
}

pub fn m05(a: &Analysis) -> Value {
    let mut cells = Vec::new();
    for (p, p_name) in P_CLASSES.iter().enumerate() {
        for (c, c_name) in C_CLASSES.iter().enumerate() {
            let (n, e) = a.class_sum(|f| f.p == p && f.c == c);
            if n > 0 {
                let mut cell = Map::new();
                cell.insert("p".into(), json!(p_name));
                cell.insert("c".into(), json!(c_name));
                cell.extend(a.class_row(n, e));
                cells.push(Value::Object(cell));
            }
        }
    }
    obj(vec![("cells", Value::Array(cells))])
}

pub fn m06(a: &Analysis, has_schema: bool) -> Value {
    let es = &a.message_estimates;
    let n = es.len() as u64;
    let total: u64 = es.iter().sum();
    let mut sorted = es.clone();
    sorted.sort_unstable();
    let rank = |r: u64| sorted[(r.max(1) - 1) as usize];
    let mut by_size: Vec<usize> = (0..es.len()).collect();
    by_size.sort_by(|&x, &y| es[y].cmp(&es[x]).then(x.cmp(&y)));
    let top3: Vec<usize> = by_size.iter().take(3).copied().collect();
    let contributors: Vec<Value> = by_size
        .iter()
        .filter(|&&i| {
            let big = total > 0 && 10 * es[i] >= total;
            top3.contains(&i) || big
        })
        .map(|&i| {
            obj(vec![
                ("message_index", json!(i)),
                ("tokens", est(es[i])),
                ("share", share(es[i], a.total_estimate)),
                ("top_3", json!(top3.contains(&i))),
                (
                    "at_least_10_percent",
                    json!(total > 0 && 10 * es[i] >= total),
                ),
            ])
        })
        .collect();
    obj(vec![
        (
            "schema_pseudo_message",
            json!(if has_schema { "excluded" } else { "absent" }),
        ),
        ("messages", json!(n)),
        ("message_total", est(total)),
        ("min", est(sorted[0])),
        ("max", est(sorted[sorted.len() - 1])),
        ("mean", est(mean(total, n))),
        ("median_lower", est(rank(n.div_ceil(2)))),
        ("p90", est(rank((9 * n).div_ceil(10)))),
        ("rank_rule", json!("nearest rank (fleet convention)")),
        ("largest_contributors", Value::Array(contributors)),
    ])
}

/// M07. The schema pseudo-message precedes every message, so it lies before the first P-USER
/// message: its estimate is part of turn 0 (whose message count stays a count of messages), and
/// the last cumulative figure is T.
pub fn m07(a: &Analysis, has_schema: bool) -> Value {
    let schema_estimate: u64 = a
        .facts
        .iter()
        .filter(|f| f.message.is_none())
        .map(|f| f.estimate)
        .sum();
    let mut turns: Vec<(Option<usize>, u64, u64)> = vec![(None, 0, schema_estimate)];
    for (i, e) in a.message_estimates.iter().enumerate() {
        if a.message_first_p[i] == Some(P_USER) {
            turns.push((Some(i), 0, 0));
        }
        let t = turns.last_mut().expect("turn 0 exists");
        if t.0.is_none() {
            t.0 = Some(i);
        }
        t.1 += 1;
        t.2 += e;
    }
    let mut cumulative = 0;
    let rows = turns
        .iter()
        .enumerate()
        .map(|(k, (first, count, inc))| {
            cumulative += inc;
            obj(vec![
                ("turn", json!(k)),
                ("first_message_index", json!(first)),
                ("messages", json!(count)),
                ("increment", est(*inc)),
                ("cumulative", est(cumulative)),
                ("cumulative_share", share(cumulative, a.total_estimate)),
            ])
        })
        .collect();
    obj(vec![
        ("turn_rule", json!("turn 0 = messages before the first P-USER message; each P-USER message starts a new turn (fleet convention)")),
        (
            "schema_pseudo_message",
            json!(if has_schema { "included in turn 0" } else { "absent" }),
        ),
        ("turns", Value::Array(rows)),
    ])
}

pub fn m08(a: &Analysis) -> Value {
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in a.facts.iter().enumerate() {
        if let Some(n) = &f.normalised {
            groups.entry(n.as_str()).or_default().push(i);
        }
    }
    let mut list: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() >= 2).collect();
    list.sort_unstable_by_key(|g| g[0]);
    let (mut dup_blocks, mut excess_blocks, mut excess_tokens) = (0u64, 0u64, 0u64);
    let rows = list
        .iter()
        .map(|g| {
            let excess: u64 = g[1..].iter().map(|&i| a.facts[i].estimate).sum();
            dup_blocks += g.len() as u64;
            excess_blocks += g.len() as u64 - 1;
            excess_tokens += excess;
            obj(vec![
                ("block_indices", json!(g)),
                ("excess_blocks", json!(g.len() - 1)),
                ("excess_tokens", est(excess)),
            ])
        })
        .collect::<Vec<_>>();
    obj(vec![
        ("label", json!(MECHANICAL_FACT)),
        ("groups", json!(list.len())),
        ("duplicate_blocks", json!(dup_blocks)),
        ("excess_blocks", json!(excess_blocks)),
        ("excess_tokens", est(excess_tokens)),
        ("excess_share", share(excess_tokens, a.total_estimate)),
        ("group_list", Value::Array(rows)),
    ])
}

/// M09, or None when the join would exceed its published work budget.
pub fn m09(a: &Analysis) -> Option<Value> {
    let nd = neardup::near_duplicates(
        a.facts
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.normalised.as_deref().map(|n| (i, n))),
        PAIR_LISTING_LIMIT,
    )
    .ok()?;
    let mut out = vec![
        ("label", json!(FLEET_CONVENTION)),
        (
            "threshold",
            json!("Jaccard >= 0.80 over word 3-gram shingles"),
        ),
        ("pairable_blocks", json!(nd.pairable_blocks)),
        ("pairs", json!(nd.pairs)),
        ("blocks_in_pairs", json!(nd.blocks_in_pairs.len())),
    ];
    match nd.listed {
        Some(list) => out.push((
            "pair_list",
            Value::Array(
                list.iter()
                    .map(|p| {
                        obj(vec![
                            ("block_a", json!(p.a)),
                            ("block_b", json!(p.b)),
                            ("shared_shingles", json!(p.shared)),
                            ("union_shingles", json!(p.union)),
                        ])
                    })
                    .collect(),
            ),
        )),
        None => out.push((
            "pair_list_note",
            json!("pair list not printed: more than 1000 pairs; counts are complete"),
        )),
    }
    Some(obj(out))
}

/// M10 figures of one census (a block's, or the record's sum), per alphabet and in total.
fn census_figures(c: &Census) -> Vec<(&'static str, Value)> {
    let (s, u) = (c.standard, c.url_safe);
    vec![
        ("standard_segments", json!(s.segments)),
        ("standard_characters", json!(s.characters)),
        ("standard_decoded_bytes", json!(s.decoded_bytes)),
        ("url_safe_segments", json!(u.segments)),
        ("url_safe_characters", json!(u.characters)),
        ("url_safe_decoded_bytes", json!(u.decoded_bytes)),
        ("segments", json!(s.segments + u.segments)),
        ("segment_characters", json!(s.characters + u.characters)),
        ("decoded_bytes", json!(s.decoded_bytes + u.decoded_bytes)),
        ("covered_characters", json!(c.covered_characters)),
    ]
}

pub fn m10(a: &Analysis) -> Value {
    let mut blocks = Vec::new();
    let mut total = Census::default();
    for (i, f) in a.facts.iter().enumerate() {
        let c = f.census;
        if c.segments() > 0 {
            for (sum, part) in [
                (&mut total.standard, c.standard),
                (&mut total.url_safe, c.url_safe),
            ] {
                sum.segments += part.segments;
                sum.characters += part.characters;
                sum.decoded_bytes += part.decoded_bytes;
            }
            total.covered_characters += c.covered_characters;
            let mut row = vec![("block_index", json!(i))];
            row.extend(census_figures(&c));
            blocks.push(obj(row));
        }
    }
    let raw: Vec<usize> = (0..a.facts.len())
        .filter(|&i| a.facts[i].raw_export)
        .collect();
    let mut out = vec![(
        "label",
        json!("counts are mechanical facts given the tests; the thresholds are fleet conventions"),
    )];
    out.extend(census_figures(&total));
    out.extend([
        ("blocks_with_segments", Value::Array(blocks)),
        ("raw_export_blocks", json!(raw.len())),
        ("raw_export_block_indices", json!(raw)),
    ]);
    obj(out)
}

pub fn m11(a: &Analysis) -> Value {
    let (n, e) = a.class_sum(|f| f.p == P_TDEF);
    let mut out = vec![
        ("blocks", json!(n)),
        ("tokens", est(e)),
        ("share", share(e, a.total_estimate)),
    ];
    if n == 0 {
        out.push(("note", json!(NO_TOOL_DEFINITIONS)));
    }
    obj(out)
}

/// Stated figures resolved for M12.
#[derive(Debug, Clone, Default)]
pub struct Stated {
    pub per_message: Option<Vec<Option<u64>>>,
    pub per_message_source: Option<&'static str>,
    pub total: Option<u64>,
    pub total_source: Option<&'static str>,
}

impl Stated {
    pub fn any(&self) -> bool {
        self.total.is_some()
            || self
                .per_message
                .as_ref()
                .is_some_and(|p| p.iter().any(Option::is_some))
    }
}

/// Largest integer every JSON reader holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u128 = 9_007_199_254_740_991;

/// An exact count: a JSON number up to 2^53 - 1; beyond it (a sum of stated figures can pass it)
/// the decimal digits as a string, since a larger JSON number would be read rounded.
fn exact_count(n: u128) -> Value {
    if n <= MAX_SAFE_INTEGER {
        json!(n as u64)
    } else {
        Value::String(n.to_string())
    }
}

/// One M12 comparison. `stated` is u128 because it may be a sum of up to 10,000 stated figures
/// of up to 2^53 - 1 each (more than u64 holds).
fn unit(stated: u128, e: u64) -> Vec<(&'static str, Value)> {
    let diff = stated as i128 - e as i128;
    let verdict = if e == 0 && stated == 0 {
        "EXACT"
    } else if e == 0 {
        "DISAGREE (zero-measured)"
    } else if 100 * diff.unsigned_abs() <= 5 * e as u128 {
        "WITHIN"
    } else {
        "DISAGREE"
    };
    vec![
        ("stated_tokens", exact_count(stated)),
        ("tokens", est(e)),
        ("diff", est_signed(diff)),
        ("pct", signed_share(diff, e)),
        ("verdict", json!(verdict)),
    ]
}

pub fn m12(a: &Analysis, stated: &Stated) -> Value {
    let n = a.message_estimates.len();
    let per = stated.per_message.clone().unwrap_or_default();
    let mut rows = Vec::new();
    let (mut covered, mut within, mut disagree, mut exact) = (0u64, 0u64, 0u64, 0u64);
    let (mut sum_stated, mut sum_e) = (0u128, 0u64);
    for (i, s) in per.iter().enumerate().take(n) {
        if let Some(s) = s {
            let e = a.message_estimates[i];
            let fields = unit(u128::from(*s), e);
            match fields[4].1.as_str() {
                Some("WITHIN") => within += 1,
                Some("EXACT") => exact += 1,
                _ => disagree += 1,
            }
            covered += 1;
            sum_stated += u128::from(*s);
            sum_e += e;
            let mut row = vec![("message_index", json!(i))];
            row.extend(fields);
            rows.push(obj(row));
        }
    }
    let mut aggregate = vec![
        ("units", json!(covered)),
        ("within", json!(within)),
        ("exact", json!(exact)),
        ("disagree", json!(disagree)),
    ];
    if covered > 0 {
        aggregate.extend(unit(sum_stated, sum_e).into_iter().take(4));
    }
    let whole = match stated.total {
        Some(t) => {
            let mut w = vec![("basis", json!("stated total against T"))];
            w.extend(unit(u128::from(t), a.total_estimate));
            obj(w)
        }
        None if covered == n as u64 && n > 0 => {
            let mut w = vec![(
                "basis",
                json!("per-message stated sum against the message total"),
            )];
            w.extend(unit(sum_stated, sum_e));
            obj(w)
        }
        None => json!("NOT-ASSESSABLE (partial coverage)"),
    };
    obj(vec![
        ("label", json!("stated figures are the submitting harness's own, reproduced as stated; tolerance 5% (fleet convention)")),
        ("note", json!("a disagreement measures the gap between the harness's count and EM-1, not an error by either side")),
        ("per_message_source", json!(stated.per_message_source)),
        ("total_source", json!(stated.total_source)),
        ("messages", json!(n)),
        ("covered_messages", json!(covered)),
        ("per_message_entries_beyond_record", json!(per.len().saturating_sub(n))),
        ("per_message", Value::Array(rows)),
        ("aggregate_over_covered", obj(aggregate)),
        ("whole_record", whole),
    ])
}

pub fn m13(a: &Analysis) -> Value {
    let row =
        |pred: &dyn Fn(&BlockFacts) -> bool| Value::Object(a.class_row_from(a.class_sum(pred)));
    obj(vec![
        ("label", json!(MECHANICAL_FACT)),
        ("p_unk", row(&|f| f.p == P_UNK)),
        ("c_unk", row(&|f| f.c == C_UNK)),
        ("either_axis", row(&|f| f.p == P_UNK || f.c == C_UNK)),
    ])
}

impl Analysis {
    fn class_row_from(&self, (n, e): (u64, u64)) -> Map<String, Value> {
        self.class_row(n, e)
    }
}

pub fn m14(a: &Analysis, partial: bool) -> Value {
    let mut offset = 0u64;
    let mut rows = Vec::new();
    for (i, f) in a.facts.iter().enumerate() {
        if f.p == P_SYS || f.p == P_CMPT {
            rows.push(obj(vec![
                ("block_index", json!(i)),
                ("class", json!(P_CLASSES[f.p])),
                ("start_offset", est(offset)),
                ("depth", share(offset, a.total_estimate)),
            ]));
        }
        offset += f.estimate;
    }
    let mut out = vec![("blocks", Value::Array(rows))];
    if partial && !a.facts.iter().any(|f| f.p == P_CMPT) {
        out.push(("note", json!(NO_CMPT_AT_LEVEL)));
    }
    obj(out)
}

pub fn m15(a: &Analysis) -> Value {
    let mut best = 0usize;
    for (i, f) in a.facts.iter().enumerate() {
        if f.estimate > a.facts[best].estimate {
            best = i;
        }
    }
    let f = &a.facts[best];
    obj(vec![
        ("block_index", json!(best)),
        ("message_index", json!(f.message)),
        ("p", json!(P_CLASSES[f.p])),
        ("c", json!(C_CLASSES[f.c])),
        ("tokens", est(f.estimate)),
        ("share", share(f.estimate, a.total_estimate)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_round_half_up_in_integers() {
        assert_eq!(share(5, 800), json!("est:~0.63%")); // 0.625
        assert_eq!(share(1, 3), json!("est:~33.33%"));
        assert_eq!(share(2, 3), json!("est:~66.67%"));
        assert_eq!(share(0, 0), json!(ZERO_DENOMINATOR));
        assert_eq!(signed_share(-5, 800), json!("est:~-0.63%"));
        assert_eq!(mean(5, 2), 3);
        assert_eq!(mean(4, 3), 1);
    }

    #[test]
    fn stated_sums_past_2_pow_64_stay_exact() {
        let max_safe = 9_007_199_254_740_991u128;
        assert_eq!(exact_count(max_safe), json!(9_007_199_254_740_991u64));
        assert_eq!(exact_count(max_safe + 1), json!("9007199254740992"));
        let sum = 2051 * max_safe;
        assert!(sum > u128::from(u64::MAX));
        let fields = unit(sum, 2051);
        assert_eq!(fields[0].1, json!("18473765671473772541"));
        assert_eq!(fields[2].1, json!("est:~18473765671473770490"));
        assert_eq!(fields[4].1, json!("DISAGREE"));
    }
}
