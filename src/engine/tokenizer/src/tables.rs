//! Read-only views of the tables build.rs precomputed (see build.rs for their layout and pins):
//! cl100k_base token bytes by rank, the bytes → rank perfect hash, and V8's code-point classes.
//! Nothing here allocates or parses; every lookup reads static bytes.

use piece_hash::{bucket_of, fingerprint, piece_hash, slot_of};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/cl100k_hashed_tables.rs"));
}

use generated::{
    BUCKETS, BYTE_RANKS, CLASS_BLOCKS, CLASS_TABLE, EMPTY_ENTRY, EMPTY_SLOT, ENTRY_BITS, PILOTS,
    RANK_BITS, RANK_ENTRIES, SLOTS, SPAN_BLOCK, TOKEN_BYTES, TOKEN_SPANS, TWO_BYTE_RANKS,
};
pub use generated::{CLASS_LETTER, CLASS_NEWLINE, CLASS_NUMBER, CLASS_OTHER, CLASS_SPACE};

const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

#[inline(always)]
fn u32_at(bytes: &[u8], index: usize) -> u32 {
    let at = index * 4;
    // One bounds check and one load (the byte-by-byte form costs four of each in wasm).
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// Number of ordinary (mergeable) tokens in cl100k_base.
pub fn token_count() -> usize {
    generated::TOKEN_COUNT
}

/// Length in bytes of the longest token all of whose bytes are in `set` (bit `b % 64` of word
/// `b / 64` stands for byte `b`); 1 when only single bytes qualify (every byte is a token).
/// One pass over the vocabulary (about 650 KB of token bytes): callers cache it.
pub fn longest_token_within(set: &[u64; 4]) -> usize {
    let within = |b: &u8| set[usize::from(*b) >> 6] >> (b & 63) & 1 == 1;
    (0..generated::TOKEN_COUNT as u32)
        .map(token_bytes)
        .fold(1, |longest, token| {
            if token.len() > longest && token.iter().all(within) {
                token.len()
            } else {
                longest
            }
        })
}

/// The bytes of token `rank` (`rank < token_count()`).
#[inline]
pub fn token_bytes(rank: u32) -> &'static [u8] {
    let (start, len) = token_span(rank);
    &TOKEN_BYTES[start..start + len]
}

/// Offset in `TOKEN_BYTES` and length of token `rank`, from the 16 bytes of its block (a u32 base,
/// then 12 lengths): the base plus the lengths before it, summed as bytes of two words (SWAR).
#[inline(always)]
fn token_span(rank: u32) -> (usize, usize) {
    const _: () = assert!(SPAN_BLOCK == 12);
    let (block, within) = (rank as usize / SPAN_BLOCK, rank as usize % SPAN_BLOCK);
    let at = block * 16;
    let span = &TOKEN_SPANS[at..at + 16];
    let base = u32::from_le_bytes(span[..4].try_into().expect("four bytes"));
    let low = u64::from_le_bytes(span[4..12].try_into().expect("eight bytes"));
    let high = u64::from(u32::from_le_bytes(
        span[12..].try_into().expect("four bytes"),
    ));
    // The first `within` lengths (at most 11): all of `low` from 8 on, then some of `high`.
    let low = if within >= 8 {
        low
    } else {
        low & ((1 << (within * 8)) - 1)
    };
    let high = high & ((1 << (within.saturating_sub(8) * 8)) - 1);
    // Bytes to 16-bit lanes (each at most 2 × 128 + 2 × 128), then the lanes' sum in the top lane.
    const BYTES: u64 = 0x00FF_00FF_00FF_00FF;
    let lanes = (low & BYTES) + (low >> 8 & BYTES) + (high & BYTES) + (high >> 8 & BYTES);
    let before = (lanes.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
    (base as usize + before, span[4 + within] as usize)
}

/// The rank of the one-byte token `byte` (every byte is a token).
#[inline(always)]
pub fn byte_rank(byte: u8) -> u32 {
    u32_at(BYTE_RANKS, byte as usize)
}

/// The rank of the two-byte token `first second`, `u32::MAX` when those bytes are not a token.
#[inline(always)]
pub fn two_byte_rank(first: u8, second: u8) -> u32 {
    const _: () = assert!(EMPTY_SLOT == u32::MAX);
    u32_at(TWO_BYTE_RANKS, (first as usize) << 8 | second as usize)
}

/// The rank of the token whose bytes are exactly `bytes`, excluding the 8 tokens that start with
/// EF BB BF (gpt-tokenizer's lookups can never reach them).
#[inline]
pub fn rank_of(bytes: &[u8]) -> Option<u32> {
    match bytes.len() {
        1 => return Some(byte_rank(bytes[0])),
        2 => {
            let rank = two_byte_rank(bytes[0], bytes[1]);
            return (rank != EMPTY_SLOT).then_some(rank);
        }
        _ => {}
    }
    let hash = piece_hash(bytes);
    let pilot = PILOTS[bucket_of(hash, BUCKETS)];
    let entry = rank_entry(slot_of(hash, pilot, SLOTS));
    let rank = entry & RANK_MASK;
    // A spare slot, or another token's (the bytes are not a token, or the BOM-prefixed tokens):
    // the fingerprint rules out most of those before the token's span and bytes are read.
    if entry >> RANK_BITS != fingerprint(hash, ENTRY_BITS - RANK_BITS) || rank == EMPTY_ENTRY {
        return None;
    }
    let (start, len) = token_span(rank);
    (len == bytes.len() && same_bytes(&TOKEN_BYTES[start..start + len], bytes)).then_some(rank)
}

/// The entry of slot `slot` of the perfect hash, `fingerprint << RANK_BITS | rank` (`ENTRY_BITS`
/// bits at bit `slot * ENTRY_BITS`; the table is padded so the four-byte load never runs off its
/// end).
#[inline(always)]
fn rank_entry(slot: usize) -> u32 {
    const _: () = assert!(ENTRY_BITS <= 25);
    let bit = slot * ENTRY_BITS as usize;
    (u32_at_byte(RANK_ENTRIES, bit / 8) >> (bit % 8)) & ((1 << ENTRY_BITS) - 1)
}

#[inline(always)]
fn u32_at_byte(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// `a == b` for the short slices tokens are, with a few word compares instead of a `memcmp` call
/// (in wasm32 `memcmp` is a byte loop in another function). Equal lengths make the overlapping
/// first/last words cover every byte exactly.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word4 = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("4"));
    let word8 = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8"));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        9..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

/// Whether every code point of the 256-code-point block `block` (`cp >> 8`, `cp < 0x10000`) is a
/// letter, read from the block's row index alone (CJK ideographs, most of Hangul).
#[inline(always)]
pub fn block_is_letters(block: usize) -> bool {
    block_row(block) == generated::CLASS_LETTER_ROW
}

/// The class table's row that the 256-code-point block `block` (`cp >> 8`) points to.
#[inline(always)]
fn block_row(block: usize) -> u16 {
    u16::from_le_bytes([CLASS_BLOCKS[block * 2], CLASS_BLOCKS[block * 2 + 1]])
}

/// The pre-tokenizer class of code point `cp` under V8's `\p{L}`, `\p{N}`, `\s` (CR and LF are
/// `CLASS_NEWLINE`, other `\s` members `CLASS_SPACE`).
#[inline(always)]
pub fn class_of(cp: u32) -> u8 {
    if cp < 0x80 {
        // Block 0 is row 0 of the table (build.rs asserts it): ASCII is one load.
        return CLASS_TABLE[cp as usize];
    }
    let row = usize::from(block_row((cp >> 8) as usize));
    CLASS_TABLE[row * 256 + (cp & 0xFF) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_but_the_bom_ones_is_found_at_its_rank() {
        let mut bom_tokens = 0;
        for rank in 0..token_count() as u32 {
            let bytes = token_bytes(rank);
            if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
                bom_tokens += 1;
                assert_eq!(rank_of(bytes), None);
            } else {
                assert_eq!(rank_of(bytes), Some(rank));
            }
        }
        assert_eq!(bom_tokens, 8);
        for byte in 0..=255u8 {
            assert_eq!(token_bytes(byte_rank(byte)), [byte]);
        }
        assert_eq!(token_count(), 100_256);
    }

    #[test]
    fn bytes_that_are_no_token_are_not_found() {
        // The perfect hash sends every byte string to some slot: only the fingerprint and the
        // byte check keep a non-token from being read as that slot's token. Probe with strings
        // near tokens (two tokens joined, a token with one byte changed or one byte more or
        // less) and random bytes, against the set of all token bytes.
        let tokens: std::collections::HashMap<&[u8], u32> = (0..token_count() as u32)
            .filter(|&rank| !token_bytes(rank).starts_with(&[0xEF, 0xBB, 0xBF]))
            .map(|rank| (token_bytes(rank), rank))
            .collect();
        assert_eq!(tokens.len(), token_count() - 8, "token bytes are distinct");
        let mut rng = context_meter_test_rng::Lcg(0x5EED_0031);
        let (mut probes, mut found) = (0, 0);
        for _ in 0..200_000 {
            let a = token_bytes(rng.below(token_count()) as u32);
            let b = token_bytes(rng.below(token_count()) as u32);
            let mut probe: Vec<u8> = match rng.below(5) {
                0 => [a, b].concat(),
                1 => a[..a.len() - 1].to_vec(),
                2 => [a, &b[..1]].concat(),
                3 => (0..3 + rng.below(12))
                    .map(|_| rng.below(256) as u8)
                    .collect(),
                _ => a.to_vec(),
            };
            if probe.is_empty() {
                continue;
            }
            if rng.below(5) == 4 {
                let at = rng.below(probe.len());
                probe[at] ^= 1 << rng.below(8);
            }
            let expected = tokens.get(probe.as_slice()).copied();
            assert_eq!(rank_of(&probe), expected, "{probe:?}");
            probes += 1;
            found += usize::from(expected.is_some());
        }
        assert!(
            found > probes / 10 && found < probes / 2,
            "{found} of {probes}"
        );
    }

    #[test]
    fn same_bytes_is_slice_equality() {
        let text = b"abcdefghijklmnopqrstuvwxyz0123456789";
        for len in 0..=20 {
            for start in 0..8 {
                let a = &text[start..start + len];
                assert!(same_bytes(a, a));
                for flip in 0..len {
                    let mut b = a.to_vec();
                    b[flip] ^= 0x20;
                    assert!(!same_bytes(a, &b), "{len} {flip}");
                }
                assert!(!same_bytes(a, &text[start..start + len + 1]));
            }
        }
    }

    #[test]
    fn classes_follow_javascript() {
        assert_eq!(class_of('a' as u32), CLASS_LETTER);
        assert_eq!(class_of('7' as u32), CLASS_NUMBER);
        assert_eq!(class_of('\n' as u32), CLASS_NEWLINE);
        assert_eq!(class_of('\r' as u32), CLASS_NEWLINE);
        assert_eq!(class_of(' ' as u32), CLASS_SPACE);
        assert_eq!(class_of(0xFEFF), CLASS_SPACE); // JS \s includes U+FEFF
        assert_eq!(class_of(0x85), CLASS_OTHER); // JS \s excludes U+0085
        assert_eq!(class_of('.' as u32), CLASS_OTHER);
        assert_eq!(class_of(0x4E2D), CLASS_LETTER); // 中
        assert_eq!(class_of(0x0663), CLASS_NUMBER); // Arabic-Indic three
        assert_eq!(class_of(0x10FFFF), CLASS_OTHER);
    }
}
