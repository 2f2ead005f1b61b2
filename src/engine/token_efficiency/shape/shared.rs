//! The stretches the edited text shares with the submitted one, for the S-4 search: its prefix
//! analysis is then built from the submitted text's, tokenizing afresh only around the edits
//! ([`Tokenized::edited`]), instead of tokenizing the whole edited text again.
//!
//! Read off the atoms' final state: a live atom that was not rewritten is the same bytes in both
//! texts, and a rewritten one (S-3) shares the bytes its replacement begins with (the kept
//! characters). The tokenizer checks the stretches byte for byte, so a wrong one costs only time.
//!
//! [`Tokenized::edited`]: crate::engine::tokenizer::Tokenized::edited

use super::Document;
use crate::engine::tokenizer::Same;

/// Bytes at the start of `a` and `b` that are the same.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Document<'_> {
    /// The stretches of the submitted text that the live text (as [`Document::live_text`] writes
    /// it) holds unchanged, in order, each as long as it can be.
    pub(super) fn shared_stretches(&self) -> Vec<Same> {
        // The rewritten atoms in order (S-3's few), so the loop looks none of the others up.
        let mut rewritten: Vec<usize> = self.replaced.keys().copied().collect();
        rewritten.sort_unstable();
        let mut rewritten = rewritten.into_iter().peekable();
        let mut same: Vec<Same> = Vec::new();
        let mut to = 0;
        for atom in 0..self.atom_start.len() {
            if !self.is_live_atom(atom) {
                continue;
            }
            let (from, end) = (self.atom_start[atom], self.atom_end[atom]);
            // Unchanged: the atom's own bytes; rewritten: the kept beginning of its replacement.
            let (len, written) = if rewritten.next_if_eq(&atom).is_some() {
                let text = self.atom_text(atom).as_bytes();
                (
                    common_prefix(&self.text.as_bytes()[from..end], text),
                    text.len(),
                )
            } else {
                (end - from, end - from)
            };
            if len > 0 {
                match same.last_mut() {
                    Some(last) if last.from + last.len == from && last.to + last.len == to => {
                        last.len += len;
                    }
                    _ => same.push(Same { from, to, len }),
                }
            }
            to += written;
        }
        same
    }
}
