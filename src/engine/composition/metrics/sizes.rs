//! M06 per-message sizes, M07 growth across turns, M14 positions of P-SYS / P-CMPT blocks and M15
//! the largest single block.

use super::typography::{est, mean, share};
use super::{object, Analysis, NO_CMPT_AT_LEVEL};
use crate::engine::composition::classify::{C_CLASSES, P_CLASSES, P_CMPT, P_SYS, P_USER};
use serde_json::{json, Value};

/// M06: min, max, mean, lower median, p90 (nearest rank) and the largest contributors.
pub fn m06_message_sizes(analysis: &Analysis, has_schema: bool) -> Value {
    let sizes = &analysis.message_estimates;
    let n = sizes.len() as u64;
    let total: u64 = sizes.iter().sum();
    let mut sorted = sizes.clone();
    sorted.sort_unstable();
    let rank = |r: u64| sorted[(r.max(1) - 1) as usize];
    let mut by_size: Vec<usize> = (0..sizes.len()).collect();
    by_size.sort_by(|&x, &y| sizes[y].cmp(&sizes[x]).then(x.cmp(&y)));
    let top3: Vec<usize> = by_size.iter().take(3).copied().collect();
    let at_least_tenth = |i: usize| total > 0 && 10 * sizes[i] >= total;
    let contributors: Vec<Value> = by_size
        .iter()
        .filter(|&&i| top3.contains(&i) || at_least_tenth(i))
        .map(|&i| {
            object(vec![
                ("message_index", json!(i)),
                ("tokens", est(sizes[i])),
                ("share", share(sizes[i], analysis.total_estimate)),
                ("top_3", json!(top3.contains(&i))),
                ("at_least_10_percent", json!(at_least_tenth(i))),
            ])
        })
        .collect();
    object(vec![
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

/// One turn of M07: its first message, how many messages, and their estimate.
struct Turn {
    first_message: Option<usize>,
    messages: u64,
    increment: u64,
}

/// M07. The schema pseudo-message precedes every message, so it lies before the first P-USER
/// message: its estimate is part of turn 0 (whose message count stays a count of messages), and
/// the last cumulative figure is T.
pub fn m07_turn_growth(analysis: &Analysis, has_schema: bool) -> Value {
    let schema_estimate: u64 = analysis
        .facts
        .iter()
        .filter(|f| f.message.is_none())
        .map(|f| f.estimate)
        .sum();
    let mut turns = vec![Turn {
        first_message: None,
        messages: 0,
        increment: schema_estimate,
    }];
    for (i, estimate) in analysis.message_estimates.iter().enumerate() {
        if analysis.message_first_p[i] == Some(P_USER) {
            turns.push(Turn {
                first_message: Some(i),
                messages: 0,
                increment: 0,
            });
        }
        let turn = turns.last_mut().expect("turn 0 exists");
        turn.first_message.get_or_insert(i);
        turn.messages += 1;
        turn.increment += estimate;
    }
    let mut cumulative = 0;
    let rows = turns
        .iter()
        .enumerate()
        .map(|(k, turn)| {
            cumulative += turn.increment;
            object(vec![
                ("turn", json!(k)),
                ("first_message_index", json!(turn.first_message)),
                ("messages", json!(turn.messages)),
                ("increment", est(turn.increment)),
                ("cumulative", est(cumulative)),
                (
                    "cumulative_share",
                    share(cumulative, analysis.total_estimate),
                ),
            ])
        })
        .collect();
    object(vec![
        ("turn_rule", json!("turn 0 = messages before the first P-USER message; each P-USER message starts a new turn (fleet convention)")),
        (
            "schema_pseudo_message",
            json!(if has_schema { "included in turn 0" } else { "absent" }),
        ),
        ("turns", Value::Array(rows)),
    ])
}

/// M14: start offset and depth of every P-SYS or P-CMPT block.
pub fn m14_positions(analysis: &Analysis, partial: bool) -> Value {
    let mut offset = 0u64;
    let mut rows = Vec::new();
    for (i, f) in analysis.facts.iter().enumerate() {
        if f.p_class == P_SYS || f.p_class == P_CMPT {
            rows.push(object(vec![
                ("block_index", json!(i)),
                ("class", json!(P_CLASSES[f.p_class])),
                ("start_offset", est(offset)),
                ("depth", share(offset, analysis.total_estimate)),
            ]));
        }
        offset += f.estimate;
    }
    let mut out = vec![("blocks", Value::Array(rows))];
    if partial && !analysis.facts.iter().any(|f| f.p_class == P_CMPT) {
        out.push(("note", json!(NO_CMPT_AT_LEVEL)));
    }
    object(out)
}

/// M15: the block with the largest estimate, ties to the lowest index.
pub fn m15_largest_block(analysis: &Analysis) -> Value {
    let mut best = 0usize;
    for (i, f) in analysis.facts.iter().enumerate() {
        if f.estimate > analysis.facts[best].estimate {
            best = i;
        }
    }
    let f = &analysis.facts[best];
    object(vec![
        ("block_index", json!(best)),
        ("message_index", json!(f.message)),
        ("p", json!(P_CLASSES[f.p_class])),
        ("c", json!(C_CLASSES[f.c_class])),
        ("tokens", est(f.estimate)),
        ("share", share(f.estimate, analysis.total_estimate)),
    ])
}
