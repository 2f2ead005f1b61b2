//! The one JSON reader, with JavaScript `JSON.parse` semantics and limits:
//! - exactly the RFC 8259 / ECMA-404 grammar (whitespace is space, tab, LF, CR only: a leading
//!   U+FEFF is not JSON, as in `JSON.parse`);
//! - strings as UTF-16 code units, so lone surrogates survive (to be refused or written back as
//!   escapes) and lengths are JavaScript's;
//! - numbers as IEEE-754 doubles, correctly rounded (`1e400` is infinity, written `null`);
//! - a repeated key keeps its first position and takes the last value; members end in JavaScript
//!   property order (array-index keys first, ascending); `__proto__` is an ordinary key;
//! - limits on bytes, values and depth, checked while reading so the recursion is bounded; an
//!   [`Observer`] sees every key and string as it is read (unsafe keys, lone surrogates).

use super::escape::has_lone_surrogate;
use super::keys::array_index;
use super::lexeme::{hex4, number_end, plain_run};
use super::observe::Observer;
use super::value::{JsString, Value};
use std::collections::HashMap;

/// What the reader refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    /// More bytes than [`Limits::max_bytes`] ([`read_bytes`] only).
    TooLarge,
    /// Not UTF-8 ([`read_bytes`] only).
    NotUtf8,
    /// Not JSON.
    Syntax,
    /// More values than [`Limits::max_nodes`].
    TooManyNodes,
    /// Nested deeper than [`Limits::max_depth`].
    TooDeep,
}

/// The reader's limits. Depth: the root value is at depth 1, a container's values one deeper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: usize,
    /// Values in the text, every occurrence counted (a repeated key's values too).
    pub max_nodes: usize,
    pub max_depth: usize,
    /// Whether a scalar past `max_depth` is too deep (else only containers are: the depth of
    /// nesting, as JavaScript's stack sees it).
    pub scalars_have_depth: bool,
}

impl Limits {
    /// Containers nested at most `max_depth` deep; no other limit.
    pub const fn nesting(max_depth: usize) -> Limits {
        Limits {
            max_bytes: usize::MAX,
            max_nodes: usize::MAX,
            max_depth,
            scalars_have_depth: false,
        }
    }
}

/// What the reader measured besides the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Facts {
    /// JSON values in the text, every occurrence counted.
    pub nodes: usize,
    /// Deepest value (root = 1).
    pub depth: usize,
}

/// Keys an object's prototype chain can be reached through.
pub const UNSAFE_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// The observer a validating reader usually wants: whether any key is unsafe ([`UNSAFE_KEYS`]) or
/// any string or key holds a lone surrogate, anywhere (a repeated key's earlier values included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hazards {
    pub unsafe_key: bool,
    pub lone_surrogate: bool,
}

impl Observer for Hazards {
    fn key(&mut self, key: &[u16]) {
        if UNSAFE_KEYS
            .iter()
            .any(|unsafe_key| key.iter().copied().eq(unsafe_key.encode_utf16()))
        {
            self.unsafe_key = true;
        }
        self.string(key);
    }

    fn string(&mut self, units: &[u16]) {
        if has_lone_surrogate(units) {
            self.lone_surrogate = true;
        }
    }
}

/// Reads `body` as one JSON text: its size, then UTF-8, then the JSON, under `limits`.
pub fn read_bytes<O: Observer>(
    body: &[u8],
    limits: Limits,
    observer: &mut O,
) -> Result<(Value, Facts), ReadError> {
    if body.len() > limits.max_bytes {
        return Err(ReadError::TooLarge);
    }
    let text = std::str::from_utf8(body).map_err(|_| ReadError::NotUtf8)?;
    read(text, limits, observer)
}

/// Reads the whole of `text` as one JSON text under `limits` (bytes included).
pub fn read<O: Observer>(
    text: &str,
    limits: Limits,
    observer: &mut O,
) -> Result<(Value, Facts), ReadError> {
    if text.len() > limits.max_bytes {
        return Err(ReadError::TooLarge);
    }
    let mut reader = Reader {
        at: Cursor::new(text),
        limits,
        facts: Facts::default(),
        observer,
    };
    reader.at.skip_whitespace();
    let value = reader.value(1)?;
    reader.at.skip_whitespace();
    if !reader.at.at_end() {
        return Err(ReadError::Syntax);
    }
    Ok((value, reader.facts))
}

/// A position in a JSON text and the lexemes read there (shared by the reader, the syntax check
/// and the canonical rewrite).
pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) text: &'a str,
    pub(super) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            bytes: text.as_bytes(),
            text,
            pos: 0,
        }
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    #[inline]
    pub(super) fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn expect_literal(&mut self, literal: &[u8]) -> Result<(), ReadError> {
        if self.bytes[self.pos..].starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(ReadError::Syntax)
        }
    }

    pub(super) fn number(&mut self) -> Result<f64, ReadError> {
        let start = self.pos;
        self.pos = number_end(self.bytes, start).ok_or(ReadError::Syntax)?;
        // Rust's float parsing is correctly rounded (as ECMAScript requires) and overflows to ±inf.
        self.text[start..self.pos]
            .parse::<f64>()
            .map_err(|_| ReadError::Syntax)
    }

    fn hex4(&mut self) -> Result<u16, ReadError> {
        let unit = hex4(self.bytes, self.pos).ok_or(ReadError::Syntax)?;
        self.pos += 4;
        Ok(unit)
    }

    /// The string literal at the cursor (its opening quote), as UTF-16 code units.
    pub(super) fn string(&mut self) -> Result<JsString, ReadError> {
        self.pos += 1;
        let mut units: JsString = Vec::new();
        loop {
            // Copy the run of plain characters in one go.
            let run_start = self.pos;
            self.pos += plain_run(&self.bytes[self.pos..]);
            units.extend(self.text[run_start..self.pos].encode_utf16());
            match self.peek().ok_or(ReadError::Syntax)? {
                b'"' => {
                    self.pos += 1;
                    return Ok(units);
                }
                b'\\' => {
                    self.pos += 1;
                    let escaped = self.peek().ok_or(ReadError::Syntax)?;
                    self.pos += 1;
                    let unit = match escaped {
                        b'"' => 0x22,
                        b'\\' => 0x5c,
                        b'/' => 0x2f,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => 0x0a,
                        b'r' => 0x0d,
                        b't' => 0x09,
                        b'u' => self.hex4()?,
                        _ => return Err(ReadError::Syntax),
                    };
                    units.push(unit);
                }
                // A raw control character.
                _ => return Err(ReadError::Syntax),
            }
        }
    }
}

struct Reader<'a, 'o, O: Observer> {
    at: Cursor<'a>,
    limits: Limits,
    facts: Facts,
    observer: &'o mut O,
}

impl<O: Observer> Reader<'_, '_, O> {
    fn value(&mut self, depth: usize) -> Result<Value, ReadError> {
        let first = if self.limits.scalars_have_depth {
            if depth > self.limits.max_depth {
                return Err(ReadError::TooDeep);
            }
            self.at.peek()
        } else {
            let first = self.at.peek();
            if matches!(first, Some(b'{' | b'[')) && depth > self.limits.max_depth {
                return Err(ReadError::TooDeep);
            }
            first
        };
        self.facts.nodes += 1;
        if self.facts.nodes > self.limits.max_nodes {
            return Err(ReadError::TooManyNodes);
        }
        self.facts.depth = self.facts.depth.max(depth);
        match first.ok_or(ReadError::Syntax)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => {
                let units = self.at.string()?;
                self.observer.string(&units);
                Ok(Value::String(units))
            }
            b't' => self.at.expect_literal(b"true").map(|()| Value::Bool(true)),
            b'f' => self
                .at
                .expect_literal(b"false")
                .map(|()| Value::Bool(false)),
            b'n' => self.at.expect_literal(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => self.at.number().map(Value::Number),
            _ => Err(ReadError::Syntax),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ReadError> {
        self.at.pos += 1;
        let mut items = Vec::new();
        self.at.skip_whitespace();
        if self.at.peek() == Some(b']') {
            self.at.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.at.skip_whitespace();
            items.push(self.value(depth + 1)?);
            self.at.skip_whitespace();
            match self.at.peek() {
                Some(b',') => self.at.pos += 1,
                Some(b']') => {
                    self.at.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(ReadError::Syntax),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ReadError> {
        self.at.pos += 1;
        let mut members: Vec<(JsString, Value)> = Vec::new();
        // Small objects look duplicates up by scanning; large ones through a map built on demand.
        let mut index_of: Option<HashMap<JsString, usize>> = None;
        self.at.skip_whitespace();
        if self.at.peek() == Some(b'}') {
            self.at.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.at.skip_whitespace();
            if self.at.peek() != Some(b'"') {
                return Err(ReadError::Syntax);
            }
            let key = self.at.string()?;
            self.observer.key(&key);
            self.at.skip_whitespace();
            if self.at.peek() != Some(b':') {
                return Err(ReadError::Syntax);
            }
            self.at.pos += 1;
            self.at.skip_whitespace();
            let value = self.value(depth + 1)?;
            if members.len() >= 16 && index_of.is_none() {
                index_of = Some(
                    members
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i))
                        .collect(),
                );
            }
            let existing = match &index_of {
                Some(map) => map.get(&key).copied(),
                None => members.iter().position(|(k, _)| *k == key),
            };
            match existing {
                Some(at) => members[at].1 = value,
                None => {
                    if let Some(map) = index_of.as_mut() {
                        map.insert(key.clone(), members.len());
                    }
                    members.push((key, value));
                }
            }
            self.at.skip_whitespace();
            match self.at.peek() {
                Some(b',') => self.at.pos += 1,
                Some(b'}') => {
                    self.at.pos += 1;
                    return Ok(Value::Object(in_property_order(members)));
                }
                _ => return Err(ReadError::Syntax),
            }
        }
    }
}

/// Reorders members as JavaScript enumerates an ordinary object's own string keys.
fn in_property_order(members: Vec<(JsString, Value)>) -> Vec<(JsString, Value)> {
    let index = |k: &JsString| array_index(k.iter().copied());
    if !members.iter().any(|(k, _)| index(k).is_some()) {
        return members;
    }
    let (mut indexed, named): (Vec<_>, Vec<_>) =
        members.into_iter().partition(|(k, _)| index(k).is_some());
    indexed.sort_by_key(|(k, _)| index(k));
    indexed.extend(named);
    indexed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{to_string, KeyOrder};

    /// JSON.stringify(JSON.parse(text)) through the tree.
    fn canon(text: &str) -> Result<String, ReadError> {
        read(text, Limits::nesting(1000), &mut ())
            .map(|(value, _)| to_string(&value, KeyOrder::Insertion))
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        assert_eq!(
            canon("[1e21,1E-7,0.1,-0,5e-324,9007199254740993,1E400,-1e400,1.50,100]").unwrap(),
            "[1e+21,1e-7,0.1,0,5e-324,9007199254740992,null,null,1.5,100]"
        );
    }

    #[test]
    fn keys_follow_javascript_property_order() {
        let text = r#"{"b":1,"4294967295":2,"4294967294":3,"1":4,"01":5,"-1":6,"a":7,"b":8}"#;
        assert_eq!(
            canon(text).unwrap(),
            r#"{"1":4,"4294967294":3,"b":8,"4294967295":2,"01":5,"-1":6,"a":7}"#
        );
        assert_eq!(
            canon(r#"{"__proto__":1,"x":2}"#).unwrap(),
            r#"{"__proto__":1,"x":2}"#
        );
    }

    #[test]
    fn lone_surrogates_round_trip_as_escapes_and_pairs_join() {
        assert_eq!(
            canon(r#"["\ud800","\uDE00x","\ud83d\ude00","\u0041\u001F\u2028"]"#).unwrap(),
            "[\"\\ud800\",\"\\ude00x\",\"\u{1F600}\",\"A\\u001f\u{2028}\"]"
        );
    }

    #[test]
    fn not_json_is_refused_like_json_parse() {
        for text in [
            "",
            " ",
            "\u{feff}{}",
            "{a:1}",
            "[1,]",
            "01",
            "1.",
            ".5",
            "+1",
            "\"\t\"",
            "'x'",
            "[1] x",
            "nul",
            "\"\\x\"",
            "\"\\u12\"",
            "{\"a\" 1}",
            "NaN",
            "-",
        ] {
            assert_eq!(canon(text), Err(ReadError::Syntax), "{text:?}");
        }
        assert_eq!(
            canon(" \t\r\n[ 1 , {\"a\" : null} ] ").unwrap(),
            "[1,{\"a\":null}]"
        );
    }

    #[test]
    fn large_objects_keep_duplicate_semantics() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":\"last\",\"k39\":null,\"k0\":[]}");
        let canonical = canon(&text).unwrap();
        assert!(canonical.starts_with("{\"k0\":[],\"k1\":1,\"k2\":2,\"k3\":\"last\","));
        assert!(canonical.ends_with("\"k39\":null}"));
    }

    /// The budget pack's limits: every value has a depth.
    fn limits(max_nodes: usize, max_depth: usize) -> Limits {
        Limits {
            max_bytes: usize::MAX,
            max_nodes,
            max_depth,
            scalars_have_depth: true,
        }
    }

    fn parse(text: &str) -> Result<(Value, Facts, Hazards), ReadError> {
        let mut hazards = Hazards::default();
        read(text, limits(8000, 20), &mut hazards).map(|(v, f)| (v, f, hazards))
    }

    fn s(text: &str) -> Value {
        Value::String(text.encode_utf16().collect())
    }

    #[test]
    fn grammar_matches_json_parse() {
        for ok in [
            "0",
            "-0",
            "1.5e+3",
            " [1, 2 ,3] ",
            "{\"a\":{}}",
            "\"\\u00e9\\/\"",
            "true",
            "null",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            " ",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "'a'",
            "\"\t\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\u{feff}{}",
            "{} {}",
            "NaN",
            "[1 2]",
            "\u{a0}1",
        ] {
            assert_eq!(parse(bad).map(|_| ()), Err(ReadError::Syntax), "{bad:?}");
        }
    }

    #[test]
    fn strings_keep_utf16_and_flag_lone_surrogates() {
        let (v, _, hazards) = parse("[\"a\\ud83d\\ude00é😀\"]").unwrap();
        assert_eq!(
            v,
            Value::Array(vec![Value::String(vec![
                0x61, 0xd83d, 0xde00, 0xe9, 0xd83d, 0xde00
            ])])
        );
        assert!(!hazards.lone_surrogate);
        assert!(parse("\"\\ud83d\"").unwrap().2.lone_surrogate);
        assert!(parse("\"\\ude00x\"").unwrap().2.lone_surrogate);
        assert!(parse("{\"\\udbff\":1}").unwrap().2.lone_surrogate);
        assert!(parse("\"\\ud83d\\ud83d\\ude00\"").unwrap().2.lone_surrogate);
    }

    #[test]
    fn repeated_keys_keep_the_last_value_at_the_first_position() {
        let (v, facts, _) = parse("{\"a\":1,\"b\":2,\"a\":3}").unwrap();
        assert_eq!(
            v,
            Value::Object(vec![
                ("a".encode_utf16().collect(), Value::Number(3.0)),
                ("b".encode_utf16().collect(), Value::Number(2.0)),
            ])
        );
        assert_eq!(facts.nodes, 4);
        assert_eq!(v.member("a"), Some(&Value::Number(3.0)));
    }

    #[test]
    fn unsafe_keys_are_flagged_at_any_depth_but_not_as_values() {
        assert!(parse("{\"x\":[{\"__proto__\":1}]}").unwrap().2.unsafe_key);
        assert!(parse("{\"constructor\":1}").unwrap().2.unsafe_key);
        assert!(parse("{\"prot\\u006ftype\":1}").unwrap().2.unsafe_key);
        assert!(!parse("{\"x\":\"__proto__\"}").unwrap().2.unsafe_key);
        assert!(!parse("{\"Prototype\":1}").unwrap().2.unsafe_key);
    }

    #[test]
    fn limits_stop_the_reader() {
        assert_eq!(read("[[1]]", limits(8000, 3), &mut ()).unwrap().1.depth, 3);
        assert_eq!(
            read("[[[1]]]", limits(8000, 3), &mut ()),
            Err(ReadError::TooDeep)
        );
        assert_eq!(read("[1,2]", limits(3, 20), &mut ()).unwrap().1.nodes, 3);
        assert_eq!(
            read("[1,2,3]", limits(3, 20), &mut ()),
            Err(ReadError::TooManyNodes)
        );
        let deep = "[".repeat(100_000);
        assert_eq!(
            read(&deep, limits(8000, 20), &mut ()),
            Err(ReadError::TooDeep)
        );
    }

    #[test]
    fn numbers_are_doubles() {
        assert_eq!(parse("1e400").unwrap().0, Value::Number(f64::INFINITY));
        assert_eq!(parse("5.0").unwrap().0, Value::Number(5.0));
        assert_eq!(
            parse("9007199254740993").unwrap().0,
            Value::Number(9007199254740992.0)
        );
        assert_eq!(parse("\"x\"").unwrap().0, s("x"));
    }

    #[test]
    fn containers_alone_have_depth_under_nesting_limits() {
        assert!(read("[[1]]", Limits::nesting(2), &mut ()).is_ok());
        assert_eq!(
            read("[[[1]]]", Limits::nesting(2), &mut ()),
            Err(ReadError::TooDeep)
        );
        let limited = Limits {
            max_bytes: 4,
            ..Limits::nesting(10)
        };
        assert_eq!(read("[1] ", limited, &mut ()).map(|_| ()), Ok(()));
        assert_eq!(read("[1]  ", limited, &mut ()), Err(ReadError::TooLarge));
        assert_eq!(
            read_bytes(b"\xff", limited, &mut ()),
            Err(ReadError::NotUtf8)
        );
    }
}
