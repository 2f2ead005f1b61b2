//! The measured record every metric reads: per-block facts plus per-message sums.

use super::typography::{est, share};
use crate::engine::composition::classify::{measure_block, BlockFacts, P_USER};
use crate::engine::composition::record::SessionRecord;
use serde_json::{json, Map, Value};

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
    let facts: Vec<BlockFacts> = record
        .blocks()
        .map(|(message, block)| measure_block(message, block))
        .collect();
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
                    message_first_p[m] = Some(f.p_class);
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
    let any_text = record.blocks().any(|(_, block)| block.text.is_some());
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

    /// (blocks, estimate) over the blocks the predicate picks.
    pub(super) fn class_sum(&self, pred: impl Fn(&BlockFacts) -> bool) -> (u64, u64) {
        self.facts
            .iter()
            .filter(|f| pred(f))
            .fold((0, 0), |(n, e), f| (n + 1, e + f.estimate))
    }

    /// `{blocks, tokens, share}` of one class.
    pub(super) fn class_row(&self, (blocks, tokens): (u64, u64)) -> Map<String, Value> {
        let mut row = Map::new();
        row.insert("blocks".into(), json!(blocks));
        row.insert("tokens".into(), est(tokens));
        row.insert("share".into(), share(tokens, self.total_estimate));
        row
    }
}
