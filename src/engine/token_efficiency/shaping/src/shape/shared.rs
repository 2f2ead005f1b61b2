//! The stretches the edited text shares with the submitted one, for the S-4 search: its prefix
//! analysis is then built from the submitted text's, tokenizing afresh only around the edits
//! ([`Tokenized::edited`]), instead of tokenizing the whole edited text again.
//!
//! Read off the atoms' final state: a live atom that was not rewritten is the same bytes in both
//! texts, and a rewritten one (S-3) shares the bytes its replacement begins with (the kept
//! characters). The tokenizer checks the stretches byte for byte, so a wrong one costs only time.
//!
//! [`Tokenized::edited`]: crate::tokenizer::Tokenized::edited

use super::recount::common_prefix;
use super::Document;
use crate::tokenizer::Same;

impl Document<'_> {
    /// The stretches of the submitted text that the live text (as [`Document::live_text`] writes
    /// it) holds unchanged, in order, each as long as it can be.
    pub(super) fn shared_stretches(&self) -> Vec<Same> {
        let mut same: Vec<Same> = Vec::new();
        let mut extend = |from: usize, to: usize, len: usize| {
            if len == 0 {
                return;
            }
            match same.last_mut() {
                Some(last) if last.from + last.len == from && last.to + last.len == to => {
                    last.len += len;
                }
                _ => same.push(Same { from, to, len }),
            }
        };
        // `at`: the submitted text's byte after the last changed atom; `to`: the live text's.
        let (mut at, mut to) = (0, 0);
        for atom in self.changed_atoms() {
            let (from, end) = (self.atom_start[atom], self.atom_end[atom]);
            // The unchanged atoms before it: their own bytes.
            extend(at, to, from - at);
            to += from - at;
            at = end;
            if !self.is_live_atom(atom) {
                continue;
            }
            // Rewritten: the kept beginning of its replacement.
            let (len, written) = match self.rewrite_of(atom) {
                Some(text) => (common_prefix(&self.text[from..end], text), text.len()),
                None => (end - from, end - from),
            };
            extend(from, to, len);
            to += written;
        }
        extend(at, to, self.text.len() - at);
        same
    }
}
