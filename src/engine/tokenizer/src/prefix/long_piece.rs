//! Healing: the merge result of one long letter or symbol piece, kept so that a probe cut inside
//! it re-merges only near the cut.
//!
//! When the cut falls inside one long piece (a 256 KiB word, base64 padding "AAAA…", a run of
//! emoji or "====="), the local tail is that whole piece prefix and re-merging it per probe would
//! be quadratic. For such pieces the analysis keeps the piece's merge result, and a probe "heals"
//! it: keep the piece's tokens that end at least a little before the cut, merge only the bytes from
//! there to the cut, and accept when the junction pair is valid (merging the two tokens' bytes
//! gives exactly that pair). A merge result is the unique token sequence whose adjacent pairs are
//! all valid, so an accepted heal is exact; otherwise it backs off further, and finally merges the
//! whole prefix. Pieces holding EF BB BF (gpt-tokenizer's irregular rank lookups) never heal.
//! In a piece that is one byte repeated (a run of "-" or "a"), a slice's merge depends on its
//! length alone, so each heal merge is made once per query and looked up after.

use super::run_bound::RunBound;
use crate::{bpe, cache, split, tables, IndexHash};
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};

/// Letter and symbol pieces longer than this keep their merge result for healing; tails longer than this
/// inside such a piece are healed instead of re-merged.
pub(super) const LONG_PIECE: usize = 1024;

/// Longest token of cl100k_base in bytes (a longer piece is never one token).
pub(super) const MAX_TOKEN_BYTES: usize = 128;

/// More bytes than a merged part straddling a cut can hold before it: a token's bytes, plus the
/// three of a leading EF BB BF that gpt-tokenizer's rank function strips.
pub(super) const STRADDLE: usize = MAX_TOKEN_BYTES + 3;

/// How far before the cut the first healing attempt keeps the piece's tokens (bytes).
const HEAL_MARGIN: usize = 16;

/// Merge result of one long piece: its ids and their cumulative end offsets, plus the junction
/// pairs already judged during this query (probes in one run meet the same pairs again and again).
///
/// The count pass keeps only the ids (what a count makes anyway); everything a probe needs beyond
/// them is worked out on a probe's first use, so a text that only needs its count (a pre-check
/// that fits) pays nothing for it.
pub(super) struct LongPiece {
    pub(super) run: split::Run,
    pub(super) ids: Vec<u32>,
    /// Cumulative end offsets of `ids` (on first use).
    ends: OnceCell<Vec<usize>>,
    judged_pairs: RefCell<BTreeMap<(u32, u32), bool>>,
    /// The longest token made only of bytes the piece holds (see [`LongPiece::longest_token`]).
    longest_token: OnceCell<usize>,
    /// When the piece after its first code point is one byte repeated, the longest walks of its
    /// tokens (see [`LongPiece::most_bytes`]). Found on first use.
    run_bound: OnceCell<Option<std::rc::Rc<RunBound>>>,
    /// For a piece that is one byte repeated ("-----", "aaaa"), where a slice's merge depends on
    /// its length alone: the merges the probes of this query made, keyed by length and the extra
    /// bytes after it (the probes of a run meet the same few hundred again and again). `None` for
    /// any other piece. Found on first use.
    run_merges: OnceCell<Option<RefCell<RunMerges>>>,
}

/// Merges of slices of a one-byte run followed by `extra`: slice length → (first id, number of
/// ids). A query's probes nearly always meet one `extra` (what the piece absorbs of the marker), so
/// another one replaces the memo rather than joining it, and no probe allocates a key.
#[derive(Default)]
struct RunMerges {
    extra: Vec<u8>,
    by_length: HashMap<usize, (u32, usize), IndexHash>,
}

impl LongPiece {
    /// The merge result of `piece` (over [`MAX_TOKEN_BYTES`] bytes, free of EF BB BF: no whole-piece
    /// lookup can answer it, so this is its merge) through the pair cache, as a count merges it:
    /// a run of "-" merges into tokens of up to 128 bytes, which the plain rank function hashes
    /// byte by byte at every pair (twice a count's time on a 256 KiB run).
    pub(super) fn new(piece: &[u8], run: split::Run, caches: &mut cache::Caches) -> LongPiece {
        debug_assert!(piece.len() > MAX_TOKEN_BYTES && !crate::scan::contains_bom(piece));
        let mut ids = Vec::new();
        bpe::merge_long_cached_free_of_bom(piece, &mut ids, caches);
        LongPiece {
            run,
            ids,
            ends: OnceCell::new(),
            judged_pairs: RefCell::default(),
            longest_token: OnceCell::new(),
            run_bound: OnceCell::new(),
            run_merges: OnceCell::new(),
        }
    }

    /// Cumulative end offsets of the ids.
    fn ends(&self) -> &[usize] {
        self.ends.get_or_init(|| {
            let mut end = 0;
            self.ids
                .iter()
                .map(|&id| {
                    end += tables::token_bytes(id).len();
                    end
                })
                .collect()
        })
    }

    /// The merge memo when `piece` (the piece this was built from) is one byte repeated.
    fn run_merges(&self, piece: &[u8]) -> Option<&RefCell<RunMerges>> {
        self.run_merges
            .get_or_init(|| crate::scan::is_one_byte_repeated(piece).then(RefCell::default))
            .as_ref()
    }

    /// The same merge result for the same bytes elsewhere (another text holding this piece), with
    /// this query's memos left behind.
    pub(super) fn reused(&self) -> LongPiece {
        LongPiece {
            run: self.run,
            ids: self.ids.clone(),
            ends: self.ends.clone(),
            judged_pairs: RefCell::default(),
            longest_token: self.longest_token.clone(),
            run_bound: self.run_bound.clone(),
            run_merges: match self.run_merges.get() {
                Some(merges) => OnceCell::from(merges.as_ref().map(|_| RefCell::default())),
                None => OnceCell::new(),
            },
        }
    }

    /// Length of the longest token whose bytes all occur in `piece` (the piece this was built
    /// from) after its first code point (a run's odd first character, the space of " aaaa…",
    /// would otherwise admit every token of its class). Found on first use: for a run of one
    /// byte by at most [`MAX_TOKEN_BYTES`] rank lookups ([`longest_run_token`]), else by one pass
    /// over the vocabulary.
    pub(super) fn longest_token(&self, piece: &[u8]) -> usize {
        *self.longest_token.get_or_init(|| {
            let mut set = [0u64; 4];
            for &b in &piece[split::char_len(piece[0])..] {
                set[usize::from(b) >> 6] |= 1 << (b & 63);
            }
            match set.iter().map(|w| w.count_ones()).sum::<u32>() {
                1 => {
                    let word = set.iter().position(|&w| w != 0).expect("one bit set");
                    longest_run_token((word * 64) as u8 + set[word].trailing_zeros() as u8)
                }
                _ => tables::longest_token_within(&set),
            }
        })
    }

    /// At least the bytes `tokens` tokens wholly inside `piece` after its first code point can
    /// cover: `tokens` times the longest token, or, where those bytes are one byte repeated, the
    /// longest walk of valid pairs ([`RunBound`]). The walks are worked out only where the
    /// piece's own merge averages under 7/8 of the longest token (a run of spaces merges into
    /// tokens as long as the longest: no walk bound is tighter there, and it costs a few hundred
    /// merges).
    pub(super) fn most_bytes(&self, piece: &[u8], tokens: usize) -> usize {
        let longest = self.longest_token(piece);
        let by_longest = tokens.saturating_mul(longest);
        let run = self.run_bound.get_or_init(|| {
            if self.ids.len().saturating_mul(longest) * 7 <= piece.len() * 8 {
                return None;
            }
            let rest = &piece[split::char_len(piece[0])..];
            let byte = *rest.first()?;
            crate::scan::is_one_byte_repeated(rest)
                .then(|| std::rc::Rc::new(RunBound::of(byte, MAX_TOKEN_BYTES)))
        });
        match run {
            Some(run) => run.most_bytes(tokens).min(by_longest),
            None => by_longest,
        }
    }

    fn is_valid_pair(&self, left: u32, right: u32) -> bool {
        *self
            .judged_pairs
            .borrow_mut()
            .entry((left, right))
            .or_insert_with(|| bpe::is_valid_pair(left, right))
    }

    /// Number of ids of the merge of `piece[..cut] + extra`, where `piece` is the piece this was
    /// built from.
    pub(super) fn prefix_count(&self, piece: &[u8], cut: usize, extra: &[u8]) -> usize {
        // (first id, number of ids) of the merge of `piece[from..cut] + extra`.
        let merged = |from: usize| {
            let merge = || {
                let mut bytes = Vec::with_capacity(cut - from + extra.len());
                bytes.extend_from_slice(&piece[from..cut]);
                bytes.extend_from_slice(extra);
                let mut ids = Vec::new();
                bpe::merge(&bytes, &mut ids);
                (ids[0], ids.len())
            };
            match self.run_merges(piece) {
                Some(merges) => {
                    let mut merges = merges.borrow_mut();
                    if merges.extra != extra {
                        merges.extra.clear();
                        merges.extra.extend_from_slice(extra);
                        merges.by_length.clear();
                    }
                    *merges.by_length.entry(cut - from).or_insert_with(merge)
                }
                None => merge(),
            }
        };
        let ends = self.ends();
        let mut margin = HEAL_MARGIN;
        while margin < cut {
            let kept = ends.partition_point(|&end| end <= cut - margin);
            if kept == 0 {
                break;
            }
            let (first, ids) = merged(ends[kept - 1]);
            if self.is_valid_pair(self.ids[kept - 1], first) {
                return kept + ids;
            }
            margin *= 4;
        }
        merged(0).1
    }
}

/// Length of the longest token made of `byte` alone: what [`tables::longest_token_within`] finds
/// for the set `{byte}` (the only tokens within it are `byte` repeated, none longer than
/// [`MAX_TOKEN_BYTES`], and `byte` alone is one), without its pass over the vocabulary, which
/// was half of an S-4 search inside a 256 KiB run of one letter.
pub(super) fn longest_run_token(byte: u8) -> usize {
    let run = [byte; MAX_TOKEN_BYTES];
    (2..=MAX_TOKEN_BYTES)
        .rev()
        .find(|&len| tables::rank_of(&run[..len]).is_some())
        .unwrap_or(1)
}
