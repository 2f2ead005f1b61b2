//! A JSON string literal unescaped in one pass, recording where `"`, `\\` and control bytes land
//! in the text (the token-efficiency body reader's hot loop: a payload that is JSON text escapes a
//! quote every few bytes). Short runs between escapes are copied eight bytes at a time, written
//! unconditionally (no copy call per run); longer runs are found first and copied at once.

use super::lexeme::{hex4, plain_run_seeing_high, special_bytes};

/// A string literal's text, as [`unescape`] reads it.
pub struct Unescaped {
    /// The index past the literal's closing quote.
    pub end: usize,
    pub text: String,
    /// The text is ASCII (its characters are its bytes). `false` may also be said of ASCII text.
    pub ascii: bool,
}

/// Unescapes the string literal whose content starts at `start` (after its opening quote):
/// the index past its closing quote, its text, and whether it is ASCII (noticed on the way: no
/// second pass). Records in `specials` the offset of every `"`, `\` and control byte written.
/// `None` for an invalid or lone-surrogate escape, a raw control byte, an unterminated literal, or
/// text that is not UTF-8.
pub fn unescape(bytes: &[u8], start: usize, specials: &mut Vec<u32>) -> Option<Unescaped> {
    // The text is never longer than the literal's bytes; 8 bytes of slack for the wide writes
    // are covered because at least 8 input bytes remain whenever one is made.
    let out = vec![0u8; bytes.len() - start];
    unescape_from(
        bytes,
        Partial {
            i: start,
            out,
            o: 0,
            high: 0,
        },
        specials,
    )
}

/// A literal unescaped up to input index `i`: `out[..o]` is the text of the bytes before `i`
/// (which is not inside an escape); `out` is as long as the rest of the input after the literal's
/// opening quote; `high` is the OR of the bytes looked at so far (see [`Unescaped::ascii`]).
pub struct Partial {
    pub i: usize,
    pub out: Vec<u8>,
    pub o: usize,
    pub high: u64,
}

/// [`unescape`], resumed where another reader of the literal stopped (`specials` must already
/// hold the offsets of the special bytes of `out[..o]`).
pub fn unescape_from(bytes: &[u8], partial: Partial, specials: &mut Vec<u32>) -> Option<Unescaped> {
    let Partial {
        mut i,
        mut out,
        mut o,
        mut high,
    } = partial;
    loop {
        // A short run (an escape-dense payload: a quote every few bytes) is copied eight bytes
        // at a time, written unconditionally; past 16 plain bytes the run is found first and
        // copied at once.
        let mut short = false;
        for _ in 0..2 {
            let Some(chunk) = bytes.get(i..i + 8) else {
                break;
            };
            out[o..o + 8].copy_from_slice(chunk);
            let word = u64::from_le_bytes(chunk.try_into().ok()?);
            high |= word;
            let special = special_bytes(word);
            if special != 0 {
                let plain = (special.trailing_zeros() / 8) as usize;
                i += plain;
                o += plain;
                short = true;
                break;
            }
            i += 8;
            o += 8;
        }
        if !short {
            let (run, run_high) = plain_run_seeing_high(&bytes[i..]);
            high |= u64::from(run_high) << 7;
            out[o..o + run].copy_from_slice(&bytes[i..i + run]);
            i += run;
            o += run;
        }
        let (written, read) = match *bytes.get(i)? {
            b'"' => {
                out.truncate(o);
                return Some(Unescaped {
                    end: i + 1,
                    text: String::from_utf8(out).ok()?,
                    ascii: high & 0x8080_8080_8080_8080 == 0,
                });
            }
            // The one-letter escapes (nearly every escape of a payload that is JSON text: `\"`)
            // write one byte, all but `\/` a special one; `\u` decodes its code point.
            b'\\' => match *bytes.get(i + 1)? {
                b'u' => {
                    let (c, read) = unicode_escape(bytes, i)?;
                    if c == '"' || c == '\\' || c < ' ' {
                        specials.push(o as u32);
                    }
                    if !c.is_ascii() {
                        high |= 0x80;
                    }
                    (c.encode_utf8(&mut out[o..]).len(), read)
                }
                letter => {
                    let byte = match letter {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => 0x0a,
                        b'r' => 0x0d,
                        b't' => 0x09,
                        _ => return None,
                    };
                    out[o] = byte;
                    if byte != b'/' {
                        specials.push(o as u32);
                    }
                    (1, 2)
                }
            },
            b if b < 0x20 => return None,
            // plain_run stops only at the bytes above (or the end, which `?` refuses).
            _ => return None,
        };
        i += read;
        o += written;
    }
}

/// The code point of the `\u` escape at `i` (a surrogate pair when its first unit is a high
/// surrogate) and the bytes it spans. `None` for bad hex or a lone surrogate.
fn unicode_escape(bytes: &[u8], i: usize) -> Option<(char, usize)> {
    let unit = u32::from(hex4(bytes, i + 2)?);
    let (c, read) = match unit {
        0xd800..=0xdbff => {
            if bytes.get(i + 6..i + 8) != Some(b"\\u") {
                return None;
            }
            let low = u32::from(hex4(bytes, i + 8)?);
            if !(0xdc00..=0xdfff).contains(&low) {
                return None;
            }
            let c = char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
            (c?, 12)
        }
        _ => (char::from_u32(unit)?, 6),
    };
    Some((c, read))
}
