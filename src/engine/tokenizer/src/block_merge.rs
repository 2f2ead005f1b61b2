//! The merge of a window of up to [`WINDOW`] bytes (a chunk of a long piece, see
//! `bpe::merge_chunked`) without a heap: the same merge order as the heap merge, the lowest rank
//! first and the leftmost among equals, found by a three-level minimum.
//!
//! Each live part's pair with its next part has one key, `rank << 12 | start` (`u32::MAX` when the
//! two bytes joined are no token, or the part is dead), so the smallest key is the pair to merge and
//! names where it is. Keys sit in blocks of [`BLOCK`] positions, blocks in groups of [`GROUP`],
//! each block's and group's minimum kept beside them: finding the next merge reads the 16 group
//! minima, and a merge rescans the few blocks and groups whose minimum it raised. All of it is straight-line compares the compiler turns into
//! conditional moves. A binary heap over the same pairs mispredicted a branch at most levels of
//! every pop, and spent more time there than in the rank lookups.

use super::rank::{PairRank, NO_RANK};
use super::tables::{byte_rank, two_byte_rank};

/// Most bytes one window holds (a position fits the key's low 12 bits).
pub const WINDOW: usize = 4096;

/// Positions per block, and blocks per group (powers of two).
const BLOCK: usize = 16;
const GROUP: usize = 16;

const BLOCKS: usize = WINDOW / BLOCK;
const GROUPS: usize = BLOCKS / GROUP;

const NO_KEY: u32 = u32::MAX;

/// Bits of a key that hold the start position.
const POSITION_BITS: u32 = 12;

const _: () = assert!(WINDOW == 1 << POSITION_BITS && BLOCKS % GROUP == 0 && GROUPS == 16);

/// The key of the pair at `start` ranked `rank` (`NO_RANK`: no pair).
#[inline(always)]
fn key(rank: u32, start: usize) -> u32 {
    if rank == NO_RANK {
        NO_KEY
    } else {
        debug_assert!(rank < 1 << (32 - POSITION_BITS));
        rank << POSITION_BITS | start as u32
    }
}

/// Smallest of 16 keys (a fixed size: unrolled into conditional moves).
#[inline(always)]
fn min_of(keys: &[u32]) -> u32 {
    let keys: &[u32; 16] = keys.try_into().expect("sixteen keys");
    keys.iter().fold(NO_KEY, |least, &k| least.min(k))
}

/// Scratch of one window merge: parts as a doubly linked list over their start offsets. Only the
/// first window's worth of each array is initialised and read.
pub struct BlockMerge {
    keys: Vec<u32>,
    /// Minimum key of each block of [`BLOCK`] keys, and of each group of [`GROUP`] blocks.
    block_min: Vec<u32>,
    group_min: [u32; GROUPS],
    ids: Vec<u32>,
    /// `next[i]`: start of the part after the part at `i` (the window length after the last).
    next: Vec<u16>,
    /// `prev[i]`: start of the part before the part at `i` (`u16::MAX` for the first).
    prev: Vec<u16>,
}

impl BlockMerge {
    pub fn new() -> BlockMerge {
        BlockMerge {
            keys: vec![NO_KEY; WINDOW],
            block_min: vec![NO_KEY; BLOCKS],
            group_min: [NO_KEY; GROUPS],
            ids: vec![0; WINDOW],
            next: vec![0; WINDOW],
            prev: vec![0; WINDOW],
        }
    }

    #[inline(always)]
    fn rescan_block(&mut self, block: usize) -> u32 {
        let from = block * BLOCK;
        let least = min_of(&self.keys[from..from + BLOCK]);
        self.block_min[block] = least;
        least
    }

    #[inline(always)]
    fn rescan_group(&mut self, group: usize) {
        let from = group * GROUP;
        self.group_min[group] = min_of(&self.block_min[from..from + GROUP]);
    }

    /// Sets the key at `start` and keeps its block's and group's minima right.
    #[inline(always)]
    fn set_key(&mut self, start: usize, new: u32) {
        let old = self.keys[start];
        self.keys[start] = new;
        let (block, group) = (start / BLOCK, start / BLOCK / GROUP);
        if new < self.block_min[block] {
            self.block_min[block] = new;
            self.group_min[group] = self.group_min[group].min(new);
        } else if old == self.block_min[block] && new != old {
            // The block's minimum rose: so may its group's.
            self.rescan_block(block);
            if old == self.group_min[group] {
                self.rescan_group(group);
            }
        }
    }

    /// Appends the merge result of `window` (1 ..= [`WINDOW`] bytes) to `out`.
    pub fn merge(&mut self, window: &[u8], out: &mut Vec<u32>, ranks: &mut impl PairRank) {
        let n = window.len();
        assert!(n <= WINDOW, "a window holds at most {WINDOW} bytes");
        if n == 0 {
            return;
        }
        let blocks = n.div_ceil(BLOCK);
        let groups = blocks.div_ceil(GROUP);
        for (i, &byte) in window.iter().enumerate() {
            self.ids[i] = byte_rank(byte);
            self.next[i] = i as u16 + 1;
            self.prev[i] = (i as u16).wrapping_sub(1);
        }
        for (i, pair) in window.windows(2).enumerate() {
            self.keys[i] = key(two_byte_rank(pair[0], pair[1]), i);
        }
        // The last part has no pair, nor have the positions past the window in its last block,
        // nor the blocks past it in its last group.
        self.keys[n - 1..blocks * BLOCK].fill(NO_KEY);
        self.block_min[blocks..groups * GROUP].fill(NO_KEY);
        self.group_min = [NO_KEY; GROUPS];
        for block in 0..blocks {
            self.rescan_block(block);
        }
        for group in 0..groups {
            self.rescan_group(group);
        }
        loop {
            let least = min_of(&self.group_min);
            if least == NO_KEY {
                break;
            }
            let (rank, i) = (
                least >> POSITION_BITS,
                (least & (WINDOW as u32 - 1)) as usize,
            );
            // Part i absorbs its next part j (which exists: the pair has a rank).
            let j = self.next[i] as usize;
            let after = self.next[j] as usize;
            self.ids[i] = rank;
            self.next[i] = after as u16;
            self.set_key(j, NO_KEY);
            let right = if after < n {
                self.prev[after] = i as u16;
                let end = self.next[after] as usize;
                ranks.rank(rank, self.ids[after], &window[i..end])
            } else {
                NO_RANK
            };
            self.set_key(i, key(right, i));
            let p = self.prev[i];
            if p != u16::MAX {
                let p = p as usize;
                let left = ranks.rank(self.ids[p], rank, &window[p..after]);
                self.set_key(p, key(left, p));
            }
        }
        let mut i = 0;
        while i < n {
            out.push(self.ids[i]);
            i = self.next[i] as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::merge_long;

    #[test]
    fn block_merges_equal_heap_merges() {
        // Windows up to the full 1,024 bytes: letters, a two-letter alphabet, one repeated byte
        // (equal ranks everywhere: the leftmost must win), CJK and accented letters.
        let alphabets: [&[&str]; 6] = [
            &["abcdefghijklmnopqrstuvwxyz"],
            &["ab"],
            &["a"],
            &["中文字的"],
            &["éüßñç"],
            &["ab", "-", " ", "=", "é", "中", "0", "\n"],
        ];
        let mut rng = context_meter_test_rng::Lcg(0x0B10_C4ED);
        let mut blocks = BlockMerge::new();
        for alphabet in alphabets {
            let units: Vec<char> = alphabet.iter().flat_map(|a| a.chars()).collect();
            for len in [1, 2, 31, 32, 33, 97, 500, 1000, 1024] {
                let mut piece: Vec<u8> = Vec::new();
                while piece.len() < len {
                    let mut buf = [0; 4];
                    let unit = units[rng.below(units.len())].encode_utf8(&mut buf);
                    piece.extend_from_slice(unit.as_bytes());
                }
                piece.truncate(len);
                let mut heap = Vec::new();
                crate::bpe::merge_heap_plain(&piece, &mut heap);
                let mut block = vec![9];
                blocks.merge(&piece, &mut block, &mut crate::bpe::Plain);
                assert_eq!(block[0], 9, "what `out` held stays");
                assert_eq!(block[1..], heap, "{alphabet:?} {len}");
                let mut long = Vec::new();
                merge_long(&piece, &mut long);
                assert_eq!(long, heap, "{alphabet:?} {len}");
            }
        }
    }
}
