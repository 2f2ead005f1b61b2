//! The JSON value as JavaScript holds it after `JSON.parse`, and `JSON.stringify` of it.
//!
//! Invariants: an object's array-index keys (canonical decimal integers 0 ..= 2^32 − 2) come first in
//! ascending numeric order, every other key keeps its first-seen position (duplicates: first position,
//! last value — serde_json's map insert does the same); `compact` writes exactly what `JSON.stringify`
//! writes for such a value (no whitespace, JS string escaping, JS number rendering).

use serde_json::{Map, Value};

/// Whether `key` is an ECMAScript array index: "0" or a decimal without leading zero, below 2^32 − 1.
pub fn is_array_index(key: &str) -> bool {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if b.len() > 1 && b[0] == b'0' {
        return false;
    }
    key.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// Reorders every object of `value` into JavaScript's own-key order, in place.
pub fn to_js_key_order(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(to_js_key_order),
        Value::Object(map) => {
            if map.keys().any(|k| is_array_index(k)) {
                let old = std::mem::take(map);
                let (mut indices, rest): (Vec<_>, Vec<_>) =
                    old.into_iter().partition(|(k, _)| is_array_index(k));
                indices.sort_by_key(|(k, _)| k.parse::<u64>().unwrap_or(0));
                *map = indices
                    .into_iter()
                    .chain(rest)
                    .collect::<Map<String, Value>>();
            }
            map.values_mut().for_each(to_js_key_order);
        }
        _ => {}
    }
}

/// ECMAScript `JSON.stringify` (compact, member order kept): the shared writer in `canonical`.
pub use crate::engine::canonical::to_js_compact as compact;

/// Length of `s` as JavaScript counts it (UTF-16 code units).
pub fn js_length(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_index_keys_move_first_in_numeric_order() {
        let mut v: Value = serde_json::from_str(
            r#"{"b":1,"10":2,"2":3,"01":4,"-1":5,"4294967295":6,"4294967294":7}"#,
        )
        .unwrap();
        to_js_key_order(&mut v);
        assert_eq!(
            compact(&v),
            r#"{"2":3,"10":2,"4294967294":7,"b":1,"01":4,"-1":5,"4294967295":6}"#
        );
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let v: Value = serde_json::from_str(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(compact(&v), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn utf16_length() {
        assert_eq!(js_length("a😀é"), 4);
    }
}
