//! Search: the largest prefix whose count joined with its suffix fits a budget (S-4).
//!
//! The search is exact: candidates are measured from the largest down, and a candidate is skipped
//! only when a true lower bound on its count exceeds the budget: the tokens before its safe
//! boundary (the tail adds tokens, never removes them), or, after a few hundred failed probes
//! inside one long piece, a bound from the longest token the piece's bytes can form (every token
//! wholly inside the cut prefix is at most that long; see `Analysis::long_piece_jump`). The jump
//! makes a 256 KiB run of one letter cost one tokenization instead of 250 000 probes.

use super::analysis::{count_tail, Analysis, SEGMENT};
use super::chars::{char_boundary, char_boundary_near_end, char_start_at_or_before};
use super::long_piece::LONG_PIECE;
use super::reuse::{self, Same};
use crate::{count, split};
use std::cell::RefCell;

/// Failed probes in a row after which the search asks [`Analysis::long_piece_jump`] whether it
/// can jump (a long piece's first bound costs one pass over the vocabulary, a few hundred
/// probes' worth; ordinary searches end long before).
const PROBES_BEFORE_A_JUMP: usize = 256;

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
    pub(super) analysis: Analysis<'t>,
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
    pub(super) fn with_segment(text: &'t str, segment: usize) -> Tokenized<'t> {
        Tokenized {
            text,
            analysis: Analysis::with_segment(text, segment),
            rest: RefCell::default(),
        }
    }

    /// `new`, a text edited from this one that shares the stretches `same` with it, tokenized with
    /// this text's analysis reused over them (see `reuse`): the same count and searches as
    /// [`Tokenized::new`] gives, splitting and counting afresh only around the edits. Stretches that
    /// are not as claimed cost only time: `new` is then tokenized from scratch.
    pub fn edited<'n>(&self, new: &'n str, same: &[Same]) -> Tokenized<'n> {
        self.edited_with_segment(new, same, SEGMENT)
    }

    /// [`Tokenized::edited`] with checkpoints every `segment` bytes where it splits afresh.
    pub(super) fn edited_with_segment<'n>(
        &self,
        new: &'n str,
        same: &[Same],
        segment: usize,
    ) -> Tokenized<'n> {
        match reuse::reuse(&self.analysis, self.text, new, same, segment) {
            Some(analysis) => Tokenized {
                text: new,
                analysis,
                rest: RefCell::default(),
            },
            None => Tokenized::with_segment(new, segment),
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

    /// Tokens of the pieces before byte `at` of the text, when a piece starts there (or `at` is the
    /// end): so for two such bytes `a <= b`, `count(text[a..b])` is the difference whenever both
    /// are safe cuts ([`crate::is_piece_start`]), without counting the bytes again. `None` when no
    /// piece starts at `at`. Costs at most a split of the 4 KiB segment `at` lies in, once.
    pub fn tokens_before(&self, at: usize) -> Option<usize> {
        self.analysis.tokens_before_byte(at)
    }

    /// `count(text[..cut] + suffix)`, re-tokenizing only from the last piece boundary the cut
    /// leaves untouched, and healing a long piece the cut falls in from its kept merge (as a
    /// search's probe does). `cut` must be a code-point boundary.
    pub fn count_with_suffix(&self, cut: usize, suffix: &str) -> Option<usize> {
        self.probe(cut, usize::MAX, || suffix.to_owned())
    }

    /// Whether a piece whose merge result is kept (a run of one letter or symbol over 1,024
    /// bytes, the tokenizer's slowest input) starts at a byte in `a..b`: counting such bytes again
    /// costs far more than reading their counts off ([`Tokenized::tokens_before`]).
    pub fn long_piece_within(&self, a: usize, b: usize) -> bool {
        let pieces = &self.analysis.long_pieces;
        let i = pieces.partition_point(|(start, _)| *start < a);
        pieces.get(i).is_some_and(|(start, _)| *start < b)
    }

    /// See [`crate::largest_fitting_prefix`]; also returns the winner's joined count.
    pub fn largest_fitting_prefix<F>(
        &self,
        floor: usize,
        max: usize,
        budget: usize,
        suffix: F,
    ) -> Option<Fit>
    where
        F: FnMut(usize) -> String,
    {
        let (max_byte, max) = char_boundary_near_end(self.text, max);
        self.search(floor, max_byte, max, budget, suffix)
    }

    /// [`Tokenized::largest_fitting_prefix`] with `max` all code points but the last (as S-4 cuts),
    /// given the text's code-point count `chars`, which the caller already knows: the search then
    /// counts no code points beyond the stretch between its cut and the end (counting all of them
    /// was 40% of a search on a 262 KB text). A wrong `chars` shifts only the code-point figures
    /// (`Fit::chars` and what `suffix` is given), never which bytes are measured.
    pub fn largest_fitting_prefix_short_of_end<F>(
        &self,
        floor: usize,
        chars: usize,
        budget: usize,
        suffix: F,
    ) -> Option<Fit>
    where
        F: FnMut(usize) -> String,
    {
        let bytes = self.text.as_bytes();
        if bytes.is_empty() || chars == 0 {
            return None;
        }
        let max_byte = bytes.len() - split::last_char_len(bytes);
        self.search(floor, max_byte, chars - 1, budget, suffix)
    }

    /// The search for the largest fitting cut from `floor` (code points) up to byte `max_byte`,
    /// which is code point `max`.
    fn search<F>(
        &self,
        floor: usize,
        max_byte: usize,
        max: usize,
        budget: usize,
        mut suffix: F,
    ) -> Option<Fit>
    where
        F: FnMut(usize) -> String,
    {
        let (text, analysis) = (self.text, &self.analysis);
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
