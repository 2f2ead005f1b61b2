//! The cl100k pre-tokenizer, hand-written to match npm gpt-tokenizer's split regex exactly as V8
//! runs it (flags `gu`, matched with `matchAll` over the whole text):
//!
//! ```text
//! '(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//! | ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s
//! ```
//!
//! Alternatives are tried in order at each position (JS alternation is ordered, quantifiers greedy
//! with backtracking); every code point is matched by some alternative, so the pieces partition the
//! text. `\s` is JavaScript's (it includes U+FEFF and excludes U+0085); `\p{L}`, `\p{N}` come from
//! the V8 table build.rs compiled. No regex engine runs: each alternative is a direct scan.

use super::tables::{
    block_is_letters, class_of, CLASS_LETTER, CLASS_NEWLINE, CLASS_NUMBER, CLASS_OTHER,
};

/// Decodes the code point starting at byte `at` of valid UTF-8 `bytes`: (code point, byte length).
#[inline(always)]
fn decode(bytes: &[u8], at: usize) -> (u32, usize) {
    let b0 = bytes[at] as u32;
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (bytes[at + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        let cp = ((b0 & 0x0F) << 12)
            | ((bytes[at + 1] as u32 & 0x3F) << 6)
            | (bytes[at + 2] as u32 & 0x3F);
        (cp, 3)
    } else {
        let cp = ((b0 & 0x07) << 18)
            | ((bytes[at + 1] as u32 & 0x3F) << 12)
            | ((bytes[at + 2] as u32 & 0x3F) << 6)
            | (bytes[at + 3] as u32 & 0x3F);
        (cp, 4)
    }
}

/// Byte length of the UTF-8 sequence whose lead byte is `lead`.
#[inline(always)]
pub fn char_len(lead: u8) -> usize {
    match lead {
        0..0xC0 => 1,
        0xC0..0xE0 => 2,
        0xE0..0xF0 => 3,
        _ => 4,
    }
}

/// Class and byte length of the code point at `at`.
#[inline(always)]
fn class_at(bytes: &[u8], at: usize) -> (u8, usize) {
    let b0 = bytes[at];
    if b0 < 0x80 {
        return (class_of(b0 as u32), 1);
    }
    let (cp, len) = decode(bytes, at);
    (class_of(cp), len)
}

/// High bit of each byte of the little-endian word `w` that is not an ASCII letter.
#[inline(always)]
fn non_ascii_letters(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Lower-cased ASCII without its high bit: each byte at most 0x7F, so no sum below carries
    // into the next byte.
    let folded = (w | 0x2020_2020_2020_2020) & !HIGH;
    let from_a = folded + ONES * (0x80 - b'a' as u64);
    let past_z = folded + ONES * (0x80 - (b'z' as u64 + 1));
    !(from_a & !past_z & !w) & HIGH
}

/// End of the run of letters starting at `at`: eight ASCII letters at a time while the text has
/// them, three-byte code points of blocks that are all letters (CJK ideographs, Hangul) without
/// decoding them, anything else code point by code point.
#[inline(always)]
fn letters_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(word) = bytes.get(at..at + 8) {
        let others = non_ascii_letters(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        if others != 0 {
            at += others.trailing_zeros() as usize / 8;
            break;
        }
        at += 8;
    }
    while at < bytes.len() {
        let lead = bytes[at];
        // A three-byte code point's block (`cp >> 8`) is its lead byte's low four bits and the
        // second byte's bits 2..6 (valid UTF-8: the continuation bytes are there).
        if lead & 0xF0 == 0xE0
            && block_is_letters(
                usize::from(lead & 0x0F) << 4 | usize::from(bytes[at + 1] >> 2 & 0x0F),
            )
        {
            at += 3;
            continue;
        }
        let (c, len) = class_at(bytes, at);
        if c != CLASS_LETTER {
            break;
        }
        at += len;
    }
    at
}

/// End of the run of code points of class `class` starting at `at`.
#[inline(always)]
fn run_end(bytes: &[u8], mut at: usize, class: u8) -> usize {
    while at < bytes.len() {
        let (c, len) = class_at(bytes, at);
        if c != class {
            break;
        }
        at += len;
    }
    at
}

#[inline(always)]
fn is_whitespace(class: u8) -> bool {
    class >= super::tables::CLASS_SPACE
}

/// End (exclusive byte offset) of the piece that starts at `start` (`start < text.len()`).
pub fn piece_end(bytes: &[u8], start: usize) -> usize {
    let len = bytes.len();
    let (c0, w0) = class_at(bytes, start);
    let first = bytes[start];
    // '(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])
    if first == b'\'' && start + 1 < len {
        let b1 = bytes[start + 1].to_ascii_lowercase();
        match b1 {
            b's' | b'd' | b'm' | b't' => return start + 2,
            b'l' | b'v' | b'r' if start + 2 < len => {
                let b2 = bytes[start + 2].to_ascii_lowercase();
                if (b1 == b'l' && b2 == b'l') || (b1 != b'l' && b2 == b'e') {
                    return start + 3;
                }
            }
            _ => {}
        }
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if c0 == CLASS_LETTER {
        return letters_end(bytes, start + w0);
    }
    let next = start + w0;
    let c1 = if next < len {
        class_at(bytes, next).0
    } else {
        u8::MAX
    };
    if c0 != CLASS_NEWLINE && c0 != CLASS_NUMBER && c1 == CLASS_LETTER {
        return letters_end(bytes, next);
    }
    // \p{N}{1,3}
    if c0 == CLASS_NUMBER {
        let mut end = next;
        for _ in 0..2 {
            if end >= len {
                break;
            }
            let (c, w) = class_at(bytes, end);
            if c != CLASS_NUMBER {
                break;
            }
            end += w;
        }
        return end;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    let other_from = if c0 == CLASS_OTHER {
        Some(start)
    } else if first == b' ' && c1 == CLASS_OTHER {
        Some(next)
    } else {
        None
    };
    if let Some(from) = other_from {
        let mut end = run_end(bytes, from, CLASS_OTHER);
        while end < len && (bytes[end] == b'\r' || bytes[end] == b'\n') {
            end += 1;
        }
        return end;
    }
    // Here the first code point is whitespace.
    debug_assert!(is_whitespace(c0));
    let mut run = start;
    let mut last_newline_end = None;
    let mut last_char_start = start;
    while run < len {
        let (c, w) = class_at(bytes, run);
        if !is_whitespace(c) {
            break;
        }
        if c == CLASS_NEWLINE {
            last_newline_end = Some(run + w);
        }
        last_char_start = run;
        run += w;
    }
    // \s+$
    if run == len {
        return len;
    }
    // \s*[\r\n]
    if let Some(end) = last_newline_end {
        return end;
    }
    // \s+(?!\S)
    if last_char_start > start {
        return last_char_start;
    }
    // \s
    next
}

/// Whether byte `b` may be (part of) a whitespace code point: false only for ASCII that is not
/// whitespace.
#[inline]
pub fn may_be_whitespace(b: u8) -> bool {
    (b >= 0x80) | (b == b' ') | (b.wrapping_sub(b'\t') <= b'\r' - b'\t')
}

/// Exclusive end of the bytes the matcher examined to decide the piece `start..end`, or
/// `bytes.len() + 1` when it looked at the end of the text. If another text agrees with this one
/// on `..lookahead`, the matcher yields the same piece there (the regex has no lookbehind).
#[inline]
pub fn piece_lookahead(bytes: &[u8], start: usize, end: usize) -> usize {
    let len = bytes.len();
    let after = |at: usize| {
        if at >= len {
            len + 1
        } else {
            at + char_len(bytes[at])
        }
    };
    let mut lookahead = after(end);
    // Only a piece that starts with whitespace can have looked past the code point after it.
    if may_be_whitespace(bytes[start]) && is_whitespace(class_at(bytes, start).0) {
        let mut run = start;
        while run < len {
            let (c, w) = class_at(bytes, run);
            if !is_whitespace(c) {
                break;
            }
            run += w;
        }
        lookahead = lookahead.max(after(run));
    }
    lookahead
}

/// The two alternatives whose pieces can be arbitrarily long and continue predictably when more
/// text follows a cut inside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// `[^\r\n\p{L}\p{N}]?\p{L}+`
    Letters,
    /// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    Others,
    /// Whitespace only (`\s+$`, `\s*[\r\n]`, `\s+(?!\S)`, `\s`); continues by its own rules.
    Spaces,
}

/// The run kind of a whole non-empty piece, or `None` for digits and contractions.
pub fn run_kind(piece: &[u8]) -> Option<Run> {
    let (c0, w0) = class_at(piece, 0);
    if is_whitespace(c0) && (w0 == piece.len() || is_whitespace(class_at(piece, w0).0)) {
        return Some(Run::Spaces);
    }
    let mut last = piece.len() - 1;
    while piece[last] & 0xC0 == 0x80 {
        last -= 1;
    }
    if class_at(piece, last).0 == CLASS_LETTER {
        return Some(Run::Letters);
    }
    let spaced_other = piece[0] == b' ' && w0 < piece.len() && class_at(piece, w0).0 == CLASS_OTHER;
    (c0 == CLASS_OTHER || spaced_other).then_some(Run::Others)
}

/// How many bytes at the start of `tail` a `run` piece absorbs when its first bytes are `head`
/// (a prefix of that piece long enough to hold the run's first code points) and `tail` follows.
pub fn absorbed(run: Run, head: &[u8], tail: &[u8]) -> usize {
    let newline = |b: u8| b == b'\r' || b == b'\n';
    let mut at = match run {
        Run::Letters => return run_end(tail, 0, CLASS_LETTER),
        Run::Spaces => unreachable!("whitespace runs continue by their own rules"),
        Run::Others if newline(head[head.len() - 1]) => 0,
        Run::Others => run_end(tail, 0, CLASS_OTHER),
    };
    while at < tail.len() && newline(tail[at]) {
        at += 1;
    }
    at
}

/// Whether a piece starts at byte `q` (0 < q < len) of every text that holds `bytes` there,
/// whatever precedes them (see [`starts_piece_after`]). The pieces from `q` on are then those of
/// `bytes[q..]` alone.
pub fn is_sync_point(bytes: &[u8], q: usize) -> bool {
    if q == 0 || !bytes[q].is_ascii() {
        return false;
    }
    let before = q - last_char_len(&bytes[..q]);
    starts_piece_after(class_at(bytes, before).0, bytes[q])
}

/// Whether a piece always starts at an ASCII byte `after` that follows a code point of class
/// `before`, whatever surrounds the two: after a letter, an ASCII non-letter (`\p{L}+` and the
/// contractions end there, no other alternative holds a letter); after a number, an ASCII non-digit
/// (`\p{N}{1,3}` ends there, no other alternative holds a number).
pub fn starts_piece_after(before: u8, after: u8) -> bool {
    after.is_ascii()
        && match before {
            CLASS_LETTER => !after.is_ascii_alphabetic(),
            CLASS_NUMBER => !after.is_ascii_digit(),
            _ => false,
        }
}

/// Bytes of the leading whitespace code points of `bytes`.
pub fn whitespace_prefix(bytes: &[u8]) -> usize {
    let mut at = 0;
    while at < bytes.len() {
        let (c, w) = class_at(bytes, at);
        if !is_whitespace(c) {
            break;
        }
        at += w;
    }
    at
}

/// Byte length of the last code point of the non-empty `bytes`.
pub fn last_char_len(bytes: &[u8]) -> usize {
    let mut at = bytes.len() - 1;
    while bytes[at] & 0xC0 == 0x80 {
        at -= 1;
    }
    bytes.len() - at
}

/// The pieces of `text` as byte ranges, in order, covering it exactly.
pub fn pieces(text: &str) -> Pieces<'_> {
    Pieces {
        bytes: text.as_bytes(),
        at: 0,
    }
}

pub struct Pieces<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Iterator for Pieces<'_> {
    type Item = std::ops::Range<usize>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let start = self.at;
        self.at = piece_end(self.bytes, start);
        Some(start..self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        pieces(text).map(|r| &text[r]).collect()
    }

    #[test]
    fn the_lookahead_fast_path_skips_only_ascii_that_is_not_whitespace() {
        for b in 0u8..0x80 {
            let may_be_space = b == b' ' || (b'\t'..=b'\r').contains(&b);
            assert_eq!(
                may_be_space,
                is_whitespace(class_of(u32::from(b))),
                "byte {b:#x}"
            );
        }
    }

    #[test]
    fn eight_byte_letter_runs_find_the_first_other_byte() {
        for b in 0..=255u8 {
            let mut word = *b"abcdefgh";
            for at in 0..8 {
                word[at] = b;
                let others = non_ascii_letters(u64::from_le_bytes(word));
                let expected = if b.is_ascii_alphabetic() { 8 } else { at };
                assert_eq!(
                    (others.trailing_zeros() / 8) as usize,
                    expected,
                    "{b:#x} at {at}"
                );
                word[at] = b'a' + at as u8;
            }
        }
        assert_eq!(
            split("ABCxyzQRSTuvwxyzé中 end"),
            ["ABCxyzQRSTuvwxyzé中", " end"]
        );
    }

    #[test]
    fn letter_blocks_hold_only_letters_and_are_read_off_the_first_two_bytes() {
        let mut letter_blocks = 0;
        for cp in 0x800u32..0x10000 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let mut utf8 = [0u8; 4];
            let bytes = c.encode_utf8(&mut utf8).as_bytes();
            let block = usize::from(bytes[0] & 0x0F) << 4 | usize::from(bytes[1] >> 2 & 0x0F);
            assert_eq!(block, (cp >> 8) as usize, "{cp:x}");
            if block_is_letters(block) {
                assert_eq!(class_of(cp), CLASS_LETTER, "{cp:x}");
                letter_blocks += usize::from(cp & 0xFF == 0);
            }
        }
        // CJK ideographs 4E00-9FFF and most of Hangul at least.
        assert!(letter_blocks > 80, "{letter_blocks}");
        assert!(block_is_letters(0x4E) && !block_is_letters(0x30));
        assert_eq!(
            split("中文字符和日本語のテキスト。한국어도 있습니다.中x中!"),
            [
                "中文字符和日本語のテキスト",
                "。한국어도",
                " 있습니다",
                ".中x中",
                "!"
            ]
        );
    }

    #[test]
    fn splits_like_the_reference_regex() {
        assert_eq!(split("Hello world"), ["Hello", " world"]);
        assert_eq!(split("I'LL don't"), ["I", "'LL", " don", "'t"]);
        assert_eq!(split("12345"), ["123", "45"]);
        assert_eq!(split("a   b"), ["a", "  ", " b"]);
        assert_eq!(split("x \n\n y"), ["x", " \n\n", " y"]);
        assert_eq!(split("end  "), ["end", "  "]);
        assert_eq!(split(" {}\n\nz"), [" {}\n\n", "z"]);
        assert_eq!(split("\t\u{FEFF}word"), ["\t", "\u{FEFF}word"]);
        assert_eq!(split("a\u{85}b"), ["a", "\u{85}b"]);
        assert_eq!(split("  1"), [" ", " ", "1"]);
    }
}
