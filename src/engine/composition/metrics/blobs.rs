//! M10 the embedded-blob census: base64 segments per alphabet and raw-export blocks.

use super::object;
use super::Analysis;
use crate::engine::composition::classify::Census;
use serde_json::{json, Value};

/// M10 figures of one census (a block's, or the record's sum), per alphabet and in total.
fn census_figures(census: &Census) -> Vec<(&'static str, Value)> {
    let (s, u) = (census.standard, census.url_safe);
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
        ("covered_characters", json!(census.covered_characters)),
    ]
}

/// M10: the record's census, each block with segments, and the raw-export blocks.
pub fn m10_blob_census(analysis: &Analysis) -> Value {
    let mut blocks = Vec::new();
    let mut total = Census::default();
    for (i, f) in analysis.facts.iter().enumerate() {
        let census = f.census;
        if census.segments() > 0 {
            for (sum, part) in [
                (&mut total.standard, census.standard),
                (&mut total.url_safe, census.url_safe),
            ] {
                sum.segments += part.segments;
                sum.characters += part.characters;
                sum.decoded_bytes += part.decoded_bytes;
            }
            total.covered_characters += census.covered_characters;
            let mut row = vec![("block_index", json!(i))];
            row.extend(census_figures(&census));
            blocks.push(object(row));
        }
    }
    let raw: Vec<usize> = (0..analysis.facts.len())
        .filter(|&i| analysis.facts[i].raw_export)
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
    object(out)
}
