//! The merge of a long piece free of EF BB BF as a search instead of a merge: a backtracking
//! encoder that takes the longest token at each position and keeps it only when it can stand next
//! to the token before it.
//!
//! Why it is exact: a merge result is the unique token sequence whose adjacent pairs are all valid
//! (`[l, r]` is valid when merging the bytes of `l` then `r` gives back exactly `[l, r]`; the
//! chunk heal of bpe.rs rests on the same fact). The search only ever holds sequences whose pairs
//! are all valid, so the tokens it holds when it stands at byte `p` are the merge result of
//! `piece[..p]`, one sequence per `p`. It tries the tokens at `p` longest first; when none ending
//! at a position not yet ruled out can follow the last token, `p` is ruled out (whatever path
//! reaches `p` again arrives with the same last token, so no later attempt there can succeed) and
//! the last token gives way to the next shorter one at its start. The search is exhaustive over
//! all-valid sequences and the piece's merge result is one, so it ends on it.
//!
//! Why it is faster: a merge costs a step per merge (about 1.6 per token on long pieces of small
//! alphabets, each a minimum search and two rank lookups); the search costs a few table probes per
//! token, and pair validity repeats so much that the pair-validity cache answers nearly all of it.
//!
//! The longest token at a position is found with [`PrefixLengths`]: for each hash bucket of a
//! token's first four bytes, the set of lengths of the tokens of at least four bytes there. It is
//! built from the vocabulary at run time, once per thread and only when a long piece is first met
//! (512 KiB; a stored copy would not fit the bundle): a probe reads one mask, then looks up only
//! the lengths it names, longest first.

use super::rank::{PairRank, NO_RANK};
use super::tables::{byte_rank, rank_of, token_bytes, token_count, two_byte_rank};
use std::sync::OnceLock;

/// Buckets of [`PrefixLengths`] (a power of two).
const BUCKETS: usize = 1 << 16;

/// Lengths from this one on share the top bit of a bucket's mask.
const LONG_LENGTH: usize = 63;

/// For each bucket of four leading bytes, bit `l` set when some token of `l` bytes (4 ≤ l < 63)
/// starts with bytes hashing there; bit 63 for tokens of 63 bytes or more. A superset is harmless:
/// every length named is checked against the rank table.
struct PrefixLengths {
    masks: Vec<u64>,
    /// Bytes of the longest token.
    longest: usize,
}

fn bucket(first_four: u32) -> usize {
    (first_four.wrapping_mul(0x9E37_79B1) >> (32 - BUCKETS.trailing_zeros())) as usize
}

fn first_four(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes[..4].try_into().expect("four bytes"))
}

impl PrefixLengths {
    fn build() -> PrefixLengths {
        let mut masks = vec![0u64; BUCKETS];
        let mut longest = 1;
        for rank in 0..token_count() as u32 {
            let bytes = token_bytes(rank);
            longest = longest.max(bytes.len());
            if bytes.len() >= 4 {
                masks[bucket(first_four(bytes))] |= 1 << bytes.len().min(LONG_LENGTH);
            }
        }
        PrefixLengths { masks, longest }
    }

    fn get() -> &'static PrefixLengths {
        static LENGTHS: OnceLock<PrefixLengths> = OnceLock::new();
        LENGTHS.get_or_init(PrefixLengths::build)
    }

    /// The longest token that `rest` starts with, shorter than `below` bytes: its id and length
    /// (`None` only when `below` ≤ 1 or `rest` is empty).
    #[inline]
    fn longest_at(&self, rest: &[u8], below: usize, probes: &mut usize) -> Option<(u32, usize)> {
        let most = rest.len().min(below.saturating_sub(1));
        if most >= 4 {
            let mut lengths = self.masks[bucket(first_four(rest))];
            if lengths >> LONG_LENGTH != 0 && most >= LONG_LENGTH {
                for len in (LONG_LENGTH..=most.min(self.longest)).rev() {
                    *probes += 1;
                    if let Some(rank) = rank_of(&rest[..len]) {
                        return Some((rank, len));
                    }
                }
            }
            // Lengths 4 ..= min(most, 62).
            lengths &= (2u64 << most.min(LONG_LENGTH - 1)) - 1;
            while lengths != 0 {
                let len = 63 - lengths.leading_zeros() as usize;
                *probes += 1;
                if let Some(rank) = rank_of(&rest[..len]) {
                    return Some((rank, len));
                }
                lengths &= !(1 << len);
            }
        }
        if most >= 3 {
            if let Some(rank) = rank_of(&rest[..3]) {
                return Some((rank, 3));
            }
        }
        if most >= 2 {
            let rank = two_byte_rank(rest[0], rest[1]);
            if rank != NO_RANK {
                return Some((rank, 2));
            }
        }
        (most >= 1).then(|| (byte_rank(rest[0]), 1))
    }
}

/// Whether the search is likely faster than the chunked merge on `piece`: when most of its bytes
/// are multi-byte code points (tokens of a few code points; measured 1.5-1.9x faster on runs of
/// CJK, Arabic and accented letters, 10-30x on runs of one multi-byte symbol such as `─` or `…`)
/// or nearly all of it is one ASCII letter repeated (a run the merge re-ranks at every level: 5-29x).
/// Not on mixed ASCII letters (0.35-0.9x: more lengths to probe, more distinct pairs to check), nor
/// on runs of ASCII punctuation or spaces, whose tokens of every length up to 64 bytes and more
/// make the longest token at a position rarely the one kept (256 KiB of `-`: 60x slower).
pub fn suits(piece: &[u8]) -> bool {
    let high = piece.iter().filter(|&&b| b >= 0x80).count();
    let letter_repeats = piece
        .windows(2)
        .filter(|pair| pair[0] == pair[1] && pair[0].is_ascii_alphabetic())
        .count();
    high * 2 > piece.len() || letter_repeats * 10 >= piece.len() * 9
}

/// Appends the merge result of `piece` (free of EF BB BF, where gpt-tokenizer's rank function is
/// irregular) to `out`, or returns false with `out` as it was when the search ends on one token
/// (the only sequence whose validity no pair check covers), finds none (which the fact above
/// rules out) or runs past its probe bound: the caller merges instead.
pub fn merge(piece: &[u8], out: &mut Vec<u32>, ranks: &mut impl PairRank) -> bool {
    let lengths = PrefixLengths::get();
    let (base, n) = (out.len(), piece.len());
    // Positions from which no continuation can follow the tokens that reach them.
    let mut ruled_out = vec![0u64; n / 64 + 1];
    let is_ruled_out = |ruled_out: &[u64], at: usize| ruled_out[at / 64] >> (at % 64) & 1 == 1;
    let (mut at, mut below) = (0, usize::MAX);
    // A bound on the search's table probes (ordinary runs take about one a byte): input on which
    // the longest token is rarely kept gives up early and is merged instead.
    let (mut probes, probe_limit) = (0, 4 * n + 256);
    while at < n {
        if probes > probe_limit {
            out.truncate(base);
            return false;
        }
        let last = (out.len() > base).then(|| out[out.len() - 1]);
        loop {
            match lengths.longest_at(&piece[at..], below, &mut probes) {
                Some((id, len)) => {
                    if !is_ruled_out(&ruled_out, at + len)
                        && last.is_none_or(|last| ranks.valid_pair(last, id))
                    {
                        out.push(id);
                        at += len;
                        below = usize::MAX;
                        break;
                    }
                    below = len;
                }
                None => {
                    // Nothing from `at` can follow `last`: give `last` back and try shorter.
                    // Position 0 is never ruled out (the piece's merge result starts there); were
                    // it, the caller's merge answers.
                    ruled_out[at / 64] |= 1 << (at % 64);
                    let Some(last) = out.pop().filter(|_| at > 0) else {
                        out.truncate(base);
                        return false;
                    };
                    below = token_bytes(last).len();
                    at -= below;
                    break;
                }
            }
        }
    }
    if out.len() - base == 1 {
        out.truncate(base);
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::{merge_heap_plain, Plain};

    #[test]
    fn the_search_finds_the_heap_merge() {
        // Runs of one byte, two letters, a protein's alphabet, all letters, CJK, Arabic, accented
        // letters, emoji, dashes, spaces and mixtures, at lengths around the 96-byte threshold and
        // well past it, through the plain ranks and through the caches (cold, then warm).
        let alphabets: [&[&str]; 12] = [
            &["a"],
            &["ab"],
            &["ACDEFGHIKLMNPQRSTVWY"],
            &["abcdefghijklmnopqrstuvwxyz"],
            &["中文字的"],
            &["ثتبا"],
            &["éüßñçö"],
            &["😀é"],
            &["-"],
            &[" "],
            &["ab", "-", " ", "=", "é", "中", "0"],
            &["a", "a", "a", "a", "a", "a", "a", "b"],
        ];
        let mut rng = context_meter_test_rng::Lcg(0xBAC4_7EAC);
        let mut caches = crate::cache::Caches::new();
        let (mut searched, mut suited, mut gave_up) = (0, 0, 0);
        for alphabet in alphabets {
            let units: Vec<char> = alphabet.iter().flat_map(|a| a.chars()).collect();
            for len in [5, 97, 300, 1200, 5000] {
                let piece: String = (0..len).map(|_| units[rng.below(units.len())]).collect();
                let piece = piece.as_bytes();
                let mut heap = Vec::new();
                merge_heap_plain(piece, &mut heap);
                let mut plain = vec![7];
                if merge(piece, &mut plain, &mut Plain) {
                    assert_eq!(plain[1..], heap, "{alphabet:?} {len}");
                    searched += 1;
                } else {
                    // One token, or the probe bound: `out` is left as it was.
                    assert_eq!(plain, [7], "{alphabet:?}");
                    gave_up += usize::from(heap.len() > 1);
                }
                suited += usize::from(suits(piece));
                for _ in 0..2 {
                    let mut ids = Vec::new();
                    crate::bpe::encode_piece_cached(piece, &mut ids, &mut caches);
                    assert_eq!(ids, heap, "{alphabet:?} {len}");
                }
            }
        }
        // Only runs of `-` and of spaces exceed the probe bound (not chosen for the search).
        assert!(searched >= 50 && gave_up <= 6, "{searched} {gave_up}");
        // Runs of one byte, and the multi-byte alphabets, are what the search is chosen for.
        assert!(suits("a".repeat(500).as_bytes()) && suits("中文字".repeat(50).as_bytes()));
        assert!(!suits("abcdefghijklmnopqrstuvwxyz".repeat(20).as_bytes()));
        assert!(!suits("-".repeat(500).as_bytes()) && !suits(" ".repeat(500).as_bytes()));
        assert!(suited > 20 && suited < 50, "{suited}");
    }
}
