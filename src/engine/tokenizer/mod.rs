//! cl100k_base token counts, exact to gpt-tokenizer (encode with no special tokens allowed:
//! special-token spellings are ordinary text).
//!
//! API contract used by every family (stable; internals may change):
//! - [`encode`] returns the token ids; [`count`] their number.
//! - [`largest_fitting_prefix`] finds the true maximum code-point boundary for S-4.
//!
//! This first cut delegates to tiktoken-rs's `CoreBPE::encode_ordinary`; the JS-compatible split and
//! the fast path replace it behind the same functions.

use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("embedded cl100k_base table parses"))
}

/// Token ids of `text` under cl100k_base, special-token spellings encoded as ordinary text.
pub fn encode(text: &str) -> Vec<u32> {
    bpe().encode_ordinary(text)
}

/// Number of tokens of `text` under cl100k_base.
pub fn count(text: &str) -> usize {
    encode(text).len()
}

/// The largest code-point boundary `L` with `floor <= L <= max` such that
/// `count(text[..L] + suffix(L)) <= budget`, or `None` when no such `L` exists.
/// Counts are not monotone over prefixes, so this is the true maximum, not a bisection.
pub fn largest_fitting_prefix<F>(
    text: &str,
    floor: usize,
    max: usize,
    budget: usize,
    mut suffix: F,
) -> Option<usize>
where
    F: FnMut(usize) -> String,
{
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let max = max.min(boundaries.len() - 1);
    if floor > max {
        return None;
    }
    (floor..=max).rev().find(|&l| {
        let mut probe = String::with_capacity(boundaries[l] + 64);
        probe.push_str(&text[..boundaries[l]]);
        probe.push_str(&suffix(l));
        count(&probe) <= budget
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_not_monotone_over_prefixes() {
        assert_eq!(count("The quic"), 3);
        assert_eq!(count("The quick"), 2);
    }

    #[test]
    fn special_token_spellings_are_ordinary_text() {
        assert!(count("<|endoftext|>") > 1);
    }

    #[test]
    fn prefix_search_finds_the_true_maximum() {
        // "The quick" (9 chars) fits 2 tokens although "The quic" does not.
        let l = largest_fitting_prefix("The quick brown", 0, 14, 2, |_| String::new());
        assert_eq!(l, Some(9));
    }
}
