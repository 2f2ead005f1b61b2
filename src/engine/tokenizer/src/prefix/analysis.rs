//! Analysis: a text tokenized once, with what a prefix probe needs to re-tokenize only locally.
//!
//! The pre-tokenizer is local: the piece starting at `s` depends only on the bytes up to its
//! lookahead (see [`split::piece_lookahead`]). So for a probe `text[..B] + suffix`, every piece of
//! `text` whose lookahead ends at or before `B` is also a piece of the probe, with the same ids.
//! [`Analysis`] tokenizes `text` once and knows, for each piece boundary, the tokens before it and
//! the furthest lookahead of the pieces before it (recorded every 4 KiB while counting, and for
//! every piece of a segment when a probe first lands in it); a probe then re-tokenizes only from
//! the last boundary that is safe for `B` ("the local tail") plus the suffix. Long pieces keep
//! their merge result ([`LongPiece`]) so a cut inside one heals instead of re-merging.

use super::long_piece::{LongPiece, LONG_PIECE, MAX_TOKEN_BYTES, STRADDLE};
use crate::{bpe, cache, count, split};
use std::cell::OnceCell;

/// One piece boundary: where the piece starts, the tokens of the pieces before it, and the
/// furthest lookahead of the pieces before it (0 for the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Boundary {
    pub(super) start: usize,
    pub(super) tokens_before: usize,
    pub(super) lookahead_before: usize,
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
pub(super) fn lookahead_before(bytes: &[u8], previous_start: usize, start: usize) -> usize {
    if previous_start == start {
        0
    } else {
        split::piece_lookahead(bytes, previous_start, start)
    }
}

/// [`lookahead_before`] in the count pass, where the previous piece may be a kept long piece:
/// when it is whitespace only (a kept [`split::Run::Spaces`] piece), its whitespace run reaches
/// `start` and goes on exactly as a run from `start` does, so only the bytes from `start` are
/// scanned (a 256 KiB run of spaces was scanned whole once more at the next checkpoint).
fn lookahead_before_counted(
    bytes: &[u8],
    previous_start: usize,
    start: usize,
    long_pieces: &[(usize, LongPiece)],
) -> usize {
    match long_pieces.last() {
        Some((at, long))
            if *at == previous_start
                && previous_start != start
                && long.run == split::Run::Spaces =>
        {
            if start < bytes.len() {
                split::piece_lookahead(bytes, start, start)
            } else {
                bytes.len() + 1
            }
        }
        _ => lookahead_before(bytes, previous_start, start),
    }
}

/// Bytes between checkpoints: the count pass records one boundary per segment, and a probe splits
/// and counts again only the segment it lands in (a long piece reuses its kept merge).
pub(super) const SEGMENT: usize = 4096;

/// A boundary by segment and position inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct At {
    segment: usize,
    index: usize,
}

/// The count of a text, with what a prefix search needs to re-tokenize only locally. The count
/// pass records a checkpoint (a boundary) at the first piece start at or after every [`SEGMENT`]
/// bytes, so it costs what a plain count costs; a segment's every boundary is recorded on first
/// use by splitting it again from its checkpoint (the pre-tokenizer has no look-behind, so a split
/// restarted at a piece start yields the same pieces, and every piece's count is known: long
/// pieces keep their merge result, the others are re-counted only in that segment).
pub(super) struct Analysis<'t> {
    text: &'t str,
    /// Segment starts, then the end of the text (`checkpoints[s]` is boundary 0 of segment s; the
    /// last one is the end boundary, alone in its segment).
    pub(super) checkpoints: Vec<Boundary>,
    /// Every boundary of segment s (from its checkpoint up to, not including, the next), on first
    /// use.
    segments: Vec<OnceCell<Vec<Boundary>>>,
    /// Byte offsets of every CR and LF in the text, ascending (found on first use).
    newlines: OnceCell<Vec<usize>>,
    /// Merge results of the long pieces, by ascending piece start.
    pub(super) long_pieces: Vec<(usize, LongPiece)>,
}

impl<'t> Analysis<'t> {
    pub(super) fn with_segment(text: &'t str, segment: usize) -> Analysis<'t> {
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
                        lookahead_before: lookahead_before_counted(
                            bytes,
                            previous_start,
                            piece.start,
                            &long_pieces,
                        ),
                    });
                    next_checkpoint = piece.start.saturating_add(segment);
                }
                previous_start = piece.start;
                tokens += count_piece(bytes, piece, caches, &mut scratch, &mut long_pieces);
            }
        });
        checkpoints.push(Boundary {
            start: text.len(),
            tokens_before: tokens,
            lookahead_before: lookahead_before_counted(
                bytes,
                previous_start,
                text.len(),
                &long_pieces,
            ),
        });
        Analysis::from_parts(text, checkpoints, long_pieces)
    }

    /// An analysis of `text` from its checkpoints (the last one its end) and its long pieces'
    /// merge results, by ascending start.
    pub(super) fn from_parts(
        text: &'t str,
        checkpoints: Vec<Boundary>,
        long_pieces: Vec<(usize, LongPiece)>,
    ) -> Analysis<'t> {
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

    pub(super) fn boundary(&self, at: At) -> Boundary {
        if at.index == 0 {
            self.checkpoints[at.segment]
        } else {
            self.segment(at.segment)[at.index]
        }
    }

    /// The boundary after `at` (`at` must not be the end boundary).
    pub(super) fn next(&self, at: At) -> At {
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
    pub(super) fn start(&self, at: At) -> usize {
        self.boundary(at).start
    }

    /// Tokens of the pieces before boundary `at`.
    #[inline]
    pub(super) fn tokens_before(&self, at: At) -> usize {
        self.boundary(at).tokens_before
    }

    /// Tokens of the pieces before byte `at` when a piece starts there (or `at` is the text's end),
    /// read off the boundaries of `at`'s segment (recorded on first use); `None` at any other byte.
    pub(super) fn tokens_before_byte(&self, at: usize) -> Option<usize> {
        let s = self
            .checkpoints
            .partition_point(|b| b.start <= at)
            .checked_sub(1)?;
        let segment = self.segment(s);
        let i = segment.binary_search_by_key(&at, |b| b.start).ok()?;
        Some(segment[i].tokens_before)
    }

    /// Tokens of the whole text.
    pub(super) fn total(&self) -> usize {
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
    pub(super) fn whitespace_tail(
        &self,
        text: &str,
        k: At,
        cut: usize,
        tail: &str,
    ) -> Option<usize> {
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
    pub(super) fn long_piece(&self, k: At) -> Option<&LongPiece> {
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
    pub(super) fn safe_boundary(&self, cut: usize) -> At {
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
    /// bytes before it; every other token lies within the piece after its first code point, and
    /// these are adjacent tokens of one merge result covering at least `c - start - w - 2 *`
    /// [`STRADDLE`] bytes. A fitting probe has at most `room = budget - before` of them, which
    /// cover at most `most = `[`LongPiece::most_bytes`]`(room)` bytes (`room` times the longest
    /// token, or fewer in a run of one byte). So no `c` above `limit = start + w + 2 * STRADDLE +
    /// most` fits: the target is `max(limit, safe)`. `None` when `cut` is not inside a long piece.
    pub(super) fn long_piece_jump(&self, cut: usize, budget: usize) -> Option<usize> {
        let k = self.safe_boundary(cut);
        let at = self.boundary(k);
        let end = self.start(self.next(k));
        if cut > end {
            return None;
        }
        let long = self.long_piece(k)?;
        let piece = &self.text.as_bytes()[at.start..end];
        let room = budget.saturating_sub(at.tokens_before);
        let limit = (at.start + split::char_len(piece[0]) + 2 * STRADDLE)
            .saturating_add(long.most_bytes(piece, room));
        Some(limit.max(at.start).max(at.lookahead_before))
    }

    /// Whether the tokens before the safe boundary of `cut` fit `budget`, decided from the
    /// checkpoints alone when they bracket it (no segment is split again), else exactly.
    pub(super) fn lower_bound_fits(&self, cut: usize, budget: usize) -> bool {
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

/// Tokens of the piece `bytes[piece]`; a long letter or symbol piece (over [`LONG_PIECE`] bytes,
/// free of EF BB BF) keeps its merge result in `long_pieces`.
///
/// Inlined into the count pass, so a piece costs what it costs in a plain count (one call, to the
/// cached count); the rare long piece is [`count_long_piece`]'s, out of line.
#[inline(always)]
pub(super) fn count_piece(
    bytes: &[u8],
    piece: std::ops::Range<usize>,
    caches: &mut cache::Caches,
    scratch: &mut Vec<u32>,
    long_pieces: &mut Vec<(usize, LongPiece)>,
) -> usize {
    if piece.len() > LONG_PIECE {
        if let Some(tokens) =
            count_long_piece(piece.start, &bytes[piece.clone()], caches, long_pieces)
        {
            return tokens;
        }
    }
    bpe::count_piece_cached(&bytes[piece], scratch, caches)
}

/// [`count_piece`] of a piece over [`LONG_PIECE`] bytes that starts at `start`: its tokens, its
/// merge result pushed onto `long_pieces`, when it is a letter or symbol run free of EF BB BF;
/// `None` otherwise (the piece is then counted as any other).
#[inline(never)]
fn count_long_piece(
    start: usize,
    piece: &[u8],
    caches: &mut cache::Caches,
    long_pieces: &mut Vec<(usize, LongPiece)>,
) -> Option<usize> {
    if crate::scan::contains_bom(piece) {
        return None;
    }
    let long = LongPiece::new(piece, split::run_kind(piece)?, caches);
    let tokens = long.ids.len();
    long_pieces.push((start, long));
    Some(tokens)
}

pub(super) fn count_tail(head: &str, tail: &str) -> usize {
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
