//! `JSON.stringify(JSON.parse(text))` written straight from the source, without building a tree,
//! for the common text: escape-free string literals and plain integers are copied as they stand
//! (their `JSON.stringify` form is the same text), everything else is re-rendered; a text already
//! canonical is not copied at all. The walk reports to an [`Observer`] what it meets, so a family
//! can take its census in the same pass.

use super::escape::write_utf16_string;
use super::keys::array_index_of;
use super::lexeme::{hex4, plain_integer_end, plain_run};
use super::number::js_number;
use super::observe::Observer;
use super::read::Cursor;

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
/// the full path is needed: not JSON, containers nested over `max_depth`, or an object with an escaped,
/// duplicate or array-index key (JavaScript would reorder or merge its members).
pub fn fast_canonical(text: &str, max_depth: usize) -> Option<String> {
    fast_canonical_of(text, max_depth).map(|canonical| match canonical {
        Canonical::Same => text.to_owned(),
        Canonical::Rewritten(out) => out,
    })
}

/// [`fast_canonical`] without the copy when the text is already canonical: source text that
/// stands as it is is never copied piece by piece, only where the output departs from it.
pub fn fast_canonical_of(text: &str, max_depth: usize) -> Option<Canonical> {
    fast_canonical_with(text, Specials::Scan, max_depth, &mut ())
}

/// [`fast_canonical_of`], told where the text's `"`, `\` and control bytes are (`Specials::Known`,
/// as the fast body path records them) so string contents are stepped over, not scanned; the walk
/// also reports to `observer` what it meets ([`Observer`]: its offsets are the canonical text's
/// only when the result is [`Canonical::Same`]; a rewritten text has other offsets).
pub fn fast_canonical_with<O: Observer + ?Sized>(
    text: &str,
    mut specials: Specials<'_>,
    max_depth: usize,
    observer: &mut O,
) -> Option<Canonical> {
    let mut p = Cursor::new(text);
    let mut out = Emitter {
        out: String::new(),
        flushed: 0,
    };
    p.fast_whitespace(&mut out);
    p.fast_value(
        &mut out,
        &mut Vec::new(),
        &mut specials,
        observer,
        (0, max_depth),
    )?;
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

/// [`fast_canonical_with`] for a `dyn` observer: instantiated in this package, so the walk is
/// compiled with this package's profile (opt-level 3 in release) whoever calls it; the observer's
/// few calls per value are indirect.
pub fn fast_canonical_observed(
    text: &str,
    specials: Specials<'_>,
    max_depth: usize,
    observer: &mut dyn Observer,
) -> Option<Canonical> {
    fast_canonical_with(text, specials, max_depth, observer)
}

/// [`fast_canonical_with`] observed by nobody, told the specials: instantiated in this package for
/// the `()` observer, so a walk that needs no census (the token-efficiency pre-check's) makes no
/// observer call at all.
pub fn fast_canonical_unobserved(
    text: &str,
    specials: Specials<'_>,
    max_depth: usize,
) -> Option<Canonical> {
    fast_canonical_with(text, specials, max_depth, &mut ())
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

impl<'a> Cursor<'a> {
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
    fn fast_value<O: Observer + ?Sized>(
        &mut self,
        out: &mut Emitter,
        keys: &mut Vec<&'a str>,
        specials: &mut Specials,
        observer: &mut O,
        (depth, max_depth): (usize, usize),
    ) -> Option<()> {
        match self.peek()? {
            open @ (b'{' | b'[') => {
                if depth + 1 > max_depth {
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
                let mark = observer.array_start();
                let mut key_set: Option<std::collections::HashSet<&'a str>> = None;
                loop {
                    self.fast_whitespace(out);
                    if open == b'{' {
                        if self.peek() != Some(b'"') {
                            return None;
                        }
                        let key = self.plain_string_slice(specials)?;
                        let name = &key[1..key.len() - 1];
                        let digit_first = name.as_bytes().first().is_some_and(u8::is_ascii_digit);
                        if digit_first && array_index_of(name).is_some() {
                            return None;
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
                        observer.member_value(&self.bytes[self.pos..]);
                    }
                    let value_start = self.pos;
                    self.fast_value(out, keys, specials, observer, (depth + 1, max_depth))?;
                    if open == b'[' {
                        observer.array_entry(self.bytes, value_start, self.pos);
                    }
                    self.fast_whitespace(out);
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b if b == close => {
                            self.pos += 1;
                            keys.truncate(base);
                            if open == b'[' {
                                observer.array_end(self.bytes, mark);
                            }
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                if let Some(end) = canonical_literal_end(self.bytes, self.pos, specials) {
                    observer.string_literal(end - self.pos);
                    self.pos = end;
                } else {
                    let start = self.pos;
                    let units = self.string().ok()?;
                    let mut literal = String::new();
                    write_utf16_string(&mut literal, &units);
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
                if let Some(end) = plain_integer_end(self.bytes, start) {
                    self.pos = end;
                } else {
                    // Not printed as written: read it as the tree does (no number: `None`),
                    // print it as JavaScript.
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read, to_string, KeyOrder, Limits};

    const MAX_DEPTH: usize = 1000;

    /// The tree path: read, then write (the reader leaves members in property order).
    fn canon(text: &str) -> Option<String> {
        read(text, Limits::nesting(MAX_DEPTH), &mut ())
            .ok()
            .map(|(value, _)| to_string(&value, KeyOrder::Insertion))
    }

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
        let mut rng = context_meter_test_rng::Lcg(0x2545_F491);
        let (mut canonical, mut rewritten) = (0, 0);
        for _ in 0..4000 {
            let len = rng.below(5);
            let literal = format!("\"{}\"", rng.text(&fragments, len));
            let mut parser = Cursor::new(&literal);
            let oracle = match parser.string() {
                Ok(units) if parser.pos == literal.len() => {
                    let mut written = String::new();
                    write_utf16_string(&mut written, &units);
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
            assert_eq!(fast_canonical(text, MAX_DEPTH), canon(text), "{text}");
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
            assert_eq!(fast_canonical(needs_tree, MAX_DEPTH), None, "{needs_tree}");
        }
        let mut big = String::from("{");
        for i in 0..40 {
            big.push_str(&format!("\"k{i}\":{i},"));
        }
        big.push_str("\"k7\":0}");
        assert_eq!(fast_canonical(&big, MAX_DEPTH), None);
        // Past 16 keys the check uses a set of the object's own keys, not its children's.
        let mut nested = String::from("{");
        for i in 0..40 {
            nested.push_str(&format!("\"k{i}\":{{\"k{}\":{i}}},", i + 1));
        }
        nested.push_str("\"last\":0}");
        assert_eq!(fast_canonical_of(&nested, MAX_DEPTH), Some(Canonical::Same));
        nested.insert_str(nested.len() - 1, ",\"k3\":1");
        assert_eq!(fast_canonical(&nested, MAX_DEPTH), None);
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(fast_canonical(&deep, MAX_DEPTH), None);
    }

    #[test]
    fn canonical_text_is_reported_unchanged_without_a_copy() {
        for text in [
            r#"{"a":[1,-2,1.5,"x\"y",null,true],"b":{}}"#,
            r#""\ud800""#,
            "0",
        ] {
            assert_eq!(canon(text).unwrap(), text);
            assert_eq!(
                fast_canonical_of(text, MAX_DEPTH),
                Some(Canonical::Same),
                "{text}"
            );
        }
        for text in [" 0", "[1.50]", r#"["\u0041"]"#, "[1 ,2]", "1E3"] {
            let Some(Canonical::Rewritten(out)) = fast_canonical_of(text, MAX_DEPTH) else {
                panic!("{text} must be rewritten");
            };
            assert_eq!(out, canon(text).unwrap());
        }
    }
}
