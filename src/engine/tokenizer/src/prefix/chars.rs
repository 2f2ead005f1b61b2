//! Code-point offsets: S-4 counts its cuts in code points, the tokenizer works on bytes.

use crate::split;

/// The nearest code-point boundary of `text` at or before byte `at` (`at <= text.len()`).
pub(super) fn char_start_at_or_before(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// [`char_boundary`] for an `n` that is usually at or near the text's end (S-4's `max` is the
/// text's length minus one): counts all code points at once, then steps back from the end.
pub(super) fn char_boundary_near_end(text: &str, n: usize) -> (usize, usize) {
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
