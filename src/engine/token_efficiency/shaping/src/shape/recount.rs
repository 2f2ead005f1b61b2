//! The self-check of S-1..S-3's chain of windowed counts when no S-4 follows them: the edited
//! text's count is taken again from the submitted count and a fresh count of every stretch the
//! edits changed, read off the final text (not off the edits), each widened to cuts that are safe
//! in both texts. (When S-4 follows, its search needs the edited text's prefix analysis, built
//! from the submitted text's with fresh tokenization around the edits, and that analysis's count is
//! the check.)
//!
//! Why this is the full count: outside the changed stretches the two texts are the same bytes, and
//! a safe cut ([`tokenizer::is_piece_start`]) splits a text into halves whose counts add up. So
//! with both texts cut at the same stretch ends, `count(edited) = count(submitted) +
//! Σ count(edited stretch) − count(submitted stretch)`. The check is independent of the chain: the
//! chain counted one window per application as it went, against the live text of that moment;
//! this counts the net change once, from the atoms' final state. A wrong window, a wrong context,
//! an edit left out of the receipt or a figure carried wrongly makes the two disagree, and the op
//! fails closed. It costs a count of the changed stretches only, not of the whole edited payload.

use super::Document;
use crate::tokenizer;

/// Whether byte `at` of `text` is a safe cut (the start and the end of a text are).
pub(super) fn safe_cut(text: &str, at: usize) -> bool {
    match (text[..at].chars().next_back(), text[at..].chars().next()) {
        (Some(before), Some(after)) => tokenizer::is_piece_start(before, after),
        _ => true,
    }
}

/// Bytes at the start of `a` and `b` that are the same, cut back to a character boundary.
pub(super) fn common_prefix(a: &str, b: &str) -> usize {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let n = x.len().min(y.len());
    let mut i = 0;
    while i + 16 <= n && x[i..i + 16] == y[i..i + 16] {
        i += 16;
    }
    while i < n && x[i] == y[i] {
        i += 1;
    }
    while !(a.is_char_boundary(i) && b.is_char_boundary(i)) {
        i -= 1;
    }
    i
}

/// A changed stretch: `submitted[t.0..t.1]` became `edited[e.0..e.1]`.
#[derive(Clone, Copy)]
struct Stretch {
    t: (usize, usize),
    e: (usize, usize),
}

impl Document<'_> {
    /// The stretches of the submitted text whose atoms were removed or rewritten, in order, with
    /// where each lands in `edited`; `None` if they do not line up with `edited`.
    fn changed_stretches(&self, edited: &str) -> Option<Vec<Stretch>> {
        let mut stretches: Vec<Stretch> = Vec::new();
        let (mut t, mut e) = (0usize, 0usize);
        for atom in self.changed_atoms() {
            let (start, end) = (self.atom_start[atom], self.atom_end[atom]);
            // The unchanged atoms before it: the same bytes in both texts.
            e += start.checked_sub(t)?;
            let live = self.is_live_atom(atom);
            let written = if live { self.atom_text(atom) } else { "" };
            // A rewritten atom changed only from where it first differs from its original (S-3
            // keeps a string's first 2,000 characters).
            let same = match self.rewrite_of(atom) {
                Some(text) if live => common_prefix(&self.text[start..end], text),
                None if live => written.len(),
                _ => 0,
            };
            if same < written.len() || same < end - start {
                let (t0, e0) = (start + same, e + same);
                match stretches.last_mut() {
                    Some(last) if last.t.1 == t0 && last.e.1 == e0 => {
                        last.t.1 = end;
                        last.e.1 = e + written.len();
                    }
                    _ => stretches.push(Stretch {
                        t: (t0, end),
                        e: (e0, e + written.len()),
                    }),
                }
            }
            t = end;
            e += written.len();
        }
        e += self.text.len().checked_sub(t)?;
        (e == edited.len()).then_some(stretches)
    }

    /// `count(submitted[a..b])`, where the middles of rewritten atoms S-3's windows already counted
    /// ([`Document::known`]: spans of these same submitted bytes) are read instead of counted
    /// again. A count is a function of the bytes alone, so this is the count the recount would
    /// take; each span is used only when both its ends are cuts safe in the submitted text
    /// (checked here, not trusted), so the parts add up.
    fn submitted_count(&self, a: usize, b: usize) -> usize {
        let submitted = self.text;
        // A long stretch (both ends are safe cuts: the recount widened it to them) is read off
        // the submitted text's tokenization.
        if let Some(tokens) = self.read_off_between(a, b) {
            return tokens;
        }
        let first = self.known.partition_point(|&(start, _, _)| start < a);
        let (mut total, mut at) = (0, a);
        for &(start, end, tokens) in self.known[first..].iter().take_while(|k| k.1 <= b) {
            if !(safe_cut(submitted, start) && safe_cut(submitted, end)) {
                continue;
            }
            total += tokenizer::count(&submitted[at..start]) + tokens;
            at = end;
        }
        total + tokenizer::count(&submitted[at..b])
    }

    /// The token count of `edited` (the live text after S-1..S-3) recounted from
    /// `submitted_tokens` over the changed stretches only (see the module note); `None` when the
    /// texts do not line up.
    pub(super) fn recount_edited(&self, edited: &str, submitted_tokens: u64) -> Option<u64> {
        let submitted = self.text;
        let stretches = self.changed_stretches(edited)?;
        let mut total = i128::from(submitted_tokens);
        let mut next = 0;
        // The end of the previous widened stretch: a cut safe in both texts.
        let mut done = 0usize;
        while next < stretches.len() {
            let Stretch { mut t, mut e } = stretches[next];
            next += 1;
            // Where the texts part (the widening below only moves the stretch's start back
            // through bytes both texts share).
            let (parted, parted_e) = (t.0, e.0);
            // Widen left through the shared text before the stretch (the same bytes in both).
            while !(safe_cut(submitted, t.0) && safe_cut(edited, e.0)) {
                if t.0 <= done {
                    return None;
                }
                let step = submitted[..t.0].chars().next_back()?.len_utf8();
                t.0 -= step;
                e.0 -= step;
            }
            // Widen right through the shared text after it, taking in any stretch it reaches.
            while !(safe_cut(submitted, t.1) && safe_cut(edited, e.1)) {
                if let Some(following) = stretches.get(next).filter(|s| s.t.0 == t.1) {
                    t.1 = following.t.1;
                    e.1 = following.e.1;
                    next += 1;
                    continue;
                }
                let step = submitted[t.1..].chars().next()?.len_utf8();
                t.1 += step;
                e.1 += step;
            }
            // The edited stretch is the submitted bytes t.0..parted, then its own: counted from
            // the submitted tokenization when a long piece starts in the shared part.
            let shared_head = self.count_from_submitted(t.0, parted, &edited[parted_e..e.1]);
            let edited_tokens = shared_head.unwrap_or_else(|| tokenizer::count(&edited[e.0..e.1]));
            total += edited_tokens as i128;
            total -= self.submitted_count(t.0, t.1) as i128;
            done = t.1;
        }
        u64::try_from(total).ok()
    }
}
