//! The one JSON writer: compact text (no whitespace) with JavaScript's string escaping
//! ([`super::escape`]) and number rendering ([`super::number`]), over any tree that implements
//! [`Tree`] (`serde_json::Value` and [`super::Value`]), members in the [`KeyOrder`] asked for:
//! insertion order (`JSON.stringify` of a serde map), JavaScript property order, or RFC 8785 (JCS).
//!
//! Invariants: JCS sorts members by their names' UTF-16 code units; integers beyond 2^53 are first
//! rounded to a double, as JCS requires; the writer is generic (monomorphic per tree), never
//! dynamically dispatched.

use super::escape::{write_js_string, write_utf16_string};
use super::keys::{array_index, array_index_of, KeyOrder};
use super::number::push_js_number;
use super::value::{JsString, Value as JsValue};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// A member name or string value as a tree holds it.
pub trait Text {
    /// Appends the string as a JSON literal.
    fn write_literal(&self, out: &mut String);
    /// Order of the UTF-16 code units (JCS).
    fn utf16_cmp(&self, other: &Self) -> Ordering;
    /// [`array_index`] of the name.
    fn array_index(&self) -> Option<u32>;
}

impl Text for str {
    #[inline]
    fn write_literal(&self, out: &mut String) {
        write_js_string(out, self);
    }
    /// Byte order where it is UTF-16 order: up to the first differing byte, and at it when either
    /// byte is ASCII (both strings are then at a character boundary, and an ASCII character sorts
    /// before any other in both orders). Only two non-ASCII characters are compared as UTF-16,
    /// where the orders can differ (U+E000..U+FFFF sorts after a surrogate pair in UTF-16).
    fn utf16_cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.as_bytes(), other.as_bytes());
        match a.iter().zip(b).position(|(x, y)| x != y) {
            None => a.len().cmp(&b.len()),
            Some(i) if a[i] < 0x80 || b[i] < 0x80 => a[i].cmp(&b[i]),
            Some(_) => self.encode_utf16().cmp(other.encode_utf16()),
        }
    }
    #[inline]
    fn array_index(&self) -> Option<u32> {
        array_index_of(self)
    }
}

impl Text for [u16] {
    #[inline]
    fn write_literal(&self, out: &mut String) {
        write_utf16_string(out, self);
    }
    fn utf16_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    #[inline]
    fn array_index(&self) -> Option<u32> {
        array_index(self.iter().copied())
    }
}

/// One node of a tree, as the writer sees it.
pub enum Node<'a, T: Tree> {
    Null,
    Bool(bool),
    Number(f64),
    String(&'a T::Text),
    Array(&'a [T]),
    /// An object: its members come from [`Tree::members`].
    Object,
}

/// A JSON tree the writer can walk.
pub trait Tree: Sized {
    type Text: Text + ?Sized;
    type Members<'a>: Iterator<Item = (&'a Self::Text, &'a Self)>
    where
        Self: 'a;
    fn node(&self) -> Node<'_, Self>;
    /// The members of an object node in the tree's own order (none for any other node).
    fn members(&self) -> Self::Members<'_>;
}

type SerdeMember<'a> = (&'a String, &'a Value);

impl Tree for Value {
    type Text = str;
    type Members<'a> = std::iter::Map<
        std::iter::Flatten<std::option::IntoIter<serde_json::map::Iter<'a>>>,
        fn(SerdeMember<'a>) -> (&'a str, &'a Value),
    >;
    #[inline]
    fn node(&self) -> Node<'_, Self> {
        match self {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            // as_f64 is exact for every i64/u64 up to 2^53 and rounds to nearest beyond, as JCS
            // requires.
            Value::Number(n) => Node::Number(n.as_f64().unwrap_or(0.0)),
            Value::String(s) => Node::String(s.as_str()),
            Value::Array(items) => Node::Array(items),
            Value::Object(_) => Node::Object,
        }
    }
    fn members(&self) -> Self::Members<'_> {
        self.as_object()
            .map(Map::iter)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
    }
}

type JsMember<'a> = &'a (JsString, JsValue);

impl Tree for JsValue {
    type Text = [u16];
    type Members<'a> = std::iter::Map<
        std::slice::Iter<'a, (JsString, JsValue)>,
        fn(JsMember<'a>) -> (&'a [u16], &'a JsValue),
    >;
    #[inline]
    fn node(&self) -> Node<'_, Self> {
        match self {
            JsValue::Null => Node::Null,
            JsValue::Bool(b) => Node::Bool(*b),
            JsValue::Number(x) => Node::Number(*x),
            JsValue::String(s) => Node::String(s.as_slice()),
            JsValue::Array(items) => Node::Array(items),
            JsValue::Object(_) => Node::Object,
        }
    }
    fn members(&self) -> Self::Members<'_> {
        let members: &[(JsString, JsValue)] = match self {
            JsValue::Object(members) => members,
            _ => &[],
        };
        members.iter().map(|(k, v)| (k.as_slice(), v))
    }
}

/// Appends the compact JSON text of `value`, members in `order`.
pub fn write<T: Tree>(out: &mut String, value: &T, order: KeyOrder) {
    match value.node() {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Node::Number(x) => push_js_number(out, x),
        Node::String(s) => s.write_literal(out),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item, order);
            }
            out.push(']');
        }
        Node::Object => {
            let reordered = match order {
                KeyOrder::Insertion => None,
                KeyOrder::JsProperty => {
                    if value.members().any(|(k, _)| k.array_index().is_some()) {
                        let (mut indexed, named): (Vec<_>, Vec<_>) = value
                            .members()
                            .partition(|(k, _)| k.array_index().is_some());
                        indexed.sort_by_key(|(k, _)| k.array_index());
                        indexed.extend(named);
                        Some(indexed)
                    } else {
                        None
                    }
                }
                // Members already in JCS order (as the families build their reports) are
                // written as they stand, with no list to sort.
                KeyOrder::Jcs if in_jcs_order(value) => None,
                KeyOrder::Jcs => {
                    let mut members: Vec<_> = value.members().collect();
                    members.sort_by(|a, b| a.0.utf16_cmp(b.0));
                    Some(members)
                }
            };
            out.push('{');
            match reordered {
                Some(members) => write_members(out, members.into_iter(), order),
                None => write_members(out, value.members(), order),
            }
            out.push('}');
        }
    }
}

/// Whether the object's member names, in the tree's order, ascend strictly in UTF-16 order.
fn in_jcs_order<T: Tree>(value: &T) -> bool {
    let mut previous: Option<&T::Text> = None;
    value.members().all(|(key, _)| {
        let ascending = previous.is_none_or(|p| p.utf16_cmp(key) == Ordering::Less);
        previous = Some(key);
        ascending
    })
}

fn write_members<'a, T: Tree + 'a>(
    out: &mut String,
    members: impl Iterator<Item = (&'a T::Text, &'a T)>,
    order: KeyOrder,
) {
    for (i, (key, value)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        key.write_literal(out);
        out.push(':');
        write(out, value, order);
    }
}

/// The compact JSON text of `value`, members in `order`.
pub fn to_string<T: Tree>(value: &T, order: KeyOrder) -> String {
    let mut out = String::new();
    write(&mut out, value, order);
    out
}

/// The JCS bytes of `value`.
pub fn to_jcs(value: &Value) -> String {
    to_string(value, KeyOrder::Jcs)
}

/// ECMAScript `JSON.stringify(value)` of a `serde_json::Value`: members in the map's own
/// (insertion) order.
pub fn to_js_compact(value: &Value) -> String {
    to_string(value, KeyOrder::Insertion)
}

/// ECMAScript `JSON.stringify(value)` of a `serde_json::Value` read as JavaScript holds it:
/// members in JavaScript property order.
pub fn js_stringify(value: &Value) -> String {
    to_string(value, KeyOrder::JsProperty)
}

/// The JCS bytes of the object `map` and the offset where a member named `name` (absent from
/// `map`) would stand in them: just after the member that sorts before it, or just after `{`.
/// Splicing `,"name":value` there (`"name":value,` at offset 1 when members follow) gives the JCS
/// bytes of the object with that member, without writing the rest again. The string is allocated
/// once, with room for `spare` more bytes (the spliced member), unless escapes outgrow
/// [`capacity_for`]'s allowance.
pub fn to_jcs_with_slot(map: &Map<String, Value>, name: &str, spare: usize) -> (String, usize) {
    let mut out = String::with_capacity(2 + capacity_for(map.iter()) + spare);
    out.push('{');
    let mut slot = None;
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_by(|a, b| a.0.as_str().utf16_cmp(b.0));
    for (i, (key, value)) in members.into_iter().enumerate() {
        if slot.is_none() && key.encode_utf16().gt(name.encode_utf16()) {
            slot = Some(out.len());
        }
        if i > 0 {
            out.push(',');
        }
        write_js_string(&mut out, key);
        out.push(':');
        write(&mut out, value, KeyOrder::Jcs);
    }
    let slot = slot.unwrap_or(out.len());
    out.push('}');
    (out, slot)
}

/// Room to allocate for the JSON text of `members` (name and value each): a report carries a
/// whole shaped payload, and a string grown by doubling would copy it about twice over. Strings
/// are allowed a quarter more for escapes (a JSON text payload escapes a quote every 5–12 bytes);
/// numbers and literals 24 bytes, punctuation 2 per member. Only capacity depends on it.
fn capacity_for<'v>(members: impl Iterator<Item = (&'v String, &'v Value)>) -> usize {
    fn text(s: &str) -> usize {
        s.len() + s.len() / 4 + 2
    }
    fn value(v: &Value) -> usize {
        match v {
            Value::String(s) => text(s),
            Value::Array(items) => 2 + items.iter().map(|item| 1 + value(item)).sum::<usize>(),
            Value::Object(map) => 2 + capacity_for(map.iter()),
            Value::Null | Value::Bool(_) | Value::Number(_) => 24,
        }
    }
    members.map(|(k, v)| 2 + text(k) + value(v)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc8785_section_3_2_3_sorting_by_utf16() {
        // The RFC's sorting example: members ordered by UTF-16 code units, not by code points.
        let v = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{80}": "Control",
            "\u{f6}": "Latin Small Letter O With Diaeresis"
        });
        let keys: Vec<String> = {
            let s = to_jcs(&v);
            let back: serde_json::Map<String, Value> = serde_json::from_str(&s).unwrap();
            back.keys().cloned().collect()
        };
        let want = [
            "\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ];
        assert_eq!(keys, want);
    }

    #[test]
    fn rfc8785_section_3_2_2_example() {
        let input = r#"{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],
            "string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals":[null,true,false]}"#;
        let v: Value = serde_json::from_str(input).unwrap();
        let want = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
        assert_eq!(to_jcs(&v), want);
    }

    #[test]
    fn js_compact_keeps_member_order() {
        let v: Value =
            serde_json::from_str(r#"{"b":[1.50,{"z":null,"a":"\u0001"}],"a":1e21}"#).unwrap();
        assert_eq!(
            to_js_compact(&v),
            r#"{"b":[1.5,{"z":null,"a":"\u0001"}],"a":1e+21}"#
        );
        assert_eq!(
            to_jcs(&v),
            r#"{"a":1e+21,"b":[1.5,{"a":"\u0001","z":null}]}"#
        );
    }

    #[test]
    fn js_property_order_puts_index_keys_first() {
        let v: Value =
            serde_json::from_str(r#"{"b":1,"10":2,"2":3,"01":4,"a":[1.0,1e21,null]}"#).unwrap();
        assert_eq!(
            js_stringify(&v),
            r#"{"2":3,"10":2,"b":1,"01":4,"a":[1,1e+21,null]}"#
        );
    }

    #[test]
    fn integers_beyond_2_pow_53_round_like_doubles() {
        assert_eq!(to_jcs(&json!(9007199254740993u64)), "9007199254740992");
        assert_eq!(to_jcs(&json!(-42)), "-42");
    }

    /// The byte-first comparison is UTF-16 order on every pair drawn from names that share
    /// prefixes and mix ASCII, two- and three-byte characters, U+E000..U+FFFF and astral ones
    /// (where UTF-8 and UTF-16 orders part); and an object written in insertion order when it is
    /// already sorted gives the bytes a sorted copy gives.
    #[test]
    fn utf16_order_by_bytes_first() {
        let parts = [
            "",
            "a",
            "b",
            "é",
            "\u{e000}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1f600}",
            "中",
            "A",
        ];
        let mut names = Vec::new();
        for x in parts {
            for y in parts {
                for z in ["", "a", "\u{fb33}", "\u{1f600}"] {
                    names.push(format!("{x}{y}{z}"));
                }
            }
        }
        for a in &names {
            for b in &names {
                let want = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(a.as_str().utf16_cmp(b.as_str()), want, "{a:?} {b:?}");
            }
        }
        let mut sorted = names.clone();
        sorted.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        sorted.dedup();
        let object = |keys: &[String]| {
            Value::Object(keys.iter().map(|k| (k.clone(), json!(k.len()))).collect())
        };
        let mut reversed = sorted.clone();
        reversed.reverse();
        assert_eq!(to_jcs(&object(&sorted)), to_jcs(&object(&reversed)));
        assert!(in_jcs_order(&object(&sorted)) && !in_jcs_order(&object(&reversed)));
    }
}
