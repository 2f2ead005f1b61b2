//! M01 counts, M02 size totals and M13 the two-axis unknown census: the record's mechanical
//! facts before any share is taken.

use super::typography::est;
use super::{object, Analysis, MECHANICAL_FACT};
use crate::engine::composition::classify::{BlockFacts, C_CLASSES, C_UNK, P_CLASSES, P_UNK};
use serde_json::{json, Value};

/// M01: messages, blocks, schema blocks, empty blocks and the per-axis class conflicts.
pub fn m01_counts(analysis: &Analysis, messages: usize) -> Value {
    let mut conflicts = Vec::new();
    let (mut p_conflicts, mut c_conflicts) = (0u64, 0u64);
    for (i, f) in analysis.facts.iter().enumerate() {
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
                conflicts.push(object(vec![
                    ("block_index", json!(i)),
                    ("axis", json!(axis)),
                    ("winner", json!(names[winner])),
                    ("losers", Value::Array(losers)),
                ]));
            }
        }
    }
    object(vec![
        ("label", json!(MECHANICAL_FACT)),
        ("messages", json!(messages)),
        ("blocks", json!(analysis.facts.len())),
        ("schema_blocks", json!(analysis.schema_blocks)),
        (
            "empty_blocks",
            json!(analysis.facts.iter().filter(|f| f.c_class == 0).count()),
        ),
        (
            "conflicts",
            object(vec![
                ("axis_p", json!(p_conflicts)),
                ("axis_c", json!(c_conflicts)),
            ]),
        ),
        ("conflict_list", Value::Array(conflicts)),
    ])
}

/// M02: characters, text bytes and T, the denominator of every share.
pub fn m02_size_totals(analysis: &Analysis) -> Value {
    object(vec![
        ("characters", json!(analysis.total_chars)),
        ("text_bytes", json!(analysis.text_bytes)),
        ("tokens", est(analysis.total_estimate)),
    ])
}

/// M13: P-UNK, C-UNK and either-axis rows, printed even when zero.
pub fn m13_unknown_census(analysis: &Analysis) -> Value {
    let row = |pred: &dyn Fn(&BlockFacts) -> bool| {
        Value::Object(analysis.class_row(analysis.class_sum(pred)))
    };
    object(vec![
        ("label", json!(MECHANICAL_FACT)),
        ("p_unk", row(&|f| f.p_class == P_UNK)),
        ("c_unk", row(&|f| f.c_class == C_UNK)),
        (
            "either_axis",
            row(&|f| f.p_class == P_UNK || f.c_class == C_UNK),
        ),
    ])
}
