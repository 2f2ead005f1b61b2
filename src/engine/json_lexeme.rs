//! The two JSON lexemes every hand-written JSON reader in the engine scans the same way: a number
//! literal (RFC 8259 grammar, no leading `+`, no leading zeros, digits after `.` and `e`) and the four
//! hex digits of a `\u` escape. Pure byte scanning; the readers keep their own error types.

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
    fn hex_escapes() {
        assert_eq!(hex4(b"00e9", 0), Some(0xe9));
        assert_eq!(hex4(b"\\uD83D", 2), Some(0xd83d));
        assert_eq!(hex4(b"12g4", 0), None);
        assert_eq!(hex4(b"123", 0), None);
    }
}
