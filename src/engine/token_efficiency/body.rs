//! Fast path for the common request body: one JSON object of known members, each at most once,
//! whose `payload` is a string.
//!
//! The payload literal is unescaped in one pass ([`crate::engine::jsjson::unescape`], built at
//! opt-level 3 with the JSON layer) that also records where `"`, `\` and control bytes land in
//! the payload: inside a
//! valid JSON string only escapes produce them, so the list is complete by construction, and the
//! canonical check steps over string contents with it instead of scanning them
//! ([`crate::engine::jsjson::fast_canonical_with`]). Asked with a depth, the same pass also
//! follows the payload's JSON structure and says whether it is canonical already
//! ([`crate::engine::jsjson::unescape_canonical`]), so no walk follows; the budget op's census of
//! S-1..S-3 observes that pass (its second walk over the text, 0.3–0.5× a tokenization of an
//! escape-dense payload natively, is gone).
//!
//! Invariants: answers only when the whole body is UTF-8 JSON of that shape and then with exactly
//! the members the general path reads (serde_json reads every other member's value); anything
//! else — an unknown, repeated or escaped key, a payload that is not a string, a lone surrogate,
//! not JSON, not UTF-8 — answers `None` and the general path decides, refusals included. Nothing
//! here renders or keeps any part of the body.

use crate::engine::jsjson::unescape::unescape;
use crate::engine::jsjson::unescape_canonical::{unescape_canonical, unescape_canonical_observed};
use crate::engine::jsjson::Observer;
use serde_json::Value;

/// A body read by the fast path.
pub struct FastBody {
    /// Every member in body order, the payload as `Value::String`.
    pub members: Vec<(String, Value)>,
    /// Offsets in the payload of every `"`, `\` and byte below 0x20, ascending.
    pub specials: Vec<u32>,
    /// The payload is ASCII (its characters are its bytes); `false` when not known to be.
    pub payload_ascii: bool,
    /// The payload is JSON in its canonical form (found while unescaping it, when [`read`] was
    /// asked to look; `specials` is then empty, no walk needing it); `false`: not known.
    pub payload_canonical: bool,
}

const MEMBERS: [&str; 5] = [
    "payload",
    "budget_tokens",
    "keep_fields",
    "reserve_tokens",
    "caller",
];

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// Reads `body` when it has the common shape (see the module documentation). With
/// `canonical_depth`, the payload's unescape also tells whether it is canonical JSON nested at
/// most that deep ([`unescape_canonical`]: one pass instead of the unescape and a canonical walk).
pub fn read(body: &[u8], canonical_depth: Option<usize>) -> Option<FastBody> {
    read_observed(body, canonical_depth, None)
}

/// [`read`], the payload's one pass (with `canonical_depth`) reporting to `observer` what it
/// meets in the payload's text (the budget op's census: it speaks of the canonical text when
/// [`FastBody::payload_canonical`] is said).
pub fn read_observed(
    body: &[u8],
    canonical_depth: Option<usize>,
    mut observer: Option<&mut dyn Observer>,
) -> Option<FastBody> {
    // Offsets are u32; bodies are capped far below.
    if u32::try_from(body.len()).is_err() {
        return None;
    }
    let mut i = skip_whitespace(body, 0);
    if body.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_whitespace(body, i + 1);
    let mut members = Vec::with_capacity(MEMBERS.len());
    let mut seen = [false; MEMBERS.len()];
    let mut specials = Vec::new();
    let mut payload_ascii = false;
    let mut payload_canonical = false;
    loop {
        if body.get(i) != Some(&b'"') {
            return None;
        }
        let end = i + 1 + body[i + 1..].iter().position(|&b| b == b'"')?;
        let key = &body[i + 1..end];
        let which = MEMBERS.iter().position(|m| m.as_bytes() == key)?;
        if std::mem::replace(&mut seen[which], true) {
            return None;
        }
        i = skip_whitespace(body, end + 1);
        if body.get(i) != Some(&b':') {
            return None;
        }
        i = skip_whitespace(body, i + 1);
        let value = if which == 0 {
            if body.get(i) != Some(&b'"') {
                return None;
            }
            let payload = match canonical_depth {
                Some(depth) => {
                    let literal = match observer.take() {
                        Some(observer) => {
                            unescape_canonical_observed(body, i + 1, depth, observer)?
                        }
                        None => unescape_canonical(body, i + 1, depth)?,
                    };
                    payload_canonical = literal.canonical;
                    specials = literal.specials;
                    literal.unescaped
                }
                None => unescape(body, i + 1, &mut specials)?,
            };
            i = payload.end;
            payload_ascii = payload.ascii;
            Value::String(payload.text)
        } else {
            let mut values = serde_json::Deserializer::from_slice(&body[i..]).into_iter();
            let value = values.next()?.ok()?;
            i += values.byte_offset();
            value
        };
        members.push((MEMBERS[which].to_owned(), value));
        i = skip_whitespace(body, i);
        match body.get(i)? {
            b',' => i = skip_whitespace(body, i + 1),
            b'}' => break,
            _ => return None,
        }
    }
    if skip_whitespace(body, i + 1) != body.len() || !seen[0] {
        return None;
    }
    Some(FastBody {
        members,
        specials,
        payload_ascii,
        payload_canonical,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::jsjson::{fast_canonical_of, Canonical};
    use crate::engine::token_efficiency::published::MAX_DEPTH;
    use context_meter_test_rng::Lcg;

    #[test]
    fn payload_text_and_specials_equal_serde_and_a_scan() {
        let fragments = [
            "a",
            "é",
            "中",
            "😀",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u0000",
            "\\u001F",
            "\\u0022",
            "\\u005c",
            "\\u0041",
            "\\u00e9",
            "\\u2028",
            "\\ud83d\\ude00",
            "\\uD83D\\uDE00",
            " ",
            "xxxxxxxxxxxxxxxxxxx",
            "\u{2028}",
        ];
        let mut rng = Lcg(5);
        for len in 0..400 {
            let literal = rng.text(&fragments, len % 60);
            // The payload last, too: its literal then ends within the final eight bytes.
            let body = if len % 2 == 0 {
                format!(r#"{{"payload":"{literal}","budget_tokens":5}}"#)
            } else {
                format!(r#"{{"budget_tokens":5,"payload":"{literal}"}}"#)
            };
            for depth in [None, Some(MAX_DEPTH)] {
                let fast = read(body.as_bytes(), depth).expect("the common shape");
                let general: Value = serde_json::from_str(&body).unwrap();
                let payload = &fast.members.iter().find(|(k, _)| k == "payload").unwrap().1;
                assert_eq!(payload, &general["payload"], "{literal}");
                let text = general["payload"].as_str().unwrap();
                let scanned: Vec<u32> = (0..text.len() as u32)
                    .filter(|&at| matches!(text.as_bytes()[at as usize], b'"' | b'\\' | 0..=0x1f))
                    .collect();
                if fast.payload_canonical {
                    assert!(fast.specials.is_empty(), "{literal}");
                } else {
                    assert_eq!(fast.specials, scanned, "{literal}");
                }
                assert_eq!(
                    fast.payload_canonical,
                    depth.is_some() && fast_canonical_of(text, MAX_DEPTH) == Some(Canonical::Same),
                    "{literal}"
                );
                if text.is_ascii() {
                    assert!(fast.payload_ascii, "{literal}");
                } else {
                    assert!(!fast.payload_ascii, "{literal}");
                }
            }
        }
    }

    #[test]
    fn anything_but_the_common_shape_is_left_to_the_general_path() {
        for body in [
            r#"{"payload":"a\ud800","budget_tokens":5}"#,
            r#"{"payload":"a\udc00b","budget_tokens":5}"#,
            r#"{"payload":"a\x","budget_tokens":5}"#,
            "{\"payload\":\"a\u{1}\",\"budget_tokens\":5}",
            r#"{"payload":"a","payload":"b","budget_tokens":5}"#,
            r#"{"pay\u006coad":"a","budget_tokens":5}"#,
            r#"{"payload":"a","budget_tokens":5,"extra":1}"#,
            r#"{"payload":5,"budget_tokens":5}"#,
            r#"{"budget_tokens":5}"#,
            r#"{"payload":"a","budget_tokens":5}x"#,
            r#"{"payload":"a","budget_tokens":5,}"#,
            r#"{"payload":"a","budget_tokens":}"#,
            r#"{"payload":"unterminated"#,
            r#"["payload"]"#,
            "",
        ] {
            for depth in [None, Some(MAX_DEPTH)] {
                assert!(read(body.as_bytes(), depth).is_none(), "{body}");
            }
        }
        for depth in [None, Some(MAX_DEPTH)] {
            assert!(read(b"{\"payload\":\"\xff\",\"budget_tokens\":5}", depth).is_none());
            assert!(read(b"{\"payload\":\"[1,\xff]\",\"budget_tokens\":5}", depth).is_none());
        }
        let fast = read(
            br#" { "caller" : "x" , "keep_fields":["a.b"], "payload" : "p" ,"budget_tokens":1e3 } "#,
            None,
        )
        .expect("whitespace and member order are free");
        let names: Vec<&str> = fast.members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["caller", "keep_fields", "payload", "budget_tokens"]);
        assert_eq!(fast.members[3].1, serde_json::json!(1000.0));
    }
}
