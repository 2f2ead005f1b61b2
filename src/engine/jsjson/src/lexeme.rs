//! The JSON lexemes every hand-written JSON reader and writer in the engine scans the same way: a
//! number literal (RFC 8259 grammar, no leading `+`, no leading zeros, digits after `.` and `e`), the
//! four hex digits of a `\u` escape, and the plain run of a string (bytes a literal holds as they
//! stand: no `"`, no `\\`, no control byte), found eight bytes at a time. Pure byte scanning; the
//! readers keep their own error types.

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
#[inline(always)]
fn plain_run_and_bits(bytes: &[u8]) -> (usize, u64) {
    let mut bits = 0;
    let mut i = 0;
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
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    (i, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn hex_escapes() {
        assert_eq!(hex4(b"00e9", 0), Some(0xe9));
        assert_eq!(hex4(b"\\uD83D", 2), Some(0xd83d));
        assert_eq!(hex4(b"12g4", 0), None);
        assert_eq!(hex4(b"123", 0), None);
    }
}
