//! A small strict JSON reader with JavaScript `JSON.parse` semantics, built for refusing input
//! before anything else looks at it.
//!
//! Why not serde_json: serde_json rejects lone-surrogate escapes (which must be refused here as
//! INVALID_UNICODE, not as malformed JSON), cannot stop at a depth or value-count limit, and does not
//! keep UTF-16 code units. This reader:
//! - accepts exactly the RFC 8259 / ECMA-404 grammar (whitespace is space, tab, LF, CR only — a
//!   leading U+FEFF is malformed, as in `JSON.parse`);
//! - keeps strings as UTF-16 code units, so lone surrogates survive to be detected and offsets are
//!   JavaScript offsets;
//! - reads numbers as IEEE-754 doubles, correctly rounded as JavaScript does (`1e400` → infinity);
//! - collapses a repeated object key as JavaScript does (the last value wins, at the first key's
//!   position);
//! - counts every value of the text (repeated keys' values included) and stops as soon as the count
//!   passes the limit or a value sits deeper than the depth limit (root value = depth 1), so its
//!   recursion is bounded;
//! - records, without failing, whether any key is unsafe or any string holds a lone surrogate.

use crate::engine::json_lexeme::{hex4, number_end};
use std::collections::BTreeMap;

/// One parsed JSON value. Strings and keys are UTF-16 code units.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    Null,
    Bool(bool),
    Number(f64),
    String(Vec<u16>),
    Array(Vec<JsonValue>),
    Object(Vec<(Vec<u16>, JsonValue)>),
}

impl JsonValue {
    /// The member named `key` of an object.
    pub fn member(&self, key: &str) -> Option<&JsonValue> {
        match self {
            JsonValue::Object(members) => members
                .iter()
                .find(|(k, _)| k.iter().copied().eq(key.encode_utf16()))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

/// What the reader learned besides the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextFacts {
    /// JSON values in the text, every occurrence counted.
    pub nodes: usize,
    /// Deepest value (root = 1).
    pub depth: usize,
    /// Some object key is `__proto__`, `constructor` or `prototype`.
    pub unsafe_key: bool,
    /// Some string or key holds an unpaired surrogate.
    pub lone_surrogate: bool,
}

/// Why the reader stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    Syntax,
    TooManyNodes,
    TooDeep,
}

/// Parses one JSON text (the whole of `text`) under the given limits.
pub fn read(
    text: &str,
    max_nodes: usize,
    max_depth: usize,
) -> Result<(JsonValue, TextFacts), ReadError> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        pos: 0,
        facts: TextFacts::default(),
        max_nodes,
        max_depth,
    };
    reader.skip_whitespace();
    let value = reader.value(1)?;
    reader.skip_whitespace();
    if reader.pos != reader.bytes.len() {
        return Err(ReadError::Syntax);
    }
    Ok((value, reader.facts))
}

const UNSAFE_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    facts: TextFacts,
    max_nodes: usize,
    max_depth: usize,
}

impl Reader<'_> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect_literal(&mut self, literal: &[u8]) -> Result<(), ReadError> {
        if self.bytes[self.pos..].starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(ReadError::Syntax)
        }
    }

    fn value(&mut self, depth: usize) -> Result<JsonValue, ReadError> {
        if depth > self.max_depth {
            return Err(ReadError::TooDeep);
        }
        self.facts.nodes += 1;
        if self.facts.nodes > self.max_nodes {
            return Err(ReadError::TooManyNodes);
        }
        self.facts.depth = self.facts.depth.max(depth);
        match self.peek().ok_or(ReadError::Syntax)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => Ok(JsonValue::String(self.string()?)),
            b't' => self.expect_literal(b"true").map(|_| JsonValue::Bool(true)),
            b'f' => self
                .expect_literal(b"false")
                .map(|_| JsonValue::Bool(false)),
            b'n' => self.expect_literal(b"null").map(|_| JsonValue::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(ReadError::Syntax),
        }
    }

    fn object(&mut self, depth: usize) -> Result<JsonValue, ReadError> {
        self.pos += 1;
        let mut members: Vec<(Vec<u16>, JsonValue)> = Vec::new();
        // Key → position, so a repeated key is found without rescanning the members.
        let mut positions: BTreeMap<Vec<u16>, usize> = BTreeMap::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(JsonValue::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(ReadError::Syntax);
            }
            let key = self.string()?;
            if UNSAFE_KEYS
                .iter()
                .any(|unsafe_key| key.iter().copied().eq(unsafe_key.encode_utf16()))
            {
                self.facts.unsafe_key = true;
            }
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(ReadError::Syntax);
            }
            self.pos += 1;
            self.skip_whitespace();
            let value = self.value(depth + 1)?;
            match positions.get(&key) {
                Some(&at) => members[at].1 = value,
                None => {
                    positions.insert(key.clone(), members.len());
                    members.push((key, value));
                }
            }
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(JsonValue::Object(members));
                }
                _ => return Err(ReadError::Syntax),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<JsonValue, ReadError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(JsonValue::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value(depth + 1)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(JsonValue::Array(items));
                }
                _ => return Err(ReadError::Syntax),
            }
        }
    }

    fn hex4(&mut self) -> Result<u16, ReadError> {
        let unit = hex4(self.bytes, self.pos).ok_or(ReadError::Syntax)?;
        self.pos += 4;
        Ok(unit)
    }

    /// A string literal starting at the opening quote, as UTF-16 code units.
    fn string(&mut self) -> Result<Vec<u16>, ReadError> {
        self.pos += 1;
        let mut units: Vec<u16> = Vec::new();
        loop {
            // Copy the run of plain characters at once (the input is valid UTF-8).
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            if self.pos > run_start {
                let run = std::str::from_utf8(&self.bytes[run_start..self.pos])
                    .map_err(|_| ReadError::Syntax)?;
                units.extend(run.encode_utf16());
            }
            match self.peek().ok_or(ReadError::Syntax)? {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\\' => {
                    self.pos += 1;
                    let escape = self.peek().ok_or(ReadError::Syntax)?;
                    self.pos += 1;
                    let unit = match escape {
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
                _ => return Err(ReadError::Syntax), // raw control character
            }
        }
        if has_lone_surrogate(&units) {
            self.facts.lone_surrogate = true;
        }
        Ok(units)
    }

    fn number(&mut self) -> Result<JsonValue, ReadError> {
        let start = self.pos;
        self.pos = number_end(self.bytes, start).ok_or(ReadError::Syntax)?;
        // Rust's float parsing is correctly rounded (as ECMAScript requires) and overflows to ±inf.
        std::str::from_utf8(&self.bytes[start..self.pos])
            .map_err(|_| ReadError::Syntax)?
            .parse::<f64>()
            .map(JsonValue::Number)
            .map_err(|_| ReadError::Syntax)
    }
}

/// True when `units` holds a high surrogate not followed by a low one, or a low one not preceded
/// by a high one.
pub fn has_lone_surrogate(units: &[u16]) -> bool {
    let mut i = 0;
    while i < units.len() {
        match units[i] {
            0xD800..=0xDBFF => {
                if matches!(units.get(i + 1), Some(0xDC00..=0xDFFF)) {
                    i += 2;
                    continue;
                }
                return true;
            }
            0xDC00..=0xDFFF => return true,
            _ => i += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(JsonValue, TextFacts), ReadError> {
        read(text, 8000, 20)
    }

    fn s(text: &str) -> JsonValue {
        JsonValue::String(text.encode_utf16().collect())
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
        let (v, facts) = parse("[\"a\\ud83d\\ude00é😀\"]").unwrap();
        assert_eq!(
            v,
            JsonValue::Array(vec![JsonValue::String(vec![
                0x61, 0xd83d, 0xde00, 0xe9, 0xd83d, 0xde00
            ])])
        );
        assert!(!facts.lone_surrogate);
        assert!(parse("\"\\ud83d\"").unwrap().1.lone_surrogate);
        assert!(parse("\"\\ude00x\"").unwrap().1.lone_surrogate);
        assert!(parse("{\"\\udbff\":1}").unwrap().1.lone_surrogate);
        assert!(parse("\"\\ud83d\\ud83d\\ude00\"").unwrap().1.lone_surrogate);
    }

    #[test]
    fn repeated_keys_keep_the_last_value_at_the_first_position() {
        let (v, facts) = parse("{\"a\":1,\"b\":2,\"a\":3}").unwrap();
        assert_eq!(
            v,
            JsonValue::Object(vec![
                ("a".encode_utf16().collect(), JsonValue::Number(3.0)),
                ("b".encode_utf16().collect(), JsonValue::Number(2.0)),
            ])
        );
        assert_eq!(facts.nodes, 4);
        assert_eq!(v.member("a"), Some(&JsonValue::Number(3.0)));
    }

    #[test]
    fn unsafe_keys_are_flagged_at_any_depth_but_not_as_values() {
        assert!(parse("{\"x\":[{\"__proto__\":1}]}").unwrap().1.unsafe_key);
        assert!(parse("{\"constructor\":1}").unwrap().1.unsafe_key);
        assert!(parse("{\"prot\\u006ftype\":1}").unwrap().1.unsafe_key);
        assert!(!parse("{\"x\":\"__proto__\"}").unwrap().1.unsafe_key);
        assert!(!parse("{\"Prototype\":1}").unwrap().1.unsafe_key);
    }

    #[test]
    fn limits_stop_the_reader() {
        assert_eq!(read("[[1]]", 8000, 3).unwrap().1.depth, 3);
        assert_eq!(read("[[[1]]]", 8000, 3), Err(ReadError::TooDeep));
        assert_eq!(read("[1,2]", 3, 20).unwrap().1.nodes, 3);
        assert_eq!(read("[1,2,3]", 3, 20), Err(ReadError::TooManyNodes));
        let deep = "[".repeat(100_000);
        assert_eq!(read(&deep, 8000, 20), Err(ReadError::TooDeep));
    }

    #[test]
    fn numbers_are_doubles() {
        assert_eq!(parse("1e400").unwrap().0, JsonValue::Number(f64::INFINITY));
        assert_eq!(parse("5.0").unwrap().0, JsonValue::Number(5.0));
        assert_eq!(
            parse("9007199254740993").unwrap().0,
            JsonValue::Number(9007199254740992.0)
        );
        assert_eq!(parse("\"x\"").unwrap().0, s("x"));
    }
}
