//! Two small direct-mapped caches in front of the rank tables, kept per thread (per isolate in
//! workerd) and reused across calls.
//!
//! Why: the rank tables are about 1.1 MB of static bytes and a lookup of 3 or more bytes reads
//! four of their cache lines at random (pilot, entry, span, token bytes): on the 1 MiB mixed corpus
//! that was half of the native time. Real text repeats itself (184,246 pieces, 29,147 distinct), so
//! about 1 MiB of recent answers serves most lookups from one line: on a second pass over that
//! corpus 88% of the pieces of at most 16 bytes hit (75% with a quarter of the slots) and 89% of the
//! pair lookups.
//!
//! - The piece cache maps the bytes of a piece of at most [`PIECE_KEY`] bytes to its merge result
//!   (its token count, and its ids when there are at most [`PIECE_IDS`]).
//! - The pair cache maps two adjacent parts' ids `(a, b)` to the rank of their joined bytes (or "no
//!   token"). That rank is a function of the ids only where a part's bytes are its token's bytes:
//!   the merge reaches a part whose bytes are not its id's only through gpt-tokenizer's BOM quirk
//!   (a part starting EF BB BF gets the rank of the rest), so pieces holding EF BB BF never use it.
//! - The pair-validity cache maps two token ids `(a, b)` to whether merging their bytes gives back
//!   `[a, b]` (the long-piece search of backtrack.rs asks it once per token; same BOM rule).
//!
//! Exactness: an entry holds its whole key (all the piece's bytes and its length; both ids), so a
//! hit returns what the tables would; a stale entry is only ever overwritten. Determinism: results
//! never depend on what is cached, only the time does.

use std::cell::RefCell;

/// Longest piece the piece cache holds (bytes): the key is one `u128`.
pub const PIECE_KEY: usize = 16;

/// Most ids one piece entry holds; a piece with more is cached by its count only.
pub const PIECE_IDS: usize = 6;

/// Piece cache entries (a power of two; 32 bytes each: 1 MiB, allocated on the first count).
const PIECE_SLOTS: usize = 1 << 15;

/// Pair cache entries (a power of two; 8 bytes each: 64 KiB).
const PAIR_SLOTS: usize = 1 << 13;

/// Pair-validity cache entries (a power of two; 8 bytes each: 64 KiB).
const VALID_SLOTS: usize = 1 << 13;

/// The pair cache's answer for two parts whose joined bytes are no token.
pub const NO_PAIR: u32 = (1 << 18) - 1;

/// One piece's entry, decoded: its length and count and up to [`PIECE_IDS`] ids. Stored as four
/// u64 words: the key (two), then `len + 1` (0: empty slot), the count and the ids' low 16 bits
/// (three per word, from bit 16 of the third), and the ids' bit 16 (bits 48.. of the fourth).
#[derive(Clone, Copy)]
pub struct PieceEntry {
    meta: u64,
    more: u64,
}

impl PieceEntry {
    /// The piece's count, and its ids when the entry holds them (`count <= PIECE_IDS`).
    #[inline(always)]
    pub fn count(&self) -> usize {
        (self.meta >> 8 & 0xFF) as usize
    }

    /// Appends the entry's ids to `out` (only for `count() <= PIECE_IDS`).
    #[inline(always)]
    pub fn extend(&self, out: &mut Vec<u32>) {
        let lows = [self.meta >> 16, self.meta >> 32, self.meta >> 48];
        let lows = lows
            .into_iter()
            .chain([self.more, self.more >> 16, self.more >> 32]);
        for (i, low) in lows.take(self.count()).enumerate() {
            let high = (self.more >> (48 + i) & 1) as u32;
            out.push((low & 0xFFFF) as u32 | high << 16);
        }
    }
}

/// The bytes of `piece` (at most [`PIECE_KEY`]) as a zero-padded little-endian `u128`.
/// Built from two overlapping loads (no `memcpy` call): the second load's bytes that the first
/// already holds are shifted out.
#[inline(always)]
pub fn piece_key(piece: &[u8]) -> u128 {
    let n = piece.len();
    debug_assert!(n <= PIECE_KEY);
    let word8 = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().expect("8"));
    let word4 = |at: usize| u32::from_le_bytes(piece[at..at + 4].try_into().expect("4"));
    if n >= 8 {
        // Bytes 8..n are the top n - 8 bytes of the word at n - 8.
        let high = word8(n - 8).checked_shr(8 * (16 - n as u32)).unwrap_or(0);
        u128::from(word8(0)) | u128::from(high) << 64
    } else if n >= 4 {
        let high = word4(n - 4).checked_shr(8 * (8 - n as u32)).unwrap_or(0);
        u128::from(word4(0)) | u128::from(high) << 32
    } else {
        piece
            .iter()
            .rev()
            .fold(0u128, |key, &b| key << 8 | u128::from(b))
    }
}

/// A piece's key ([`piece_key`]) and the index of its slot's first word in the piece cache.
#[derive(Clone, Copy, Default)]
pub struct PieceSlot {
    key: u128,
    at: usize,
}

pub struct Caches {
    /// Four words per slot from `piece_base` on (see [`PieceEntry`]). Allocated zeroed (the
    /// allocator hands out fresh zero pages without writing them, so the first count pays for no
    /// megabyte of stores), with room to start the slots on a 32-byte boundary: none straddles
    /// two cache lines.
    pieces: Vec<u64>,
    piece_base: usize,
    pairs: Vec<u64>,
    /// `(key << 1 | valid)` per slot, key as the pair cache's (0: empty).
    valid_pairs: Vec<u64>,
}

thread_local! {
    static CACHES: RefCell<Option<Caches>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's caches (allocated on first use), or with empty ones that cache
/// nothing when they are already in use further up the stack.
pub fn with<T>(f: impl FnOnce(&mut Caches) -> T) -> T {
    CACHES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => f(slot.get_or_insert_with(Caches::new)),
        Err(_) => f(&mut Caches::none()),
    })
}

impl Caches {
    pub fn new() -> Caches {
        let pieces = vec![0u64; PIECE_SLOTS * 4 + 3];
        let piece_base = pieces.as_ptr().align_offset(32).min(3);
        Caches {
            pieces,
            piece_base,
            pairs: vec![0; PAIR_SLOTS],
            valid_pairs: vec![0; VALID_SLOTS],
        }
    }

    /// Caches that hold nothing (every lookup misses, every store is dropped).
    pub fn none() -> Caches {
        Caches {
            pieces: Vec::new(),
            piece_base: 0,
            pairs: Vec::new(),
            valid_pairs: Vec::new(),
        }
    }

    #[inline(always)]
    fn piece_slot(key: u128, len: usize) -> usize {
        let mixed = (key as u64 ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ ((key >> 64) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        (mixed >> (64 - PIECE_SLOTS.trailing_zeros())) as usize
    }

    /// Where the piece cache keeps `piece` (of 3 ..= [`PIECE_KEY`] bytes): its key and slot,
    /// computed once per piece for its prefetch, lookup and store.
    #[inline(always)]
    pub fn slot_of(&self, piece: &[u8]) -> PieceSlot {
        let key = piece_key(piece);
        PieceSlot {
            key,
            at: self.piece_base + Self::piece_slot(key, piece.len()) * 4,
        }
    }

    /// The cached merge result of the piece of `len` bytes whose [`piece_key`] is `key`.
    #[cfg(test)]
    pub fn piece(&self, key: u128, len: usize) -> Option<PieceEntry> {
        let at = self.piece_base + Self::piece_slot(key, len) * 4;
        self.piece_in(PieceSlot { key, at }, len)
    }

    /// [`Caches::piece`] at a slot [`Caches::slot_of`] gave for a piece of `len` bytes.
    #[inline(always)]
    pub fn piece_in(&self, slot: PieceSlot, len: usize) -> Option<PieceEntry> {
        let words = self.pieces.get(slot.at..slot.at + 4)?;
        let found = u128::from(words[0]) | u128::from(words[1]) << 64;
        (found == slot.key && (words[2] & 0xFF) as usize == len + 1).then_some(PieceEntry {
            meta: words[2],
            more: words[3],
        })
    }

    /// Asks the memory system for the piece cache's slot of `piece` (a hint only: nothing is
    /// read), so that its lookup a few pieces later finds the line in L1 instead of waiting for
    /// it, and returns that slot. Pieces of up to two bytes and over [`PIECE_KEY`] bytes never
    /// look the cache up (their slot is a placeholder).
    #[inline(always)]
    pub fn prefetch_piece(&self, piece: &[u8]) -> PieceSlot {
        if !(3..=PIECE_KEY).contains(&piece.len()) {
            return PieceSlot::default();
        }
        let slot = self.slot_of(piece);
        #[cfg(target_arch = "x86_64")]
        if let Some(word) = self.pieces.get(slot.at) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch is a hint that never faults, here for an address inside
            // `pieces`; SSE is part of the x86_64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((word as *const u64).cast::<i8>()) };
        }
        slot
    }

    /// Records the merge result `ids` (or only its count, when longer than [`PIECE_IDS`]).
    #[cfg(test)]
    pub fn store_piece(&mut self, key: u128, len: usize, count: usize, ids: &[u32]) {
        let at = self.piece_base + Self::piece_slot(key, len) * 4;
        self.store_piece_in(PieceSlot { key, at }, len, count, ids);
    }

    /// Records the merge result `ids` (or only its count, when longer than [`PIECE_IDS`]) at a
    /// slot [`Caches::slot_of`] gave for a piece of `len` bytes.
    #[inline]
    pub fn store_piece_in(&mut self, slot: PieceSlot, len: usize, count: usize, ids: &[u32]) {
        if self.pieces.is_empty() || count > 0xFF {
            return;
        }
        let mut meta = (len as u64 + 1) | (count as u64) << 8;
        let mut more = 0;
        if count <= PIECE_IDS {
            debug_assert_eq!(ids.len(), count);
            for (i, &id) in ids.iter().enumerate() {
                let low = u64::from(id & 0xFFFF);
                if i < 3 {
                    meta |= low << (16 + 16 * i);
                } else {
                    more |= low << (16 * (i - 3));
                }
                more |= u64::from(id >> 16 & 1) << (48 + i);
            }
        }
        let (key, at) = (slot.key, slot.at);
        self.pieces[at..at + 4].copy_from_slice(&[key as u64, (key >> 64) as u64, meta, more]);
    }

    /// The rank of the joined bytes of tokens `a` then `b` ([`NO_PAIR`] when no token), computing
    /// it with `rank` on a miss.
    #[inline(always)]
    pub fn pair(&mut self, a: u32, b: u32, rank: impl FnOnce() -> u32) -> u32 {
        let key = pair_key(a, b);
        match self.pairs.get_mut(pair_slot(key, PAIR_SLOTS)) {
            Some(entry) if *entry >> 18 == key => (*entry & u64::from(NO_PAIR)) as u32,
            Some(entry) => {
                let value = rank().min(NO_PAIR);
                *entry = key << 18 | u64::from(value);
                value
            }
            None => rank().min(NO_PAIR),
        }
    }
}

impl Caches {
    /// Whether tokens `a` then `b` are a valid pair (see backtrack.rs), when this cache knows.
    #[inline(always)]
    pub fn known_valid_pair(&self, a: u32, b: u32) -> Option<bool> {
        let key = pair_key(a, b);
        let entry = *self.valid_pairs.get(pair_slot(key, VALID_SLOTS))?;
        (entry >> 1 == key).then_some(entry & 1 == 1)
    }

    /// Records whether tokens `a` then `b` are a valid pair.
    #[inline(always)]
    pub fn store_valid_pair(&mut self, a: u32, b: u32, valid: bool) {
        let key = pair_key(a, b);
        if let Some(entry) = self.valid_pairs.get_mut(pair_slot(key, VALID_SLOTS)) {
            *entry = key << 1 | u64::from(valid);
        }
    }
}

/// The key of tokens `a` then `b` in the pair and pair-validity caches. Ids are at most 17 bits:
/// the key fits 34, and `key + 1` is never the empty entry 0.
#[inline(always)]
fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 17 | u64::from(b)) + 1
}

/// The slot of pair key `key` in a cache of `slots` entries (a power of two), by Fibonacci hashing.
#[inline(always)]
fn pair_slot(key: u64, slots: usize) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - slots.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_key_is_the_zero_padded_bytes() {
        let text: Vec<u8> = (0..40u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for len in 0..=PIECE_KEY {
            for start in 0..8 {
                let piece = &text[start..start + len];
                let mut padded = [0u8; PIECE_KEY];
                padded[..len].copy_from_slice(piece);
                assert_eq!(piece_key(piece), u128::from_le_bytes(padded), "{len}");
            }
        }
    }

    #[test]
    fn a_piece_entry_is_found_only_under_its_whole_key() {
        let mut caches = Caches::new();
        let ids = [100_255, 1, 65_536, 7, 65_535, 131_071];
        caches.store_piece(piece_key(b"abc"), 3, ids.len(), &ids);
        let entry = caches.piece(piece_key(b"abc"), 3).expect("stored");
        let mut out = Vec::new();
        entry.extend(&mut out);
        assert_eq!((entry.count(), out.as_slice()), (6, &ids[..]));
        // Same padded bytes, other length ("abc" vs "abc\0"), and other bytes: misses.
        assert!(caches.piece(piece_key(b"abc\0"), 4).is_none());
        assert!(caches.piece(piece_key(b"abd"), 3).is_none());
        // Counts past PIECE_IDS are kept without ids.
        caches.store_piece(piece_key(b"xyz"), 3, 9, &[]);
        assert_eq!(
            caches.piece(piece_key(b"xyz"), 3).map(|e| e.count()),
            Some(9)
        );
        // Empty caches store nothing.
        let mut none = Caches::none();
        none.store_piece(piece_key(b"abc"), 3, 1, &[5]);
        assert!(none.piece(piece_key(b"abc"), 3).is_none());
    }

    #[test]
    fn a_pair_is_computed_once_and_keyed_by_both_ids() {
        let mut caches = Caches::new();
        let mut calls = 0;
        let mut ask = |caches: &mut Caches, a, b, value| {
            caches.pair(a, b, || {
                calls += 1;
                value
            })
        };
        assert_eq!(ask(&mut caches, 3, 4, 99), 99);
        assert_eq!(ask(&mut caches, 3, 4, 0), 99);
        assert_eq!(ask(&mut caches, 4, 3, u32::MAX), NO_PAIR);
        assert_eq!(ask(&mut caches, 4, 3, 0), NO_PAIR);
        assert_eq!(calls, 2);
    }
}
