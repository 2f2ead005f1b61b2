//! The JSON writers: `canonical::to_jcs` (RFC 8785) and `canonical::to_js_compact`
//! (`JSON.stringify`), and the same writer over the UTF-16 tree the JSON layer reads as JavaScript
//! does (`token_efficiency::payload::parse`, `jsjson::{to_string, fast_canonical}`).
//!
//! Mode byte even: the rest is JSON text. Odd: a value is generated from the rest (strings with
//! escapes, astral and private-use characters; numbers from raw double bits, huge integers,
//! negative zero; array-index and unicode keys; nesting).
//!
//! Checks: JCS output re-parses to an equal value (numbers compared as doubles, as JCS requires),
//! is idempotent and lists members sorted by UTF-16 code units; `to_js_compact` re-parses to an
//! equal value in the same member order and is idempotent; the two `JSON.stringify` paths
//! (serde tree + `to_js_compact`, UTF-16 tree + `to_string`) agree whenever both
//! parse the text; `fast_canonical`, when it answers, equals the full parse + stringify.

use super::{mode_and_rest, Cursor};
use context_meter::engine::jsjson::{self, KeyOrder};
use context_meter::engine::jsjson::{to_jcs, to_js_compact};
use context_meter::engine::token_efficiency::payload::{self as js, MAX_DEPTH};
use context_meter::engine::token_opt::json_js::to_js_key_order;
use serde_json::{Map, Number, Value};

pub fn check(data: &[u8]) {
    let (mode, rest) = mode_and_rest(data);
    if mode & 1 == 0 {
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        check_text(text);
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            check_value(&value);
        }
    } else {
        let mut c = Cursor::new(rest);
        let value = generate(&mut c, 0);
        check_value(&value);
        check_text(&serde_json::to_string(&value).expect("values serialise"));
    }
}

const STRINGS: [&str; 12] = [
    "", "a", "\"", "\\", "\u{1}", "\u{1f}", "\u{7f}", "\u{2028}", "é", "😀", "\u{E000}", "\u{FEFF}",
];
const KEYS: [&str; 10] = [
    "a",
    "b",
    "0",
    "1",
    "10",
    "01",
    "4294967294",
    "4294967295",
    "é",
    "\u{1F600}",
];

fn generate(c: &mut Cursor, depth: usize) -> Value {
    let tag = c.byte();
    match tag % 8 {
        0 => Value::Null,
        1 => Value::Bool(tag & 0x80 != 0),
        2 => {
            let bits = (0..8).fold(0u64, |acc, _| acc << 8 | u64::from(c.byte()));
            Number::from_f64(f64::from_bits(bits)).map_or(Value::Null, Value::Number)
        }
        3 => {
            let n = (0..8).fold(0u64, |acc, _| acc << 8 | u64::from(c.byte()));
            if tag & 0x80 != 0 {
                Value::from(n as i64)
            } else {
                Value::from(n)
            }
        }
        4 => {
            let mut s = String::new();
            for _ in 0..c.byte() % 6 {
                s.push_str(STRINGS[usize::from(c.byte()) % STRINGS.len()]);
            }
            Value::String(s)
        }
        5 => Value::from(f64::from(c.byte()) / 8.0 - 16.0),
        6 if depth < 12 => {
            let items = (0..c.byte() % 5).map(|_| generate(c, depth + 1)).collect();
            Value::Array(items)
        }
        7 if depth < 12 => {
            let mut map = Map::new();
            for _ in 0..c.byte() % 5 {
                let key = KEYS[usize::from(c.byte()) % KEYS.len()];
                map.insert(key.to_owned(), generate(c, depth + 1));
            }
            Value::Object(map)
        }
        _ => Value::from(-0.0),
    }
}

/// Equal as JavaScript sees the numbers (doubles); `ordered` also compares member order.
fn same(a: &Value, b: &Value, ordered: bool) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q, ordered))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && if ordered {
                    x.iter()
                        .zip(y)
                        .all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy, ordered))
                } else {
                    x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| same(v, w, ordered)))
                }
        }
        _ => a == b,
    }
}

fn members_sorted(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().all(members_sorted),
        Value::Object(map) => {
            let keys: Vec<Vec<u16>> = map.keys().map(|k| k.encode_utf16().collect()).collect();
            keys.windows(2).all(|w| w[0] < w[1]) && map.values().all(members_sorted)
        }
        _ => true,
    }
}

fn check_value(value: &Value) {
    let jcs = to_jcs(value);
    let back: Value = serde_json::from_str(&jcs).expect("JCS output is JSON");
    assert!(same(value, &back, false), "JCS changed the value");
    assert!(members_sorted(&back), "JCS members out of UTF-16 order");
    assert_eq!(to_jcs(&back), jcs, "JCS not idempotent");

    let compact = to_js_compact(value);
    let back: Value = serde_json::from_str(&compact).expect("compact output is JSON");
    assert!(same(value, &back, true), "to_js_compact changed the value");
    assert_eq!(
        to_js_compact(&back),
        compact,
        "to_js_compact not idempotent"
    );
}

fn check_text(text: &str) {
    let parsed = js::parse(text);
    if let Some(fast) = jsjson::fast_canonical(text, MAX_DEPTH) {
        let full = parsed
            .as_ref()
            .expect("fast_canonical answered for text that does not parse");
        assert_eq!(
            fast,
            jsjson::to_string(full, KeyOrder::Insertion),
            "fast_canonical differs from the full path"
        );
    }
    let (Ok(tree), Ok(mut value)) = (parsed, serde_json::from_str::<Value>(text)) else {
        return;
    };
    to_js_key_order(&mut value);
    assert_eq!(
        jsjson::to_string(&tree, KeyOrder::Insertion),
        to_js_compact(&value),
        "the two JSON.stringify implementations disagree"
    );
}
