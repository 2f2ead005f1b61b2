//! A one-pass proof that S-1, S-2 and S-3 leave a canonical payload unchanged, so the budget op
//! can go straight to S-4 without building the tree the three operations edit.
//!
//! The proof is conservative: [`untouched_by_s1_to_s3`] answers `true` only when none of the three
//! rules can find anything to act on, and `false` whenever it cannot show that (including text it
//! does not recognise as compact canonical JSON); `false` sends the payload down the exact tree
//! path, so the answer costs time at worst, never exactness. It needs no keep_fields: protection
//! only exempts content from removal, and here nothing is removed.

use crate::jsjson::Observer;
use crate::ops::S3_CAP_CHARS;

/// Entries whose length and [`sample`] agree are compared byte for byte; past this many times the
/// payload's length compared (many near-identical entries, nested), the census gives up rather
/// than go quadratic.
const COMPARED_BYTES_PER_BYTE: usize = 4;

/// The census as a walk over the text reports what it meets (an [`Observer`]), so one walk can
/// serve two purposes: the JSON layer's canonical walk of the request parser feeds it (the budget
/// op then needs no walk of its own) and [`untouched_by_s1_to_s3`] feeds it on its own. Every rule
/// lives here.
pub struct Census {
    /// Something reported is some rule's: nothing more is recorded.
    touched: bool,
    /// (length, sample, start) of the entries of the arrays open on the walk, innermost last.
    entries: Vec<(usize, u64, usize)>,
    compared: usize,
    compare_allowance: usize,
}

impl Census {
    /// A census of a text of `len` bytes.
    pub fn new(len: usize) -> Census {
        Census {
            touched: false,
            entries: Vec::new(),
            compared: 0,
            compare_allowance: len.saturating_mul(COMPARED_BYTES_PER_BYTE),
        }
    }

    /// Whether nothing reported is any rule's (see [`untouched_by_s1_to_s3`]).
    pub fn untouched(&self) -> bool {
        !self.touched
    }

    /// [`Census::untouched`] for a text of `len` bytes, when the census was made for a longer
    /// one (the body reader's, made before the payload's length is known): the same answer as
    /// `Census::new(len)` would give, since comparisons only accumulate, so a walk that went past
    /// `len`'s allowance is past it at its end, and a census that gave up has stopped comparing.
    pub fn untouched_within(&self, len: usize) -> bool {
        !self.touched && self.compared <= len.saturating_mul(COMPARED_BYTES_PER_BYTE)
    }
}

/// What the JSON layer's canonical walk meets, read as the three rules read it.
impl Observer for Census {
    /// An object member's value starts at `value[0]`: `null`, `""`, `[]` or `{}` is S-2's.
    #[inline]
    fn member_value(&mut self, value: &[u8]) {
        if !self.touched
            && matches!(
                value,
                [b'n', ..] | [b'"', b'"', ..] | [b'[', b']', ..] | [b'{', b'}', ..]
            )
        {
            self.touched = true;
        }
    }

    /// A string value whose literal (quotes included) is `literal_len` bytes long: over the S-3 cap
    /// in bytes is S-3's (perhaps: a literal never has more characters than bytes).
    #[inline]
    fn string_literal(&mut self, literal_len: usize) {
        if literal_len.saturating_sub(2) > S3_CAP_CHARS {
            self.touched = true;
        }
    }

    #[inline]
    fn array_start(&mut self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn array_entry(&mut self, bytes: &[u8], start: usize, end: usize) {
        if !self.touched {
            let entry = &bytes[start..end];
            self.entries.push((entry.len(), sample(entry), start));
        }
    }

    /// Two byte-identical entries of the closing array are S-1's.
    fn array_end(&mut self, bytes: &[u8], mark: usize) {
        if self.touched {
            self.entries.truncate(mark.min(self.entries.len()));
            return;
        }
        let repeated = repeats(bytes, &mut self.entries[mark..], &mut self.compared);
        if repeated.is_none_or(|repeated| repeated) || self.compared > self.compare_allowance {
            self.touched = true;
        }
        self.entries.truncate(mark);
    }
}

/// An open container while scanning: for an array, its [`Census::array_start`] mark and where its
/// current entry starts.
struct Open {
    array: bool,
    mark: usize,
    entry_start: usize,
}

/// `true` when, in the compact canonical JSON `canonical`:
/// - no array holds two byte-identical entries (S-1 removes nothing): entries are sorted by length
///   and a [`sample`] of their bytes, and only entries agreeing on both are compared in full;
/// - no object field's value is `null`, `""`, `[]` or `{}` (S-2 removes nothing, and with nothing
///   removed no emptiness can cascade);
/// - no string value's literal is longer than the S-3 cap in bytes (a literal never has more
///   characters than bytes: S-3 truncates nothing).
///
/// Cost: one pass over the text (string contents stepped over eight bytes at a time), a sample of
/// each array entry, one sort of each array's samples, and full comparisons only where samples tie.
pub fn untouched_by_s1_to_s3(canonical: &str) -> bool {
    let bytes = canonical.as_bytes();
    let mut census = Census::new(bytes.len());
    let mut open: Vec<Open> = Vec::new();
    let mut i = 0usize;
    'value: loop {
        if census.touched {
            return false;
        }
        match bytes.get(i) {
            Some(&open_byte @ (b'[' | b'{')) => {
                let close = if open_byte == b'[' { b']' } else { b'}' };
                if bytes.get(i + 1) == Some(&close) {
                    i += 2;
                } else {
                    i += 1;
                    open.push(Open {
                        array: open_byte == b'[',
                        mark: census.array_start(),
                        entry_start: i,
                    });
                    if open_byte == b'{' {
                        let Some(value_at) = member_value(bytes, i) else {
                            return false;
                        };
                        census.member_value(&bytes[value_at..]);
                        i = value_at;
                    }
                    continue 'value;
                }
            }
            Some(b'"') => {
                let Some(end) = string_end(bytes, i, S3_CAP_CHARS + 2) else {
                    return false;
                };
                census.string_literal(end - i);
                i = end;
            }
            Some(_) => {
                // A number, true, false or null.
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
                return i == bytes.len() && census.untouched();
            };
            if top.array {
                census.array_entry(bytes, top.entry_start, i);
            }
            match (top.array, bytes.get(i)) {
                (_, Some(b',')) => {
                    i += 1;
                    if top.array {
                        top.entry_start = i;
                    } else {
                        let Some(value_at) = member_value(bytes, i) else {
                            return false;
                        };
                        census.member_value(&bytes[value_at..]);
                        i = value_at;
                    }
                    continue 'value;
                }
                (true, Some(b']')) => {
                    i += 1;
                    census.array_end(bytes, top.mark);
                    open.pop();
                    if census.touched {
                        return false;
                    }
                }
                (false, Some(b'}')) => {
                    i += 1;
                    open.pop();
                }
                _ => return false,
            }
        }
    }
}

/// Where the value of the member whose key starts at `at` begins (past `"key":`).
fn member_value(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let key_end = string_end(bytes, at, usize::MAX)?;
    (bytes.get(key_end) == Some(&b':')).then_some(key_end + 1)
}

/// End (past the closing quote) of the string literal starting at `start`, or `None` when it is
/// not a string literal or the literal (quotes included) would be longer than `cap` bytes. Only
/// `"` and `\\` are looked for: canonical text holds no raw control character.
fn string_end(bytes: &[u8], start: usize, cap: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        i = next_quote_or_backslash(bytes, i);
        if (i - start).saturating_add(1) > cap {
            return None;
        }
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            _ => i += if bytes.get(i + 1)? == &b'u' { 6 } else { 2 },
        }
    }
}

/// The offset of the first `"` or `\\` at or after `at` (the text's length when there is none):
/// eight bytes at a time (SWAR), the first match read off the lowest flagged byte (a borrow can
/// flag a byte falsely only above a true match, never below one).
fn next_quote_or_backslash(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let found =
            has_zero(w ^ (ONES * u64::from(b'"'))) | has_zero(w ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes.get(at).is_some_and(|&b| b != b'"' && b != b'\\') {
        at += 1;
    }
    at
}

/// A cheap key of `bytes` for telling array entries apart: their first, middle and last eight
/// bytes (fewer when shorter). Equal bytes give equal samples; entries that differ only elsewhere
/// tie, and [`repeats`] then compares them in full.
fn sample(bytes: &[u8]) -> u64 {
    let word = |at: usize| -> u64 {
        let mut w = [0u8; 8];
        let end = (at + 8).min(bytes.len());
        w[..end - at].copy_from_slice(&bytes[at..end]);
        u64::from_le_bytes(w)
    };
    let last = bytes.len().saturating_sub(8);
    (word(0).rotate_left(21) ^ word(last / 2).rotate_left(42) ^ word(last)).wrapping_mul(MIX)
}

const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Whether any two of one array's `entries` (length, sample, start in `bytes`) are byte-identical:
/// sorted by (length, sample), each run that ties is sorted by its bytes and its neighbours
/// compared. Adds the bytes it compares to `compared`; `None` if an entry is out of bounds.
fn repeats(
    bytes: &[u8],
    entries: &mut [(usize, u64, usize)],
    compared: &mut usize,
) -> Option<bool> {
    // The common array: no two entries tie, so nothing is compared and nothing repeats.
    if keys_all_differ(entries) {
        return Some(false);
    }
    entries.sort_unstable();
    let mut texts: Vec<&[u8]> = Vec::new();
    for run in entries.chunk_by(|a, b| a.0 == b.0 && a.1 == b.1) {
        if run.len() < 2 {
            continue;
        }
        texts.clear();
        for &(len, _, start) in run {
            texts.push(bytes.get(start..start + len)?);
        }
        *compared = compared.saturating_add(run.len() * run[0].0 * run.len().ilog2() as usize);
        texts.sort_unstable();
        if texts.windows(2).any(|pair| pair[0] == pair[1]) {
            return Some(true);
        }
    }
    Some(false)
}

/// Whether no two of `entries` agree on (length, sample), found with one open-addressing table
/// instead of a sort (a sort's comparisons, at this crate's size-first profile, were about a
/// seventh of the budget op's parse of a payload holding one array of 1,400 records). `false`
/// when two agree: [`repeats`] then sorts and compares as before.
fn keys_all_differ(entries: &[(usize, u64, usize)]) -> bool {
    if entries.len() < 2 {
        return true;
    }
    let bits = (entries.len() * 2).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    // Slot `k` holds 1 + the index of the entry in it, 0 when empty.
    let mut slots = vec![0u32; mask + 1];
    for (at, &(len, sample, _)) in entries.iter().enumerate() {
        let mixed = (sample ^ (len as u64).wrapping_mul(MIX)).wrapping_mul(MIX);
        let mut slot = (mixed >> (64 - bits)) as usize;
        loop {
            match slots[slot] {
                0 => {
                    slots[slot] = at as u32 + 1;
                    break;
                }
                taken => {
                    let (other_len, other_sample, _) = entries[taken as usize - 1];
                    if other_len == len && other_sample == sample {
                        return false;
                    }
                    slot = (slot + 1) & mask;
                }
            }
        }
    }
    true
}

/// A 64-bit fingerprint of `bytes` (multiplicative mixing of 8-byte words): equal bytes give equal
/// fingerprints; different bytes almost always differ.
pub fn fingerprint(bytes: &[u8]) -> u64 {
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
    fn the_table_finds_a_tie_exactly_when_a_sort_does() {
        let mut rng = context_meter_test_rng::Lcg(23);
        let (mut ties, mut distinct) = (0, 0);
        for _ in 0..3000 {
            let n = rng.below(40);
            // Few lengths and samples, so ties are common; starts never matter.
            let entries: Vec<(usize, u64, usize)> = (0..n)
                .map(|i| (rng.below(4), rng.below(1 + n * 2) as u64, i))
                .collect();
            let mut sorted = entries.clone();
            sorted.sort_unstable();
            let tie = sorted
                .windows(2)
                .any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1));
            assert_eq!(keys_all_differ(&entries), !tie, "{entries:?}");
            ties += usize::from(tie);
            distinct += usize::from(!tie && n > 2);
        }
        assert!(ties > 500 && distinct > 200, "{ties} {distinct}");
    }

    #[test]
    fn the_quote_finder_equals_a_byte_scan() {
        let mut rng = context_meter_test_rng::Lcg(7);
        for _ in 0..2000 {
            let len = rng.below(40);
            let text: Vec<u8> = (0..len)
                .map(|_| match rng.below(12) {
                    0 => b'"',
                    1 => b'\\',
                    2 => 0x80 | rng.below(64) as u8,
                    3 => 0x21,
                    4 => 0x5d,
                    _ => b'a' + rng.below(26) as u8,
                })
                .collect();
            for at in 0..=len {
                let expected = (at..len)
                    .find(|&i| matches!(text[i], b'"' | b'\\'))
                    .unwrap_or(len);
                assert_eq!(
                    next_quote_or_backslash(&text, at),
                    expected,
                    "{text:?} {at}"
                );
            }
        }
    }

    #[test]
    fn what_it_cannot_show_is_refused() {
        // Over the cap in bytes but not in characters: the tree decides.
        let wide = format!("{{\"a\":\"{}\"}}", "é".repeat(S3_CAP_CHARS));
        assert!(!untouched_by_s1_to_s3(&wide));
        // Deep nesting costs nothing extra; many distinct entries that tie on length and sample
        // (they differ only in bytes the sample skips) cost full comparisons, up to an allowance.
        let deep = format!("{}1{}", "[".repeat(4096), "]".repeat(4096));
        assert!(untouched_by_s1_to_s3(&deep));
        let ties = |n: usize| {
            let entries: Vec<String> = (0..n)
                .map(|i| format!("\"{}{i:02}{}\"", "x".repeat(8), "x".repeat(28)))
                .collect();
            format!("[{}]", entries.join(","))
        };
        assert!(untouched_by_s1_to_s3(&ties(8)));
        assert!(!untouched_by_s1_to_s3(&ties(40)));
        let mut repeated = ties(8);
        repeated.insert_str(
            repeated.len() - 1,
            &format!(",\"{}05{}\"", "x".repeat(8), "x".repeat(28)),
        );
        assert!(!untouched_by_s1_to_s3(&repeated));
        // Not compact canonical JSON.
        for odd in ["", "{", "[1,]", "{\"a\" :1}", "[1] ", "{\"a\"}", "\"open"] {
            assert!(!untouched_by_s1_to_s3(odd), "{odd:?}");
        }
    }
}
