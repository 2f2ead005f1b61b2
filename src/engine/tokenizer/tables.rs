//! Read-only views of the tables build.rs precomputed (see build.rs for their layout and pins):
//! cl100k_base token bytes by rank, the bytes → rank hash table, and V8's code-point classes.
//! Nothing here allocates or parses; every lookup reads static bytes.

use super::hash::piece_hash;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/cl100k_tables.rs"));
}

use generated::{
    BYTE_RANKS, CLASS_BLOCKS, CLASS_TABLE, EMPTY_SLOT, RANK_BITS, RANK_SLOTS, SLOT_BITS,
    TOKEN_BYTES, TOKEN_OFFSETS, TWO_BYTE_RANKS,
};
pub use generated::{CLASS_LETTER, CLASS_NEWLINE, CLASS_NUMBER, CLASS_OTHER, CLASS_SPACE};

const SLOT_MASK: usize = (1 << SLOT_BITS) - 1;
const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

#[inline(always)]
fn u32_at(bytes: &[u8], index: usize) -> u32 {
    let at = index * 4;
    // One bounds check and one load (the byte-by-byte form costs four of each in wasm).
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// Number of ordinary (mergeable) tokens in cl100k_base.
#[cfg(test)]
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
    let start = u32_at(TOKEN_OFFSETS, rank as usize) as usize;
    let end = u32_at(TOKEN_OFFSETS, rank as usize + 1) as usize;
    &TOKEN_BYTES[start..end]
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
    let h = piece_hash(bytes);
    let mut index = (h >> (64 - SLOT_BITS)) as usize;
    let fingerprint = ((h >> 8) as u32) & ((1 << (32 - RANK_BITS)) - 1);
    loop {
        let slot = u32_at(RANK_SLOTS, index);
        if slot == EMPTY_SLOT {
            return None;
        }
        if slot >> RANK_BITS == fingerprint {
            let rank = slot & RANK_MASK;
            if same_bytes(token_bytes(rank), bytes) {
                return Some(rank);
            }
        }
        index = (index + 1) & SLOT_MASK;
    }
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

/// The pre-tokenizer class of code point `cp` under V8's `\p{L}`, `\p{N}`, `\s` (CR and LF are
/// `CLASS_NEWLINE`, other `\s` members `CLASS_SPACE`).
#[inline(always)]
pub fn class_of(cp: u32) -> u8 {
    if cp < 0x80 {
        // Block 0 is row 0 of the table (build.rs asserts it): ASCII is one load.
        return CLASS_TABLE[cp as usize];
    }
    let block = (cp >> 8) as usize;
    let row = u16::from_le_bytes([CLASS_BLOCKS[block * 2], CLASS_BLOCKS[block * 2 + 1]]) as usize;
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
