//! A JSON value as JavaScript holds it after `JSON.parse`: strings as UTF-16 code units (lone
//! surrogates kept), numbers as doubles, object members in property order.

use super::escape::has_lone_surrogate;

/// A string as JavaScript holds it: UTF-16 code units, possibly with lone surrogates.
pub type JsString = Vec<u16>;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(JsString),
    Array(Vec<Value>),
    /// Members in JavaScript property order, each key once.
    Object(Vec<(JsString, Value)>),
}

impl Value {
    /// The member named `key` of an object.
    pub fn member(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members
                .iter()
                .find(|(k, _)| k.iter().copied().eq(key.encode_utf16()))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// True when any string or key anywhere in the value holds an unpaired surrogate.
    pub fn contains_lone_surrogate(&self) -> bool {
        match self {
            Value::String(s) => has_lone_surrogate(s),
            Value::Array(items) => items.iter().any(Value::contains_lone_surrogate),
            Value::Object(members) => members
                .iter()
                .any(|(k, v)| has_lone_surrogate(k) || v.contains_lone_surrogate()),
            _ => false,
        }
    }
}
