//! The JSON value as JavaScript holds it after `JSON.parse`, and `JSON.stringify` of it.
//!
//! Invariants: an object's array-index keys (canonical decimal integers 0 ..= 2^32 − 2) come first in
//! ascending numeric order, every other key keeps its first-seen position (duplicates: first position,
//! last value — serde_json's map insert does the same); `compact` writes exactly what `JSON.stringify`
//! writes for such a value (no whitespace, JS string escaping, JS number rendering).

use crate::engine::jsjson::array_index_of;
use serde_json::{Map, Value};

/// Reorders every object of `value` into JavaScript's own-key order, in place.
pub fn to_js_key_order(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(to_js_key_order),
        Value::Object(map) => {
            if map.keys().any(|k| array_index_of(k).is_some()) {
                let old = std::mem::take(map);
                let (mut indices, rest): (Vec<_>, Vec<_>) = old
                    .into_iter()
                    .partition(|(k, _)| array_index_of(k).is_some());
                indices.sort_by_key(|(k, _)| array_index_of(k));
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

/// ECMAScript `JSON.stringify` (compact, member order kept): the shared writer in `jsjson`.
pub use crate::engine::jsjson::to_js_compact as compact;

/// Length of a string as JavaScript counts it (UTF-16 code units).
pub use crate::engine::jsjson::js_length;

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
