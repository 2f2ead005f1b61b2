//! Metric register M01–M15 over an analysed record, each rendered as a JSON object holding
//! indices, classes, counts and sizes only. Every EM-1-derived figure is a string in estimate
//! typography (see `typography`); counts are JSON numbers.

mod analysis;
mod blobs;
mod counts;
mod duplication;
mod shares;
mod sizes;
mod stated;
mod typography;

pub use analysis::{analyse, Analysis};
pub use blobs::m10_blob_census;
pub use counts::{m01_counts, m02_size_totals, m13_unknown_census};
pub use duplication::{m08_exact_duplicates, m09_near_duplicates};
pub use shares::{
    m03_axis_p_shares, m04_axis_c_shares, m05_cross_tabulation, m11_tool_definition_share,
};
pub use sizes::{m06_message_sizes, m07_turn_growth, m14_positions, m15_largest_block};
pub use stated::{m12_stated_agreement, Stated};
pub use typography::{est, share};

use serde_json::Value;

pub const NOT_IDENTIFIABLE: &str = "not identifiable at this level";
pub const NO_TOOL_DEFINITIONS: &str = "no tool definitions present in the submitted record";
pub const NO_CMPT_AT_LEVEL: &str = "no P-CMPT block identified at this level";
pub const MECHANICAL_FACT: &str = "MECHANICAL FACT";
pub const FLEET_CONVENTION: &str = "LABELLED CONVENTION (fleet convention)";
/// M09 pair listings longer than this print the counts only.
pub const PAIR_LISTING_LIMIT: u64 = 1000;

/// A JSON object with its members in the order given.
fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}
