//! A string literal whose text is itself JSON, unescaped and checked canonical in one pass: the
//! token-efficiency pre-check's payload (`{"payload":"{\"a\":[1,2]}", ...}`) is JSON text inside a
//! JSON string, and the two separate passes over it (the unescape, then the canonical walk over
//! its text, [`super::fast_canonical_with`]) were each latency-bound on the same escapes (a quote
//! of the payload is an escape of the literal). Here the payload's structure is read straight from
//! the literal's bytes while its text is written, so each quote is met once.
//!
//! It answers "canonical" only for the common shape, and only when [`super::fast_canonical_of`]
//! would answer `Same` for the text: no whitespace, objects whose keys are escape-free, not array
//! indices and not repeated, strings spelled as `JSON.stringify` spells them (the escapes `\"`,
//! `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00xx` for other control characters; a lone surrogate or
//! any `\u` escape of the literal itself makes it step aside), numbers printed
//! as JavaScript prints them, nesting at most `max_depth` deep. At anything else it steps aside
//! without losing its work: the special bytes of the text written so far are found by a scan and
//! the plain unescape ([`super::unescape::unescape_from`]) goes on from where the walk stopped, so
//! the caller's canonical walk decides, exactly as it did before.

use super::keys::array_index_of;
use super::lexeme::{
    hex4, number_end, plain_integer_end, plain_run, plain_run_seeing_high, special_bytes,
};
use super::number::js_number;
use super::observe::Observer;
use super::unescape::{unescape_from, Partial, Unescaped};

/// The literal's text, and whether it is canonical JSON.
pub struct PayloadLiteral {
    pub unescaped: Unescaped,
    /// The text is JSON already in its canonical form (`JSON.stringify(JSON.parse(text))` is the
    /// text itself). `false`: not known (the caller's canonical walk decides).
    pub canonical: bool,
    /// When not `canonical`: offsets in the text of every `"`, `\` and byte below 0x20, ascending
    /// (as [`super::unescape::unescape`] records them). Empty when `canonical`.
    pub specials: Vec<u32>,
}

/// Unescapes the string literal whose content starts at `start` (after its opening quote) and
/// tells whether its text is canonical JSON (see the module documentation). `None` exactly when
/// [`super::unescape::unescape`] answers `None`.
pub fn unescape_canonical(bytes: &[u8], start: usize, max_depth: usize) -> Option<PayloadLiteral> {
    unescape_canonical_with(bytes, start, max_depth, &mut ())
}

/// [`unescape_canonical`], reporting to `observer` what the walk meets in the text, as
/// [`super::fast_canonical_with`] reports it of a canonical text (the token-efficiency census
/// taken in the same pass). What it was told is the canonical text's only when the answer is
/// `canonical`; otherwise the caller discards it (the canonical walk that follows reports anew).
/// Instantiated here for a `dyn` observer, so the walk keeps this package's profile.
pub fn unescape_canonical_observed(
    bytes: &[u8],
    start: usize,
    max_depth: usize,
    observer: &mut dyn Observer,
) -> Option<PayloadLiteral> {
    unescape_canonical_with(bytes, start, max_depth, observer)
}

fn unescape_canonical_with<O: Observer + ?Sized>(
    bytes: &[u8],
    start: usize,
    max_depth: usize,
    observer: &mut O,
) -> Option<PayloadLiteral> {
    let mut walk = Walk {
        bytes,
        i: start,
        out: vec![0u8; bytes.len() - start],
        o: 0,
        high: 0,
        keys: Vec::new(),
        observer,
    };
    if walk.value_then_end(max_depth).is_some() {
        walk.out.truncate(walk.o);
        return Some(PayloadLiteral {
            unescaped: Unescaped {
                end: walk.i,
                text: String::from_utf8(walk.out).ok()?,
                ascii: walk.high & 0x8080_8080_8080_8080 == 0,
            },
            canonical: true,
            specials: Vec::new(),
        });
    }
    // Stepped aside at `i`, between escapes: the rest is the plain unescape's.
    let mut specials = specials_of(&walk.out[..walk.o]);
    let partial = Partial {
        i: walk.i,
        out: walk.out,
        o: walk.o,
        high: walk.high,
    };
    let unescaped = unescape_from(bytes, partial, &mut specials)?;
    Some(PayloadLiteral {
        unescaped,
        canonical: false,
        specials,
    })
}

/// Offsets of every `"`, `\` and byte below 0x20 of `text`, ascending.
fn specials_of(text: &[u8]) -> Vec<u32> {
    let mut specials = Vec::new();
    let mut at = 0;
    loop {
        at += plain_run(&text[at..]);
        if at >= text.len() {
            return specials;
        }
        specials.push(at as u32);
        at += 1;
    }
}

/// A key of an open object: its [`fingerprint`] and where it stands in the output.
#[derive(Clone, Copy)]
struct Key {
    print: u64,
    start: u32,
    end: u32,
}

/// The key `bytes[from..from + len]` as one word: for keys under eight bytes, the bytes and the
/// length (equal words, equal keys); for longer ones, their first seven bytes and a mark (equal
/// words say only that the keys may be equal).
#[inline(always)]
fn fingerprint(bytes: &[u8], from: usize, len: usize) -> u64 {
    let word = match bytes.get(from..from + 8) {
        Some(chunk) => u64::from_le_bytes(chunk.try_into().expect("eight bytes")),
        None => bytes[from..from + len.min(8)]
            .iter()
            .rev()
            .fold(0, |w, &b| w << 8 | u64::from(b)),
    };
    let kept = len.min(7) * 8;
    (word & ((1u64 << kept) - 1)) | (len.min(0xff) as u64) << 56
}

/// An open container: for an array, the observer's mark and where its current entry starts in
/// the output; for an object, where its keys start in [`Walk::keys`].
#[derive(Clone, Copy)]
enum Open {
    Array { mark: usize, entry_start: usize },
    Object { keys_from: usize },
}

/// The walk's state: input index `i` in the literal, the text so far `out[..o]` (always the
/// unescaped bytes before `i`; every step either completes or leaves both untouched), the OR of
/// the bytes copied, the keys of the open objects (ranges of `out`, innermost last), and who is
/// told what the walk meets.
struct Walk<'b, 'o, O: Observer + ?Sized> {
    bytes: &'b [u8],
    i: usize,
    out: Vec<u8>,
    o: usize,
    high: u64,
    keys: Vec<Key>,
    observer: &'o mut O,
}

impl<O: Observer + ?Sized> Walk<'_, '_, O> {
    #[inline(always)]
    fn at(&self, k: usize) -> Option<u8> {
        self.bytes.get(self.i + k).copied()
    }

    /// Copies `n` input bytes that stand for themselves (a short run as sixteen bytes written
    /// unconditionally: the output is never ahead of the input, so it has room where the input has).
    #[inline(always)]
    fn copy(&mut self, n: usize) {
        match self.bytes.get(self.i..self.i + 16) {
            Some(chunk) if n <= 16 => self.out[self.o..self.o + 16].copy_from_slice(chunk),
            _ => self.out[self.o..self.o + n].copy_from_slice(&self.bytes[self.i..self.i + n]),
        }
        self.i += n;
        self.o += n;
    }

    /// Writes `text` for `n` input bytes.
    #[inline(always)]
    fn write(&mut self, text: &[u8], n: usize) {
        self.out[self.o..self.o + text.len()].copy_from_slice(text);
        self.i += n;
        self.o += text.len();
    }

    /// Whether the input continues with `\"` (the text's quote).
    #[inline(always)]
    fn at_quote(&self) -> bool {
        self.bytes.get(self.i..self.i + 2) == Some(b"\\\"")
    }

    /// One value, then the literal's closing quote. `None`: stepped aside (state consistent).
    fn value_then_end(&mut self, max_depth: usize) -> Option<()> {
        let mut open: Vec<Open> = Vec::new();
        'value: loop {
            // A value at the cursor.
            match self.at(0)? {
                b'{' | b'[' => {
                    if open.len() + 1 > max_depth {
                        return None;
                    }
                    let object = self.at(0) == Some(b'{');
                    let close = if object { b'}' } else { b']' };
                    if self.at(1) == Some(close) {
                        self.copy(2);
                    } else {
                        self.copy(1);
                        if object {
                            open.push(Open::Object {
                                keys_from: self.keys.len(),
                            });
                            self.key(self.keys.len())?;
                        } else {
                            open.push(Open::Array {
                                mark: self.observer.array_start(),
                                entry_start: self.o,
                            });
                        }
                        continue 'value;
                    }
                }
                b'\\' if self.at(1) == Some(b'"') => {
                    let start = self.o;
                    self.string()?;
                    self.observer.string_literal(self.o - start);
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // After a value: a comma, a close, or (at the top) the literal's end.
            loop {
                let Some(innermost) = open.last_mut() else {
                    if self.at(0) != Some(b'"') {
                        return None;
                    }
                    self.i += 1;
                    return Some(());
                };
                if let Open::Array { entry_start, .. } = *innermost {
                    self.observer
                        .array_entry(&self.out[..self.o], entry_start, self.o);
                }
                match (self.at(0)?, innermost) {
                    (b',', Open::Array { entry_start, .. }) => {
                        self.copy(1);
                        *entry_start = self.o;
                        continue 'value;
                    }
                    (b',', &mut Open::Object { keys_from }) => {
                        self.copy(1);
                        self.key(keys_from)?;
                        continue 'value;
                    }
                    (b']', &mut Open::Array { mark, .. }) => {
                        self.copy(1);
                        self.observer.array_end(&self.out[..self.o], mark);
                    }
                    (b'}', &mut Open::Object { keys_from }) => {
                        self.keys.truncate(keys_from);
                        self.copy(1);
                    }
                    _ => return None,
                }
                open.pop();
            }
        }
    }

    /// An escape-free key that is no array index and not among the object's keys so far (those
    /// from `keys_from`), then its colon. Steps aside otherwise, state untouched. Inlined into
    /// the walk's loop (a call per key cost escape-dense payloads about 5% of the walk in V8).
    #[inline(always)]
    fn key(&mut self, keys_from: usize) -> Option<()> {
        if !self.at_quote() {
            return None;
        }
        let from = self.i + 2;
        let (run, high) = plain_run_seeing_high(&self.bytes[from..]);
        self.high |= u64::from(high) << 7;
        let to = from + run;
        if self.bytes.get(to..to + 3) != Some(b"\\\":") {
            return None;
        }
        let bytes = self.bytes;
        let name = &bytes[from..to];
        // An array index: JavaScript would move the member.
        if name.first().is_some_and(u8::is_ascii_digit)
            && array_index_of(std::str::from_utf8(name).ok()?).is_some()
        {
            return None;
        }
        let print = fingerprint(bytes, from, run);
        let own = &self.keys[keys_from..];
        // Objects with many keys are left to the canonical walk (its set of keys).
        if own.len() >= 16
            || own.iter().any(|key| {
                key.print == print
                    && (run < 8 || &self.out[key.start as usize..key.end as usize] == name)
            })
        {
            return None;
        }
        let start = self.o + 1;
        self.write(b"\"", 2);
        self.copy(run);
        self.keys.push(Key {
            print,
            start: start as u32,
            end: self.o as u32,
        });
        self.write(b"\":", 3);
        // The value's first bytes as the text has them (its quotes are `\"` here).
        let value: &[u8] = match self.bytes.get(self.i..self.i + 4) {
            Some(b"\\\"\\\"") => b"\"\"",
            _ if self.at_quote() => b"\"",
            _ => self.bytes.get(self.i..).unwrap_or_default(),
        };
        self.observer.member_value(value);
        Some(())
    }

    /// A string value spelled as `JSON.stringify` spells it, its quotes included.
    fn string(&mut self) -> Option<()> {
        let (i, o) = (self.i, self.o);
        self.write(b"\"", 2);
        let done = self.string_rest();
        if done.is_none() {
            (self.i, self.o) = (i, o);
        }
        done
    }

    /// The rest of a string value after its opening quote (see [`Walk::string`]).
    #[inline]
    fn string_rest(&mut self) -> Option<()> {
        loop {
            // Short runs eight bytes at a time, written unconditionally (as the unescape does:
            // at least eight input bytes remain, so the output has room); longer runs at once.
            let mut short = false;
            for _ in 0..2 {
                let Some(chunk) = self.bytes.get(self.i..self.i + 8) else {
                    break;
                };
                self.out[self.o..self.o + 8].copy_from_slice(chunk);
                let word = u64::from_le_bytes(chunk.try_into().ok()?);
                self.high |= word;
                let special = special_bytes(word);
                if special != 0 {
                    let plain = (special.trailing_zeros() / 8) as usize;
                    self.i += plain;
                    self.o += plain;
                    short = true;
                    break;
                }
                self.i += 8;
                self.o += 8;
            }
            if !short {
                let (run, high) = plain_run_seeing_high(&self.bytes[self.i..]);
                self.high |= u64::from(high) << 7;
                self.copy(run);
            }
            // The literal's escapes: `\"` closes the string; `\\` starts one of the string's own
            // escapes; `\/` is a plain `/`. Anything else (a `\u`, a control character, the
            // literal's end) is the canonical walk's to judge.
            if self.at(0)? != b'\\' {
                return None;
            }
            match self.at(1)? {
                b'"' => {
                    self.write(b"\"", 2);
                    return Some(());
                }
                b'/' => self.write(b"/", 2),
                b'\\' => match (self.at(2)?, self.at(3)) {
                    (b'\\', Some(b'"')) => self.write(b"\\\"", 4),
                    (b'\\', Some(b'\\')) => self.write(b"\\\\", 4),
                    (letter @ (b'b' | b'f' | b'n' | b'r' | b't'), _) => {
                        self.write(&[b'\\', letter], 3)
                    }
                    (b'u', _) => {
                        // `\u00xx` for a control character that has no short escape, in lowercase.
                        let digits = self.bytes.get(self.i + 3..self.i + 7)?;
                        let lower = |d: &u8| d.is_ascii_digit() || (b'a'..=b'f').contains(d);
                        if !(digits.starts_with(b"00") && digits.iter().all(lower)) {
                            return None;
                        }
                        let unit = hex4(digits, 0)?;
                        if unit > 0x1f || matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                            return None;
                        }
                        let mut escape = [0u8; 6];
                        escape[0] = b'\\';
                        escape[1] = b'u';
                        escape[2..].copy_from_slice(digits);
                        self.write(&escape, 7);
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.bytes[self.i..].starts_with(word) {
            return None;
        }
        self.copy(word.len());
        Some(())
    }

    /// A number printed as JavaScript prints it (a number's bytes are never escaped).
    #[inline(always)]
    fn number(&mut self) -> Option<()> {
        // The common number first (`plain_integer_end`: printed as written, one scan of its
        // digits); any other is read and printed as JavaScript prints it.
        let end = match plain_integer_end(self.bytes, self.i) {
            Some(end) => end,
            None => {
                let end = number_end(self.bytes, self.i)?;
                let literal = std::str::from_utf8(&self.bytes[self.i..end]).ok()?;
                let value: f64 = literal.parse().ok()?;
                if js_number(value) != literal {
                    return None;
                }
                end
            }
        };
        self.copy(end - self.i);
        Some(())
    }
}

#[cfg(test)]
mod tests;
