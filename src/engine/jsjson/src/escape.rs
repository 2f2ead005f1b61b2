//! The one string escaper: a string literal exactly as well-formed ECMAScript `JSON.stringify`
//! writes it (`"`, `\\`, the five short escapes, lowercase `\u00xx` for the other control
//! characters, lowercase `\udxxx` for a lone surrogate, nothing else), from UTF-8 text or from
//! UTF-16 code units; and the UTF-16 facts the readers and families ask of a string.

use super::lexeme::{is_special, plain_run, special_bytes};
use std::fmt::Write;

/// Appends the escape of `unit` (a control character, `"`, `\\` or a lone surrogate): the short
/// form where JSON has one, else lowercase `\uxxxx`. Inlined into both writers' loops (a payload
/// that is JSON text escapes a quote every few bytes).
#[inline(always)]
fn push_escape(out: &mut String, unit: u16) {
    match unit {
        0x22 => out.push_str("\\\""),
        0x5c => out.push_str("\\\\"),
        0x08 => out.push_str("\\b"),
        0x09 => out.push_str("\\t"),
        0x0a => out.push_str("\\n"),
        0x0c => out.push_str("\\f"),
        0x0d => out.push_str("\\r"),
        _ => {
            let _ = write!(out, "\\u{unit:04x}");
        }
    }
}

/// Appends `s` as a JSON string literal. A payload that is JSON text escapes a quote every few
/// bytes, so a short run before an escape is written as the whole eight-byte word it starts and
/// cut back to the run (a fixed-size copy, not a copy call per run; the cut is before an ASCII
/// byte, so on a character boundary); a run longer than two words is found first and copied at
/// once, so a long string costs about a copy plus one step per escape. A word that would end
/// inside a character takes the long-run path; the last few bytes, when ASCII, are written one by
/// one.
pub fn write_js_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut i = 0;
    loop {
        // Fewer than eight ASCII bytes left (every short member name and the tail of a string):
        // byte by byte up to the next escape, with no copy call.
        let rest = &bytes[i..];
        if rest.len() < 8 && rest.is_ascii() {
            while let Some(&b) = bytes.get(i) {
                if is_special(b) {
                    break;
                }
                out.push(char::from(b));
                i += 1;
            }
        } else {
            let mut short = false;
            for _ in 0..2 {
                let Some(word_text) = s.get(i..i + 8) else {
                    break;
                };
                let word =
                    u64::from_le_bytes(word_text.as_bytes().try_into().expect("eight bytes"));
                out.push_str(word_text);
                let special = special_bytes(word);
                if special != 0 {
                    let run = (special.trailing_zeros() / 8) as usize;
                    out.truncate(out.len() - (8 - run));
                    i += run;
                    short = true;
                    break;
                }
                i += 8;
            }
            if !short {
                let run = plain_run(&bytes[i..]);
                // A plain run ends before an ASCII byte (or at the end), so both cuts are on char
                // boundaries.
                out.push_str(&s[i..i + run]);
                i += run;
            }
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        push_escape(out, u16::from(b));
        i += 1;
    }
    out.push('"');
}

/// Appends the UTF-16 string `units` as a JSON string literal, read straight from UTF-16 (a lone
/// surrogate becomes `\udxxx`; a pair is written as its character).
pub fn write_utf16_string(out: &mut String, units: &[u16]) {
    out.push('"');
    let mut i = 0;
    while i < units.len() {
        let unit = units[i];
        match unit {
            0x00..=0x1f | 0x22 | 0x5c => push_escape(out, unit),
            0x20..=0x7f => out.push(unit as u8 as char),
            0xd800..=0xdbff
                if units
                    .get(i + 1)
                    .is_some_and(|u| (0xdc00..0xe000).contains(u)) =>
            {
                let high = u32::from(unit - 0xd800);
                let low = u32::from(units[i + 1] - 0xdc00);
                out.push(char::from_u32(0x10000 + (high << 10) + low).expect("a surrogate pair"));
                i += 1;
            }
            0xd800..=0xdfff => push_escape(out, unit),
            _ => out.push(char::from_u32(u32::from(unit)).expect("a BMP scalar value")),
        }
        i += 1;
    }
    out.push('"');
}

/// True when `units` holds a high surrogate not followed by a low one, or a low one not preceded
/// by a high one.
pub fn has_lone_surrogate(units: &[u16]) -> bool {
    let mut i = 0;
    while i < units.len() {
        match units[i] {
            0xD800..=0xDBFF => {
                if matches!(units.get(i + 1), Some(0xDC00..=0xDFFF)) {
                    i += 2;
                    continue;
                }
                return true;
            }
            0xDC00..=0xDFFF => return true,
            _ => i += 1,
        }
    }
    false
}

/// Length of `s` as JavaScript counts it (UTF-16 code units).
pub fn js_length(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // For strings without lone surrogates `JSON.stringify` and serde_json escape alike: `"`,
        // `\\`, the five short escapes, lowercase `\u00xx` for the other controls, nothing else.
        let fragments = [
            "a",
            "é",
            "中",
            "😀",
            "\"",
            "\\",
            "/",
            "\u{8}",
            "\u{c}",
            "\n",
            "\r",
            "\t",
            "\0",
            "\u{1f}",
            "\u{7f}",
            "\u{2028}",
            "\u{feff}",
            "plain words ",
            "0123456789abcdef",
        ];
        let mut rng = context_meter_test_rng::Lcg(11);
        for len in 0..600 {
            let s = rng.text(&fragments, len % 70);
            let mut out = String::new();
            write_js_string(&mut out, &s);
            assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }

    /// The escaper written one character at a time, with no word tricks: the oracle of
    /// [`write_js_string`]'s short and long runs.
    fn escaped_char_by_char(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\u{c}' => out.push_str("\\f"),
                '\r' => out.push_str("\\r"),
                c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// Every escape class (each control character, `"`, `\\`) at every offset of a word, after
    /// plain runs of every length up to three words, between one- to four-byte characters that
    /// straddle word ends, and at the string's end.
    #[test]
    fn word_runs_escape_as_character_by_character() {
        let mut specials: Vec<String> = (0u8..0x20).map(|b| char::from(b).to_string()).collect();
        specials.extend(["\"".to_owned(), "\\".to_owned()]);
        let others = ["é", "中", "😀", "\u{7f}", "\u{2028}", "/", "\"\"", "\\\""];
        let mut rng = context_meter_test_rng::Lcg(47);
        for special in &specials {
            for run in 0..26 {
                for lead in ["", "é", "中", "😀"] {
                    let s = format!("{lead}{}{special}{}", "x".repeat(run), "y".repeat(run % 9));
                    let mut out = String::from("kept");
                    write_js_string(&mut out, &s);
                    assert_eq!(out, format!("kept{}", escaped_char_by_char(&s)), "{s:?}");
                }
            }
        }
        for round in 0..3000 {
            let mut s = String::new();
            for _ in 0..rng.below(12) {
                match rng.below(3) {
                    0 => s.push_str(&specials[rng.below(specials.len())]),
                    1 => s.push_str(others[rng.below(others.len())]),
                    _ => s.push_str(&"abcdefghijklmnopqrstuvwxyz"[..rng.below(27)]),
                }
            }
            let mut out = String::new();
            write_js_string(&mut out, &s);
            assert_eq!(out, escaped_char_by_char(&s), "round {round}: {s:?}");
        }
    }

    #[test]
    fn utf16_and_utf8_escaping_agree() {
        let mut all: String = (0u32..0x2100).filter_map(char::from_u32).collect();
        all.push_str("\u{1F600}\u{10FFFF}\u{FEFF}\u{2028}\u{2029}\"\\");
        for sample in [all.as_str(), "", "plain", "\u{7f}\u{80}\u{ffff}"] {
            let units: Vec<u16> = sample.encode_utf16().collect();
            let (mut from_units, mut from_text) = (String::new(), String::new());
            write_utf16_string(&mut from_units, &units);
            write_js_string(&mut from_text, sample);
            assert_eq!(from_units, from_text);
        }
        let mut lone = String::new();
        write_utf16_string(&mut lone, &[0xd800, 0x41, 0xdc00, 0xd83d, 0xde00]);
        assert_eq!(lone, "\"\\ud800A\\udc00\u{1F600}\"");
    }

    #[test]
    fn lone_surrogates_are_found() {
        assert!(!has_lone_surrogate(&[0x61, 0xd83d, 0xde00]));
        assert!(has_lone_surrogate(&[0xd83d]));
        assert!(has_lone_surrogate(&[0xde00, 0x78]));
        assert!(has_lone_surrogate(&[0xd83d, 0xd83d, 0xde00]));
        assert_eq!(js_length("a😀é"), 4);
    }
}
