//! Reuse: the analysis of an edited text built from the analysis of the text it was edited from,
//! splitting and counting afresh only around the edits.
//!
//! The caller names the stretches the two texts share ([`Same`]: byte runs equal in both). The
//! pre-tokenizer has no look-behind, so once the edited text's split starts a piece at a byte
//! that maps, inside a shared stretch, to a checkpoint of the old text (a piece start there), the
//! two splits yield the same pieces with the same counts for as long as the pieces' lookahead stays
//! inside the stretch: the old checkpoints up to the last such one are copied (start and lookahead
//! shifted by the stretch's offset, tokens by the count so far), and the split resumes afresh from
//! there. So an edit costs about one segment of fresh splitting, not a tokenization of the whole
//! edited text. Stretches that are not what they claim (out of order, out of range, unequal
//! bytes) are refused, and the edited text is analysed from scratch.

use super::analysis::{count_piece, lookahead_before, Analysis, Boundary};
use crate::{cache, split};

/// A stretch two texts share: `old[from..from + len] == new[to..to + len]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Same {
    pub from: usize,
    pub to: usize,
    pub len: usize,
}

/// Whether `same` is a list of stretches of `old` and `new` that are in order, in range, apart
/// and equal byte for byte.
fn shared_as_claimed(old: &[u8], new: &[u8], same: &[Same]) -> bool {
    let (mut from, mut to) = (0, 0);
    same.iter().all(|s| {
        let fits = s.from >= from
            && s.to >= to
            && s.from
                .checked_add(s.len)
                .is_some_and(|end| end <= old.len())
            && s.to.checked_add(s.len).is_some_and(|end| end <= new.len());
        from = s.from.saturating_add(s.len);
        to = s.to.saturating_add(s.len);
        fits && old[s.from..from] == new[s.to..to]
    })
}

/// Where a fresh split of the new text can hand over to the old analysis: the new piece start
/// `at` maps to old checkpoint `checkpoint`, inside the shared stretch that ends at old byte
/// `stretch_end`.
struct Handover {
    at: usize,
    checkpoint: usize,
    stretch_end: usize,
}

/// The analysis of `new` (edited from the text of `old`, sharing the stretches `same`) with
/// checkpoints every `segment` bytes where it splits afresh; `None` when `same` is not as claimed.
pub(super) fn reuse<'n>(
    old: &Analysis<'_>,
    old_text: &str,
    new: &'n str,
    same: &[Same],
    segment: usize,
) -> Option<Analysis<'n>> {
    reuse_counting(old, old_text, new, same, segment).map(|(analysis, _)| analysis)
}

/// [`reuse`], and how many times the fresh split handed over to the old analysis.
pub(super) fn reuse_counting<'n>(
    old: &Analysis<'_>,
    old_text: &str,
    new: &'n str,
    same: &[Same],
    segment: usize,
) -> Option<(Analysis<'n>, usize)> {
    let bytes = new.as_bytes();
    if !shared_as_claimed(old_text.as_bytes(), bytes, same) {
        return None;
    }
    let olds = &old.checkpoints;
    // The old checkpoints, without the end boundary (nothing is copied past the last piece).
    let inner = &olds[..olds.len() - 1];
    let mut checkpoints: Vec<Boundary> = Vec::with_capacity(olds.len() + same.len() * 2);
    let mut long_pieces = Vec::new();
    let mut scratch = Vec::new();
    let (mut tokens, mut previous_start, mut resume) = (0, 0, 0);
    let (mut stretch, mut checkpoint, mut handovers) = (0, 0, 0);
    cache::with(|caches| loop {
        // A fresh split from `resume` (a piece start of the new text, a checkpoint already recorded
        // unless it is the text's start).
        let mut next_checkpoint = if resume == 0 { 0 } else { resume + segment };
        let mut handover = None;
        for piece in split::pieces(&new[resume..]) {
            let (start, end) = (resume + piece.start, resume + piece.end);
            if start > resume {
                while stretch < same.len() && same[stretch].to + same[stretch].len <= start {
                    stretch += 1;
                }
                if let Some(s) = same.get(stretch).filter(|s| s.to <= start) {
                    let q = s.from + (start - s.to);
                    while checkpoint < inner.len() && inner[checkpoint].start < q {
                        checkpoint += 1;
                    }
                    let stretch_end = s.from + s.len;
                    // At least the next old checkpoint must be reachable for a handover to pay.
                    let pays = inner.get(checkpoint).is_some_and(|c| c.start == q)
                        && inner
                            .get(checkpoint + 1)
                            .is_some_and(|c| c.lookahead_before <= stretch_end);
                    if pays {
                        handover = Some(Handover {
                            at: start,
                            checkpoint,
                            stretch_end,
                        });
                        break;
                    }
                }
            }
            if start >= next_checkpoint {
                checkpoints.push(Boundary {
                    start,
                    tokens_before: tokens,
                    lookahead_before: lookahead_before(bytes, previous_start, start),
                });
                next_checkpoint = start.saturating_add(segment);
            }
            previous_start = start;
            tokens += count_piece(bytes, start..end, caches, &mut scratch, &mut long_pieces);
        }
        let Some(Handover {
            at,
            checkpoint: first,
            stretch_end,
        }) = handover
        else {
            break;
        };
        if checkpoints.last().is_none_or(|c| c.start != at) {
            checkpoints.push(Boundary {
                start: at,
                tokens_before: tokens,
                lookahead_before: lookahead_before(bytes, previous_start, at),
            });
        }
        // Old checkpoints `first + 1 ..= last` are copied: every piece before them from old
        // checkpoint `first` on looked no further than the shared stretch.
        let base = inner[first];
        let last = first
            + inner[first + 1..]
                .iter()
                .take_while(|c| c.lookahead_before <= stretch_end)
                .count();
        let shift = |old_at: usize| old_at - base.start + at;
        for c in &inner[first + 1..=last] {
            checkpoints.push(Boundary {
                start: shift(c.start),
                tokens_before: c.tokens_before - base.tokens_before + tokens,
                lookahead_before: shift(c.lookahead_before),
            });
        }
        let first_long = old
            .long_pieces
            .partition_point(|(start, _)| *start < base.start);
        for (start, long) in old.long_pieces[first_long..]
            .iter()
            .take_while(|(start, _)| *start < inner[last].start)
        {
            long_pieces.push((shift(*start), long.reused()));
        }
        handovers += 1;
        let end = checkpoints[checkpoints.len() - 1];
        (resume, tokens, checkpoint) = (end.start, end.tokens_before, last);
    });
    checkpoints.push(Boundary {
        start: new.len(),
        tokens_before: tokens,
        lookahead_before: lookahead_before(bytes, previous_start, new.len()),
    });
    Some((
        Analysis::from_parts(new, checkpoints, long_pieces),
        handovers,
    ))
}
