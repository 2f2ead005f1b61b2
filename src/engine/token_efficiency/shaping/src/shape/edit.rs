//! Edits of the live text: atoms killed or replaced, each application's count taken over the
//! window between the nearest safe cuts around it (exact without re-tokenizing the payload), and
//! its receipt entry recorded.

use super::recount::safe_cut;
use super::{Document, NONE};
use crate::ops::Op;
use crate::receipt::ReceiptEntry;
use crate::tokenizer;
use std::borrow::Cow;
use std::ops::Range;

/// How far a scan for a safe cut inside a rewritten atom goes before it gives up.
const CUT_SCAN: usize = 256;

/// The shortest middle of a rewritten atom whose count is kept for the recount.
const KNOWN_MIN: usize = 256;

/// The shortest stretch of the submitted text whose count is read off its tokenization rather
/// than counted: a read costs a split of the 4 KiB segment each end lies in (about what counting
/// those bytes costs), so shorter stretches are counted.
pub(super) const READ_OFF_MIN: usize = 16 * 1024;

/// The first cut at or after byte `from` of `text` (within [`CUT_SCAN`] bytes) that is safe
/// ([`tokenizer::is_piece_start`]) with a character of `text` on each side.
fn safe_cut_after(text: &str, from: usize) -> Option<usize> {
    let mut before = text[..from].chars().next_back()?;
    for (i, c) in text[from..].char_indices() {
        if i > CUT_SCAN {
            return None;
        }
        if tokenizer::is_piece_start(before, c) {
            return Some(from + i);
        }
        before = c;
    }
    None
}

/// The last cut at or before byte `to` of `text` (within [`CUT_SCAN`] bytes) that is safe with a
/// character of `text` on each side.
fn safe_cut_before(text: &str, to: usize) -> Option<usize> {
    let mut after = text[to..].chars().next()?;
    for (i, c) in text[..to].char_indices().rev() {
        if to - i > CUT_SCAN {
            return None;
        }
        if tokenizer::is_piece_start(c, after) {
            return Some(i + c.len_utf8());
        }
        after = c;
    }
    None
}

/// The last safe cut in `text` read backwards from its end, where `after` is the character that
/// follows `text` (None: nothing follows yet); on return `after` is `text`'s first character when
/// no cut was found. A cut at `text.len()` takes nothing of it.
fn last_safe_cut(text: &str, after: &mut Option<char>) -> Option<usize> {
    for (i, c) in text.char_indices().rev() {
        if let Some(next) = *after {
            if tokenizer::is_piece_start(c, next) {
                return Some(i + c.len_utf8());
            }
        }
        *after = Some(c);
    }
    None
}

/// The first safe cut in `text` read forwards, where `before` is the character that precedes
/// `text` (None: nothing precedes yet); on return `before` is `text`'s last character when no cut
/// was found. A cut at 0 takes nothing of it.
fn first_safe_cut(text: &str, before: &mut Option<char>) -> Option<usize> {
    for (i, c) in text.char_indices() {
        if let Some(previous) = *before {
            if tokenizer::is_piece_start(previous, c) {
                return Some(i);
            }
        }
        *before = Some(c);
    }
    None
}

impl Document<'_> {
    /// Whether atom `atom` is still in the live text.
    pub(super) fn is_live_atom(&self, atom: usize) -> bool {
        self.live.is_empty() || self.live[atom]
    }

    /// The liveness flags and union-find links, made at the first edit (most payloads that need
    /// only S-4 are never edited before it).
    pub(super) fn track_liveness(&mut self) {
        if self.live.is_empty() {
            let atoms = self.atom_start.len();
            self.live = vec![true; atoms];
            self.left = (0..=atoms).collect();
            self.right = (0..=atoms + 1).collect();
        }
    }

    /// Nearest live atom at or before `atom` (None before the first).
    pub(super) fn live_at_or_before(&mut self, atom: usize) -> Option<usize> {
        // left[i + 1] links index i; left[0] is the sentinel "none".
        let mut i = atom + 1;
        while self.left[i] != i {
            i = self.left[i];
        }
        let root = i;
        let mut j = atom + 1;
        while self.left[j] != root {
            let next = self.left[j];
            self.left[j] = root;
            j = next;
        }
        (root > 0).then(|| root - 1)
    }

    /// Nearest live atom at or after `atom` (None past the last).
    pub(super) fn live_at_or_after(&mut self, atom: usize) -> Option<usize> {
        let end = self.live.len();
        let mut i = atom.min(end);
        while self.right[i] != i {
            i = self.right[i];
        }
        let root = i;
        let mut j = atom.min(end);
        while self.right[j] != root {
            let next = self.right[j];
            self.right[j] = root;
            j = next;
        }
        (root < end).then_some(root)
    }

    pub(super) fn kill_atom(&mut self, atom: usize) {
        self.changed.push(atom);
        self.live[atom] = false;
        self.left[atom + 1] = atom;
        self.right[atom] = atom + 1;
    }

    /// Appends to `out` the live text before an edit that starts `head` bytes into atom `first`
    /// (`head` is the atom's unchanged beginning), back to the nearest safe cut (or the start of
    /// the text), and returns the byte of the submitted text where the atom it starts in would put
    /// it (a claim [`Self::read_off`] checks byte for byte before it relies on it). The walk back
    /// finds where the context starts; the text is then copied forwards, straight into `out`.
    fn push_left_context(&mut self, first: usize, head: &str, out: &mut String) -> usize {
        let mut after = None;
        if let Some(cut) = last_safe_cut(head, &mut after) {
            out.push_str(&head[cut..]);
            return self.atom_start[first] + cut;
        }
        let mut start: Option<(usize, usize)> = None;
        let mut cursor = if first == 0 {
            None
        } else {
            self.live_at_or_before(first - 1)
        };
        while let Some(atom) = cursor {
            if let Some(cut) = last_safe_cut(self.atom_text(atom), &mut after) {
                start = Some((atom, cut));
                break;
            }
            start = Some((atom, 0));
            cursor = if atom == 0 {
                None
            } else {
                self.live_at_or_before(atom - 1)
            };
        }
        let Some((atom, cut)) = start else {
            out.push_str(head);
            return self.atom_start[first];
        };
        out.push_str(&self.atom_text(atom)[cut..]);
        let mut cursor = self.live_at_or_after(atom + 1);
        while let Some(live) = cursor.filter(|&live| live < first) {
            out.push_str(self.atom_text(live));
            cursor = self.live_at_or_after(live + 1);
        }
        out.push_str(head);
        self.atom_start[atom] + cut
    }

    /// Appends to `out` the live text after atom `last`, up to the nearest safe cut (or the end
    /// of the text), and returns the byte of the submitted text where the atom it ends in would
    /// end it (a claim, as [`Self::push_left_context`]'s).
    fn push_right_context(&mut self, last: usize, out: &mut String) -> usize {
        let mut previous: Option<char> = None;
        let mut end = self.atom_end[last];
        let mut cursor = self.live_at_or_after(last + 1);
        while let Some(atom) = cursor {
            let text = self.atom_text(atom);
            if let Some(cut) = first_safe_cut(text, &mut previous) {
                out.push_str(&text[..cut]);
                end = self.atom_start[atom] + cut;
                break;
            }
            out.push_str(text);
            end = self.atom_end[atom];
            cursor = self.live_at_or_after(atom + 1);
        }
        end
    }

    /// `count(window)` read off the submitted text's tokenization, when the window is long
    /// ([`READ_OFF_MIN`]) and is the submitted text's bytes `a..b` between two cuts safe in it (all
    /// three checked here: a count is a function of the bytes alone). `copied` is a range of the
    /// window that was copied from the submitted bytes at `a + copied.start` (empty when none): it
    /// holds them by construction, so only the rest is compared.
    fn read_off(&self, window: &str, a: usize, b: usize, copied: Range<usize>) -> Option<usize> {
        let submitted = self.text;
        let bytes = submitted.as_bytes();
        let (w, c) = (window.as_bytes(), copied);
        let holds = self.worth_reading_off(a, b)
            && b.checked_sub(a) == Some(window.len())
            && c.start <= c.end
            && c.end <= w.len()
            && bytes.get(a..a + c.start) == Some(&w[..c.start])
            && bytes.get(a + c.end..b) == Some(&w[c.end..])
            && safe_cut(submitted, a)
            && safe_cut(submitted, b);
        if holds {
            self.submitted_count_between(a, b)
        } else {
            None
        }
    }

    /// Whether the count of the submitted bytes `a..b` is cheaper read off the submitted text's
    /// tokenization than counted: a long stretch ([`READ_OFF_MIN`]), or one where a long piece
    /// starts (whose merge is the tokenizer's slowest work).
    fn worth_reading_off(&self, a: usize, b: usize) -> bool {
        b.saturating_sub(a) >= READ_OFF_MIN
            || self
                .submitted
                .is_some_and(|submitted| submitted.long_piece_within(a, b))
    }

    /// `count(submitted[a..cut] + suffix)` from the submitted text's tokenization, healing the long
    /// piece the cut falls in from its kept merge, when a long piece starts in `a..cut` (else
    /// `None`: counting is cheaper) and `a < cut` is a cut safe in the submitted text (checked).
    pub(super) fn count_from_submitted(&self, a: usize, cut: usize, suffix: &str) -> Option<usize> {
        let submitted = self.submitted?;
        if !(a < cut && submitted.long_piece_within(a, cut) && safe_cut(self.text, a)) {
            return None;
        }
        let joined = submitted.count_with_suffix(cut, suffix)?;
        joined.checked_sub(submitted.tokens_before(a)?)
    }

    /// Kills every live atom in `first..=last`, appending their text to `out`.
    fn push_killed(&mut self, first: usize, last: usize, out: &mut String) {
        let mut cursor = self.live_at_or_after(first);
        while let Some(atom) = cursor.filter(|&a| a <= last) {
            out.push_str(self.atom_text(atom));
            self.kill_atom(atom);
            cursor = self.live_at_or_after(atom + 1);
        }
    }

    /// Applies one edit of the live text and records its receipt entry: either the live atoms
    /// `first..=last` removed, or (with `replacement`) atom `first` rewritten, where the new text
    /// keeps the atom's first `head` bytes (only the rest is counted as changed).
    pub(super) fn apply(
        &mut self,
        entry: (Op, String, Option<usize>),
        first: usize,
        last: usize,
        replacement: Option<(usize, String)>,
    ) {
        let (op, path, index) = entry;
        self.track_liveness();
        // One buffer, kept between edits, for both windows: the context around what is removed
        // (`left | removed | right`), then, with the middle swapped, around what is inserted.
        let mut window = std::mem::take(&mut self.window);
        window.clear();
        let kept_head = replacement.as_ref().map_or(0, |(head, _)| *head);
        // The part of the window copied from the submitted bytes where the window claims them.
        let mut copied = 0..0;
        let (from, left_len) = match &replacement {
            Some((head, _)) => {
                // The atom's text before the rewrite: the submitted bytes unless rewritten before.
                let text: &str = self.text;
                let old = match self.rewrite_of(first) {
                    Some(rewritten) => Cow::Owned(rewritten.clone()),
                    None => Cow::Borrowed(&text[self.atom_start[first]..self.atom_end[first]]),
                };
                // Room for the contexts too: a long literal's window is not grown by copies.
                window.reserve(old.len() - head + 512);
                let from = self.push_left_context(first, &old[..*head], &mut window);
                let left_len = window.len();
                window.push_str(&old[*head..]);
                let at = self.atom_start[first] + head;
                if matches!(old, Cow::Borrowed(_)) && from + left_len == at {
                    copied = left_len..window.len();
                }
                (from, left_len)
            }
            None => {
                let from = self.push_left_context(first, "", &mut window);
                let left_len = window.len();
                self.push_killed(first, last, &mut window);
                (from, left_len)
            }
        };
        let removed_end = window.len();
        let to = self.push_right_context(last, &mut window);
        // A long window that is still the submitted text's bytes is read off its tokenization
        // ([`Self::read_off`]); where a rewrite's middle was counted once
        // ([`Self::count_rewritten_middle`]), the window before is counted in three parts cut at
        // safe cuts.
        let read = self.read_off(&window, from, to, copied);
        let middle = match (kept_head, read) {
            (head, None) if replacement.is_some() => self.count_rewritten_middle(first, head),
            _ => None,
        };
        let removed_tokens = match (read, middle) {
            (Some(tokens), _) => tokens,
            (None, Some((from, to, tokens))) => {
                tokenizer::count(&window[..left_len + from])
                    + tokens
                    + tokenizer::count(&window[left_len + to..])
            }
            (None, None) => tokenizer::count(&window),
        };
        let removed_chars = window[left_len..removed_end].chars().count() as u64;
        let inserted = replacement
            .as_ref()
            .map_or("", |(head, text)| &text[*head..]);
        let inserted_chars = inserted.chars().count() as u64;
        window.replace_range(left_len..removed_end, inserted);
        // A rewrite keeps the atom's head: where a long piece starts in the submitted bytes the
        // left context holds, the window is counted as the submitted text up to the head's end
        // joined with the rest, healed from that piece's kept merge.
        let kept_to = self.atom_start[first] + kept_head;
        let from_submitted = (kept_head > 0
            && self.text.get(from..kept_to) == Some(&window[..left_len]))
        .then(|| self.count_from_submitted(from, kept_to, &window[left_len..]))
        .flatten();
        let inserted_tokens = from_submitted.unwrap_or_else(|| tokenizer::count(&window));
        self.window = window;
        // The rewrite's new text is recorded once the window before it is counted.
        if let Some((_, text)) = replacement {
            if self.rewritten.is_empty() {
                self.rewritten = vec![false; self.atom_start.len()];
            }
            self.rewritten[first] = true;
            self.changed.push(first);
            self.replaced.insert(first, text);
        }
        let tokens_before = self.tokens;
        let chars_before = self.chars;
        let tokens_after =
            (tokens_before + inserted_tokens as u64).saturating_sub(removed_tokens as u64);
        let chars_after = chars_before + inserted_chars - removed_chars;
        self.tokens = tokens_after;
        self.chars = chars_after;
        self.receipt.push(ReceiptEntry {
            op,
            path,
            index,
            chars_before,
            chars_after,
            tokens_before,
            tokens_after,
        });
    }

    /// The middle of a rewritten atom's removed part (the bytes after its first `head`), between
    /// the first safe cut after `head` and the last one before the atom's last character, counted
    /// once: returns those cuts relative to `head` and the count, and records the span in
    /// [`Document::known`] so the stretch recount ([`super::recount`]) reads it instead of
    /// counting the same submitted bytes again. `None` when the atom was rewritten before, no such
    /// cuts are found near the ends, or the middle is short.
    fn count_rewritten_middle(
        &mut self,
        atom: usize,
        head: usize,
    ) -> Option<(usize, usize, usize)> {
        if self.rewrite_of(atom).is_some() {
            return None;
        }
        let (start, end) = (self.atom_start[atom], self.atom_end[atom]);
        let original = &self.text[start..end];
        let last_char = original.char_indices().next_back()?.0;
        let from = safe_cut_after(original, head)?;
        let to = safe_cut_before(original, last_char)?;
        if to < from + KNOWN_MIN {
            return None;
        }
        let tokens = self
            .read_off_between(start + from, start + to)
            .unwrap_or_else(|| tokenizer::count(&original[from..to]));
        self.known.push((start + from, start + to, tokens));
        Some((from - head, to - head, tokens))
    }

    /// `count(submitted[a..b])` read off the submitted text's tokenization, for `a <= b` that are
    /// both safe cuts in the submitted text (or its ends), where the pieces before `b` hold the
    /// pieces before `a` and those of the stretch exactly: the caller checks the cuts. `None` when
    /// the op did not hand the tokenization over.
    pub(super) fn submitted_count_between(&self, a: usize, b: usize) -> Option<usize> {
        let submitted = self.submitted?;
        Some(submitted.tokens_before(b)? - submitted.tokens_before(a)?)
    }

    /// [`Self::submitted_count_between`] where reading off pays ([`Self::worth_reading_off`]),
    /// else `None` (count the bytes instead); the same contract on the cuts.
    pub(super) fn read_off_between(&self, a: usize, b: usize) -> Option<usize> {
        if self.worth_reading_off(a, b) {
            self.submitted_count_between(a, b)
        } else {
            None
        }
    }

    /// Removes a child from its container (one receipt application), with the comma that goes with
    /// it: its own when a live sibling precedes it, else the next live sibling's.
    pub(super) fn remove_child(
        &mut self,
        child: usize,
        op: Op,
        path: String,
        index: Option<usize>,
    ) {
        let node = &self.nodes[child];
        let (prev, next, parent) = (node.prev_live, node.next_live, node.parent);
        let (mut first, mut last) = (node.span_first, node.last_atom);
        if prev != NONE {
            first = node.comma_atom;
        } else if next != NONE {
            last = self.nodes[next].comma_atom;
        }
        debug_assert!(first != NONE && last != NONE, "a later sibling has a comma");
        if prev != NONE {
            self.nodes[prev].next_live = next;
        }
        if next != NONE {
            self.nodes[next].prev_live = prev;
        }
        self.nodes[parent].live_children -= 1;
        self.apply((op, path, index), first, last, None);
    }

    /// The atoms edits killed or rewrote, in document order, each once. The atoms tile the
    /// submitted text (the builder checks it), so the bytes between two of them are unchanged.
    pub(super) fn changed_atoms(&self) -> Vec<usize> {
        let mut changed = self.changed.clone();
        changed.sort_unstable();
        changed.dedup();
        changed
    }

    /// The live text (when anything was edited): the submitted text's bytes between the changed
    /// atoms copied in whole stretches, and each changed atom's live text (none when killed).
    pub(super) fn live_text(&self) -> String {
        let mut text = String::with_capacity(self.text.len());
        let mut at = 0;
        for atom in self.changed_atoms() {
            text.push_str(&self.text[at..self.atom_start[atom]]);
            if self.is_live_atom(atom) {
                text.push_str(self.atom_text(atom));
            }
            at = self.atom_end[atom];
        }
        text.push_str(&self.text[at..]);
        text
    }
}
