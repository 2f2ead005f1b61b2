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
//! Three merge engines give identical results: a quadratic scan for short pieces (fast on the
//! small pieces ordinary text has), the block merge of block_merge.rs for windows of up to
//! [`WINDOW`] bytes, and a heap over a linked list for longer windows and pieces holding EF BB BF
//! (O(n log n)). A piece over [`SHORT_PIECE`] bytes free of EF BB BF is merged in chunks of at most
//! [`CHUNK`] bytes, each junction healed ([`merge_chunked`]): a merge result is the unique token
//! sequence whose adjacent pairs are all valid (the fact the S-4 heal rests on too), so the healed
//! concatenation is the piece's merge result, each chunk stays in L1 and one huge word costs about
//! as much per byte as a chunk. A long piece of mostly multi-byte code points, or one repeated
//! ASCII letter, is not merged but searched (backtrack.rs: the longest token at each position, kept when
//! its pair with the token before is valid), which the same fact makes exact.
//!
//! The `_cached` entry points put the caches of cache.rs in front of the tables: a piece of at most
//! 16 bytes is looked up whole first, and a merge of a piece free of EF BB BF ranks each pair of
//! adjacent parts by their two ids (a hit skips the joined bytes' hash and four table reads).

use super::backtrack;
use super::block_merge::{BlockMerge, WINDOW};
use super::cache::{Caches, PieceSlot, NO_PAIR, PIECE_IDS, PIECE_KEY};
use super::rank::{PairRank, NO_RANK};
use super::scan::{contains_bom, BOM};
use super::tables::{byte_rank, rank_of, token_bytes, two_byte_rank};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Pieces up to this many bytes use the quadratic scan, over fixed arrays on the stack.
const SHORT_PIECE: usize = 96;

/// Pieces up to this many bytes (nearly every piece that is not one token) scan over arrays a
/// quarter the size: a scan's arrays are initialised and returned whole, and at 96 bytes that
/// `memset` and `memcpy` cost more than merging a word of a few bytes.
const TINY_PIECE: usize = 24;

/// Chunk size of [`merge_chunked`] in bytes: a quarter of the block merge's window (12 KiB of its scratch stays
/// in L1). On a 256 KiB piece of random letters, merging 1 KiB chunks with a heap cost 45 ns a byte
/// against 125 ns for one heap over the whole piece.
const CHUNK: usize = 1024;

/// Bytes of merged tokens a junction heal first takes back before re-merging (then 4× more each
/// time the junction is still invalid).
const HEAL_MARGIN: usize = 16;

/// Caps what one junction can cost: a heal whose margin grows past this many bytes a side gives up,
/// and the whole piece is merged with one heap instead (the windows merged before that hold at
/// most about 2 × (16 + 64 + … + 4096) bytes).
const HEAL_LIMIT: usize = 4096;

/// gpt-tokenizer's rank of a merged part's bytes (see the module doc).
#[inline]
pub fn merge_rank(bytes: &[u8]) -> Option<u32> {
    if bytes.len() >= 3 && bytes[..3] == BOM && std::str::from_utf8(bytes).is_ok() {
        return rank_of(&bytes[3..]);
    }
    rank_of(bytes)
}

/// Straight from the tables, with gpt-tokenizer's rank function (any piece).
pub(crate) struct Plain;

impl PairRank for Plain {
    #[inline(always)]
    fn rank(&mut self, _: u32, _: u32, joined: &[u8]) -> u32 {
        merge_rank(joined).unwrap_or(NO_RANK)
    }

    fn valid_pair(&mut self, left: u32, right: u32) -> bool {
        valid_pair_with(left, right, self)
    }
}

/// Through the pair cache, keyed by the two ids: only for pieces free of EF BB BF, where every
/// part's bytes are its id's token bytes and [`merge_rank`] is [`rank_of`] (see cache.rs).
struct Cached<'c>(&'c mut Caches);

impl PairRank for Cached<'_> {
    #[inline(always)]
    fn rank(&mut self, a: u32, b: u32, joined: &[u8]) -> u32 {
        match self.0.pair(a, b, || rank_of(joined).unwrap_or(NO_RANK)) {
            NO_PAIR => NO_RANK,
            rank => rank,
        }
    }

    #[inline]
    fn valid_pair(&mut self, left: u32, right: u32) -> bool {
        if let Some(valid) = self.0.known_valid_pair(left, right) {
            return valid;
        }
        let valid = valid_pair_with(left, right, self);
        self.0.store_valid_pair(left, right, valid);
        valid
    }
}

/// Number of ids of `piece`; `scratch` serves long pieces only.
#[inline]
pub fn count_piece(piece: &[u8], scratch: &mut Vec<u32>) -> usize {
    if rank_of(piece).is_some() {
        1
    } else if piece.len() <= SHORT_PIECE {
        with_short_merge(piece, &mut Plain, <[u32]>::len)
    } else {
        scratch.clear();
        merge_long(piece, scratch);
        scratch.len()
    }
}

/// Appends the merge result of `piece` to `out` (no whole-piece lookup first).
pub fn merge(piece: &[u8], out: &mut Vec<u32>) {
    merge_with(piece, out, &mut Plain);
}

fn merge_with(piece: &[u8], out: &mut Vec<u32>, ranks: &mut impl PairRank) {
    if piece.len() <= SHORT_PIECE {
        with_short_merge(piece, ranks, |ids| out.extend_from_slice(ids));
    } else {
        merge_long_with(piece, out, ranks);
    }
}

/// Appends the ids of `piece` (a whole pre-tokenizer piece) to `out`, through `caches` (see
/// cache.rs).
#[inline]
pub fn encode_piece_cached(piece: &[u8], out: &mut Vec<u32>, caches: &mut Caches) {
    encode_piece_in(piece, |caches| caches.slot_of(piece), out, caches);
}

/// [`encode_piece_cached`] with the piece's cache slot (asked for only when the piece is looked
/// up: 3 ..= [`PIECE_KEY`] bytes).
#[inline(always)]
pub fn encode_piece_in(
    piece: &[u8],
    slot: impl FnOnce(&Caches) -> PieceSlot,
    out: &mut Vec<u32>,
    caches: &mut Caches,
) {
    // One or two bytes: a table read answers (no BOM fits in two bytes).
    if let [byte] = *piece {
        out.push(byte_rank(byte));
    } else if let [first, second] = *piece {
        match two_byte_rank(first, second) {
            NO_RANK => out.extend([byte_rank(first), byte_rank(second)]),
            rank => out.push(rank),
        }
    } else if piece.len() <= PIECE_KEY {
        let slot = slot(caches);
        if let Some(entry) = caches.piece_in(slot, piece.len()) {
            if entry.count() <= PIECE_IDS {
                entry.extend(out);
                return;
            }
        }
        let from = out.len();
        merge_uncached_piece(piece, out, caches);
        let count = out.len() - from;
        caches.store_piece_in(slot, piece.len(), count, &out[from..]);
    } else {
        merge_uncached_piece(piece, out, caches);
    }
}

/// Number of ids of `piece`, through `caches` (see cache.rs); `scratch` serves pieces not cached.
#[inline]
pub fn count_piece_cached(piece: &[u8], scratch: &mut Vec<u32>, caches: &mut Caches) -> usize {
    count_piece_in(piece, |caches| caches.slot_of(piece), scratch, caches)
}

/// [`count_piece_cached`] with the piece's cache slot (asked for only when the piece is looked
/// up: 3 ..= [`PIECE_KEY`] bytes).
#[inline(always)]
pub fn count_piece_in(
    piece: &[u8],
    slot: impl FnOnce(&Caches) -> PieceSlot,
    scratch: &mut Vec<u32>,
    caches: &mut Caches,
) -> usize {
    if let [first, second] = *piece {
        1 + usize::from(two_byte_rank(first, second) == NO_RANK)
    } else if piece.len() == 1 {
        1
    } else if piece.len() <= PIECE_KEY {
        let slot = slot(caches);
        if let Some(entry) = caches.piece_in(slot, piece.len()) {
            return entry.count();
        }
        scratch.clear();
        merge_uncached_piece(piece, scratch, caches);
        caches.store_piece_in(slot, piece.len(), scratch.len(), scratch);
        scratch.len()
    } else if rank_of(piece).is_some() {
        1
    } else {
        scratch.clear();
        merge_pairs_cached(piece, scratch, caches);
        scratch.len()
    }
}

/// The ids of a piece the piece cache did not answer: one lookup of the whole piece, else a merge.
#[inline(always)]
fn merge_uncached_piece(piece: &[u8], out: &mut Vec<u32>, caches: &mut Caches) {
    if let Some(rank) = rank_of(piece) {
        out.push(rank);
    } else {
        merge_pairs_cached(piece, out, caches);
    }
}

/// A merge whose pair lookups go through the pair cache when `piece` allows it.
#[inline(always)]
fn merge_pairs_cached(piece: &[u8], out: &mut Vec<u32>, caches: &mut Caches) {
    if contains_bom(piece) {
        merge_with(piece, out, &mut Plain);
    } else {
        merge_with(piece, out, &mut Cached(caches));
    }
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

/// Runs the quadratic merge of `piece` (at most [`SHORT_PIECE`] bytes) over the smaller arrays when
/// it is at most [`TINY_PIECE`] bytes, and hands `f` the ids.
#[inline(always)]
fn with_short_merge<R>(piece: &[u8], ranks: &mut impl PairRank, f: impl FnOnce(&[u32]) -> R) -> R {
    if piece.len() <= TINY_PIECE {
        let merged = ShortMerge::<TINY_PIECE, { TINY_PIECE + 1 }>::of(piece, ranks);
        f(&merged.ids[..merged.parts])
    } else {
        let merged = ShortMerge::<SHORT_PIECE, { SHORT_PIECE + 1 }>::of(piece, ranks);
        f(&merged.ids[..merged.parts])
    }
}

/// The quadratic merge of a piece of at most `N` bytes (`N` ≤ [`SHORT_PIECE`]; `S` = `N + 1`),
/// without heap allocation. A merged part's id is the rank that merged it (that rank is the
/// [`merge_rank`] of the part's bytes), so no lookup is repeated to emit the ids.
struct ShortMerge<const N: usize, const S: usize> {
    /// Number of parts left.
    parts: usize,
    /// `starts[i]`: first byte of part `i`; `starts[parts]` is the piece length.
    starts: [u8; S],
    /// `ids[i]`: token id of part `i`.
    ids: [u32; N],
    /// `pairs[i]`: rank of part `i` joined with part `i + 1`, `NO_RANK` when not a token.
    pairs: [u32; N],
}

impl<const N: usize, const S: usize> ShortMerge<N, S> {
    #[inline]
    fn of(piece: &[u8], ranks: &mut impl PairRank) -> Self {
        let n = piece.len();
        debug_assert!(n <= N && S == N + 1 && N <= SHORT_PIECE);
        let mut m = ShortMerge {
            parts: n,
            starts: [0; S],
            ids: [0; N],
            pairs: [NO_RANK; N],
        };
        for (i, &byte) in piece.iter().enumerate() {
            m.starts[i] = i as u8;
            m.ids[i] = byte_rank(byte);
        }
        m.starts[n] = n as u8;
        if n == 0 {
            return m;
        }
        for (i, pair) in piece.windows(2).enumerate() {
            // Two bytes never start with the three-byte BOM: the plain lookup is the rank.
            m.pairs[i] = two_byte_rank(pair[0], pair[1]);
        }
        loop {
            let live = m.parts;
            let mut best = NO_RANK;
            let mut at = 0;
            for (i, &rank) in m.pairs[..live - 1].iter().enumerate() {
                if rank < best {
                    best = rank;
                    at = i;
                }
            }
            if best == NO_RANK {
                return m;
            }
            // Part `at` absorbs part `at + 1`.
            m.ids[at] = best;
            // Element loops, not `copy_within`: a piece has a handful of parts, and a `memmove`
            // call per array per merge cost more than the moves themselves.
            for i in at + 1..live {
                m.starts[i] = m.starts[i + 1];
            }
            for i in at + 1..live - 1 {
                m.ids[i] = m.ids[i + 1];
                m.pairs[i] = m.pairs[i + 1];
            }
            m.parts = live - 1;
            let start = |i: usize| m.starts[i] as usize;
            m.pairs[at] = if at + 2 <= m.parts {
                ranks.rank(best, m.ids[at + 1], &piece[start(at)..start(at + 2)])
            } else {
                NO_RANK
            };
            if at > 0 {
                m.pairs[at - 1] =
                    ranks.rank(m.ids[at - 1], best, &piece[start(at - 1)..start(at + 1)]);
            }
        }
    }
}

/// One byte position of a long piece during the heap merge, describing the part that starts there
/// while it is alive. The four fields share a cache line: on a 256 KiB word the merge is bound by
/// memory accesses, and separate arrays cost one miss per field.
#[derive(Clone, Copy)]
struct Part {
    /// Start of the next part (the piece length after the last part).
    next: u32,
    /// Start of the previous part, [`NO_PART`] for the first.
    prev: u32,
    /// Rank of this part joined with the next one; `NO_RANK` when not a token, or this part is
    /// dead (absorbed by its left neighbour), or it is the last.
    rank: u32,
    /// Token id of this part (a merged part's id is the rank that merged it).
    id: u32,
}

const NO_PART: u32 = u32::MAX;

/// Merge of a piece longer than [`SHORT_PIECE`]: when it is free of EF BB BF (where the rank
/// function is irregular), searched (backtrack.rs) when [`backtrack::suits`] it, else chunked
/// ([`merge_chunked`]); one heap otherwise.
pub fn merge_long(piece: &[u8], out: &mut Vec<u32>) {
    merge_long_with(piece, out, &mut Plain);
}

fn merge_long_with(piece: &[u8], out: &mut Vec<u32>, ranks: &mut impl PairRank) {
    if contains_bom(piece) {
        merge_heap(piece, out, ranks);
    } else if !(backtrack::suits(piece) && backtrack::merge(piece, out, ranks)) {
        merge_chunked(piece, CHUNK, HEAL_LIMIT, out, ranks);
    }
}

/// [`merge_long`] through the pair cache for a piece the caller has already found longer than any
/// token (128 bytes) and free of EF BB BF (the prefix analysis's long pieces): the same ids as
/// [`encode_piece_cached`] appends, without its whole-piece rank lookup (no token is that long)
/// or its two scans for EF BB BF.
pub fn merge_long_cached_free_of_bom(piece: &[u8], out: &mut Vec<u32>, caches: &mut Caches) {
    debug_assert!(piece.len() > SHORT_PIECE && !contains_bom(piece));
    let ranks = &mut Cached(caches);
    if !(backtrack::suits(piece) && backtrack::merge(piece, out, ranks)) {
        merge_chunked(piece, CHUNK, HEAL_LIMIT, out, ranks);
    }
}

/// Merge of a window of a long piece: the scan when it is short, the block merge up to
/// [`WINDOW`] bytes, else one heap.
#[inline]
fn merge_window(
    window: &[u8],
    out: &mut Vec<u32>,
    ranks: &mut impl PairRank,
    blocks: &mut BlockMerge,
) {
    if window.len() <= SHORT_PIECE {
        with_short_merge(window, ranks, |ids| out.extend_from_slice(ids));
    } else if window.len() <= WINDOW {
        blocks.merge(window, out, ranks);
    } else {
        merge_heap(window, out, ranks);
    }
}

/// [`is_valid_pair`] with the merge's own rank source (for bytes free of EF BB BF) and no
/// allocation for joined tokens up to [`SHORT_PIECE`] bytes.
#[inline]
fn valid_pair_with(left: u32, right: u32, ranks: &mut impl PairRank) -> bool {
    let (a, b) = (token_bytes(left), token_bytes(right));
    let n = a.len() + b.len();
    if n > SHORT_PIECE {
        // The heap, not the backtracking search, which asks this very question.
        let mut ids = Vec::new();
        merge_heap(&[a, b].concat(), &mut ids, ranks);
        return ids == [left, right];
    }
    let mut joined = [0u8; SHORT_PIECE];
    joined[..a.len()].copy_from_slice(a);
    joined[a.len()..n].copy_from_slice(b);
    with_short_merge(&joined[..n], ranks, |ids| ids == [left, right])
}

/// Merges `piece` in chunks of `chunk` bytes and heals every junction. When the last token so far
/// and the chunk's first token are not a valid pair, tokens covering at least [`HEAL_MARGIN`] bytes
/// on each side of the junction (then 4×, 16×, …) are merged again as one middle window, until the
/// middle's two junctions are valid or nothing is left on a side. Every adjacent pair of the result
/// is then valid: inside a merged window because it is a merge result, at each junction because it
/// was checked. The one sequence with that property is the merge of the whole piece. A heal whose
/// margin grows past `heal_limit` bytes ([`HEAL_LIMIT`]) merges the whole piece with one heap.
fn merge_chunked(
    piece: &[u8],
    chunk: usize,
    heal_limit: usize,
    out: &mut Vec<u32>,
    ranks: &mut impl PairRank,
) {
    let base = out.len();
    let (mut window, mut middle) = (Vec::new(), Vec::new());
    let mut blocks = BlockMerge::new();
    let mut start = 0;
    while start < piece.len() {
        // Byte-level: a chunk may end inside a code point (no rank lookup here decodes UTF-8;
        // the irregular BOM lookups never reach this function).
        let mut end = (start + chunk).min(piece.len());
        // Cut at a code point boundary when the chunk holds one (fewer junctions inside a token).
        while end < piece.len() && end > start + 1 && piece[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        window.clear();
        merge_window(&piece[start..end], &mut window, ranks, &mut blocks);
        // The sequence is out[base..] (piece[..from]), middle (piece[from..to]), then
        // window[taken..] (piece[to..end]).
        let (mut from, mut to, mut taken) = (start, start, 0);
        middle.clear();
        let mut margin = HEAL_MARGIN;
        loop {
            // The window's merge is never empty, and once the middle takes tokens it holds some.
            let first = *middle
                .first()
                .or(window.get(taken))
                .expect("a token after the junction");
            let left_valid = out.len() == base || valid_pair_with(out[out.len() - 1], first, ranks);
            let right_valid = middle.is_empty()
                || taken == window.len()
                || valid_pair_with(middle[middle.len() - 1], window[taken], ranks);
            if left_valid && right_valid {
                out.extend_from_slice(&middle);
                out.extend_from_slice(&window[taken..]);
                break;
            }
            if margin > heal_limit {
                out.truncate(base);
                merge_heap(piece, out, ranks);
                return;
            }
            while out.len() > base && start - from < margin {
                let id = out.pop().expect("a token before the junction");
                from -= token_bytes(id).len();
            }
            while taken < window.len() && to - start < margin {
                to += token_bytes(window[taken]).len();
                taken += 1;
            }
            middle.clear();
            merge_window(&piece[from..to], &mut middle, ranks, &mut blocks);
            margin *= 4;
        }
        start = end;
    }
}

/// [`merge_heap`] straight from the tables (the reference the block merge's test compares with).
#[cfg(test)]
pub(crate) fn merge_heap_plain(piece: &[u8], out: &mut Vec<u32>) {
    merge_heap(piece, out, &mut Plain);
}

/// Heap merge: parts form a doubly linked list over their start offsets; the heap holds
/// `(rank, start)` of candidate pairs, stale entries (whose part is dead or re-ranked) skipped when
/// popped. Ties pop the smallest start first, i.e. the leftmost pair, as the quadratic scan chooses.
fn merge_heap(piece: &[u8], out: &mut Vec<u32>, ranks: &mut impl PairRank) {
    let n = piece.len();
    assert!(n < NO_PART as usize, "a piece is shorter than 4 GiB");
    let key = |rank: u32, start: usize| Reverse(((rank as u64) << 32) | start as u64);
    let mut parts: Vec<Part> = (0..n)
        .map(|i| Part {
            next: i as u32 + 1,
            prev: if i == 0 { NO_PART } else { i as u32 - 1 },
            rank: if i + 1 < n {
                two_byte_rank(piece[i], piece[i + 1])
            } else {
                NO_RANK
            },
            id: byte_rank(piece[i]),
        })
        .collect();
    let mut heap: BinaryHeap<Reverse<u64>> = parts
        .iter()
        .enumerate()
        .filter(|(_, part)| part.rank != NO_RANK)
        .map(|(i, part)| key(part.rank, i))
        .collect();
    while let Some(Reverse(popped)) = heap.pop() {
        let (rank, i) = ((popped >> 32) as u32, (popped & 0xFFFF_FFFF) as usize);
        if parts[i].rank != rank {
            continue;
        }
        // Part i absorbs its next part j (which exists: the pair has a rank).
        let j = parts[i].next as usize;
        let after = parts[j].next as usize;
        parts[j].rank = NO_RANK;
        parts[i].id = rank;
        parts[i].next = after as u32;
        parts[i].rank = if after < n {
            parts[after].prev = i as u32;
            let joined = &piece[i..parts[after].next as usize];
            ranks.rank(rank, parts[after].id, joined)
        } else {
            NO_RANK
        };
        if parts[i].rank != NO_RANK {
            heap.push(key(parts[i].rank, i));
        }
        if parts[i].prev != NO_PART {
            let p = parts[i].prev as usize;
            parts[p].rank = ranks.rank(parts[p].id, rank, &piece[p..after]);
            if parts[p].rank != NO_RANK {
                heap.push(key(parts[p].rank, p));
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(parts[i].id);
        i = parts[i].next as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(piece: &[u8]) -> (Vec<u32>, Vec<u32>) {
        assert!(piece.len() <= SHORT_PIECE);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        // The tiny or the short scan, as the length picks; the short one for every length too.
        merge(piece, &mut a);
        let short = ShortMerge::<SHORT_PIECE, { SHORT_PIECE + 1 }>::of(piece, &mut Plain);
        assert_eq!(a, short.ids[..short.parts]);
        merge_long(piece, &mut b);
        // Through the caches, cold then warm: the same ids and count.
        let mut caches = Caches::new();
        for _ in 0..2 {
            let mut cached = Vec::new();
            encode_piece_cached(piece, &mut cached, &mut caches);
            let count = count_piece_cached(piece, &mut Vec::new(), &mut caches);
            if rank_of(piece).is_none() {
                assert_eq!(cached, a, "{piece:?}");
            }
            assert_eq!(count, cached.len(), "{piece:?}");
        }
        (a, b)
    }

    #[test]
    fn heap_and_scan_merge_agree() {
        let mut rng = context_meter_test_rng::Lcg(0x1234_5678);
        let alphabet = "abcdefghijklmnopqrstuvwxyzéü中文ß ";
        let chars: Vec<char> = alphabet.chars().collect();
        for len in 1..=SHORT_PIECE {
            let mut s = String::new();
            while s.len() < len {
                s.push(chars[rng.below(chars.len())]);
            }
            while s.len() > SHORT_PIECE {
                s.pop();
            }
            let (a, b) = both(s.as_bytes());
            assert_eq!(a, b, "{s:?}");
            assert!(!a.is_empty());
        }
        let (a, b) = both("\u{FEFF}using namespace".as_bytes());
        assert_eq!(a, b);
        assert_eq!(both(b""), (vec![], vec![]));
        let mut scratch = Vec::new();
        assert_eq!(count_piece(b"", &mut scratch), 0);
    }

    #[test]
    fn chunked_merges_equal_one_heap_merge() {
        // Pieces over one byte, two bytes, letters, a protein's alphabet, CJK, emoji, dashes,
        // spaces and mixtures, in chunks small enough that most junctions fall inside a token.
        let alphabets: [&[&str]; 9] = [
            &["a"],
            &["a", "b"],
            &["ACDEFGHIKLMNPQRSTVWY"],
            &["abcdefghijklmnopqrstuvwxyz"],
            &["中", "文", "字", "的"],
            &["😀", "é", "x"],
            &["-"],
            &[" "],
            &["ab", "-", " ", "=", "é", "中", "0"],
        ];
        let mut rng = context_meter_test_rng::Lcg(0x9E37_79B9);
        let (mut cases, mut naive_wrong) = (0, 0);
        for alphabet in alphabets {
            let units: Vec<char> = alphabet.iter().flat_map(|a| a.chars()).collect();
            for len in [1, 2, 5, 40, 97, 300, 1200, 3000] {
                let piece: String = if units.len() == 1 {
                    units[0].to_string().repeat(len)
                } else {
                    (0..len).map(|_| units[rng.below(units.len())]).collect()
                };
                let piece = piece.as_bytes();
                let mut whole = Vec::new();
                merge_heap(piece, &mut whole, &mut Plain);
                for chunk in [1, 3, 8, 33, 100, 257] {
                    for heal_limit in [0, HEAL_LIMIT] {
                        // Whatever `out` held before stays as it was.
                        let mut chunked = vec![7, 7];
                        merge_chunked(piece, chunk, heal_limit, &mut chunked, &mut Plain);
                        assert_eq!(chunked[..2], [7, 7]);
                        assert_eq!(chunked[2..], whole, "{alphabet:?} {len} {chunk}");
                    }
                    // Without healing, the chunks' merges joined are often not the merge.
                    let naive: Vec<u32> = piece
                        .chunks(chunk)
                        .flat_map(|c| {
                            let mut ids = Vec::new();
                            merge_heap(c, &mut ids, &mut Plain);
                            ids
                        })
                        .collect();
                    cases += 1;
                    naive_wrong += usize::from(naive != whole);
                }
            }
        }
        assert!(naive_wrong * 2 > cases, "{naive_wrong} of {cases}");
    }

    #[test]
    fn bom_prefixed_tokens_are_never_produced() {
        for mut caches in [Caches::none(), Caches::new()] {
            let mut out = Vec::new();
            encode_piece_cached("\u{FEFF}".as_bytes(), &mut out, &mut caches);
            assert_eq!(out, [171, 3299]);
        }
    }
}
