//! ECMAScript `Number.prototype.toString()` (radix 10) of a double: the one number formatter of
//! every JSON writer (JCS, `JSON.stringify`) and of TOON.

use std::fmt::Write;

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

/// `x / 10` for every 32-bit `x`, as a multiply and a shift (0xCCCC_CCCD = ⌈2^35 / 10⌉; the error
/// stays below one part in 2^35 of a quotient under 2^29). LLVM leaves a division by a constant to
/// the wasm engine (`i32.div_u`, `i64.div_u`); this form needs no engine rewrite.
#[inline(always)]
fn div10(x: u32) -> u32 {
    ((u64::from(x) * 0xCCCC_CCCD) >> 35) as u32
}

/// Appends the decimal digits of `u` (no formatting machinery). A report's figures are nearly all
/// below 2^32: their digits come from [`div10`]; a larger value's low digits are split off by
/// 64-bit division until the rest fits.
pub fn push_integer(out: &mut String, mut u: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    while u > u64::from(u32::MAX) {
        start -= 1;
        digits[start] = b'0' + (u % 10) as u8;
        u /= 10;
    }
    let mut x = u as u32;
    loop {
        let quotient = div10(x);
        start -= 1;
        digits[start] = b'0' + (x - quotient * 10) as u8;
        x = quotient;
        if x == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn div10_is_division_by_ten() {
        let mut rng = context_meter_test_rng::Lcg(3);
        let random = (0..1 << 16).map(|_| ((rng.next_bits() as u32) << 1) ^ rng.below(2) as u32);
        for x in (0..1 << 20)
            .chain(u32::MAX - (1 << 16)..=u32::MAX)
            .chain(random)
        {
            assert_eq!(div10(x), x / 10, "{x}");
        }
    }

    /// The 32-bit and 64-bit paths give `u64`'s own decimal form at every length and at each
    /// boundary between them (around 2^32 and the powers of ten).
    #[test]
    fn integers_are_written_as_their_decimal_digits() {
        let mut values = vec![
            0,
            1,
            9,
            10,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            u64::MAX,
        ];
        for p in 0..20u32 {
            let power = 10u64.pow(p);
            values.extend([power - 1, power, power + 1, power.wrapping_mul(7) + 3]);
        }
        let mut rng = context_meter_test_rng::Lcg(5);
        values.extend((0..2000).map(|_| (rng.next_bits() as u64) << (rng.below(40) as u64)));
        for u in values {
            let mut out = String::from("x");
            push_integer(&mut out, u);
            assert_eq!(out, format!("x{u}"));
        }
    }

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
