//! The drop receipt: one entry per application with whole-payload counts before and after, the
//! budget op's result, and the reconciliation self-check every result passes before it leaves.

use crate::jsjson::char_count;
use crate::ops::Op;

/// One receipt entry: whole-payload counts immediately before and after one application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptEntry {
    pub op: Op,
    pub path: String,
    /// S-1 only: the removed entry's index at removal.
    pub index: Option<usize>,
    pub chars_before: u64,
    pub chars_after: u64,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

impl ReceiptEntry {
    pub fn delta_tokens(&self) -> i64 {
        self.tokens_before as i64 - self.tokens_after as i64
    }
    pub fn delta_chars(&self) -> i64 {
        self.chars_before as i64 - self.chars_after as i64
    }
}

/// Why a payload could not be brought within budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exhaustion {
    /// Outermost keep-protected fields present after S-1..S-3.
    pub protected_fields: u64,
    /// Sum over those fields' `"key":value` spans, each counted alone.
    pub protected_tokens: u64,
    pub protected_chars: u64,
    /// The shortest prefix S-4 may keep (end of the last protected span), and its count.
    pub floor_chars: u64,
    pub floor_tokens: u64,
}

/// The result of the budget op before it is rendered.
#[derive(Debug, Clone)]
pub struct Shaping {
    pub submitted_tokens: u64,
    pub submitted_chars: u64,
    pub shaped_text: String,
    pub shaped_tokens: u64,
    pub shaped_chars: u64,
    pub receipt: Vec<ReceiptEntry>,
    pub exhaustion: Option<Exhaustion>,
}

impl Shaping {
    /// Applications per operation, in S-1..S-4 order.
    pub fn applications(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for entry in &self.receipt {
            counts[entry.op as usize] += 1;
        }
        counts
    }
}

/// The reconciliation self-check failed: the engine must not deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreconciled;

/// The receipt's deltas must telescope to submitted − shaped, for tokens and for characters, and
/// the shaped figures must be the shaped text's own counts. (Token figures reaching this check are
/// full counts: the submitted count, the windowed chain already checked against a full count of the
/// post-S-3 text, and S-4's full count of its joined output.)
pub fn reconcile(shaping: &Shaping) -> Result<(), Unreconciled> {
    let mut tokens = shaping.submitted_tokens;
    let mut chars = shaping.submitted_chars;
    for entry in &shaping.receipt {
        if entry.tokens_before != tokens || entry.chars_before != chars {
            return Err(Unreconciled);
        }
        tokens = entry.tokens_after;
        chars = entry.chars_after;
    }
    let delta_tokens: i64 = shaping.receipt.iter().map(ReceiptEntry::delta_tokens).sum();
    let delta_chars: i64 = shaping.receipt.iter().map(ReceiptEntry::delta_chars).sum();
    let full_chars = char_count(&shaping.shaped_text) as u64;
    let reconciles = tokens == shaping.shaped_tokens
        && chars == shaping.shaped_chars
        && full_chars == shaping.shaped_chars
        && delta_tokens == shaping.submitted_tokens as i64 - shaping.shaped_tokens as i64
        && delta_chars == shaping.submitted_chars as i64 - shaping.shaped_chars as i64;
    if reconciles {
        Ok(())
    } else {
        Err(Unreconciled)
    }
}
