//! Unit tests of the one-pass unescape and canonical check: it must say what the unescape followed
//! by the canonical walk says (text, specials, verdict), and its observed pass what the walk reports.

use super::*;
use crate::canonical::{fast_canonical_with, Canonical, Specials};
use crate::unescape::unescape;

/// The two-pass answer: the unescape, then the canonical walk told its specials.
fn two_pass(literal: &[u8], depth: usize) -> Option<(Unescaped, Vec<u32>, bool)> {
    let mut specials = Vec::new();
    let unescaped = unescape(literal, 1, &mut specials)?;
    let known = Specials::Known {
        offsets: &specials,
        next: 0,
    };
    let same = fast_canonical_with(&unescaped.text, known, depth, &mut ()) == Some(Canonical::Same);
    Some((unescaped, specials, same))
}

/// The literal (with its quotes) of `text` as JSON.stringify writes it, then with some
/// escapes spelled another way (`\/`, `\u` of plain and of special characters).
fn literals_of(text: &str, rng: &mut context_meter_test_rng::Lcg) -> Vec<Vec<u8>> {
    let plain = serde_json::to_string(text).unwrap();
    let mut respelled = String::new();
    for c in plain.chars() {
        match (c, rng.below(6)) {
            ('/', 0) => respelled.push_str("\\/"),
            ('a' | 'é' | '{' | '1' | ':', 0) => {
                respelled.push_str(&format!("\\u{:04x}", c as u32));
            }
            _ => respelled.push(c),
        }
    }
    vec![plain.into_bytes(), respelled.into_bytes()]
}

#[test]
fn one_pass_says_what_the_unescape_and_the_walk_say() {
    let fragments = [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\"k\"",
        "\"k2\"",
        "\"1\"",
        "\"01\"",
        "\"é\"",
        "\"a/b\"",
        "1",
        "-0",
        "0",
        "12",
        "1.5",
        "1.50",
        "1e21",
        "1E3",
        "true",
        "false",
        "null",
        "123456789012345",
        "-123456789012345",
        "9999999999999999",
        "0e1",
        "-",
        "5.",
        "07",
        "nul",
        " ",
        "\n",
        "\\\"",
        "\\\\",
        "\\n",
        "\\u0041",
        "\\u001f",
        "\\u001F",
        "\\ud800",
        "\\/",
        "\\x",
        "é",
        "😀",
        "\u{1}",
        "x",
    ];
    let mut rng = context_meter_test_rng::Lcg(0x5eed);
    let (mut canonical, mut not) = (0, 0);
    let mut texts: Vec<String> = Vec::new();
    for _ in 0..20_000 {
        let len = rng.below(14);
        texts.push(rng.text(&fragments, len));
    }
    // Well-formed values, so that the canonical answer is common too.
    for _ in 0..4000 {
        texts.push(random_json(&mut rng, 4));
    }
    texts.push(format!("{}{}", "[".repeat(3), "]".repeat(3)));
    for text in &texts {
        for literal in literals_of(text, &mut rng) {
            for depth in [2, 3, 1000] {
                let one = unescape_canonical(&literal, 1, depth);
                let two = two_pass(&literal, depth);
                let (Some(one), Some((unescaped, specials, same))) = (one, two) else {
                    assert!(unescape_canonical(&literal, 1, depth).is_none());
                    assert!(two_pass(&literal, depth).is_none());
                    continue;
                };
                let shown = String::from_utf8_lossy(&literal);
                assert_eq!(one.unescaped.text, unescaped.text, "{shown}");
                assert_eq!(one.unescaped.end, unescaped.end, "{shown}");
                if one.unescaped.text.is_ascii() {
                    assert!(one.unescaped.ascii, "{shown}");
                } else {
                    assert!(!one.unescaped.ascii, "{shown}");
                }
                // Canonical only where the walk says so; literals as JSON.stringify writes
                // them (the first of each pair) are found canonical whenever the walk is.
                assert!(!one.canonical || same, "{shown}");
                if one.canonical {
                    assert!(one.specials.is_empty());
                } else {
                    assert_eq!(one.specials, specials, "{shown}");
                }
                canonical += usize::from(one.canonical);
                not += usize::from(!one.canonical);
            }
        }
    }
    assert!(canonical > 5000 && not > 5000, "{canonical} {not}");
}

#[test]
fn stringified_canonical_text_is_found_canonical() {
    let mut rng = context_meter_test_rng::Lcg(77);
    let mut found = 0;
    for _ in 0..3000 {
        let text = random_json(&mut rng, 5);
        let literal = serde_json::to_string(&text).unwrap();
        let one = unescape_canonical(literal.as_bytes(), 1, 1000).unwrap();
        let same = two_pass(literal.as_bytes(), 1000).unwrap().2;
        assert!(!one.canonical || same, "{text}");
        // Only wide objects and lone surrogates step aside from canonical text.
        let aside = text.contains("\\ud800") || !same;
        if !aside && text.matches(':').count() < 16 {
            assert!(one.canonical, "{text}");
        }
        found += usize::from(one.canonical);
    }
    assert!(found > 1000, "{found}");
}

/// Every call an observer receives, with the bytes it was shown, keeping array entries on
/// one stack as the token-efficiency census does (marks index it; an array's entries are
/// read back from the bytes shown at its end).
#[derive(Default)]
struct Recorder {
    calls: Vec<String>,
    entries: Vec<(usize, usize)>,
}

impl Observer for Recorder {
    /// What [`Observer::member_value`] promises: the first byte, and whether the value is
    /// an empty string, array or object.
    fn member_value(&mut self, value: &[u8]) {
        let empty = matches!(
            value,
            [b'"', b'"', ..] | [b'[', b']', ..] | [b'{', b'}', ..]
        );
        self.calls
            .push(format!("value {} {empty}", value[0] as char));
    }
    fn string_literal(&mut self, literal_len: usize) {
        self.calls.push(format!("string {literal_len}"));
    }
    fn array_start(&mut self) -> usize {
        self.entries.len()
    }
    fn array_entry(&mut self, bytes: &[u8], start: usize, end: usize) {
        let entry = String::from_utf8_lossy(&bytes[start..end]);
        self.calls.push(format!("entry {entry}"));
        self.entries.push((start, end));
    }
    fn array_end(&mut self, bytes: &[u8], mark: usize) {
        let entries: Vec<_> = self.entries[mark..]
            .iter()
            .map(|&(start, end)| String::from_utf8_lossy(&bytes[start..end]))
            .collect();
        self.calls.push(format!("end {}", entries.join("|")));
        self.entries.truncate(mark);
    }
}

/// Where the one pass finds the text canonical, its observer was told what the canonical
/// walk tells one of the same text, in the same order.
#[test]
fn the_observed_pass_reports_what_the_canonical_walk_reports() {
    let mut rng = context_meter_test_rng::Lcg(0x0b5e);
    let mut arrays = 0;
    for _ in 0..8000 {
        let text = random_json(&mut rng, 5);
        let literal = serde_json::to_string(&text).unwrap();
        let mut one = Recorder::default();
        let found = unescape_canonical_observed(literal.as_bytes(), 1, 1000, &mut one).unwrap();
        if !found.canonical {
            continue;
        }
        let mut walk = Recorder::default();
        let same = fast_canonical_with(&text, Specials::Scan, 1000, &mut walk);
        assert_eq!(same, Some(Canonical::Same), "{text}");
        assert_eq!(one.calls, walk.calls, "{text}");
        arrays += one.calls.iter().filter(|c| c.starts_with("end ")).count();
    }
    assert!(arrays > 500, "{arrays}");
}

/// A compact JSON text: mostly canonical, sometimes not (a float spelled otherwise, a repeated
/// or array-index key, a `\u` escape, wide objects).
fn random_json(rng: &mut context_meter_test_rng::Lcg, depth: usize) -> String {
    let leaves = [
        "0",
        "-1",
        "37",
        "1.5",
        "2.50",
        "1e21",
        "1e-7",
        "123456789012345678",
        "-123456789012345",
        "9999999999999999",
        "true",
        "false",
        "null",
        r#""""#,
        r#""plain words""#,
        r#""q\"uote""#,
        r#""back\\slash""#,
        r#""tab\tnl\n""#,
        r#""\u0001""#,
        r#""\u00e9""#,
        r#""é😀""#,
        r#""a/b""#,
        r#""\ud800""#,
    ];
    if depth == 0 || rng.below(3) == 0 {
        return leaves[rng.below(leaves.len())].to_owned();
    }
    let wide = rng.below(8) == 0;
    let n = rng.below(if wide { 20 } else { 4 });
    let items: Vec<String> = (0..n)
        .map(|k| {
            let value = random_json(rng, depth - 1);
            if n % 2 == 0 {
                return value;
            }
            let key = match rng.below(12) {
                0 => "1".to_owned(),
                1 => "k0".to_owned(),
                2 => "é".to_owned(),
                _ => format!("k{k}"),
            };
            format!("\"{key}\":{value}")
        })
        .collect();
    if n % 2 == 0 {
        format!("[{}]", items.join(","))
    } else {
        format!("{{{}}}", items.join(","))
    }
}
