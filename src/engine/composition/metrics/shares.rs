//! M03–M05 composition shares per axis and crossed, and M11 the tool-definition share.

use super::typography::{est, share};
use super::{object, Analysis, NOT_IDENTIFIABLE, NO_TOOL_DEFINITIONS};
use crate::engine::composition::classify::{C_CLASSES, P_CLASSES, P_TDEF};
use serde_json::{json, Map, Value};

/// M03: one row per P class. Zero rows of the classes in `unidentifiable` print the
/// not-identifiable note.
pub fn m03_axis_p_shares(analysis: &Analysis, unidentifiable: &[usize]) -> Value {
    let rows = (0..P_CLASSES.len())
        .map(|class| {
            let (blocks, tokens) = analysis.class_sum(|f| f.p_class == class);
            let mut row = Map::new();
            row.insert("class".into(), json!(P_CLASSES[class]));
            if blocks == 0 && unidentifiable.contains(&class) {
                row.insert("note".into(), json!(NOT_IDENTIFIABLE));
            } else {
                row.extend(analysis.class_row((blocks, tokens)));
            }
            Value::Object(row)
        })
        .collect();
    object(vec![("rows", Value::Array(rows))])
}

/// M04: one row per C class.
pub fn m04_axis_c_shares(analysis: &Analysis) -> Value {
    let rows = (0..C_CLASSES.len())
        .map(|class| {
            let mut row = Map::new();
            row.insert("class".into(), json!(C_CLASSES[class]));
            row.extend(analysis.class_row(analysis.class_sum(|f| f.c_class == class)));
            Value::Object(row)
        })
        .collect();
    object(vec![("rows", Value::Array(rows))])
}

/// M05: the P x C cells present.
pub fn m05_cross_tabulation(analysis: &Analysis) -> Value {
    let mut cells = Vec::new();
    for (p, p_name) in P_CLASSES.iter().enumerate() {
        for (c, c_name) in C_CLASSES.iter().enumerate() {
            let (blocks, tokens) = analysis.class_sum(|f| f.p_class == p && f.c_class == c);
            if blocks > 0 {
                let mut cell = Map::new();
                cell.insert("p".into(), json!(p_name));
                cell.insert("c".into(), json!(c_name));
                cell.extend(analysis.class_row((blocks, tokens)));
                cells.push(Value::Object(cell));
            }
        }
    }
    object(vec![("cells", Value::Array(cells))])
}

/// M11: estimate over P-TDEF blocks / T; the absence note when there is none.
pub fn m11_tool_definition_share(analysis: &Analysis) -> Value {
    let (blocks, tokens) = analysis.class_sum(|f| f.p_class == P_TDEF);
    let mut out = vec![
        ("blocks", json!(blocks)),
        ("tokens", est(tokens)),
        ("share", share(tokens, analysis.total_estimate)),
    ];
    if blocks == 0 {
        out.push(("note", json!(NO_TOOL_DEFINITIONS)));
    }
    object(out)
}
