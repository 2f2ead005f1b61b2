//! A JSON layer that behaves as JavaScript's `JSON.parse` and `JSON.stringify` do, taken literally,
//! because token-efficiency/v1 defines its canonical form as `JSON.stringify(JSON.parse(payload))`.
//!
//! Invariants kept here:
//! - Strings are UTF-16 code-unit sequences, as in JavaScript, so a lone-surrogate escape parses and
//!   is written back as its six-character escape (well-formed `JSON.stringify`).
//! - Object members are in JavaScript property order: array-index keys (`"0"` … `"4294967294"`, no
//!   leading zeros, no sign) first in ascending numeric order, then the other keys in first-insertion
//!   order. A duplicate key keeps its first position and takes the last value. `__proto__` is an
//!   ordinary key.
//! - Numbers are IEEE-754 doubles (correctly rounded; overflow is Infinity, written `null`) and are
//!   written as `Number#toString` writes them (`engine::canonical::js_number`).
//! - Whitespace is exactly tab, LF, CR and space: a leading U+FEFF makes the text not JSON.
//! - Nesting deeper than [`MAX_DEPTH`] is reported as [`ParseError::TooDeep`] (JavaScript's stringify
//!   overflows its stack on very deep values; this engine refuses them instead of guessing).

use super::census::Census;
use crate::engine::canonical::{js_number, push_js_number};
use crate::engine::json_lexeme::{hex4, number_end, plain_run};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Deepest array/object nesting accepted.
pub const MAX_DEPTH: usize = 1000;

/// A string as JavaScript holds it: UTF-16 code units, possibly with lone surrogates.
pub type JsString = Vec<u16>;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum JsValue {
    Null,
    Bool(bool),
    Number(f64),
    String(JsString),
    Array(Vec<JsValue>),
    /// Members in JavaScript property order.
    Object(Vec<(JsString, JsValue)>),
}

/// Why a text is not (acceptable) JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    NotJson,
    TooDeep,
}

/// Parses `text` as `JSON.parse` would.
/// Too-deep JSON is [`ParseError::TooDeep`] only when the whole text is JSON; otherwise it is
/// [`ParseError::NotJson`], as `JSON.parse` would say.
pub fn parse(text: &str) -> Result<JsValue, ParseError> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    parser.skip_whitespace();
    let value = match parser.value(0) {
        Err(ParseError::TooDeep) if !is_json(text) => return Err(ParseError::NotJson),
        other => other?,
    };
    parser.skip_whitespace();
    if parser.pos != parser.bytes.len() {
        return Err(ParseError::NotJson);
    }
    Ok(value)
}

/// What [`fast_canonical_of`] found the canonical form to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Canonical {
    /// The text is already in canonical form (nothing was written).
    Same,
    Rewritten(String),
}

/// The canonical form written straight from the source, without building a tree, for the common
/// payload: escape-free string literals and plain integers are copied as they stand (their
/// `JSON.stringify` form is the same text), everything else is re-rendered. Returns `None` whenever
/// the full path is needed: not JSON, nesting over [`MAX_DEPTH`], or an object with an escaped,
/// duplicate or array-index key (JavaScript would reorder or merge its members).
pub fn fast_canonical(text: &str) -> Option<String> {
    fast_canonical_of(text).map(|canonical| match canonical {
        Canonical::Same => text.to_owned(),
        Canonical::Rewritten(out) => out,
    })
}

/// [`fast_canonical`] without the copy when the text is already canonical: source text that
/// stands as it is is never copied piece by piece, only where the output departs from it.
pub fn fast_canonical_of(text: &str) -> Option<Canonical> {
    fast_canonical_with(text, Specials::Scan, &mut Census::off())
}

/// [`fast_canonical_of`], told where the text's `"`, `\` and control bytes are (`Specials::Known`,
/// as the fast body path records them) so string contents are stepped over, not scanned; the walk
/// also reports to `census` what S-1..S-3 look for (its answer is the canonical text's only when
/// the result is [`Canonical::Same`]: a rewritten text has other offsets).
pub fn fast_canonical_with(
    text: &str,
    mut specials: Specials<'_>,
    census: &mut Census,
) -> Option<Canonical> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    let mut out = Emitter {
        out: String::new(),
        flushed: 0,
    };
    p.fast_whitespace(&mut out);
    p.fast_value(&mut out, &mut Vec::new(), &mut specials, census, 0)?;
    p.fast_whitespace(&mut out);
    if p.pos != p.bytes.len() {
        return None;
    }
    if out.flushed == 0 {
        return Some(Canonical::Same);
    }
    out.replace(text, text.len(), text.len(), "");
    Some(Canonical::Rewritten(out.out))
}

/// The output of [`fast_canonical_of`]: the source up to `flushed` is accounted for in `out`;
/// source text after it stands as it is until the next replacement.
struct Emitter {
    out: String,
    flushed: usize,
}

impl Emitter {
    /// Source bytes `start..end` are written as `with` (whitespace: as nothing).
    fn replace(&mut self, text: &str, start: usize, end: usize, with: &str) {
        if self.out.capacity() == 0 {
            self.out.reserve(text.len());
        }
        self.out.push_str(&text[self.flushed..start]);
        self.out.push_str(with);
        self.flushed = end;
    }
}

/// Where plain runs (no `"`, `\\`, control byte) end: found by scanning, or read from the
/// ascending offsets of every such byte of the text, stepping forward only.
pub enum Specials<'s> {
    Scan,
    Known { offsets: &'s [u32], next: usize },
}

impl Specials<'_> {
    /// Length of the plain run of `bytes` that starts at `at`.
    #[inline]
    fn plain_run(&mut self, bytes: &[u8], at: usize) -> usize {
        match self {
            Specials::Scan => plain_run(&bytes[at..]),
            Specials::Known { offsets, next } => {
                while offsets.get(*next).is_some_and(|&o| (o as usize) < at) {
                    *next += 1;
                }
                offsets.get(*next).map_or(bytes.len(), |&o| o as usize) - at
            }
        }
    }
}

/// End (past the closing quote) of the string literal starting at `start` when it is already
/// spelled as JavaScript's well-formed `JSON.stringify` spells its value: only `\"`, `\\`, `\b`,
/// `\f`, `\n`, `\r`, `\t`, and lowercase `\u00xx` for the other control characters and
/// `\udxxx` for lone surrogates are escaped, nothing else. `None` for anything else (another
/// spelling, or not a string literal at all): the caller takes the exact path.
fn canonical_literal_end(bytes: &[u8], start: usize, specials: &mut Specials) -> Option<usize> {
    let lower_hex = |at: usize| -> Option<u16> {
        let digits = bytes.get(at..at + 4)?;
        digits
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            .then(|| hex4(bytes, at))
            .flatten()
    };
    let mut i = start + 1;
    loop {
        i += specials.plain_run(bytes, i);
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *bytes.get(i + 1)? {
                b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let unit = lower_hex(i + 2)?;
                    let canonical = match unit {
                        0x08 | 0x09 | 0x0a | 0x0c | 0x0d => false,
                        0..=0x1f => true,
                        // A high surrogate is lone unless a low one follows (then the pair is
                        // one code point, printed as itself); a low one here is always lone.
                        0xd800..=0xdbff => {
                            !(bytes.get(i + 6..i + 8) == Some(b"\\u")
                                && hex4(bytes, i + 8)
                                    .is_some_and(|u| (0xdc00..=0xdfff).contains(&u)))
                        }
                        0xdc00..=0xdfff => true,
                        _ => false,
                    };
                    if !canonical {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// `-?[1-9][0-9]{0,14}` or `0`: printed by JavaScript exactly as written.
fn is_plain_integer(literal: &str) -> bool {
    let digits = literal.strip_prefix('-').unwrap_or(literal);
    literal == "0"
        || (!digits.is_empty()
            && digits.len() <= 15
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// JSON syntax check with an explicit stack (any depth, no recursion, nothing built).
fn is_json(text: &str) -> bool {
    let mut p = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    let mut open: Vec<u8> = Vec::new();
    p.skip_whitespace();
    'value: loop {
        p.skip_whitespace();
        match p.peek() {
            Some(b'[') => {
                p.pos += 1;
                p.skip_whitespace();
                if p.peek() == Some(b']') {
                    p.pos += 1;
                } else {
                    open.push(b'[');
                    continue 'value;
                }
            }
            Some(b'{') => {
                p.pos += 1;
                p.skip_whitespace();
                if p.peek() == Some(b'}') {
                    p.pos += 1;
                } else {
                    if !p.member_key() {
                        return false;
                    }
                    open.push(b'{');
                    continue 'value;
                }
            }
            Some(b'"') => {
                if p.string().is_err() {
                    return false;
                }
            }
            Some(b't') => {
                if p.expect_literal(b"true").is_err() {
                    return false;
                }
            }
            Some(b'f') => {
                if p.expect_literal(b"false").is_err() {
                    return false;
                }
            }
            Some(b'n') => {
                if p.expect_literal(b"null").is_err() {
                    return false;
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                if p.number().is_err() {
                    return false;
                }
            }
            _ => return false,
        }
        // After a value: close containers or move to the next element.
        loop {
            p.skip_whitespace();
            match (open.last(), p.peek()) {
                (None, next) => return next.is_none(),
                (Some(b'['), Some(b']')) | (Some(b'{'), Some(b'}')) => {
                    p.pos += 1;
                    open.pop();
                }
                (Some(b'['), Some(b',')) => {
                    p.pos += 1;
                    continue 'value;
                }
                (Some(b'{'), Some(b',')) => {
                    p.pos += 1;
                    p.skip_whitespace();
                    if !p.member_key() {
                        return false;
                    }
                    continue 'value;
                }
                _ => return false,
            }
        }
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect_literal(&mut self, literal: &[u8]) -> Result<(), ParseError> {
        if self.bytes[self.pos..].starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(ParseError::NotJson)
        }
    }

    fn value(&mut self, depth: usize) -> Result<JsValue, ParseError> {
        match self.peek().ok_or(ParseError::NotJson)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(JsValue::String),
            b't' => self.expect_literal(b"true").map(|()| JsValue::Bool(true)),
            b'f' => self.expect_literal(b"false").map(|()| JsValue::Bool(false)),
            b'n' => self.expect_literal(b"null").map(|()| JsValue::Null),
            b'-' | b'0'..=b'9' => self.number().map(JsValue::Number),
            _ => Err(ParseError::NotJson),
        }
    }

    fn array(&mut self, depth: usize) -> Result<JsValue, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(JsValue::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(JsValue::Array(items));
                }
                _ => return Err(ParseError::NotJson),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<JsValue, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        self.pos += 1;
        let mut members: Vec<(JsString, JsValue)> = Vec::new();
        // Small objects look duplicates up by scanning; large ones through a map built on demand.
        let mut index_of: Option<HashMap<JsString, usize>> = None;
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(JsValue::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(ParseError::NotJson);
            }
            let key = self.string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(ParseError::NotJson);
            }
            self.pos += 1;
            self.skip_whitespace();
            let value = self.value(depth)?;
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
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(JsValue::Object(in_property_order(members)));
                }
                _ => return Err(ParseError::NotJson),
            }
        }
    }

    /// An escape-free string literal (with its quotes) at the cursor; the cursor is left unmoved
    /// and `None` returned when the literal holds an escape or a control character.
    fn plain_string_slice(&mut self, specials: &mut Specials) -> Option<&'a str> {
        let start = self.pos;
        let end = start + 1 + specials.plain_run(self.bytes, start + 1);
        if self.bytes.get(end) == Some(&b'"') {
            self.pos = end + 1;
            Some(&self.text[start..=end])
        } else {
            None
        }
    }

    /// Whitespace at the cursor, skipped and written as nothing.
    #[inline]
    fn fast_whitespace(&mut self, out: &mut Emitter) {
        // Canonical text has none: the common case returns at once.
        if !matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            return;
        }
        let start = self.pos;
        self.skip_whitespace();
        if self.pos != start {
            out.replace(self.text, start, self.pos, "");
        }
    }

    /// `keys` is one stack shared by all open objects (each checks its own keys, above the
    /// height it found on entry, for duplicates), so no object allocates.
    fn fast_value(
        &mut self,
        out: &mut Emitter,
        keys: &mut Vec<&'a str>,
        specials: &mut Specials,
        census: &mut Census,
        depth: usize,
    ) -> Option<()> {
        match self.peek()? {
            open @ (b'{' | b'[') => {
                if depth + 1 > MAX_DEPTH {
                    return None;
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                self.fast_whitespace(out);
                if self.peek() == Some(close) {
                    self.pos += 1;
                    return Some(());
                }
                let base = keys.len();
                let mark = census.array_start();
                let mut key_set: Option<std::collections::HashSet<&'a str>> = None;
                loop {
                    self.fast_whitespace(out);
                    if open == b'{' {
                        if self.peek() != Some(b'"') {
                            return None;
                        }
                        let key = self.plain_string_slice(specials)?;
                        let name = &key[1..key.len() - 1];
                        if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                            let index_like: Vec<u16> = name.encode_utf16().take(11).collect();
                            if array_index(&index_like).is_some() {
                                return None;
                            }
                        }
                        let own = &keys[base..];
                        if own.len() >= 16 && key_set.is_none() {
                            key_set = Some(own.iter().copied().collect());
                        }
                        let duplicate = match key_set.as_mut() {
                            Some(set) => !set.insert(name),
                            None => own.contains(&name),
                        };
                        if duplicate {
                            return None;
                        }
                        keys.push(name);
                        self.fast_whitespace(out);
                        if self.peek() != Some(b':') {
                            return None;
                        }
                        self.pos += 1;
                        self.fast_whitespace(out);
                        census.field_value(&self.bytes[self.pos..]);
                    }
                    let value_start = self.pos;
                    self.fast_value(out, keys, specials, census, depth + 1)?;
                    if open == b'[' {
                        census.entry(self.bytes, value_start, self.pos);
                    }
                    self.fast_whitespace(out);
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b if b == close => {
                            self.pos += 1;
                            keys.truncate(base);
                            if open == b'[' {
                                census.array_end(self.bytes, mark);
                            }
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                if let Some(end) = canonical_literal_end(self.bytes, self.pos, specials) {
                    census.string_value(end - self.pos);
                    self.pos = end;
                } else {
                    let start = self.pos;
                    let units = self.string().ok()?;
                    let mut literal = String::new();
                    write_string(&mut literal, &units);
                    if literal != self.text[start..self.pos] {
                        out.replace(self.text, start, self.pos, &literal);
                    }
                }
                Some(())
            }
            b't' => self.expect_literal(b"true").ok(),
            b'f' => self.expect_literal(b"false").ok(),
            b'n' => self.expect_literal(b"null").ok(),
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                self.pos = number_end(self.bytes, start)?;
                if !is_plain_integer(&self.text[start..self.pos]) {
                    // Not printed as written: read it as the tree does, print it as JavaScript.
                    self.pos = start;
                    let printed = js_number(self.number().ok()?);
                    if printed != self.text[start..self.pos] {
                        out.replace(self.text, start, self.pos, &printed);
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    /// `"key" :` (for the syntax check).
    fn member_key(&mut self) -> bool {
        if self.peek() != Some(b'"') || self.string().is_err() {
            return false;
        }
        self.skip_whitespace();
        if self.peek() != Some(b':') {
            return false;
        }
        self.pos += 1;
        true
    }

    fn number(&mut self) -> Result<f64, ParseError> {
        let start = self.pos;
        self.pos = number_end(self.bytes, start).ok_or(ParseError::NotJson)?;
        // Rust's float parsing is correctly rounded (as ECMAScript requires) and overflows to ±inf.
        self.text[start..self.pos]
            .parse::<f64>()
            .map_err(|_| ParseError::NotJson)
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let unit = hex4(self.bytes, self.pos).ok_or(ParseError::NotJson)?;
        self.pos += 4;
        Ok(unit)
    }

    fn string(&mut self) -> Result<JsString, ParseError> {
        self.pos += 1;
        let mut units: JsString = Vec::new();
        loop {
            // Copy the run of plain characters in one go.
            let run_start = self.pos;
            self.pos += plain_run(&self.bytes[self.pos..]);
            units.extend(self.text[run_start..self.pos].encode_utf16());
            match self.peek().ok_or(ParseError::NotJson)? {
                b'"' => {
                    self.pos += 1;
                    return Ok(units);
                }
                b'\\' => {
                    self.pos += 1;
                    let escaped = self.peek().ok_or(ParseError::NotJson)?;
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
                        _ => return Err(ParseError::NotJson),
                    };
                    units.push(unit);
                }
                _ => return Err(ParseError::NotJson),
            }
        }
    }
}

/// An array index in JavaScript's sense: the canonical decimal form of an integer 0 ..= 2^32 − 2.
pub fn array_index(key: &[u16]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == u16::from(b'0')) {
        return None;
    }
    let mut value: u64 = 0;
    for &unit in key {
        if !(u16::from(b'0')..=u16::from(b'9')).contains(&unit) {
            return None;
        }
        value = value * 10 + u64::from(unit - u16::from(b'0'));
    }
    (value <= 4_294_967_294).then_some(value as u32)
}

/// Reorders members as JavaScript enumerates an ordinary object's own string keys.
fn in_property_order(members: Vec<(JsString, JsValue)>) -> Vec<(JsString, JsValue)> {
    if !members.iter().any(|(k, _)| array_index(k).is_some()) {
        return members;
    }
    let (mut indexed, named): (Vec<_>, Vec<_>) = members
        .into_iter()
        .partition(|(k, _)| array_index(k).is_some());
    indexed.sort_by_key(|(k, _)| array_index(k));
    indexed.extend(named);
    indexed
}

/// True when `units` holds an unpaired surrogate.
pub fn has_lone_surrogate(units: &[u16]) -> bool {
    char::decode_utf16(units.iter().copied()).any(|r| r.is_err())
}

/// True when any string or key anywhere in `value` holds an unpaired surrogate.
pub fn contains_lone_surrogate(value: &JsValue) -> bool {
    match value {
        JsValue::String(s) => has_lone_surrogate(s),
        JsValue::Array(items) => items.iter().any(contains_lone_surrogate),
        JsValue::Object(members) => members
            .iter()
            .any(|(k, v)| has_lone_surrogate(k) || contains_lone_surrogate(v)),
        _ => false,
    }
}

/// Characters (Unicode code points, a lone surrogate counting as one) of a JavaScript string.
pub fn code_points(units: &[u16]) -> usize {
    char::decode_utf16(units.iter().copied()).count()
}

/// The text of `units` with each lone surrogate spelled as its six-character escape (`\ud800`).
/// Used where a string must become Rust text outside a JSON literal (receipt paths).
pub fn escaped_text(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => out.push(c),
            Err(e) => out.push_str(&format!("\\u{:04x}", e.unpaired_surrogate())),
        }
    }
    out
}

/// Appends `units` as a JSON string literal exactly as well-formed `JSON.stringify` writes it
/// (the escaping of `engine::canonical::write_js_string`, read straight from UTF-16 so the payload
/// is never copied into an intermediate `String`; lone surrogates become `\udxxx`).
pub fn write_string(out: &mut String, units: &[u16]) {
    out.push('"');
    let mut i = 0;
    while i < units.len() {
        let unit = units[i];
        match unit {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x09 => out.push_str("\\t"),
            0x0a => out.push_str("\\n"),
            0x0c => out.push_str("\\f"),
            0x0d => out.push_str("\\r"),
            0x00..=0x1f => {
                let _ = write!(out, "\\u{unit:04x}");
            }
            0x20..=0x7f => out.push(unit as u8 as char),
            0xd800..=0xdbff
                if units
                    .get(i + 1)
                    .is_some_and(|u| (0xdc00..0xe000).contains(u)) =>
            {
                let high = u32::from(unit - 0xd800);
                let low = u32::from(units[i + 1] - 0xdc00);
                out.push(char::from_u32(0x10000 + (high << 10) + low).expect("a surrogate pair"));
                i += 1;
            }
            0xd800..=0xdfff => {
                let _ = write!(out, "\\u{unit:04x}");
            }
            _ => out.push(char::from_u32(u32::from(unit)).expect("a BMP scalar value")),
        }
        i += 1;
    }
    out.push('"');
}

/// Appends the compact `JSON.stringify` form of `value`.
pub fn write_value(out: &mut String, value: &JsValue) {
    match value {
        JsValue::Null => out.push_str("null"),
        JsValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        JsValue::Number(x) => push_js_number(out, *x),
        JsValue::String(s) => write_string(out, s),
        JsValue::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        JsValue::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// The compact `JSON.stringify` form of `value`.
pub fn stringify(value: &JsValue) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// A member of an object by key (the body's fields).
pub fn member<'a>(members: &'a [(JsString, JsValue)], key: &str) -> Option<&'a JsValue> {
    let wanted: JsString = key.encode_utf16().collect();
    members.iter().find(|(k, _)| *k == wanted).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_literals_are_exactly_those_stringify_writes_back() {
        let fragments = [
            "a",
            "é",
            "😀",
            "\u{2028}",
            "/",
            "\u{7f}",
            r#"\""#,
            r"\\",
            r"\/",
            r"\b",
            r"\f",
            r"\n",
            r"\r",
            r"\t",
            r"\u0008",
            r"\u000a",
            r"\u001f",
            r"\u001F",
            r"\u0000",
            r"\u0041",
            r"\u00e9",
            r"\ud800",
            r"\uD800",
            r"\udbff",
            r"\udc00",
            r"\uDC00",
            r"\ud83d\ude00",
            r"\ud83d\uDE00",
            r"\ud83d",
            r"\ude00\ud83d",
            r"\u2028",
            r"\x",
            r"\u12",
            "\u{1}",
            "\"",
        ];
        let mut rng = crate::engine::test_rng::Lcg(0x2545_F491);
        let (mut canonical, mut rewritten) = (0, 0);
        for _ in 0..4000 {
            let len = rng.below(5);
            let literal = format!("\"{}\"", rng.text(&fragments, len));
            let mut parser = Parser {
                bytes: literal.as_bytes(),
                text: &literal,
                pos: 0,
            };
            let oracle = match parser.string() {
                Ok(units) if parser.pos == literal.len() => {
                    let mut written = String::new();
                    write_string(&mut written, &units);
                    written == literal
                }
                _ => false,
            };
            let fast = canonical_literal_end(literal.as_bytes(), 0, &mut Specials::Scan)
                == Some(literal.len());
            assert_eq!(fast, oracle, "{literal}");
            canonical += usize::from(oracle);
            rewritten += usize::from(!oracle);
        }
        assert!(
            canonical > 400 && rewritten > 400,
            "{canonical} {rewritten}"
        );
    }

    fn canon(text: &str) -> Result<String, ParseError> {
        parse(text).map(|v| stringify(&v))
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
            assert_eq!(canon(text), Err(ParseError::NotJson), "{text:?}");
        }
        assert_eq!(
            canon(" \t\r\n[ 1 , {\"a\" : null} ] ").unwrap(),
            "[1,{\"a\":null}]"
        );
    }

    #[test]
    fn string_escaping_equals_the_shared_js_escaper() {
        let mut all: String = (0u32..0x2100).filter_map(char::from_u32).collect();
        all.push_str("\u{1F600}\u{10FFFF}\u{FEFF}\u{2028}\u{2029}\"\\");
        for sample in [all.as_str(), "", "plain", "\u{7f}\u{80}\u{ffff}"] {
            let units: Vec<u16> = sample.encode_utf16().collect();
            let (mut ours, mut shared) = (String::new(), String::new());
            write_string(&mut ours, &units);
            crate::engine::canonical::write_js_string(&mut shared, sample);
            assert_eq!(ours, shared);
        }
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

    #[test]
    fn fast_canonical_equals_the_tree_path_or_steps_aside() {
        let samples = [
            r#" {"a" : [1, -0, 0, 1.5, 1e21, 123456789012345, 1234567890123456, -7, 1E400],
                "b":"plain é 😀 \u2028", "c":"esc\"aped\n\u0041", "d":{"e":null,"f":true,"g":false}} "#,
            r#"[{"x":1},{"y":[[],{}]},"",0]"#,
            r#""just a string""#,
            "-0",
            "12",
            // Keys repeat across nesting levels without being duplicates.
            r#"{"a":{"a":1,"b":{"a":2}},"b":[{"a":3,"b":4},{"b":5}],"c":{"c":{"c":6}}}"#,
        ];
        for text in samples {
            assert_eq!(fast_canonical(text), Some(canon(text).unwrap()), "{text}");
        }
        for needs_tree in [
            r#"{"b":1,"1":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"b":1},"a":2}"#,
            r#"{"a":{"b":1,"c":[{"d":0}],"b":2}}"#,
            r#"[{"a":{"x":1}},{"b":2,"c":{"b":1},"b":3}]"#,
            r#"{"\u0061":1}"#,
            "\u{feff}1",
            "[1,]",
            "",
        ] {
            assert_eq!(fast_canonical(needs_tree), None, "{needs_tree}");
        }
        let mut big = String::from("{");
        for i in 0..40 {
            big.push_str(&format!("\"k{i}\":{i},"));
        }
        big.push_str("\"k7\":0}");
        assert_eq!(fast_canonical(&big), None);
        // Past 16 keys the check uses a set of the object's own keys, not its children's.
        let mut nested = String::from("{");
        for i in 0..40 {
            nested.push_str(&format!("\"k{i}\":{{\"k{}\":{i}}},", i + 1));
        }
        nested.push_str("\"last\":0}");
        assert_eq!(fast_canonical_of(&nested), Some(Canonical::Same));
        nested.insert_str(nested.len() - 1, ",\"k3\":1");
        assert_eq!(fast_canonical(&nested), None);
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(fast_canonical(&deep), None);
    }

    #[test]
    fn canonical_text_is_reported_unchanged_without_a_copy() {
        for text in [
            r#"{"a":[1,-2,1.5,"x\"y",null,true],"b":{}}"#,
            r#""\ud800""#,
            "0",
        ] {
            assert_eq!(canon(text).unwrap(), text);
            assert_eq!(fast_canonical_of(text), Some(Canonical::Same), "{text}");
        }
        for text in [" 0", "[1.50]", r#"["\u0041"]"#, "[1 ,2]", "1E3"] {
            let Some(Canonical::Rewritten(out)) = fast_canonical_of(text) else {
                panic!("{text} must be rewritten");
            };
            assert_eq!(out, canon(text).unwrap());
        }
    }

    #[test]
    fn depth_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(parse(&deep), Err(ParseError::TooDeep));
        let deep_object = format!(
            "{}1{}",
            "{\"a\" : [".repeat(MAX_DEPTH),
            "] }".repeat(MAX_DEPTH)
        );
        assert_eq!(parse(&deep_object), Err(ParseError::TooDeep));
        for broken in [
            format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH)),
            format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 2)),
            format!("{}1,]{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH)),
            format!(
                "{}{{\"a\"}}{}",
                "[".repeat(MAX_DEPTH + 1),
                "]".repeat(MAX_DEPTH + 1)
            ),
        ] {
            assert_eq!(parse(&broken), Err(ParseError::NotJson));
        }
    }

    #[test]
    fn array_indices_are_javascripts() {
        let idx = |s: &str| array_index(&s.encode_utf16().collect::<Vec<_>>());
        assert_eq!(idx("0"), Some(0));
        assert_eq!(idx("4294967294"), Some(4_294_967_294));
        assert_eq!(idx("4294967295"), None);
        assert_eq!(idx("01"), None);
        assert_eq!(idx("-1"), None);
        assert_eq!(idx(""), None);
        assert_eq!(idx("1e3"), None);
    }
}
