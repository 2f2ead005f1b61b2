//! The budget op's tests: S-1..S-4 against their definitions, the census against the tree, and
//! reconciliation.

use super::tree::{literal_char_len, literal_prefix_bytes};
use super::*;
use crate::jsjson::{write_utf16_string as write_string, Value as JsValue};
use crate::ops::S3_CAP_CHARS;

/// The nesting the worker's payload parser admits (its `published::MAX_DEPTH`).
const MAX_DEPTH: usize = 1000;

/// `JSON.parse` of a payload as the budget op's parser reads it (the worker's `payload::parse`).
fn parse(payload: &str) -> Result<JsValue, crate::jsjson::ReadError> {
    crate::jsjson::read(payload, crate::jsjson::Limits::nesting(MAX_DEPTH), &mut ())
        .map(|(value, _)| value)
}

/// `JSON.stringify` of a parsed value (its members are already in property order).
fn stringify(value: &JsValue) -> String {
    crate::jsjson::to_string(value, crate::jsjson::KeyOrder::Insertion)
}

fn run(payload: &str, budget: u64, keep: &[&str]) -> Shaping {
    let keep: HashSet<String> = keep.iter().map(|s| (*s).to_owned()).collect();
    match parse(payload) {
        Ok(value) => {
            let canonical = stringify(&value);
            let text = Tokenized::new(&canonical);
            let chars = canonical.chars().count() as u64;
            shape(
                &Submission {
                    text: &text,
                    chars,
                    json: true,
                    untouched: None,
                },
                &keep,
                budget,
            )
            .unwrap()
        }
        Err(_) => {
            let text = Tokenized::new(payload);
            let chars = payload.chars().count() as u64;
            let submission = Submission {
                text: &text,
                chars,
                json: false,
                untouched: None,
            };
            shape(&submission, &keep, budget).unwrap()
        }
    }
}

fn ops(s: &Shaping) -> Vec<(&'static str, String, Option<usize>)> {
    s.receipt
        .iter()
        .map(|e| (e.op.id(), e.path.clone(), e.index))
        .collect()
}

#[test]
fn safe_cuts_split_counts_exactly() {
    let samples = [
        r#"{"alpha":[1,22,333,4444],"beta":"Hello, world!","gamma":null,"d":true}"#,
        r#"[{"id":"abc123","n":12345678,"t":"x y z"},{"id":"Zé","v":"日本語です","w":"ok"}]"#,
    ];
    for text in samples {
        let chars: Vec<char> = text.chars().collect();
        let total = tokenizer::count(text);
        for i in 1..chars.len() {
            if tokenizer::is_piece_start(chars[i - 1], chars[i]) {
                let (a, b): (String, String) =
                    (chars[..i].iter().collect(), chars[i..].iter().collect());
                assert_eq!(
                    tokenizer::count(&a) + tokenizer::count(&b),
                    total,
                    "cut {i}"
                );
            }
        }
    }
}

/// Literal fragments the character walks must take as one character each: multi-byte characters
/// (two, three and four UTF-8 bytes) and escapes (two-byte and `\u`), for the random literals below.
const ESCAPES_AND_MULTIBYTE: [&str; 7] = ["é", "中", "😀", r#"\""#, r"\\", r"\n", r"\u001f"];

/// Characters of a canonical literal's content, one escape or character at a time.
fn literal_chars_walk(content: &[u8]) -> usize {
    let (mut i, mut chars) = (0, 0);
    while i < content.len() {
        i += literal_char_len(&content[i..]);
        chars += 1;
    }
    chars
}

/// The tree records each string's characters (an escape one) when it is longer than the S-3 cap,
/// counted from what the scan for its end saw: over literals around the cap that mix ASCII,
/// multi-byte characters and every kind of escape, and over ASCII-only and escape-free ones.
#[test]
fn long_strings_count_each_escape_as_one_character() {
    let mixed = [
        &["a"][..],
        &ESCAPES_AND_MULTIBYTE,
        &[r"\ud800", " ", "abcdefghijklmnop"],
    ]
    .concat();
    let ascii = ["a", " ", r#"\""#, r"\n", r"\u001f", "abcdefghijklmnop"];
    let plain = ["a", "é", "中", "😀", " "];
    let mut rng = context_meter_test_rng::Lcg(11);
    let mut long = 0;
    for fragments in [&mixed[..], &ascii[..], &plain[..]] {
        let contents: Vec<String> = (0..60)
            .map(|k| rng.text(fragments, if k % 4 == 0 { k } else { 400 + 25 * k }))
            .collect();
        let canonical = format!("[\"{}\"]", contents.join("\",\""));
        let doc = Document::build(&canonical, &HashSet::new()).expect("compact canonical JSON");
        for (node, content) in doc.children(0).into_iter().zip(&contents) {
            let expected = if content.len() > S3_CAP_CHARS {
                long += 1;
                literal_chars_walk(content.as_bytes())
            } else {
                0
            };
            assert_eq!(doc.nodes[node].long_chars, expected, "{content}");
        }
    }
    assert!(long > 100, "{long}");
}

/// The word-at-a-time prefix walk lands where the one-character walk lands, for every prefix
/// length, over literals that mix ASCII runs (long and short) with escapes and multi-byte chars.
#[test]
fn literal_prefix_bytes_equal_a_character_walk() {
    let naive = |content: &[u8], n: usize| {
        let (mut i, mut taken) = (0, 0);
        while i < content.len() && taken < n {
            i += literal_char_len(&content[i..]);
            taken += 1;
        }
        i
    };
    let fragments = [
        &["a", "abcdefghijk"][..],
        &ESCAPES_AND_MULTIBYTE,
        &[" ", "0123456"],
    ]
    .concat();
    let mut rng = context_meter_test_rng::Lcg(5);
    let mut split_words = 0;
    for len in 0..120 {
        let content = rng.text(&fragments, len);
        let bytes = content.as_bytes();
        for n in 0..=literal_chars_walk(bytes) + 2 {
            let fast = literal_prefix_bytes(bytes, n);
            assert_eq!(fast, naive(bytes, n), "{content} {n}");
            // The fast path must also stop inside an ASCII run (a cut that is not a multiple of 8).
            split_words += usize::from(fast % 8 != 0 && bytes[..fast].is_ascii());
        }
    }
    assert!(split_words > 100, "{split_words}");
}

#[test]
fn fits_runs_nothing() {
    let s = run(r#"{"a":[1,1],"b":null}"#, 1000, &[]);
    assert!(s.receipt.is_empty());
    assert_eq!(s.shaped_text, r#"{"a":[1,1],"b":null}"#);
}

#[test]
fn duplicates_equal_a_pairwise_scan() {
    let atoms = [
        "1",
        "12",
        "\"a\"",
        "\"ab\"",
        "null",
        "[1]",
        "{\"k\":1}",
        "[]",
        "21",
    ];
    let mut rng = context_meter_test_rng::Lcg(17);
    let mut repeats = 0;
    for _ in 0..200 {
        let mut entries = Vec::new();
        for _ in 0..1 + rng.below(40) {
            let kind = rng.below(3);
            let mut pick = || atoms[rng.below(atoms.len())];
            entries.push(match kind {
                0 => pick().to_owned(),
                1 => format!("[{},{}]", pick(), pick()),
                _ => format!("{{\"a\":{},\"b\":{}}}", pick(), pick()),
            });
        }
        let text = format!("[{}]", entries.join(","));
        let doc = Document::build(&text, &HashSet::new()).expect("canonical");
        let children = doc.children(0);
        let expected: Vec<bool> = (0..entries.len())
            .map(|i| entries[..i].contains(&entries[i]))
            .collect();
        assert_eq!(doc.duplicates(&children), expected, "{text}");
        repeats += expected.iter().filter(|&&d| d).count();
    }
    assert!(
        repeats > 500,
        "the random arrays must hold repeats ({repeats})"
    );
}

/// The census's `true` is a proof: on random payloads (nulls, empties, repeats, long strings,
/// escapes, integer-like and duplicate keys) the tree's S-1..S-3 then edit nothing; and where
/// the tree edits nothing and no literal is over the cap in bytes, the census says so.
#[test]
fn the_census_agrees_with_the_tree() {
    fn value(rng: &mut context_meter_test_rng::Lcg, depth: usize, unique: &mut u64) -> String {
        let long = "y".repeat(S3_CAP_CHARS + 1 - (rng.below(2)));
        let pick = rng.below(if depth == 0 { 8 } else { 12 });
        match pick {
            0 => "null".to_owned(),
            1 => "\"\"".to_owned(),
            2 => rng.below(3).to_string(),
            3 | 4 => {
                *unique += 1;
                unique.to_string()
            }
            5 => "\"a\\\"b\"".to_owned(),
            6 => format!("\"{long}\""),
            7 => ["true", "false", "1.5e300", "[]", "{}"][rng.below(5)].to_owned(),
            8 | 9 => {
                let items: Vec<String> = (0..rng.below(5))
                    .map(|_| value(rng, depth - 1, unique))
                    .collect();
                format!("[{}]", items.join(","))
            }
            _ => {
                let members: Vec<String> = (0..rng.below(5))
                    .map(|_| {
                        let key = ["a", "b", "c", "1", "0", "k\\n"][rng.below(6)];
                        format!("\"{key}\":{}", value(rng, depth - 1, unique))
                    })
                    .collect();
                format!("{{{}}}", members.join(","))
            }
        }
    }
    let mut rng = context_meter_test_rng::Lcg(29);
    let (mut proofs, mut edits) = (0, 0);
    for _ in 0..3000 {
        let mut unique = 100;
        let payload = value(&mut rng, 4, &mut unique);
        let canonical = stringify(&parse(&payload).expect("generated JSON"));
        let mut doc = Document::build(&canonical, &HashSet::new()).expect("canonical");
        doc.tokens = tokenizer::count(&canonical) as u64;
        doc.chars = canonical.chars().count() as u64;
        doc.s1(0);
        doc.s2(0);
        doc.s3(0);
        let untouched = census::untouched_by_s1_to_s3(&canonical);
        if untouched {
            assert!(doc.receipt.is_empty(), "{canonical}");
            proofs += 1;
        } else if doc.receipt.is_empty() {
            assert!(canonical.len() > S3_CAP_CHARS, "{canonical}");
        } else {
            edits += 1;
        }
    }
    assert!(
        proofs > 300 && edits > 300,
        "{proofs} proofs, {edits} edits"
    );
}

#[test]
fn s1_dedups_pre_order_with_index_at_removal() {
    let s = run(r#"[[1,1,2,1],3,[1,1,2,1],3,{"x":[4,4]}]"#, 20, &[]);
    let got = ops(&s);
    assert_eq!(
        &got[..5],
        &[
            ("S-1", String::new(), Some(2)),
            ("S-1", String::new(), Some(2)),
            ("S-1", "[0]".to_owned(), Some(1)),
            ("S-1", "[0]".to_owned(), Some(2)),
            ("S-1", "[2].x".to_owned(), Some(1)),
        ]
    );
}

#[test]
fn s2_cascades_children_first_and_respects_keep() {
    let s = run(
        r#"{"a":{"b":null,"c":{"d":[]}},"e":"","k":{"z":null},"f":[null,{}],"g":0}"#,
        20,
        &["k.z"],
    );
    let got: Vec<_> = ops(&s).into_iter().filter(|o| o.0 == "S-2").collect();
    let paths: Vec<&str> = got.iter().map(|o| o.1.as_str()).collect();
    assert_eq!(paths, ["a.b", "a.c.d", "a.c", "a", "e"]);
}

#[test]
fn s3_truncates_long_strings_with_marker() {
    let long = "é".repeat(2001);
    let payload = format!(r#"{{"a":"{long}","b":["{long}"]}}"#);
    let s = run(&payload, 100, &[]);
    assert_eq!(
        ops(&s),
        [
            ("S-3", "a".to_owned(), None),
            ("S-3", "b[0]".to_owned(), None),
            ("S-4", "payload".to_owned(), None)
        ]
    );
    assert_eq!(s.receipt[0].delta_chars(), 1 - 59);
    let s = run(&payload, 1, &["a"]);
    assert!(s.receipt.is_empty());
    assert_eq!(s.exhaustion.unwrap().protected_chars, 2001 + 6);
}

#[test]
fn escaped_keys_and_strings_read_from_the_canonical_text() {
    // Escapes straddle the S-3 cut; a lone surrogate is one character; keys are unescaped in
    // paths except lone surrogates, which keep their escape.
    let value = format!("{}\\n\\ud800\\\"{}", "a".repeat(1998), "b ".repeat(400));
    let payload = format!(r#"{{"k\"\ud83d\t":["{value}"],"\udc00":[[],[]],"z":null}}"#);
    let s = run(&payload, 100, &[]);
    let got = ops(&s);
    assert_eq!(
        &got[..3],
        &[
            ("S-1", "\\udc00".to_owned(), Some(1)),
            ("S-2", "z".to_owned(), None),
            ("S-3", "k\"\\ud83d\t[0]".to_owned(), None),
        ]
    );
    // Oracle: the tree path truncates the UTF-16 value by code points.
    let units: Vec<u16> = match parse(&payload).unwrap() {
        JsValue::Object(members) => match &members[0].1 {
            JsValue::Array(items) => match &items[0] {
                JsValue::String(units) => units.clone(),
                _ => unreachable!(),
            },
            _ => unreachable!(),
        },
        _ => unreachable!(),
    };
    let chars = char::decode_utf16(units.iter().copied()).count();
    assert_eq!(chars, 2801);
    let mut truncated: Vec<u16> = Vec::new();
    for r in char::decode_utf16(units.iter().copied()).take(S3_CAP_CHARS) {
        match r {
            Ok(c) => truncated.extend(c.encode_utf16(&mut [0; 2]).iter()),
            Err(e) => truncated.push(e.unpaired_surrogate()),
        }
    }
    truncated.extend(marker(chars - S3_CAP_CHARS, "S-3").encode_utf16());
    let mut literal = String::new();
    write_string(&mut literal, &truncated);
    let submitted = tokenizer::count(&stringify(&parse(&payload).unwrap())) as u64;
    let s = run(&payload, submitted - 10, &[]);
    assert_eq!(s.receipt.last().unwrap().op, Op::S3);
    assert!(s.shaped_text.contains(&literal), "{}", s.shaped_text);
    let marker_chars = marker(801, "S-3").chars().count() as i64;
    // 801 value characters go, 802 of the canonical text (the removed `"` is written `\"`).
    assert_eq!(s.receipt.last().unwrap().delta_chars(), 802 - marker_chars);
}

#[test]
fn s4_text_only_and_root_scalars() {
    let text = "not json at all, just some words here ".repeat(20);
    let s = run(&text, 25, &[]);
    assert_eq!(ops(&s), [("S-4", "payload".to_owned(), None)]);
    assert!(s.shaped_tokens <= 25);
    assert!(run(&text, 5, &[]).exhaustion.is_some());
    let long = format!("\"{}\"", "word ".repeat(1000));
    let s = run(&long, 40, &[]);
    assert_eq!(ops(&s), [("S-4", "payload".to_owned(), None)]);
    assert!(s.shaped_text.ends_with("S-4]"));
}

#[test]
fn reconciliation_fails_closed_on_any_inconsistency() {
    let good = run(r#"{"a":[1,1],"b":null,"c":"words words words"}"#, 12, &[]);
    assert!(!good.receipt.is_empty());
    assert_eq!(reconcile(&good), Ok(()));
    let mut broken = good.clone();
    broken.receipt[0].tokens_after += 1;
    assert_eq!(reconcile(&broken), Err(Unreconciled));
    let mut broken = good.clone();
    broken.shaped_text.push(' ');
    assert_eq!(reconcile(&broken), Err(Unreconciled));
    let mut broken = good;
    broken.shaped_tokens -= 1;
    assert_eq!(reconcile(&broken), Err(Unreconciled));
}

#[test]
fn exhaustion_returns_submission_unchanged() {
    let s = run(
        r#"{"keep":"a b c d e f g h i j k l m n o p","x":1}"#,
        3,
        &["keep"],
    );
    assert!(s.receipt.is_empty());
    assert_eq!(
        s.shaped_text,
        r#"{"keep":"a b c d e f g h i j k l m n o p","x":1}"#
    );
    let e = s.exhaustion.unwrap();
    assert_eq!(e.protected_fields, 1);
    assert_eq!(e.floor_chars, 41);
}

/// A random compact JSON value with what S-1..S-3 act on: repeated entries, nulls and empties,
/// strings over the S-3 cap (of words, digits, punctuation and non-ASCII, so the cuts around
/// each edit fall in many places).
fn random_json(rng: &mut context_meter_test_rng::Lcg, depth: usize) -> String {
    const WORDS: [&str; 12] = [
        "alpha", " beta", "  ", "12", "3.5", ",", "é", "中文", "-", "\\n", "\\\"", "x1",
    ];
    let item = |rng: &mut context_meter_test_rng::Lcg| match rng.below(9) {
        0 => "null".to_owned(),
        1 => "\"\"".to_owned(),
        2 => "[]".to_owned(),
        3 => "{}".to_owned(),
        4 => {
            let len = 2050 + rng.below(400);
            format!("\"{}\"", rng.text(&WORDS, len))
        }
        5 if depth > 0 => random_json(rng, depth - 1),
        _ => {
            let len = 1 + rng.below(6);
            format!("\"{}\"", rng.text(&WORDS, len))
        }
    };
    let n = rng.below(6);
    if rng.below(2) == 0 {
        let items: Vec<String> = (0..n)
            .map(|i| {
                if i > 0 && rng.below(3) == 0 {
                    "\"alpha\"".to_owned()
                } else {
                    item(rng)
                }
            })
            .collect();
        format!("[{}]", items.join(","))
    } else {
        let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{}", item(rng))).collect();
        format!("{{{}}}", members.join(","))
    }
}

/// The self-check over the changed stretches gives the full count of the edited text, whatever
/// S-1..S-3 did; it disagrees with a chain that is off by one token, and refuses an edited text
/// whose length is not the live text's.
#[test]
fn the_stretch_recount_is_the_full_count() {
    let mut rng = context_meter_test_rng::Lcg(23);
    let (mut checked, mut merged_or_widened, mut known) = (0, 0, 0);
    for _ in 0..400 {
        let payload = random_json(&mut rng, 2);
        let Ok(value) = parse(&payload) else { continue };
        let canonical = stringify(&value);
        let Some(mut doc) = Document::build(&canonical, &HashSet::new()) else {
            continue;
        };
        doc.tokens = tokenizer::count(&canonical) as u64;
        doc.chars = canonical.chars().count() as u64;
        doc.s1(0);
        doc.s2(0);
        doc.s3(0);
        if doc.receipt.is_empty() {
            continue;
        }
        let edited = doc.live_text();
        let full = tokenizer::count(&edited) as u64;
        let recounted = doc.recount_edited(&edited, tokenizer::count(&canonical) as u64);
        assert_eq!(recounted, Some(full), "{canonical}");
        assert_eq!(doc.tokens, full, "the chain itself: {canonical}");
        // A chain off by one is caught by the comparison the op makes.
        assert_ne!(recounted, Some(doc.tokens + 1));
        // A text longer than the atoms' live text is refused, not recounted.
        let mut other = edited.clone();
        other.push(' ');
        assert_eq!(doc.recount_edited(&other, full), None);
        checked += 1;
        merged_or_widened += usize::from(doc.receipt.len() > 1);
        known += usize::from(!doc.known.is_empty());
    }
    // Many cases recount a truncated string's middle from the count S-3's window kept.
    assert!(
        checked > 150 && merged_or_widened > 50 && known > 50,
        "{checked} {merged_or_widened} {known}"
    );
}
