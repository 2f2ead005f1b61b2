//! Byte-pair merging of one piece, with gpt-tokenizer's exact rank function and merge order.
//!
//! Merge order (as gpt-tokenizer and tiktoken): repeatedly merge the adjacent pair of parts whose
//! joined bytes have the lowest rank, the leftmost one among equals, until no pair has a rank.
//!
//! Rank function (gpt-tokenizer's `getBpeRankFromBytes`): bytes that are valid UTF-8 are decoded
//! with a default `TextDecoder`, which drops one leading U+FEFF, and the result is looked up among
//! the tokens stored as strings (which excludes the 8 tokens starting EF BB BF, stored as bytes);
//! invalid UTF-8 is looked up among the byte tokens. So [`merge_rank`] strips one leading EF BB BF
//! from valid UTF-8 before the lookup, and a part's emitted id is that same rank.
//!
//! Two merge engines give identical results: a quadratic scan for short pieces (fast on the small
//! pieces ordinary text has) and a heap over a linked list for long ones (O(n log n), so one huge
//! word costs about as much per byte as ordinary text).

use super::tables::{rank_of, token_bytes};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
const NO_RANK: u32 = u32::MAX;

/// Pieces up to this many bytes use the quadratic scan.
const SHORT_PIECE: usize = 96;

/// gpt-tokenizer's rank of a merged part's bytes (see the module doc).
#[inline]
pub fn merge_rank(bytes: &[u8]) -> Option<u32> {
    if bytes.len() >= 3 && bytes[..3] == BOM && std::str::from_utf8(bytes).is_ok() {
        return rank_of(&bytes[3..]);
    }
    rank_of(bytes)
}

#[inline]
fn pair_rank(piece: &[u8], start: usize, end: usize) -> u32 {
    merge_rank(&piece[start..end]).unwrap_or(NO_RANK)
}

/// Appends the ids of `piece` (a whole pre-tokenizer piece) to `out`.
#[inline]
pub fn encode_piece(piece: &[u8], out: &mut Vec<u32>) {
    if let Some(rank) = rank_of(piece) {
        out.push(rank);
    } else if piece.len() <= SHORT_PIECE {
        merge_short(piece, out);
    } else {
        merge_long(piece, out);
    }
}

/// Number of ids of `piece`.
#[inline]
pub fn count_piece(piece: &[u8], scratch: &mut Vec<u32>) -> usize {
    if rank_of(piece).is_some() {
        return 1;
    }
    scratch.clear();
    if piece.len() <= SHORT_PIECE {
        merge_short(piece, scratch);
    } else {
        merge_long(piece, scratch);
    }
    scratch.len()
}

/// Appends the merge result of `piece` to `out` (no whole-piece lookup first).
pub fn merge(piece: &[u8], out: &mut Vec<u32>) {
    if piece.len() <= SHORT_PIECE {
        merge_short(piece, out);
    } else {
        merge_long(piece, out);
    }
}

/// Whether `bytes` hold EF BB BF anywhere (where gpt-tokenizer's rank function is irregular).
pub fn contains_bom(bytes: &[u8]) -> bool {
    bytes.windows(3).any(|w| w == BOM)
}

/// Whether merging the bytes of tokens `left` and `right` yields exactly `[left, right]`: the
/// pair can stand next to each other in a merge result.
pub fn is_valid_pair(left: u32, right: u32) -> bool {
    let (a, b) = (token_bytes(left), token_bytes(right));
    let mut joined = Vec::with_capacity(a.len() + b.len());
    joined.extend_from_slice(a);
    joined.extend_from_slice(b);
    let mut out = Vec::with_capacity(2);
    merge(&joined, &mut out);
    out == [left, right]
}

fn emit(piece: &[u8], bounds: impl Iterator<Item = (usize, usize)>, out: &mut Vec<u32>) {
    for (start, end) in bounds {
        let rank = merge_rank(&piece[start..end]).expect("every part has a rank");
        out.push(rank);
    }
}

/// Quadratic merge: `parts[i] = (start of part i, rank of part i joined with part i+1)`.
pub fn merge_short(piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    let mut parts: Vec<(usize, u32)> = Vec::with_capacity(n + 1);
    for i in 0..n {
        let rank = if i + 2 <= n {
            pair_rank(piece, i, i + 2)
        } else {
            NO_RANK
        };
        parts.push((i, rank));
    }
    parts.push((n, NO_RANK));
    loop {
        let mut best = NO_RANK;
        let mut at = usize::MAX;
        for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < best {
                best = rank;
                at = i;
            }
        }
        if best == NO_RANK {
            break;
        }
        parts.remove(at + 1);
        let rank_after = |parts: &Vec<(usize, u32)>, i: usize| {
            if i + 2 < parts.len() {
                pair_rank(piece, parts[i].0, parts[i + 2].0)
            } else {
                NO_RANK
            }
        };
        parts[at].1 = rank_after(&parts, at);
        if at > 0 {
            parts[at - 1].1 = rank_after(&parts, at - 1);
        }
    }
    emit(piece, parts.windows(2).map(|w| (w[0].0, w[1].0)), out);
}

/// Heap merge: parts form a doubly linked list over their start offsets; the heap holds
/// `(rank, start)` of candidate pairs, stale entries skipped when popped. Ties pop the smallest
/// start first, i.e. the leftmost pair, as the quadratic scan chooses.
pub fn merge_long(piece: &[u8], out: &mut Vec<u32>) {
    let n = piece.len();
    // Part i starts at byte i while alive; next[i]/prev[i] link live parts; next of the last is n.
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    // Current rank of the pair (part i, its next part); NO_RANK when none.
    let mut rank: Vec<u32> = (0..n)
        .map(|i| {
            if i + 2 <= n {
                pair_rank(piece, i, i + 2)
            } else {
                NO_RANK
            }
        })
        .collect();
    let mut heap: BinaryHeap<Reverse<u64>> = rank
        .iter()
        .enumerate()
        .filter(|(_, &r)| r != NO_RANK)
        .map(|(i, &r)| Reverse(((r as u64) << 32) | i as u64))
        .collect();
    let end_of = |next: &Vec<usize>, i: usize| if i < n { next[i] } else { n };
    while let Some(Reverse(key)) = heap.pop() {
        let (r, i) = ((key >> 32) as u32, (key & 0xFFFF_FFFF) as usize);
        if !alive[i] || rank[i] != r {
            continue;
        }
        // Merge part i with its next part j.
        let j = next[i];
        alive[j] = false;
        next[i] = next[j];
        if next[i] < n {
            prev[next[i]] = i;
        }
        let after = end_of(&next, next[i]);
        rank[i] = if next[i] < n {
            pair_rank(piece, i, after)
        } else {
            NO_RANK
        };
        if rank[i] != NO_RANK {
            heap.push(Reverse(((rank[i] as u64) << 32) | i as u64));
        }
        let p = prev[i];
        if p != usize::MAX {
            rank[p] = pair_rank(piece, p, next[i]);
            if rank[p] != NO_RANK {
                heap.push(Reverse(((rank[p] as u64) << 32) | p as u64));
            }
        }
    }
    let mut bounds = Vec::new();
    let mut i = 0;
    while i < n {
        bounds.push((i, next[i]));
        i = next[i];
    }
    emit(piece, bounds.into_iter(), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(piece: &[u8]) -> (Vec<u32>, Vec<u32>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        merge_short(piece, &mut a);
        merge_long(piece, &mut b);
        (a, b)
    }

    #[test]
    fn heap_and_scan_merge_agree() {
        let mut seed = 0x1234_5678_u64;
        let alphabet = "abcdefghijklmnopqrstuvwxyzéü中文ß ";
        let chars: Vec<char> = alphabet.chars().collect();
        for len in 1..120 {
            let mut s = String::new();
            for _ in 0..len {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push(chars[(seed >> 33) as usize % chars.len()]);
            }
            let (a, b) = both(s.as_bytes());
            assert_eq!(a, b, "{s:?}");
            assert!(!a.is_empty());
        }
        let (a, b) = both("\u{FEFF}using namespace".as_bytes());
        assert_eq!(a, b);
    }

    #[test]
    fn bom_prefixed_tokens_are_never_produced() {
        let mut out = Vec::new();
        encode_piece("\u{FEFF}".as_bytes(), &mut out);
        assert_eq!(out, [171, 3299]);
    }
}
