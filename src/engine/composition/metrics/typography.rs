//! Estimate typography: `est:~N` and `est:~N.NN%` from unrounded integers, round half up (half
//! away from zero for negative differences) in exact integer arithmetic; a zero denominator
//! prints `NOT-ASSESSABLE (zero denominator)`, never 0%.

use serde_json::Value;

pub const ZERO_DENOMINATOR: &str = "NOT-ASSESSABLE (zero denominator)";

/// `est:~N`.
pub fn est(n: u64) -> Value {
    Value::String(format!("est:~{n}"))
}

/// `est:~N` of a signed difference.
pub fn est_signed(n: i128) -> Value {
    Value::String(format!("est:~{n}"))
}

/// 100 × |num| / den in hundredths, rounded half up.
fn hundredths(num: u128, den: u128) -> u128 {
    (2 * 10_000 * num + den) / (2 * den)
}

fn percent_string(negative: bool, hundredths: u128) -> Value {
    let sign = if negative && hundredths > 0 { "-" } else { "" };
    Value::String(format!(
        "est:~{sign}{}.{:02}%",
        hundredths / 100,
        hundredths % 100
    ))
}

/// `est:~N.NN%` of part / whole, or the zero-denominator marker.
pub fn share(part: u64, whole: u64) -> Value {
    if whole == 0 {
        return Value::String(ZERO_DENOMINATOR.to_owned());
    }
    percent_string(false, hundredths(part as u128, whole as u128))
}

/// `est:~-N.NN%` of a signed difference over a denominator, or the zero-denominator marker.
pub fn signed_share(num: i128, den: u64) -> Value {
    if den == 0 {
        return Value::String(ZERO_DENOMINATOR.to_owned());
    }
    percent_string(num < 0, hundredths(num.unsigned_abs(), den as u128))
}

/// Integer mean rounded half up.
pub fn mean(sum: u64, n: u64) -> u64 {
    ((2 * sum as u128 + n as u128) / (2 * n as u128)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shares_round_half_up_in_integers() {
        assert_eq!(share(5, 800), json!("est:~0.63%")); // 0.625
        assert_eq!(share(1, 3), json!("est:~33.33%"));
        assert_eq!(share(2, 3), json!("est:~66.67%"));
        assert_eq!(share(0, 0), json!(ZERO_DENOMINATOR));
        assert_eq!(signed_share(-5, 800), json!("est:~-0.63%"));
        assert_eq!(mean(5, 2), 3);
        assert_eq!(mean(4, 3), 1);
    }
}
