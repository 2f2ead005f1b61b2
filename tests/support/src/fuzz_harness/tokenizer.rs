//! The cl100k_base tokenizer (`engine::tokenizer`): `encode`, `count`, `count_joined`,
//! `largest_fitting_prefix`.
//!
//! Input: the first byte picks the split point of `count_joined`, the next three the floor, max and
//! budget of the prefix search and its suffix form; the rest is the text (lossy UTF-8).
//!
//! Checks: `count` = `encode().len()`; the ids decode (through tiktoken-rs's copy of the
//! vocabulary) back to the text's bytes; on ASCII text the ids equal tiktoken-rs's
//! `encode_ordinary` (the two differ only on U+FEFF, U+0085 and Unicode-version letter classes);
//! `count_joined(a, b)` = `count(a + b)`; on texts up to 48 characters `largest_fitting_prefix`
//! equals a brute-force scan from the top, and calls `suffix` only with candidates in range.

use super::{mode_and_rest, Cursor};
use context_meter::engine::tokenizer;

const BRUTE_FORCE_CHARS: usize = 48;

fn suffix_of(form: u8, total: usize, l: usize) -> String {
    match form % 4 {
        0 => String::new(),
        1 => format!(
            "[…truncated: {} chars removed under token-efficiency/v1 S-4]",
            total - l
        ),
        2 => " end".to_owned(),
        _ => "\u{FEFF}x".repeat(l % 3),
    }
}

pub fn check(data: &[u8]) {
    let (split, rest) = mode_and_rest(data);
    let mut c = Cursor::new(rest);
    let (floor_byte, max_byte, budget_byte, form) = (c.byte(), c.byte(), c.byte(), c.byte());
    let text = String::from_utf8_lossy(c.rest()).into_owned();

    let ids = tokenizer::encode(&text);
    assert_eq!(
        tokenizer::count(&text),
        ids.len(),
        "count != encode().len()"
    );
    let reference = tiktoken_rs::cl100k_base_singleton();
    let bytes = reference
        .decode_bytes(&ids)
        .expect("every id is in the vocabulary");
    assert_eq!(bytes, text.as_bytes(), "ids do not decode to the text");
    if text.is_ascii() {
        assert_eq!(
            ids,
            reference.encode_ordinary(&text),
            "differs from tiktoken on ASCII"
        );
    }

    // count_joined at a char boundary near the chosen split.
    let mut at = usize::from(split) * text.len() / 255;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let (head, tail) = text.split_at(at);
    assert_eq!(
        tokenizer::count_joined(head, tail),
        tokenizer::count(&text),
        "count_joined != count of the joined text"
    );

    // The prefix search against brute force on short texts.
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let total = chars.len();
    if total > BRUTE_FORCE_CHARS {
        return;
    }
    let floor = usize::from(floor_byte) % (total + 2);
    let max = usize::from(max_byte) % (total + 3);
    let budget = usize::from(budget_byte) % 40;
    let byte_at = |l: usize| chars.get(l).map_or(text.len(), |&(i, _)| i);
    let mut asked = Vec::new();
    let found = tokenizer::largest_fitting_prefix(&text, floor, max, budget, |l| {
        asked.push(l);
        suffix_of(form, total, l)
    });
    let top = max.min(total);
    let expected = (floor..=top).rev().find(|&l| {
        let candidate = format!("{}{}", &text[..byte_at(l)], suffix_of(form, total, l));
        tokenizer::count(&candidate) <= budget
    });
    assert_eq!(
        found, expected,
        "largest_fitting_prefix differs from brute force"
    );
    assert!(
        asked.iter().all(|&l| floor <= l && l <= top),
        "suffix asked for a candidate out of range"
    );
}
