//! A one-pass proof that S-1, S-2 and S-3 leave a canonical payload unchanged, so the budget op
//! can go straight to S-4 without building the tree the three operations edit.
//!
//! The proof is conservative: [`untouched_by_s1_to_s3`] answers `true` only when none of the three
//! rules can find anything to act on, and `false` whenever it cannot show that (including text it
//! does not recognise as compact canonical JSON); `false` sends the payload down the exact tree
//! path, so the answer costs time at worst, never exactness. It needs no keep_fields: protection
//! only exempts content from removal, and here nothing is removed.

use super::json::plain_run;
use super::shape::S3_CAP_CHARS;

/// An open container while scanning: for an array, where its entries' fingerprints begin in the
/// shared list and where its current entry starts.
struct Open {
    array: bool,
    first_entry: usize,
    entry_start: usize,
}

/// Fingerprinting visits each byte once per array that encloses it; past this many times the
/// payload's length (deeply nested arrays), the scan gives up rather than go quadratic.
const HASHED_BYTES_PER_BYTE: usize = 4;

/// `true` when, in the compact canonical JSON `canonical`:
/// - no array holds two entries of equal length and equal [`fingerprint`] (so none repeats an
///   earlier entry byte for byte: S-1 removes nothing);
/// - no object field's value is `null`, `""`, `[]` or `{}` (S-2 removes nothing, and with nothing
///   removed no emptiness can cascade);
/// - no string literal is longer than the S-3 cap in bytes (a literal never has more characters than
///   bytes: S-3 truncates nothing).
///
/// Cost: one pass over the text (string contents stepped over eight bytes at a time), one
/// fingerprint of each array entry, one sort of each array's fingerprints.
pub fn untouched_by_s1_to_s3(canonical: &str) -> bool {
    let bytes = canonical.as_bytes();
    let mut open: Vec<Open> = Vec::new();
    let mut entries: Vec<(usize, u64)> = Vec::new();
    let mut hashed = 0usize;
    let hash_allowance = bytes.len().saturating_mul(HASHED_BYTES_PER_BYTE);
    let mut i = 0usize;
    'value: loop {
        match bytes.get(i) {
            Some(&open_byte @ (b'[' | b'{')) => {
                let close = if open_byte == b'[' { b']' } else { b'}' };
                if bytes.get(i + 1) == Some(&close) {
                    i += 2;
                } else {
                    i += 1;
                    open.push(Open {
                        array: open_byte == b'[',
                        first_entry: entries.len(),
                        entry_start: i,
                    });
                    if open_byte == b'{' {
                        let Some(value_at) = field_value(bytes, i) else {
                            return false;
                        };
                        i = value_at;
                    }
                    continue 'value;
                }
            }
            Some(b'"') => {
                let Some(end) = string_end(bytes, i) else {
                    return false;
                };
                i = end;
            }
            Some(_) => {
                // A number, true or false (null only stands alone or as an array entry here).
                let start = i;
                while bytes
                    .get(i)
                    .is_some_and(|b| !matches!(b, b',' | b']' | b'}'))
                {
                    i += 1;
                }
                if i == start {
                    return false;
                }
            }
            None => return false,
        }
        // After a value: end array entries, close containers, or move to the next member.
        loop {
            let Some(top) = open.last_mut() else {
                return i == bytes.len();
            };
            if top.array {
                let entry = &bytes[top.entry_start..i];
                hashed += entry.len();
                if hashed > hash_allowance {
                    return false;
                }
                entries.push((entry.len(), fingerprint(entry)));
            }
            match (top.array, bytes.get(i)) {
                (_, Some(b',')) => {
                    i += 1;
                    if top.array {
                        top.entry_start = i;
                    } else {
                        let Some(value_at) = field_value(bytes, i) else {
                            return false;
                        };
                        i = value_at;
                    }
                    continue 'value;
                }
                (true, Some(b']')) | (false, Some(b'}')) => {
                    i += 1;
                    let first = top.first_entry;
                    let own = &mut entries[first..];
                    own.sort_unstable();
                    if own.windows(2).any(|pair| pair[0] == pair[1]) {
                        return false;
                    }
                    entries.truncate(first);
                    open.pop();
                }
                _ => return false,
            }
        }
    }
}

/// Where the value of the member whose key starts at `at` begins, or `None` when the member is
/// not `"key":` followed by a value S-2 leaves alone (or the key is over the S-3 cap, which the
/// proof does not bother to tell apart from a value).
fn field_value(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let key_end = string_end(bytes, at)?;
    if bytes.get(key_end) != Some(&b':') {
        return None;
    }
    let value_at = key_end + 1;
    match bytes.get(value_at..value_at + 2)? {
        [b'n', _] | b"\"\"" | b"[]" | b"{}" => None,
        _ => Some(value_at),
    }
}

/// End (past the closing quote) of the string literal starting at `start`, or `None` when it is
/// not a string literal or its contents are over the S-3 cap in bytes.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        i += plain_run(&bytes[i..]);
        if i - start - 1 > S3_CAP_CHARS {
            return None;
        }
        match bytes.get(i)? {
            b'"' => {
                return (i - start - 1 <= S3_CAP_CHARS).then_some(i + 1);
            }
            b'\\' => i += if bytes.get(i + 1)? == &b'u' { 6 } else { 2 },
            _ => return None,
        }
    }
}

/// A 64-bit fingerprint of `bytes` (multiplicative mixing of 8-byte words): equal bytes give equal
/// fingerprints; different bytes almost always differ.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut words = bytes.chunks_exact(8);
    let mut hash = bytes.len() as u64;
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        hash = (hash.rotate_left(23) ^ word).wrapping_mul(MIX);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    hash = (hash.rotate_left(23) ^ u64::from_le_bytes(last)).wrapping_mul(MIX);
    hash ^ (hash >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_finding_something_is_seen() {
        let long = format!("\"{}\"", "x".repeat(S3_CAP_CHARS + 1));
        let at_cap = format!("\"{}\"", "x".repeat(S3_CAP_CHARS));
        for found in [
            r#"{"a":null}"#.to_owned(),
            r#"{"a":1,"b":""}"#.to_owned(),
            r#"{"a":[]}"#.to_owned(),
            r#"[{"a":{}}]"#.to_owned(),
            "[1,2,1]".to_owned(),
            r#"[{"a":[1,2]},{"a":[1,2]}]"#.to_owned(),
            r#"{"k":[[3,4],[3,4]]}"#.to_owned(),
            format!("{{\"a\":{long}}}"),
            format!("[1,{long}]"),
        ] {
            assert!(!untouched_by_s1_to_s3(&found), "{found}");
        }
        for untouched in [
            r#"{"a":1,"b":"x","c":[1,2],"d":{"e":true}}"#.to_owned(),
            r#"[null,"",[],{},0]"#.to_owned(),
            r#"{"a":[[1,2],[2,1]],"b":"\"\\"}"#.to_owned(),
            "{}".to_owned(),
            "[]".to_owned(),
            "null".to_owned(),
            format!("{{\"a\":{at_cap}}}"),
            format!("[{at_cap},1]"),
        ] {
            assert!(untouched_by_s1_to_s3(&untouched), "{untouched}");
        }
    }

    #[test]
    fn what_it_cannot_show_is_refused() {
        // Over the cap in bytes but not in characters: the tree decides.
        let wide = format!("{{\"a\":\"{}\"}}", "é".repeat(S3_CAP_CHARS));
        assert!(!untouched_by_s1_to_s3(&wide));
        // Arrays nested past the hashing allowance.
        let deep = format!("{}1{}", "[".repeat(64), "]".repeat(64));
        assert!(!untouched_by_s1_to_s3(&deep));
        let shallow = format!("{}1{}", "[".repeat(3), "]".repeat(3));
        assert!(untouched_by_s1_to_s3(&shallow));
        // Not compact canonical JSON.
        for odd in ["", "{", "[1,]", "{\"a\" :1}", "[1] ", "{\"a\"}", "\"open"] {
            assert!(!untouched_by_s1_to_s3(odd), "{odd:?}");
        }
    }
}
