//! The JSON lexemes every hand-written JSON reader and writer in the engine scans the same way: a
//! number literal (RFC 8259 grammar, no leading `+`, no leading zeros, digits after `.` and `e`), the
//! four hex digits of a `\u` escape, and the plain run of a string (bytes a literal holds as they
//! stand: no `"`, no `\\`, no control byte); and the characters of a UTF-8 text. Pure byte
//! scanning; the readers keep their own error types.
//!
//! The scans go eight bytes at a time (SWAR) everywhere; on wasm32 a plain run past its first eight
//! bytes and the character count go sixteen at a time with SIMD128 ([`wide`]: the same tests, lane
//! by lane, as the word versions here, which the host tests check against byte-at-a-time oracles).

/// End (exclusive) of the number literal at `start` when JavaScript prints it exactly as written:
/// `0` or `-?[1-9][0-9]{0,14}`, followed by no fraction, exponent or further digit (the common
/// number: ids, counts, scores), found in one scan of its digits. `None` for any other number
/// (the canonical walks then read and print it) and where no number starts.
#[inline(always)]
pub fn plain_integer_end(bytes: &[u8], start: usize) -> Option<usize> {
    let from = start + usize::from(bytes.get(start) == Some(&b'-'));
    let mut end = from;
    while let Some(b'0'..=b'9') = bytes.get(end) {
        end += 1;
    }
    let plain = match bytes.get(from) {
        Some(b'0') => end == from + 1 && from == start,
        _ => (1..=15).contains(&(end - from)),
    };
    (plain && !matches!(bytes.get(end), Some(b'.' | b'e' | b'E'))).then_some(end)
}

/// End (exclusive) of the JSON number literal starting at `start`, or `None` when none starts there.
pub fn number_end(bytes: &[u8], start: usize) -> Option<usize> {
    let digit = |i: usize| matches!(bytes.get(i), Some(b'0'..=b'9'));
    let digits_from = |mut i: usize| {
        while digit(i) {
            i += 1;
        }
        i
    };
    let mut pos = start;
    if bytes.get(pos) == Some(&b'-') {
        pos += 1;
    }
    pos = match bytes.get(pos) {
        Some(b'0') => pos + 1,
        Some(b'1'..=b'9') => digits_from(pos),
        _ => return None,
    };
    if bytes.get(pos) == Some(&b'.') {
        if !digit(pos + 1) {
            return None;
        }
        pos = digits_from(pos + 1);
    }
    if let Some(b'e' | b'E') = bytes.get(pos) {
        pos += 1;
        if let Some(b'+' | b'-') = bytes.get(pos) {
            pos += 1;
        }
        if !digit(pos) {
            return None;
        }
        pos = digits_from(pos);
    }
    Some(pos)
}

/// The UTF-16 code unit written by the four hex digits at `at` (after `\u`), or `None`.
pub fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    bytes.get(at..at + 4)?.iter().try_fold(0u16, |unit, d| {
        (*d as char)
            .to_digit(16)
            .map(|nibble| unit * 16 + nibble as u16)
    })
}

/// Nonzero when any byte of the little-endian word `w` is `"`, `\\` or below 0x20; its lowest
/// set bit is the high bit of the first such byte (SWAR: a byte is zero iff subtracting 1 borrows
/// into its high bit, which was clear).
#[inline]
pub fn special_bytes(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    // A byte below 0x20 has its top three bits clear: (b & 0xE0) == 0.
    has_zero(w ^ (ONES * u64::from(b'"')))
        | has_zero(w ^ (ONES * u64::from(b'\\')))
        | has_zero(w & (ONES * 0xE0))
}

/// Length of the leading run of `bytes` that a JSON string copies as it stands: no `"`, no `\\`,
/// no control character. Eight bytes at a time (SWAR), the last few byte by byte.
pub fn plain_run(bytes: &[u8]) -> usize {
    plain_run_and_bits(bytes).0
}

/// [`plain_run`], also telling whether any byte it looked at has its high bit set (`false`: the
/// run is ASCII; `true` may be said of an ASCII run too, since bytes past the run are looked at).
pub fn plain_run_seeing_high(bytes: &[u8]) -> (usize, bool) {
    let (run, bits) = plain_run_and_bits(bytes);
    (run, bits & 0x8080_8080_8080_8080 != 0)
}

/// The one scan behind [`plain_run`] and [`plain_run_seeing_high`]: the run's length and the OR of
/// every word and byte looked at (inlined, so [`plain_run`], which drops the OR, does not compute it).
/// On wasm32 a run that goes past its first word is finished sixteen bytes at a time
/// ([`wide::plain_run_from`]); the first word stays inline, as most runs of escape-dense text end
/// within it.
#[inline(always)]
fn plain_run_and_bits(bytes: &[u8]) -> (usize, u64) {
    #[cfg(target_arch = "wasm32")]
    if let Some(chunk) = bytes.get(..8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let special = special_bytes(w);
        if special != 0 {
            return ((special.trailing_zeros() / 8) as usize, w);
        }
        let (run, high) = wide::plain_run_from(bytes, 8);
        return (run, w | u64::from(high) << 7);
    }
    plain_run_and_bits_from(bytes, 0, 0)
}

/// [`plain_run_and_bits`] eight bytes at a time from `i` (no special byte before it), `bits`
/// being the OR of what was looked at before.
#[inline(always)]
fn plain_run_and_bits_from(bytes: &[u8], mut i: usize, mut bits: u64) -> (usize, u64) {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        bits |= w;
        let special = special_bytes(w);
        if special != 0 {
            return (i + (special.trailing_zeros() / 8) as usize, bits);
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        bits |= u64::from(b);
        if is_special(b) {
            break;
        }
        i += 1;
    }
    (i, bits)
}

/// A byte a JSON string cannot hold as it stands: `"`, `\\` or a control byte.
#[inline(always)]
pub(crate) fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// A UTF-8 continuation byte (`10xxxxxx`): every byte of a character but its first.
#[inline(always)]
fn is_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// The characters (code points) of `text`: its bytes that start one (`str::chars().count()`,
/// eight bytes at a time, sixteen on wasm32, where std's count goes four at a time).
pub fn char_count(text: &str) -> usize {
    text.len() - continuation_bytes(text.as_bytes())
}

/// How many bytes of `bytes` are UTF-8 continuation bytes.
#[cfg(target_arch = "wasm32")]
fn continuation_bytes(bytes: &[u8]) -> usize {
    wide::continuation_bytes(bytes)
}

/// How many bytes of `bytes` are UTF-8 continuation bytes.
#[cfg(not(target_arch = "wasm32"))]
fn continuation_bytes(bytes: &[u8]) -> usize {
    continuation_bytes_by_word(bytes)
}

/// [`continuation_bytes`] eight bytes at a time: a byte's high bit set and the bit below it
/// clear (shifted up one place, each byte's bit 6 lands on its own bit 7).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn continuation_bytes_by_word(bytes: &[u8]) -> usize {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut count = 0;
    for chunk in &mut words {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        count += (w & !(w << 1) & HIGHS).count_ones() as usize;
    }
    let rest = words.remainder();
    count + rest.iter().filter(|&&b| is_continuation(b)).count()
}

/// The wasm32 scans, sixteen bytes at a time with SIMD128 (V8, and so workerd, runs it): each
/// lane tested as the word scans above test a byte. Safe code: the intrinsics used are safe, and
/// a 16-byte array built lane by lane compiles to one `v128.load`.
#[cfg(target_arch = "wasm32")]
mod wide {
    use super::{is_continuation, is_special};
    use core::arch::wasm32::{
        i8x16_bitmask, i8x16_lt, i8x16_splat, u8x16, u8x16_bitmask, u8x16_eq, u8x16_lt,
        u8x16_splat, v128, v128_or,
    };

    /// Sixteen bytes as one vector (built lane by lane: one `v128.load`).
    #[inline(always)]
    fn load(chunk: &[u8]) -> v128 {
        let b: &[u8; 16] = chunk.try_into().expect("sixteen bytes");
        u8x16(
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
            b[14], b[15],
        )
    }

    /// The plain run of `bytes` (see [`super::plain_run`]), none of whose first `i` bytes is
    /// special, and whether any byte looked at from `i` on has its high bit set.
    #[target_feature(enable = "simd128")]
    pub fn plain_run_from(bytes: &[u8], mut i: usize) -> (usize, bool) {
        let quote = u8x16_splat(b'"');
        let backslash = u8x16_splat(b'\\');
        let space = u8x16_splat(0x20);
        let mut seen = u8x16_splat(0);
        while let Some(chunk) = bytes.get(i..i + 16) {
            let v = load(chunk);
            seen = v128_or(seen, v);
            let special = v128_or(
                v128_or(u8x16_eq(v, quote), u8x16_eq(v, backslash)),
                u8x16_lt(v, space),
            );
            let lanes = u8x16_bitmask(special);
            if lanes != 0 {
                return (
                    i + lanes.trailing_zeros() as usize,
                    u8x16_bitmask(seen) != 0,
                );
            }
            i += 16;
        }
        let mut high = u8x16_bitmask(seen) != 0;
        while let Some(&b) = bytes.get(i) {
            high |= b >= 0x80;
            if is_special(b) {
                break;
            }
            i += 1;
        }
        (i, high)
    }

    /// How many bytes of `bytes` are UTF-8 continuation bytes: as signed bytes, 0x80..=0xbf are
    /// exactly those below -0x40.
    #[target_feature(enable = "simd128")]
    pub fn continuation_bytes(bytes: &[u8]) -> usize {
        let below = i8x16_splat(-0x40);
        let mut blocks = bytes.chunks_exact(16);
        let mut count = 0;
        for chunk in &mut blocks {
            count += i8x16_bitmask(i8x16_lt(load(chunk), below)).count_ones() as usize;
        }
        let rest = blocks.remainder();
        count + rest.iter().filter(|&&b| is_continuation(b)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain integer is found exactly where its literal (as `number_end` spans it) is `0` or
    /// `-?[1-9][0-9]{0,14}` and no digit follows it, and then JavaScript prints it as written.
    #[test]
    fn plain_integers_are_the_integers_printed_as_written() {
        let rule = |literal: &str| {
            let digits = literal.strip_prefix('-').unwrap_or(literal);
            literal == "0"
                || ((1..=15).contains(&digits.len())
                    && !digits.starts_with('0')
                    && digits.bytes().all(|b| b.is_ascii_digit()))
        };
        let fragments = ["-", "0", "1", "9", "5", ".", "e", "E", "+", "x", ",", "]"];
        let mut rng = context_meter_test_rng::Lcg(0x1e7);
        let (mut plain, mut other) = (0, 0);
        for len in 0..4000 {
            let text = rng.text(&fragments, 1 + len % 19);
            let found = plain_integer_end(text.as_bytes(), 0);
            // A literal `number_end` ends before a digit (`0` of `05`) is left to the general path.
            let expected = number_end(text.as_bytes(), 0).filter(|&end| {
                rule(&text[..end]) && !text[end..].starts_with(|c: char| c.is_ascii_digit())
            });
            assert_eq!(found, expected, "{text}");
            if let Some(end) = found {
                let value: f64 = text[..end].parse().unwrap();
                assert_eq!(crate::js_number(value), text[..end], "{text}");
                plain += 1;
            } else {
                other += 1;
            }
        }
        assert!(plain > 300 && other > 300, "{plain} {other}");
        for (text, end) in [
            ("0", Some(1)),
            ("0,", Some(1)),
            ("-0", None),
            ("01", None),
            ("-12]", Some(3)),
            ("123456789012345", Some(15)),
            ("-123456789012345", Some(16)),
            ("1234567890123456", None),
            ("1.5", None),
            ("1e3", None),
            ("1E3", None),
            ("-", None),
            ("x", None),
        ] {
            assert_eq!(plain_integer_end(text.as_bytes(), 0), end, "{text}");
        }
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        for (text, end) in [
            ("0", Some(1)),
            ("-0.5e+10,", Some(8)),
            ("123]", Some(3)),
            ("01", Some(1)),
            ("1E5", Some(3)),
            ("-", None),
            ("+1", None),
            ("1.", None),
            (".5", None),
            ("1e", None),
            ("1e+", None),
        ] {
            assert_eq!(number_end(text.as_bytes(), 0), end, "{text}");
        }
    }

    #[test]
    fn plain_run_stops_at_the_first_quote_backslash_or_control_byte() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(bytes.len())
        };
        // A second byte after the first (a borrow out of a zero byte marks the byte above it too)
        // must not move the answer; 0x7f, 0x80 and 0xff are plain.
        let bytes_of_interest: Vec<u8> = (0u8..=0x21)
            .chain([b'"', b'\\', 0x7f, 0x80, 0xff])
            .collect();
        for &first in &bytes_of_interest {
            for &second in &[b'a', 0, 0x01, b'"', 0x21] {
                for len in 0..40 {
                    for at in 0..=len {
                        let mut bytes = vec![b'a'; len];
                        if at < len {
                            bytes[at] = first;
                        }
                        if at + 1 < len {
                            bytes[at + 1] = second;
                        }
                        assert_eq!(
                            plain_run(&bytes),
                            naive(&bytes),
                            "{first:#x} then {second:#x} at {at}/{len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn plain_run_seeing_high_agrees_and_never_misses_a_high_byte() {
        let mut rng = context_meter_test_rng::Lcg(31);
        let alphabet = [b'a', b' ', b'"', b'\\', 0x01, 0x7f, 0x80, 0xc3, 0xa9, 0xff];
        for len in 0..80 {
            for _ in 0..40 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                let (run, high) = plain_run_seeing_high(&bytes);
                assert_eq!(run, plain_run(&bytes), "{bytes:?}");
                if !bytes[..run].is_ascii() {
                    assert!(high, "{bytes:?}");
                }
            }
            let ascii = vec![b'a'; len];
            assert_eq!(plain_run_seeing_high(&ascii), (len, false));
        }
    }

    #[test]
    fn char_count_is_the_count_of_chars() {
        let mut rng = context_meter_test_rng::Lcg(0xc4a5);
        let fragments = [
            "a",
            " ",
            "\u{7f}",
            "é",
            "ÿ",
            "中",
            "\u{ffff}",
            "😀",
            "\u{10ffff}",
        ];
        for len in 0..200 {
            let text = rng.text(&fragments, len);
            assert_eq!(char_count(&text), text.chars().count(), "{text}");
            assert_eq!(
                continuation_bytes_by_word(text.as_bytes()),
                text.len() - text.chars().count(),
                "{text}"
            );
        }
    }

    #[test]
    fn hex_escapes() {
        assert_eq!(hex4(b"00e9", 0), Some(0xe9));
        assert_eq!(hex4(b"\\uD83D", 2), Some(0xd83d));
        assert_eq!(hex4(b"12g4", 0), None);
        assert_eq!(hex4(b"123", 0), None);
    }
}
