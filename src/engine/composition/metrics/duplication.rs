//! M08 exact duplication (normalised-text groups) and M09 near duplication (the shingle join).

use super::typography::{est, share};
use super::{object, Analysis, FLEET_CONVENTION, MECHANICAL_FACT, PAIR_LISTING_LIMIT};
use crate::engine::composition::shingle_join;
use serde_json::{json, Value};
use std::collections::HashMap;

/// M08: groups of blocks whose normalised texts are equal, with their excess over one copy.
pub fn m08_exact_duplicates(analysis: &Analysis) -> Value {
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in analysis.facts.iter().enumerate() {
        if let Some(normalised) = &f.normalised {
            groups.entry(normalised.as_str()).or_default().push(i);
        }
    }
    let mut list: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() >= 2).collect();
    list.sort_unstable_by_key(|g| g[0]);
    let (mut dup_blocks, mut excess_blocks, mut excess_tokens) = (0u64, 0u64, 0u64);
    let rows = list
        .iter()
        .map(|g| {
            let excess: u64 = g[1..].iter().map(|&i| analysis.facts[i].estimate).sum();
            dup_blocks += g.len() as u64;
            excess_blocks += g.len() as u64 - 1;
            excess_tokens += excess;
            object(vec![
                ("block_indices", json!(g)),
                ("excess_blocks", json!(g.len() - 1)),
                ("excess_tokens", est(excess)),
            ])
        })
        .collect::<Vec<_>>();
    object(vec![
        ("label", json!(MECHANICAL_FACT)),
        ("groups", json!(list.len())),
        ("duplicate_blocks", json!(dup_blocks)),
        ("excess_blocks", json!(excess_blocks)),
        ("excess_tokens", est(excess_tokens)),
        (
            "excess_share",
            share(excess_tokens, analysis.total_estimate),
        ),
        ("group_list", Value::Array(rows)),
    ])
}

/// M09, or None when the join would exceed its published work budget.
pub fn m09_near_duplicates(analysis: &Analysis) -> Option<Value> {
    let found = shingle_join::near_duplicates(
        analysis
            .facts
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
        ("pairable_blocks", json!(found.pairable_blocks)),
        ("pairs", json!(found.pairs)),
        ("blocks_in_pairs", json!(found.blocks_in_pairs.len())),
    ];
    match found.listed {
        Some(list) => out.push((
            "pair_list",
            Value::Array(
                list.iter()
                    .map(|pair| {
                        object(vec![
                            ("block_a", json!(pair.a)),
                            ("block_b", json!(pair.b)),
                            ("shared_shingles", json!(pair.shared)),
                            ("union_shingles", json!(pair.union)),
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
    Some(object(out))
}
