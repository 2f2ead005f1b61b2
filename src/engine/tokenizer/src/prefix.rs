//! S-4 prefix search and joined counts without re-tokenizing whole texts.
//!
//! The pre-tokenizer is local: the piece starting at `s` depends only on the bytes up to its
//! lookahead (see [`split::piece_lookahead`]). So for a probe `text[..B] + suffix`, every piece of
//! `text` whose lookahead ends at or before `B` is also a piece of the probe, with the same ids.
//! [`Analysis`] tokenizes `text` once and knows, for each piece boundary, the tokens before it and
//! the furthest lookahead of the pieces before it (recorded every 4 KiB while counting, and for
//! every piece of a segment when a probe first lands in it); a probe then re-tokenizes only from
//! the last boundary that is safe for `B` ("the local tail") plus the suffix.
//!
//! One case needs more: when the cut falls inside one long letter or symbol piece (a 256 KiB
//! word, base64 padding "AAAA…", a run of emoji or "====="), the local tail is that whole piece prefix and re-merging it per probe would
//! be quadratic. For such pieces the analysis keeps the piece's merge result, and a probe "heals"
//! it: keep the piece's tokens that end at least a little before the cut, merge only the bytes from
//! there to the cut, and accept when the junction pair is valid (merging the two tokens' bytes
//! gives exactly that pair). A merge result is the unique token sequence whose adjacent pairs are
//! all valid, so an accepted heal is exact; otherwise it backs off further, and finally merges the
//! whole prefix. Pieces holding EF BB BF (gpt-tokenizer's irregular rank lookups) never heal.
//! In a piece that is one byte repeated (a run of "-" or "a"), a slice's merge depends on its
//! length alone, so each heal merge is made once per query and looked up after.
//!
//! The search is exact: candidates are measured from the largest down, and a candidate is skipped
//! only when a true lower bound on its count exceeds the budget: the tokens before its safe
//! boundary (the tail adds tokens, never removes them), or, after a few hundred failed probes
//! inside one long piece, a bound from the longest token the piece's bytes can form (every token
//! wholly inside the cut prefix is at most that long; see `Analysis::long_piece_jump`). The jump
//! makes a 256 KiB run of one letter cost one tokenization instead of 250 000 probes.

use super::{bpe, cache, count, split};
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};

/// Letter and symbol pieces longer than this keep their merge result for healing; tails longer than this
/// inside such a piece are healed instead of re-merged.
const LONG_PIECE: usize = 1024;

/// Longest token of cl100k_base in bytes (a longer piece is never one token).
const MAX_TOKEN_BYTES: usize = 128;

/// More bytes than a merged part straddling a cut can hold before it: a token's bytes, plus the
/// three of a leading EF BB BF that gpt-tokenizer's rank function strips.
const STRADDLE: usize = MAX_TOKEN_BYTES + 3;

/// Failed probes in a row after which the search asks [`Analysis::long_piece_jump`] whether it
/// can jump (a long piece's first bound costs one pass over the vocabulary, a few hundred
/// probes' worth; ordinary searches end long before).
const PROBES_BEFORE_A_JUMP: usize = 256;

/// How far before the cut the first healing attempt keeps the piece's tokens (bytes).
const HEAL_MARGIN: usize = 16;

/// Merge result of one long piece: its ids and their cumulative end offsets, plus the junction
/// pairs already judged during this query (probes in one run meet the same pairs again and again).
struct LongPiece {
    run: split::Run,
    ids: Vec<u32>,
    ends: Vec<usize>,
    judged_pairs: RefCell<BTreeMap<(u32, u32), bool>>,
    /// The longest token made only of bytes the piece holds (see [`LongPiece::longest_token`]).
    longest_token: OnceCell<usize>,
    /// For a piece that is one byte repeated ("-----", "aaaa"), where a slice's merge depends on
    /// its length alone: the merges the probes of this query made, keyed by length and the extra
    /// bytes after it (the probes of a run meet the same few hundred again and again). `None` for
    /// any other piece.
    run_merges: Option<RefCell<RunMerges>>,
}

/// Merges of slices of a one-byte run: (slice length, extra bytes) → (first id, number of ids).
type RunMerges = HashMap<(usize, Vec<u8>), (u32, usize)>;

impl LongPiece {
    fn new(piece: &[u8], run: split::Run) -> LongPiece {
        let mut ids = Vec::new();
        bpe::merge(piece, &mut ids);
        let mut end = 0;
        let ends = ids
            .iter()
            .map(|&id| {
                end += super::tables::token_bytes(id).len();
                end
            })
            .collect();
        LongPiece {
            run,
            ids,
            ends,
            judged_pairs: RefCell::default(),
            longest_token: OnceCell::new(),
            run_merges: piece.iter().all(|&b| b == piece[0]).then(RefCell::default),
        }
    }

    /// Length of the longest token whose bytes all occur in `piece` (the piece this was built
    /// from) after its first code point (a run's odd first character, the space of " aaaa…",
    /// would otherwise admit every token of its class). Found on first use.
    fn longest_token(&self, piece: &[u8]) -> usize {
        *self.longest_token.get_or_init(|| {
            let mut set = [0u64; 4];
            for &b in &piece[split::char_len(piece[0])..] {
                set[usize::from(b) >> 6] |= 1 << (b & 63);
            }
            super::tables::longest_token_within(&set)
        })
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
    fn prefix_count(&self, piece: &[u8], cut: usize, extra: &[u8]) -> usize {
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
            match &self.run_merges {
                Some(merges) => *merges
                    .borrow_mut()
                    .entry((cut - from, extra.to_vec()))
                    .or_insert_with(merge),
                None => merge(),
            }
        };
        let mut margin = HEAL_MARGIN;
        while margin < cut {
            let kept = self.ends.partition_point(|&end| end <= cut - margin);
            if kept == 0 {
                break;
            }
            let (first, ids) = merged(self.ends[kept - 1]);
            if self.is_valid_pair(self.ids[kept - 1], first) {
                return kept + ids;
            }
            margin *= 4;
        }
        merged(0).1
    }
}

/// One piece boundary: where the piece starts, the tokens of the pieces before it, and the
/// furthest lookahead of the pieces before it (0 for the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Boundary {
    start: usize,
    tokens_before: usize,
    lookahead_before: usize,
}

/// The furthest lookahead of the pieces before the piece starting at `start`, given the start
/// of the piece before it (`previous_start == start` at the first piece: nothing before).
///
/// It is the lookahead of that previous piece alone. Any earlier piece `i` either looks at most
/// one code point past its end, which lies inside the piece after it, so not past `start`; or it
/// starts with whitespace and looks one code point past its whitespace run: a run that ends at or
/// before `start` looks no further than the previous piece does (which looks one code point past
/// `start`), and a run that reaches past `start` covers the previous piece's first code point too,
/// so the previous piece starts with whitespace in the same run and looks exactly as far.
fn lookahead_before(bytes: &[u8], previous_start: usize, start: usize) -> usize {
    if previous_start == start {
        0
    } else {
        split::piece_lookahead(bytes, previous_start, start)
    }
}

/// Bytes between checkpoints: the count pass records one boundary per segment, and a probe splits
/// and counts again only the segment it lands in (a long piece reuses its kept merge).
const SEGMENT: usize = 4096;

/// A boundary by segment and position inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct At {
    segment: usize,
    index: usize,
}

/// The count of a text, with what a prefix search needs to re-tokenize only locally. The count
/// pass records a checkpoint (a boundary) at the first piece start at or after every [`SEGMENT`]
/// bytes, so it costs what a plain count costs; a segment's every boundary is recorded on first
/// use by splitting it again from its checkpoint (the pre-tokenizer has no look-behind, so a split
/// restarted at a piece start yields the same pieces, and every piece's count is known: long
/// pieces keep their merge result, the others are re-counted only in that segment).
struct Analysis<'t> {
    text: &'t str,
    /// Segment starts, then the end of the text (`checkpoints[s]` is boundary 0 of segment s; the
    /// last one is the end boundary, alone in its segment).
    checkpoints: Vec<Boundary>,
    /// Every boundary of segment s (from its checkpoint up to, not including, the next), on first
    /// use.
    segments: Vec<OnceCell<Vec<Boundary>>>,
    /// Byte offsets of every CR and LF in the text, ascending (found on first use).
    newlines: OnceCell<Vec<usize>>,
    /// Merge results of the long pieces, by ascending piece start.
    long_pieces: Vec<(usize, LongPiece)>,
}

impl<'t> Analysis<'t> {
    fn with_segment(text: &'t str, segment: usize) -> Analysis<'t> {
        let bytes = text.as_bytes();
        let mut checkpoints = Vec::with_capacity(text.len() / segment + 2);
        let (mut tokens, mut next_checkpoint) = (0, 0);
        let mut scratch = Vec::new();
        let mut long_pieces = Vec::new();
        // The furthest lookahead of the pieces before piece j is the lookahead of piece j - 1
        // alone ([`lookahead_before`]), so the count pass measures it only at checkpoints.
        let mut previous_start = 0;
        cache::with(|caches| {
            for piece in split::pieces(text) {
                if piece.start >= next_checkpoint {
                    checkpoints.push(Boundary {
                        start: piece.start,
                        tokens_before: tokens,
                        lookahead_before: lookahead_before(bytes, previous_start, piece.start),
                    });
                    next_checkpoint = piece.start.saturating_add(segment);
                }
                previous_start = piece.start;
                let piece = &bytes[piece];
                let run = (piece.len() > LONG_PIECE && !bpe::contains_bom(piece))
                    .then(|| split::run_kind(piece))
                    .flatten();
                if let Some(run) = run {
                    let long = LongPiece::new(piece, run);
                    tokens += long.ids.len();
                    long_pieces.push((previous_start, long));
                } else {
                    tokens += bpe::count_piece_cached(piece, &mut scratch, caches);
                }
            }
        });
        checkpoints.push(Boundary {
            start: text.len(),
            tokens_before: tokens,
            lookahead_before: lookahead_before(bytes, previous_start, text.len()),
        });
        let segments = checkpoints.iter().map(|_| OnceCell::new()).collect();
        Analysis {
            text,
            checkpoints,
            segments,
            newlines: OnceCell::new(),
            long_pieces,
        }
    }

    /// Every boundary of segment `s`, recorded on first use.
    fn segment(&self, s: usize) -> &[Boundary] {
        self.segments[s].get_or_init(|| {
            let first = self.checkpoints[s];
            let Some(next) = self.checkpoints.get(s + 1) else {
                return vec![first];
            };
            let bytes = self.text.as_bytes();
            let (mut tokens, mut lookahead) = (first.tokens_before, first.lookahead_before);
            let mut scratch = Vec::new();
            let mut boundaries = Vec::new();
            cache::with(|caches| {
                for piece in split::pieces(&self.text[first.start..]) {
                    let (start, end) = (first.start + piece.start, first.start + piece.end);
                    if start >= next.start {
                        break;
                    }
                    boundaries.push(Boundary {
                        start,
                        tokens_before: tokens,
                        lookahead_before: lookahead,
                    });
                    lookahead = lookahead.max(split::piece_lookahead(bytes, start, end));
                    tokens += match self.long_piece_at(start) {
                        Some(long) => long.ids.len(),
                        None => bpe::count_piece_cached(&bytes[start..end], &mut scratch, caches),
                    };
                }
            });
            debug_assert_eq!(
                (tokens, lookahead),
                (next.tokens_before, next.lookahead_before)
            );
            boundaries
        })
    }

    fn boundary(&self, at: At) -> Boundary {
        if at.index == 0 {
            self.checkpoints[at.segment]
        } else {
            self.segment(at.segment)[at.index]
        }
    }

    /// The boundary after `at` (`at` must not be the end boundary).
    fn next(&self, at: At) -> At {
        if at.index + 1 < self.segment(at.segment).len() {
            At {
                segment: at.segment,
                index: at.index + 1,
            }
        } else {
            At {
                segment: at.segment + 1,
                index: 0,
            }
        }
    }

    /// Byte offset of boundary `at`.
    #[inline]
    fn start(&self, at: At) -> usize {
        self.boundary(at).start
    }

    /// Tokens of the pieces before boundary `at`.
    #[inline]
    fn tokens_before(&self, at: At) -> usize {
        self.boundary(at).tokens_before
    }

    /// Tokens of the whole text.
    fn total(&self) -> usize {
        self.checkpoints[self.checkpoints.len() - 1].tokens_before
    }

    /// Tokens of `text[start(k)..cut] + extra` taken as ONE piece (`cut` may pass piece k's end:
    /// the excess joins `extra`), healed from piece k's merge result when it kept one.
    fn piece_count(&self, text: &[u8], k: At, cut: usize, extra: &[u8]) -> usize {
        let (start, end) = (self.start(k), self.start(self.next(k)));
        match self.long_piece(k) {
            Some(long) if cut - start + extra.len() > MAX_TOKEN_BYTES => {
                if cut <= end {
                    long.prefix_count(&text[start..end], cut - start, extra)
                } else {
                    let extra = [&text[end..cut], extra].concat();
                    long.prefix_count(&text[start..end], end - start, &extra)
                }
            }
            _ => bpe::count_piece(&[&text[start..cut], extra].concat(), &mut Vec::new()),
        }
    }

    /// Tokens of `text[start(k)..cut] + tail` when piece k is whitespace and `text[start(k)..cut]`
    /// is all whitespace: the whitespace alternatives split the joined run by its last newline and
    /// its last code point, and each long part is a prefix of piece k or of piece k + 1 (healed).
    /// `None` when the parts do not line up with the text's pieces.
    fn whitespace_tail(&self, text: &str, k: At, cut: usize, tail: &str) -> Option<usize> {
        let (bytes, t) = (text.as_bytes(), tail.as_bytes());
        let newline = |b: u8| b == b'\r' || b == b'\n';
        let tw = split::whitespace_prefix(t);
        // \s+$ : the whole joined run is one piece.
        if tw == t.len() {
            return Some(self.piece_count(bytes, k, cut, t));
        }
        // \s*[\r\n] with the last newline in the suffix.
        if let Some(j) = t[..tw].iter().rposition(|&b| newline(b)) {
            return Some(self.piece_count(bytes, k, cut, &t[..=j]) + count(&tail[j + 1..]));
        }
        // \s*[\r\n] with the last newline in the text: that piece, then a newline-free run.
        let start = self.start(k);
        let newlines = self.newlines.get_or_init(|| {
            (0..bytes.len())
                .filter(|&i| bytes[i] == b'\r' || bytes[i] == b'\n')
                .collect()
        });
        let last_newline = newlines.partition_point(|&at| at < cut);
        let (first, k2) = match last_newline.checked_sub(1).map(|i| newlines[i]) {
            Some(q) if q >= start => {
                if self.start(self.next(k)) != q + 1 {
                    return None;
                }
                (self.piece_count(bytes, k, q + 1, &[]), self.next(k))
            }
            _ => (0, k),
        };
        let s2 = self.start(k2);
        if cut == s2 {
            return Some(first + count(tail));
        }
        // \s+(?!\S): the run without its last code point, then that code point starts afresh.
        let last = if tw > 0 {
            split::last_char_len(&t[..tw])
        } else {
            split::last_char_len(&bytes[s2..cut])
        };
        if cut - s2 + tw == last {
            return Some(first + count_tail(&text[s2..cut], tail));
        }
        let rest = if tw > 0 {
            self.piece_count(bytes, k2, cut, &t[..tw - last]) + count(&tail[tw - last..])
        } else {
            self.piece_count(bytes, k2, cut - last, &[]) + count_tail(&text[cut - last..cut], tail)
        };
        Some(first + rest)
    }

    /// The long-piece merge result of the piece at boundary `k`, if it kept one.
    fn long_piece(&self, k: At) -> Option<&LongPiece> {
        self.long_piece_at(self.start(k))
    }

    /// The long-piece merge result of the piece starting at byte `start`, if it kept one.
    fn long_piece_at(&self, start: usize) -> Option<&LongPiece> {
        let at = self
            .long_pieces
            .binary_search_by_key(&start, |(piece, _)| *piece)
            .ok()?;
        Some(&self.long_pieces[at].1)
    }

    /// The last checkpoint that is safe for a probe cut at byte `cut` (see [`Self::safe_boundary`]).
    fn safe_checkpoint(&self, cut: usize) -> usize {
        let safe = |b: &Boundary| b.start <= cut && b.lookahead_before <= cut;
        // `safe` holds for a prefix of boundaries (both fields are nondecreasing); checkpoint 0
        // always holds.
        self.checkpoints.partition_point(safe).max(1) - 1
    }

    /// The last boundary that is safe for a probe cut at byte `cut`: its start is at or before
    /// `cut` and no earlier piece looked at or past `cut`. Boundary 0 is always safe. It lies in
    /// the segment of the last safe checkpoint (the next checkpoint is not safe).
    fn safe_boundary(&self, cut: usize) -> At {
        let segment = self.safe_checkpoint(cut);
        let safe = |b: &Boundary| b.start <= cut && b.lookahead_before <= cut;
        let index = self.segment(segment).partition_point(safe).max(1) - 1;
        At { segment, index }
    }

    /// When `cut` lies inside long piece k, a byte offset `target` such that no cut above
    /// `target`, up to `cut`, fits `budget` (the search resumes at `target`).
    ///
    /// Every cut `c` from `safe = max(start, k's lookahead_before)` to the piece's end has k as a
    /// safe boundary, so its probe counts the `before` tokens of the pieces before k, then the
    /// tokens of `text[start..c]` plus the suffix. Those tokens cover `text[start..c]` in order:
    /// the ones touching its first code point (`w` bytes) end fewer than `w +` [`STRADDLE`]
    /// bytes after `start`; one token at most straddles `c`, covering fewer than [`STRADDLE`]
    /// bytes before it; every other token lies within the piece after its first code point, so
    /// is at most `m` bytes long ([`LongPiece::longest_token`]). So the probe holds at least
    /// `before + ceil((c - start - w - 2 * STRADDLE) / m)` tokens, more than `budget` for every
    /// `c` above `limit = start + w + 2 * STRADDLE + (budget - before) * m`: the target is
    /// `max(limit, safe)`. `None` when `cut` is not inside a long piece.
    fn long_piece_jump(&self, cut: usize, budget: usize) -> Option<usize> {
        let k = self.safe_boundary(cut);
        let at = self.boundary(k);
        let end = self.start(self.next(k));
        if cut > end {
            return None;
        }
        let long = self.long_piece(k)?;
        let piece = &self.text.as_bytes()[at.start..end];
        let m = long.longest_token(piece);
        let room = budget.saturating_sub(at.tokens_before);
        let limit = (at.start + split::char_len(piece[0]) + 2 * STRADDLE)
            .saturating_add(room.saturating_mul(m));
        Some(limit.max(at.start).max(at.lookahead_before))
    }

    /// Whether the tokens before the safe boundary of `cut` fit `budget`, decided from the
    /// checkpoints alone when they bracket it (no segment is split again), else exactly.
    fn lower_bound_fits(&self, cut: usize, budget: usize) -> bool {
        let s = self.safe_checkpoint(cut);
        let before = self.checkpoints[s].tokens_before;
        match self.checkpoints.get(s + 1) {
            _ if before > budget => false,
            // The safe boundary lies before checkpoint s + 1, whose tokens bound it from above.
            Some(next) if next.tokens_before <= budget => true,
            None => true,
            Some(_) => self.tokens_before(self.safe_boundary(cut)) <= budget,
        }
    }
}

fn count_tail(head: &str, tail: &str) -> usize {
    let mut joined = String::with_capacity(head.len() + tail.len());
    joined.push_str(head);
    joined.push_str(tail);
    count(&joined)
}

/// Tokens of `head + tail` as one text, re-tokenizing only the end of `head`.
pub fn count_joined(head: &str, tail: &str) -> usize {
    if tail.is_empty() {
        return count(head);
    }
    let analysis = Analysis::with_segment(head, SEGMENT);
    let k = analysis.safe_boundary(head.len());
    analysis.tokens_before(k) + count_tail(&head[analysis.start(k)..], tail)
}

/// Where a prefix search landed: the prefix length in code points and in bytes (`text[..bytes]`
/// is the prefix), and the exact token count of that prefix joined with its suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    pub chars: usize,
    pub bytes: usize,
    pub tokens: usize,
}

/// A text tokenized once: its count, and prefix searches over it that re-tokenize only locally.
pub struct Tokenized<'t> {
    text: &'t str,
    analysis: Analysis<'t>,
    rest: RefCell<TailRest>,
}

/// The previous probe's suffix, and the last suffix rest counted (see [`Tokenized::tail_rest`]).
#[derive(Default)]
struct TailRest {
    previous_tail: String,
    rest: String,
    rest_tokens: usize,
}

impl<'t> Tokenized<'t> {
    pub fn new(text: &'t str) -> Tokenized<'t> {
        Tokenized::with_segment(text, SEGMENT)
    }

    /// With checkpoints every `segment` bytes (tests use tiny segments to cross many of them).
    fn with_segment(text: &'t str, segment: usize) -> Tokenized<'t> {
        Tokenized {
            text,
            analysis: Analysis::with_segment(text, segment),
            rest: RefCell::default(),
        }
    }

    /// Splits a probe's suffix at a piece start no head can move ([`split::is_sync_point`]), so
    /// `count(head + tail) = count(head + tail[..q]) + count(tail[q..])` for every head: returns
    /// `q` and `count(tail[q..])` (`(tail.len(), 0)` when there is none). `q` is the first such
    /// point inside the end `tail` shares with the previous probe's suffix, so consecutive probes
    /// (whose suffixes differ only in a figure) usually find `tail[q..]` already counted.
    fn tail_rest(&self, tail: &str) -> (usize, usize) {
        let mut memo = self.rest.borrow_mut();
        let t = tail.as_bytes();
        let shared = memo
            .previous_tail
            .bytes()
            .rev()
            .zip(t.iter().rev())
            .take_while(|(a, b)| a == *b)
            .count();
        let from = (t.len() - shared).max(1);
        let sync = (from..t.len()).find(|&q| split::is_sync_point(t, q));
        memo.previous_tail.clear();
        memo.previous_tail.push_str(tail);
        let Some(q) = sync else {
            return (tail.len(), 0);
        };
        if memo.rest != tail[q..] {
            memo.rest_tokens = count(&tail[q..]);
            memo.rest.clear();
            memo.rest.push_str(&tail[q..]);
        }
        (q, memo.rest_tokens)
    }

    /// The text this was built from.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// Tokens of the whole text.
    pub fn count(&self) -> usize {
        self.analysis.total()
    }

    /// See [`super::largest_fitting_prefix`]; also returns the winner's joined count.
    pub fn largest_fitting_prefix<F>(
        &self,
        floor: usize,
        max: usize,
        budget: usize,
        mut suffix: F,
    ) -> Option<Fit>
    where
        F: FnMut(usize) -> String,
    {
        let (text, analysis) = (self.text, &self.analysis);
        let (max_byte, max) = char_boundary_near_end(text, max);
        if floor > max {
            return None;
        }
        let (floor_byte, _) = char_boundary(text, floor);
        if !analysis.lower_bound_fits(floor_byte, budget) {
            return None;
        }
        // Largest byte cut whose lower bound fits (the bound is nondecreasing in the cut), snapped
        // down to a code-point boundary; no larger cut can fit.
        let (mut lo, mut hi) = (floor_byte, max_byte + 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if analysis.lower_bound_fits(mid, budget) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let lo = char_start_at_or_before(text, lo);
        // Counted from whichever known boundary is nearer.
        let mut chars = if lo - floor_byte <= max_byte - lo {
            floor + text[floor_byte..lo].chars().count()
        } else {
            max - text[lo..max_byte].chars().count()
        };
        let mut cut = lo;
        let mut failed = 0;
        loop {
            if let Some(tokens) = self.probe(cut, budget, || suffix(chars)) {
                return Some(Fit {
                    chars,
                    bytes: cut,
                    tokens,
                });
            }
            if cut == floor_byte {
                return None;
            }
            cut -= split::last_char_len(&text.as_bytes()[..cut]);
            chars -= 1;
            failed += 1;
            // Deep inside one long piece (a 256 KiB run of one letter, of "-", of spaces) the
            // probes fail one code point at a time: jump to the piece's bound instead, below
            // which the probes resume (no cut above it can fit).
            if failed % PROBES_BEFORE_A_JUMP == 0 {
                match analysis.long_piece_jump(cut, budget) {
                    // Every cut from the floor up is above the bound (the floor is at most `cut`).
                    Some(target) if target < floor_byte => return None,
                    Some(target) if target < cut => {
                        let to = char_start_at_or_before(text, target);
                        chars -= text[to..cut].chars().count();
                        cut = to;
                    }
                    _ => {}
                }
            }
        }
    }

    /// Tokens of `text[..cut] + tail()` when they fit `budget` (None when they do not; `tail` is
    /// called only when the tokens before the cut's safe boundary fit).
    fn probe(&self, cut: usize, budget: usize, tail: impl FnOnce() -> String) -> Option<usize> {
        let (text, analysis) = (self.text, &self.analysis);
        let k = analysis.safe_boundary(cut);
        let (start, before) = (analysis.start(k), analysis.tokens_before(k));
        if before > budget {
            return None;
        }
        let tail = &tail();
        // A lower bound first: the tokens before the safe boundary and those of the suffix's
        // unmovable rest.
        let (sync, rest_tokens) = self.tail_rest(tail);
        if before + rest_tokens > budget {
            return None;
        }
        let tokens = match analysis.long_piece(k) {
            // The cut is inside long piece k: the probe's piece at `start` is text[start..cut]
            // plus what it absorbs of the suffix; the rest of the suffix is tokenized afresh.
            Some(long)
                if long.run != split::Run::Spaces
                    && cut - start > LONG_PIECE
                    && cut <= analysis.start(analysis.next(k)) =>
            {
                let piece = &text.as_bytes()[start..analysis.start(analysis.next(k))];
                let head = cut - start;
                let absorbed = split::absorbed(long.run, &piece[..head], tail.as_bytes());
                // A piece starts at `sync` whatever precedes it, so the long piece never absorbs
                // past it (the else branch only guards that reasoning) and the suffix's rest
                // beyond it is the one already counted.
                let rest = if absorbed <= sync {
                    count(&tail[absorbed..sync]) + rest_tokens
                } else {
                    count(&tail[absorbed..])
                };
                long.prefix_count(piece, head, &tail.as_bytes()[..absorbed]) + rest
            }
            _ if cut - start > LONG_PIECE
                && split::run_kind(&text.as_bytes()[start..analysis.start(analysis.next(k))])
                    == Some(split::Run::Spaces) =>
            {
                analysis
                    .whitespace_tail(text, k, cut, tail)
                    .unwrap_or_else(|| count_tail(&text[start..cut], tail))
            }
            _ => count_tail(&text[start..cut], &tail[..sync]) + rest_tokens,
        };
        (before + tokens <= budget).then_some(before + tokens)
    }
}

/// The nearest code-point boundary of `text` at or before byte `at` (`at <= text.len()`).
fn char_start_at_or_before(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// [`char_boundary`] for an `n` that is usually at or near the text's end (S-4's `max` is the
/// text's length minus one): counts all code points at once, then steps back from the end.
fn char_boundary_near_end(text: &str, n: usize) -> (usize, usize) {
    const STEPS: usize = 64;
    let total = text.chars().count();
    if n >= total {
        return (text.len(), total);
    }
    if total - n > STEPS {
        return char_boundary(text, n);
    }
    let mut at = text.len();
    for _ in n..total {
        at -= split::last_char_len(&text.as_bytes()[..at]);
    }
    (at, n)
}

/// Byte offset of code-point boundary `n` of `text` and `n`, or `(text.len(), total)` when the
/// text has fewer than `n` code points. Skips whole blocks by counting lead bytes.
pub fn char_boundary(text: &str, n: usize) -> (usize, usize) {
    const BLOCK: usize = 64;
    let bytes = text.as_bytes();
    let is_lead = |b: &u8| (*b as i8) >= -0x40;
    let (mut i, mut chars) = (0, 0);
    while i + BLOCK <= bytes.len() {
        let in_block = bytes[i..i + BLOCK].iter().filter(|b| is_lead(b)).count();
        if chars + in_block > n {
            break;
        }
        chars += in_block;
        i += BLOCK;
    }
    while i < bytes.len() {
        if is_lead(&bytes[i]) {
            if chars == n {
                return (i, n);
            }
            chars += 1;
        }
        i += 1;
    }
    (bytes.len(), chars)
}

#[cfg(test)]
mod tests {
    use super::super::largest_fitting_prefix;
    use super::*;
    use crate::test_rng::Lcg;

    fn brute_force(
        text: &str,
        floor: usize,
        max: usize,
        budget: usize,
        suffix: impl Fn(usize) -> String,
    ) -> Option<usize> {
        let cuts: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let max = max.min(cuts.len() - 1);
        (floor..=max)
            .rev()
            .find(|&l| count(&format!("{}{}", &text[..cuts[l]], suffix(l))) <= budget)
    }

    /// Every segment size the searches are checked with: one checkpoint per piece, a few pieces
    /// per segment, and the production size (one segment for these short texts).
    const SEGMENTS: [usize; 3] = [1, 13, SEGMENT];

    /// [`largest_fitting_prefix`] with checkpoints every `segment` bytes.
    fn search(
        text: &str,
        floor: usize,
        max: usize,
        budget: usize,
        suffix: impl FnMut(usize) -> String,
        segment: usize,
    ) -> Option<usize> {
        Tokenized::with_segment(text, segment)
            .largest_fitting_prefix(floor, max, budget, suffix)
            .map(|fit| fit.chars)
    }

    /// Asserts that the search over `text` with checkpoints every `segment` bytes finds what
    /// [`brute_force`] finds, for cuts from `floor` to the last code point but one (`what` names
    /// the case); returns that answer.
    fn search_equals_brute_force(
        text: &str,
        floor: usize,
        budget: usize,
        suffix: impl Fn(usize) -> String,
        segment: usize,
        what: &str,
    ) -> Option<usize> {
        let max = text.chars().count() - 1;
        let expected = brute_force(text, floor, max, budget, &suffix);
        let got = search(text, floor, max, budget, &suffix, segment);
        assert_eq!(got, expected, "{what} budget {budget} segment {segment}");
        expected
    }

    fn random_text(rng: &mut Lcg, len: usize) -> String {
        let atoms = [
            "a",
            "b",
            "The",
            " quick",
            "'s",
            "'LL",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\t",
            "1",
            "23",
            "{",
            "}",
            "\"",
            ":",
            ",",
            "é",
            "中",
            "\u{FEFF}",
            "\u{85}",
            "👩‍👩‍👧",
            "e\u{301}",
            "[",
            "…",
            "x",
            "S-4",
        ];
        (0..len).map(|_| atoms[rng.below(atoms.len())]).collect()
    }

    #[test]
    fn safe_boundaries_do_not_depend_on_the_segment_size() {
        let mut rng = Lcg(17);
        let mut segmented = 0;
        for _ in 0..200 {
            let len = rng.below(50);
            let text = random_text(&mut rng, len);
            let whole = Analysis::with_segment(&text, usize::MAX);
            for segment in [1, 2, 5, 13] {
                let analysis = Analysis::with_segment(&text, segment);
                assert_eq!(analysis.total(), count(&text), "{text:?}");
                segmented += usize::from(analysis.checkpoints.len() > 2);
                for cut in 0..=text.len() {
                    let (a, b) = (analysis.safe_boundary(cut), whole.safe_boundary(cut));
                    assert_eq!(
                        analysis.boundary(a),
                        whole.boundary(b),
                        "{text:?} cut {cut} segment {segment}"
                    );
                    for budget in [0, 3, 10] {
                        assert_eq!(
                            analysis.lower_bound_fits(cut, budget),
                            whole.tokens_before(b) <= budget,
                            "{text:?} cut {cut} segment {segment} budget {budget}"
                        );
                    }
                }
            }
        }
        assert!(segmented > 300, "texts of several segments: {segmented}");
    }

    #[test]
    fn joined_counts_equal_counts_of_the_joined_text() {
        let mut rng = Lcg(7);
        for _ in 0..300 {
            let (head_len, tail_len) = (rng.below(40), rng.below(6));
            let head = random_text(&mut rng, head_len);
            let tail = random_text(&mut rng, tail_len);
            assert_eq!(
                count_joined(&head, &tail),
                count(&format!("{head}{tail}")),
                "{head:?}+{tail:?}"
            );
        }
    }

    #[test]
    fn prefix_search_equals_brute_force_with_an_s4_marker() {
        let mut rng = Lcg(42);
        let mut found = 0;
        for _ in 0..250 {
            let len = 1 + rng.below(60);
            let text = random_text(&mut rng, len);
            let total = text.chars().count();
            let floor = rng.below(total / 2 + 1);
            let max = total - 1 + rng.below(3);
            let budget = rng.below(count(&text) + 30);
            let marker = |l: usize| {
                format!(
                    "[…truncated: {} chars removed under token-efficiency/v1 S-4]",
                    total - l
                )
            };
            let expected = brute_force(&text, floor, max, budget, marker);
            let segment = SEGMENTS[rng.below(SEGMENTS.len())];
            let fit = Tokenized::with_segment(&text, segment)
                .largest_fitting_prefix(floor, max, budget, marker);
            let got = fit.map(|fit| fit.chars);
            assert_eq!(
                got, expected,
                "{text:?} floor {floor} max {max} budget {budget} segment {segment}"
            );
            if let Some(fit) = fit {
                let bytes = text
                    .char_indices()
                    .nth(fit.chars)
                    .map_or(text.len(), |c| c.0);
                assert_eq!(
                    fit.bytes, bytes,
                    "{text:?}: byte cut of {} chars",
                    fit.chars
                );
                let joined = format!("{}{}", &text[..fit.bytes], marker(fit.chars));
                assert_eq!(fit.tokens, count(&joined), "{text:?}: joined count");
            }
            found += usize::from(got.is_some());
        }
        assert!(
            found > 50,
            "the random cases must exercise fitting prefixes ({found})"
        );
    }

    const ALPHABETS: [&[&str]; 10] = [
        &["a"],
        &["a", "b"],
        &["e", "t", "a", "o", "i", "n", "s", "h", "r", "d", "l", "u"],
        &["q", "w", "x", "z", "j", "k", "v", "y", "A", "Q", "Z"],
        &["é", "ü", "ß", "ñ", "a", "e"],
        &["中", "文", "字", "日", "本", "語", "한", "국"],
        &["="],
        &["-", "=", "*", "#", "!", "?", ".", "/"],
        &["😀", "👍", "🏽", "\u{200d}", "❤", "\u{fe0f}", "→", "★"],
        &["\u{e000}", "\u{10fffd}", "\u{1d400}", "\u{20a0}", "}", "{"],
    ];

    #[test]
    fn healed_prefix_counts_equal_direct_merges_at_every_cut() {
        let mut rng = Lcg(99);
        for alphabet in ALPHABETS {
            // One piece meets every extra (the run memo is keyed by both).
            let len = 1500 + rng.below(800);
            let word = rng.text(alphabet, len);
            let piece = word.as_bytes();
            let long = LongPiece::new(piece, split::Run::Letters);
            for extra in ["", "=", "xy", "\r\n"] {
                let mut direct = Vec::new();
                for (cut, _) in word.char_indices().skip(1).step_by(3) {
                    direct.clear();
                    bpe::merge(&[&piece[..cut], extra.as_bytes()].concat(), &mut direct);
                    let healed = long.prefix_count(piece, cut, extra.as_bytes());
                    assert_eq!(
                        healed,
                        direct.len(),
                        "{alphabet:?} cut {cut} extra {extra:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn prefix_search_inside_a_long_piece_equals_brute_force() {
        let mut rng = Lcg(5);
        for alphabet in ALPHABETS {
            let len = 1200 + rng.below(600);
            let word = rng.text(alphabet, len);
            let text = format!("{{\"k\": \"{word}\"}}\n");
            let total = text.chars().count();
            let marker = |l: usize| format!("[…truncated: {} chars removed]", total - l);
            for _ in 0..3 {
                let budget = 10 + rng.below(count(&text));
                let floor = rng.below(5);
                let segment = SEGMENTS[rng.below(SEGMENTS.len())];
                let what = format!("{alphabet:?}");
                search_equals_brute_force(&text, floor, budget, marker, segment, &what);
            }
            for tail in ["x", "\n\n=", "= \n", "1"] {
                let suffix = |l: usize| format!("{tail}{}", total - l);
                let budget = count(&text) / 2;
                let segment = SEGMENTS[rng.below(SEGMENTS.len())];
                let what = format!("{alphabet:?} tail {tail:?}");
                search_equals_brute_force(&text, 0, budget, suffix, segment, &what);
            }
        }
    }

    /// Runs of one unit far longer than the budget: the search fails hundreds of probes in a row
    /// and jumps to the piece's bound ([`Analysis::long_piece_jump`]); small budgets put the
    /// answer near that bound (runs of "L" merge into tokens as long as the longest they hold).
    #[test]
    fn prefix_search_after_a_long_piece_jump_equals_brute_force() {
        let units = ["L", "a", "-", "=", " ", "ab", "é", " \t", "!?"];
        let shapes = ["{}", "x {}", "{}\n", "{{\"k\":\"{}\"}}"];
        let tails = ["[…truncated: {} chars]", "", "=== {}", "LL{}", " \n"];
        let mut rng = Lcg(17);
        for (i, unit) in units.iter().enumerate() {
            let run = unit.repeat(1400 / unit.len());
            let text = shapes[i % shapes.len()].replacen("{}", &run, 1);
            let total = text.chars().count();
            let tail = tails[i % tails.len()];
            let suffix = |l: usize| tail.replacen("{}", &(total - l).to_string(), 1);
            for budget in [1, 3 + rng.below(20), 40 + rng.below(40)] {
                let floor = rng.below(3);
                let segment = SEGMENTS[rng.below(SEGMENTS.len())];
                let what = format!("unit {unit:?}");
                search_equals_brute_force(&text, floor, budget, suffix, segment, &what);
            }
        }
        // Runs whose tokens are as long as the longest they hold ("LLLL", "aaaaaaaa"), with
        // budgets large enough that the answer lies just under the bound: a bound any tighter than
        // the proof allows cuts the answer off.
        for (unit, len, budget, tail) in [
            ("L", 6000, 1000, ""),
            ("a", 8000, 700, "[…truncated: {} chars]"),
        ] {
            let text = format!("x{}", unit.repeat(len));
            let total = text.chars().count();
            let suffix = |l: usize| tail.replacen("{}", &(total - l).to_string(), 1);
            let what = format!("unit {unit:?}");
            let expected = search_equals_brute_force(&text, 0, budget, suffix, SEGMENT, &what);
            assert!(
                expected.is_some_and(|chars| chars * 10 > len * 6),
                "{expected:?}"
            );
        }
    }

    #[test]
    fn prefix_search_inside_long_whitespace_equals_brute_force() {
        let mut rng = Lcg(11);
        let runs: [&[&str]; 6] = [
            &[" "],
            &[" ", "\t"],
            &[" ", " ", " ", "\n"],
            &["\n"],
            &[" ", "\r\n", "\u{3000}", "\u{a0}"],
            &["\t", "\u{2028}", " "],
        ];
        let shapes = ["{{\"k\": \"a{}b\"}}", "x{}", "{}", "\n{}\n", "a\n{} z"];
        let tails = [
            "[…truncated: {} chars]",
            "",
            " ",
            "  ",
            "\n",
            "\n\n ",
            " x{}",
            "x",
            "  \n{}",
            "{}",
        ];
        for (i, run) in runs.iter().enumerate() {
            for (j, shape) in shapes.iter().enumerate() {
                let len = 1100 + rng.below(500);
                let ws = rng.text(run, len);
                let text = shape.replacen("{}", &ws, 1);
                let total = text.chars().count();
                let tail = tails[(i * shapes.len() + j) % tails.len()];
                let suffix = |l: usize| tail.replacen("{}", &(total - l).to_string(), 1);
                for _ in 0..2 {
                    let budget = rng.below(count(&text) + 3);
                    let floor = rng.below(3);
                    let segment = SEGMENTS[rng.below(SEGMENTS.len())];
                    let what = format!("run {i} shape {j} tail {tail:?}");
                    search_equals_brute_force(&text, floor, budget, suffix, segment, &what);
                }
            }
        }
    }

    #[test]
    fn counts_split_at_sync_points_whatever_the_head() {
        let mut rng = Lcg(23);
        let mut checked = 0;
        for _ in 0..400 {
            let (head_len, tail_len) = (rng.below(12), 1 + rng.below(12));
            let head = random_text(&mut rng, head_len);
            let tail = random_text(&mut rng, tail_len);
            for q in 1..tail.len() {
                if tail.is_char_boundary(q) && split::is_sync_point(tail.as_bytes(), q) {
                    assert_eq!(
                        count(&format!("{head}{tail}")),
                        count(&format!("{head}{}", &tail[..q])) + count(&tail[q..]),
                        "{head:?}+{tail:?} at {q}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 200, "sync points exercised: {checked}");
    }

    #[test]
    fn boundaries_near_the_end_equal_boundaries_from_the_start() {
        let mut rng = Lcg(3);
        for len in [0, 1, 5, 70, 300] {
            let text = random_text(&mut rng, len);
            let total = text.chars().count();
            for n in (0..total + 3).rev().take(140) {
                assert_eq!(
                    char_boundary_near_end(&text, n),
                    char_boundary(&text, n),
                    "{text:?} n {n}"
                );
            }
        }
    }

    #[test]
    fn prefix_search_without_suffix_and_empty_text() {
        assert_eq!(
            largest_fitting_prefix("", 0, 0, 0, |_| String::new()),
            Some(0)
        );
        assert_eq!(
            largest_fitting_prefix("abc", 2, 1, 9, |_| String::new()),
            None
        );
        assert_eq!(
            largest_fitting_prefix("The quick brown", 0, 14, 2, |_| String::new()),
            Some(9)
        );
    }
}
