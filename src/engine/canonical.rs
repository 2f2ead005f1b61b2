//! RFC 8785 JSON Canonicalization Scheme (JCS) over `serde_json::Value`, and the JavaScript number
//! and string renderings it is built from (shared with every family that must print as JS prints).
//!
//! Invariants: object members sorted by their names' UTF-16 code units; strings escaped exactly as
//! ECMAScript `JSON.stringify`; numbers as ECMAScript `Number.prototype.toString` of the IEEE-754
//! double (integers beyond 2^53 are first rounded to a double, as JCS requires); no whitespace.

use crate::engine::json_lexeme::plain_run;
use serde_json::{Map, Value};
use std::fmt::Write;

/// The JCS bytes of `value`.
pub fn to_jcs(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, true);
    out
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
    for (i, (key, value)) in sorted_members(map).into_iter().enumerate() {
        if slot.is_none() && key.encode_utf16().gt(name.encode_utf16()) {
            slot = Some(out.len());
        }
        if i > 0 {
            out.push(',');
        }
        write_js_string(&mut out, key);
        out.push(':');
        write_json(&mut out, value, true);
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

/// Members of `map` ordered by their names' UTF-16 code units, as JCS orders them.
fn sorted_members(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    members
}

/// ECMAScript `JSON.stringify(value)` of a `serde_json::Value`: compact, members in the map's own
/// (insertion) order, JS number and string rendering.
pub fn to_js_compact(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, false);
    out
}

/// The one JSON writer behind both forms: `sorted` orders object members by UTF-16 code units (JCS).
fn write_json(out: &mut String, value: &Value, sorted: bool) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // as_f64 is exact for every i64/u64 up to 2^53 and rounds to nearest beyond, as JCS requires.
        Value::Number(n) => push_js_number(out, n.as_f64().unwrap_or(0.0)),
        Value::String(s) => write_js_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item, sorted);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let members = if sorted {
                sorted_members(map)
            } else {
                map.iter().collect()
            };
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_js_string(out, k);
                out.push(':');
                write_json(out, v, sorted);
            }
            out.push('}');
        }
    }
}

/// ECMAScript `Number.prototype.toString()` (radix 10) of a double ([`push_js_number`]).
pub fn js_number(x: f64) -> String {
    let mut out = String::new();
    push_js_number(&mut out, x);
    out
}

/// Appends ECMAScript `Number.prototype.toString()` (radix 10) of `x`; non-finite values (which
/// JSON cannot carry) as `null`, as `JSON.stringify` writes them.
///
/// An integer below 2^53 in magnitude is its own shortest round-trip form (a shorter digit string
/// names another integer, which is also a double), so it is written as the integer. Any other
/// double takes Ryu's shortest round-trip digits (Ryu picks the closest shortest candidate, ties to
/// even: the digits ECMAScript requires) in ECMAScript's layout. Checked against the derivation
/// from first principles (correctly rounded fixed precision at the shortest length) in the tests.
pub fn push_js_number(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        push_integer(out, x.abs() as u64);
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let printed = buffer.format_finite(x.abs());
    let (mantissa, exponent) = match printed.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (printed, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = [0u8; 40];
    let mut k = 0;
    for &b in int_part.as_bytes().iter().chain(frac_part.as_bytes()) {
        digits[k] = b;
        k += 1;
    }
    // value = 0.d1d2…dk × 10^n
    let mut n = int_part.len() as i32 + exponent;
    let leading = digits[..k].iter().take_while(|&&d| d == b'0').count();
    n -= leading as i32;
    let mut digits = &digits[leading..k];
    while digits.len() > 1 && digits[digits.len() - 1] == b'0' {
        digits = &digits[..digits.len() - 1];
    }
    let k = digits.len() as i32;
    fn text(d: &[u8]) -> &str {
        std::str::from_utf8(d).unwrap_or("")
    }
    if k <= n && n <= 21 {
        out.push_str(text(digits));
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(text(&digits[..n as usize]));
        out.push('.');
        out.push_str(text(&digits[n as usize..]));
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(text(digits));
    } else {
        out.push_str(text(&digits[..1]));
        if k > 1 {
            out.push('.');
            out.push_str(text(&digits[1..]));
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

/// The decimal digits of `u`.
fn push_integer(out: &mut String, mut u: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&d| d as char));
}

/// [`js_number`] derived from first principles, slowly: the test oracle of [`push_js_number`].
#[cfg(test)]
fn js_number_by_rounding(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    // Rust's `{:e}` gives the shortest round-tripping length k; ECMAScript then wants, among k-digit
    // candidates, the one closest to x with ties to even, which is exactly Rust's correctly rounded
    // (half-to-even) fixed-precision rendering at k digits. (0x43143ff3c1cb0959 = …206.25 → "…206.2".)
    let shortest = format!("{:e}", x.abs());
    let k_shortest = shortest
        .split_once('e')
        .map_or(1, |(m, _)| m.replace('.', "").len());
    // That closest candidate can fall outside x's rounding interval when the interval is lopsided
    // (x a power of two: the gap below is half the gap above); the digits must round-trip first,
    // and then the only k-digit candidate left is the shortest one on the wide side.
    let rounded = format!("{:.*e}", k_shortest - 1, x.abs());
    let sci = if rounded.parse::<f64>() == Ok(x.abs()) {
        rounded
    } else {
        shortest
    };
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("LowerExp always has an exponent");
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().expect("LowerExp exponent is an integer") + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}

/// Appends `s` as a JSON string literal exactly as ECMAScript `JSON.stringify` writes it. Runs
/// that need no escape are found eight bytes at a time and copied whole, so a long string costs
/// about a copy plus one step per escape.
pub fn write_js_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut i = 0;
    loop {
        let run = plain_run(&bytes[i..]);
        // A plain run ends before an ASCII byte (or at the end), so both cuts are on char boundaries.
        out.push_str(&s[i..i + run]);
        i += run;
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            _ => {
                let _ = write!(out, "\\u{:04x}", b);
            }
        }
        i += 1;
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(bits: u64) -> String {
        js_number(f64::from_bits(bits))
    }

    #[test]
    fn rfc8785_appendix_b_numbers() {
        // RFC 8785 Appendix B: IEEE-754 bit patterns and their required serialisation.
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
            // Powers of two, where the closest 16-digit number does not round-trip (Node 20's
            // `(2 ** -1007).toString()` and `(2 ** -1000).toString()`); found by fuzzing.
            (0x0100000000000000, "7.291122019556398e-304"),
            (0x0170000000000000, "9.332636185032189e-302"),
        ];
        for (bits, want) in cases {
            assert_eq!(num(*bits), *want, "bits {bits:#018x}");
        }
    }

    #[test]
    fn every_power_of_two_round_trips() {
        for e in -1074i64..=1023 {
            let bits = if e < -1022 {
                1u64 << (e + 1074)
            } else {
                ((e + 1023) as u64) << 52
            };
            let x = f64::from_bits(bits);
            assert_eq!(js_number(x).parse::<f64>(), Ok(x), "2^{e}");
            assert_eq!(js_number(-x).parse::<f64>(), Ok(-x), "-2^{e}");
        }
    }

    #[test]
    fn js_number_thresholds() {
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1e20), "100000000000000000000");
        assert_eq!(js_number(1e-7), "1e-7");
        assert_eq!(js_number(1.5e-7), "1.5e-7");
        assert_eq!(js_number(0.1), "0.1");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(123.0), "123");
        assert_eq!(js_number(f64::NAN), "null");
    }

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
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // For strings without lone surrogates `JSON.stringify` and serde_json escape alike: `"`,
        // `\\`, the five short escapes, lowercase `\u00xx` for the other controls, nothing else.
        let fragments = [
            "a",
            "é",
            "中",
            "😀",
            "\"",
            "\\",
            "/",
            "\u{8}",
            "\u{c}",
            "\n",
            "\r",
            "\t",
            "\0",
            "\u{1f}",
            "\u{7f}",
            "\u{2028}",
            "\u{feff}",
            "plain words ",
            "0123456789abcdef",
        ];
        let mut rng = crate::engine::test_rng::Lcg(11);
        for len in 0..600 {
            let s = rng.text(&fragments, len % 70);
            let mut out = String::new();
            write_js_string(&mut out, &s);
            assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn integers_beyond_2_pow_53_round_like_doubles() {
        assert_eq!(to_jcs(&json!(9007199254740993u64)), "9007199254740992");
        assert_eq!(to_jcs(&json!(-42)), "-42");
    }

    #[test]
    fn js_number_equals_its_derivation_from_first_principles() {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut doubles = vec![
            f64::from_bits(0x4314_3ff3_c1cb_0959),
            1e21,
            1e-7,
            0.1,
            5e-324,
            1.7976931348623157e308,
            123e-20,
            1e-6,
            9_007_199_254_740_991.0,
            -9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            9_007_199_254_740_994.0,
            1e15,
            -42.0,
            1e20,
        ];
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = f64::from_bits(state);
            if x.is_finite() {
                doubles.push(x);
            }
            // Short decimals too: the region where ties and the layout thresholds live.
            doubles.push((state >> 40) as f64 / 10f64.powi((state % 30) as i32 - 8));
            // Integers of every magnitude, both sides of 2^53.
            doubles.push((state >> (state % 64)) as f64 * if state & 1 == 0 { 1.0 } else { -1.0 });
        }
        for x in doubles {
            assert_eq!(
                js_number(x),
                js_number_by_rounding(x),
                "bits {:#018x}",
                x.to_bits()
            );
        }
    }
}
