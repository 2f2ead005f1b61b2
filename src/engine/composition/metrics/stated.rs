//! M12 stated-vs-measured agreement: the harness's own counts against EM-1, per message, over
//! the covered messages and for the whole record.

use super::object;
use super::typography::{est, est_signed, signed_share};
use super::Analysis;
use serde_json::{json, Value};

/// Stated figures resolved for M12.
#[derive(Debug, Clone, Default)]
pub struct Stated {
    pub per_message: Option<Vec<Option<u64>>>,
    pub per_message_source: Option<&'static str>,
    pub total: Option<u64>,
    pub total_source: Option<&'static str>,
}

impl Stated {
    pub fn any(&self) -> bool {
        self.total.is_some()
            || self
                .per_message
                .as_ref()
                .is_some_and(|p| p.iter().any(Option::is_some))
    }
}

/// Largest integer every JSON reader holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u128 = 9_007_199_254_740_991;

/// An exact count: a JSON number up to 2^53 - 1; beyond it (a sum of stated figures can pass it)
/// the decimal digits as a string, since a larger JSON number would be read rounded.
fn exact_count(n: u128) -> Value {
    if n <= MAX_SAFE_INTEGER {
        json!(n as u64)
    } else {
        Value::String(n.to_string())
    }
}

/// One M12 comparison: the figures (stated, measured, diff, pct) and the verdict.
struct Comparison {
    figures: [(&'static str, Value); 4],
    verdict: &'static str,
}

impl Comparison {
    /// `stated` is u128 because it may be a sum of up to 10,000 stated figures of up to
    /// 2^53 - 1 each (more than u64 holds).
    fn of(stated: u128, measured: u64) -> Comparison {
        let diff = stated as i128 - measured as i128;
        let verdict = if measured == 0 && stated == 0 {
            "EXACT"
        } else if measured == 0 {
            "DISAGREE (zero-measured)"
        } else if 100 * diff.unsigned_abs() <= 5 * measured as u128 {
            "WITHIN"
        } else {
            "DISAGREE"
        };
        Comparison {
            figures: [
                ("stated_tokens", exact_count(stated)),
                ("tokens", est(measured)),
                ("diff", est_signed(diff)),
                ("pct", signed_share(diff, measured)),
            ],
            verdict,
        }
    }

    /// The figures followed by the verdict.
    fn fields(self) -> impl Iterator<Item = (&'static str, Value)> {
        let verdict = ("verdict", json!(self.verdict));
        self.figures.into_iter().chain([verdict])
    }
}

/// M12: per covered message, over the covered messages, and for the whole record.
pub fn m12_stated_agreement(analysis: &Analysis, stated: &Stated) -> Value {
    let n = analysis.message_estimates.len();
    let per = stated.per_message.clone().unwrap_or_default();
    let mut rows = Vec::new();
    let (mut covered, mut within, mut disagree, mut exact) = (0u64, 0u64, 0u64, 0u64);
    let (mut sum_stated, mut sum_measured) = (0u128, 0u64);
    for (i, figure) in per.iter().enumerate().take(n) {
        if let Some(figure) = figure {
            let measured = analysis.message_estimates[i];
            let comparison = Comparison::of(u128::from(*figure), measured);
            match comparison.verdict {
                "WITHIN" => within += 1,
                "EXACT" => exact += 1,
                _ => disagree += 1,
            }
            covered += 1;
            sum_stated += u128::from(*figure);
            sum_measured += measured;
            let mut row = vec![("message_index", json!(i))];
            row.extend(comparison.fields());
            rows.push(object(row));
        }
    }
    let mut aggregate = vec![
        ("units", json!(covered)),
        ("within", json!(within)),
        ("exact", json!(exact)),
        ("disagree", json!(disagree)),
    ];
    if covered > 0 {
        aggregate.extend(Comparison::of(sum_stated, sum_measured).figures);
    }
    let whole = match stated.total {
        Some(total) => {
            let mut w = vec![("basis", json!("stated total against T"))];
            w.extend(Comparison::of(u128::from(total), analysis.total_estimate).fields());
            object(w)
        }
        None if covered == n as u64 && n > 0 => {
            let mut w = vec![(
                "basis",
                json!("per-message stated sum against the message total"),
            )];
            w.extend(Comparison::of(sum_stated, sum_measured).fields());
            object(w)
        }
        None => json!("NOT-ASSESSABLE (partial coverage)"),
    };
    object(vec![
        ("label", json!("stated figures are the submitting harness's own, reproduced as stated; tolerance 5% (fleet convention)")),
        ("note", json!("a disagreement measures the gap between the harness's count and EM-1, not an error by either side")),
        ("per_message_source", json!(stated.per_message_source)),
        ("total_source", json!(stated.total_source)),
        ("messages", json!(n)),
        ("covered_messages", json!(covered)),
        ("per_message_entries_beyond_record", json!(per.len().saturating_sub(n))),
        ("per_message", Value::Array(rows)),
        ("aggregate_over_covered", object(aggregate)),
        ("whole_record", whole),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_sums_past_2_pow_64_stay_exact() {
        let max_safe = 9_007_199_254_740_991u128;
        assert_eq!(exact_count(max_safe), json!(9_007_199_254_740_991u64));
        assert_eq!(exact_count(max_safe + 1), json!("9007199254740992"));
        let sum = 2051 * max_safe;
        assert!(sum > u128::from(u64::MAX));
        let fields: Vec<_> = Comparison::of(sum, 2051).fields().collect();
        assert_eq!(fields[0].1, json!("18473765671473772541"));
        assert_eq!(fields[2].1, json!("est:~18473765671473770490"));
        assert_eq!(fields[4].1, json!("DISAGREE"));
    }
}
