//! Request metrics in Prometheus text format. Counters live in the isolate's memory, so recording
//! costs no round trip; `GET /metrics` reports this isolate's counts since it started (Workers runs
//! several isolates in production: scrape totals are per isolate, stated in docs/deploying.md).
//! Labels are route paths, family ids and outcome codes only: never a wallet, never content.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Upper bounds (ms) of the engine latency histogram buckets.
const LATENCY_BUCKETS_MS: [u64; 10] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000];

#[derive(Default)]
struct Registry {
    requests: BTreeMap<RequestKey, u64>,
    free_tier_exhausted: BTreeMap<&'static str, u64>,
    payments: BTreeMap<(&'static str, &'static str), u64>,
    latency_buckets: [u64; LATENCY_BUCKETS_MS.len()],
    latency_count: u64,
    latency_sum_ms: u64,
}

thread_local! {
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

/// One row of `cm_requests_total`: family, route and outcome.
type RequestKey = (&'static str, &'static str, String);

/// Adds one to `key`'s count in `counts`.
fn count_request(counts: &mut BTreeMap<RequestKey, u64>, key: RequestKey) {
    *counts.entry(key).or_default() += 1;
}

/// Counts one answered request. `outcome` is `ok`, a refusal code, or a status class.
pub fn request(family: &'static str, route: &'static str, outcome: String) {
    REGISTRY.with(|r| count_request(&mut r.borrow_mut().requests, (family, route, outcome)));
}

/// Runs the request counter's map code once on a throwaway map, so V8 compiles it before the first
/// request (edge/warm.rs); the isolate's counters are not touched.
pub fn warm_request_counter() {
    let mut counts = BTreeMap::new();
    count_request(&mut counts, ("service", "unrouted", "404".into()));
    std::hint::black_box(counts);
}

/// Counts a free-tier refusal (spent allowance or too-early call).
pub fn free_tier_exhausted(family: &'static str) {
    REGISTRY.with(|r| {
        *r.borrow_mut()
            .free_tier_exhausted
            .entry(family)
            .or_default() += 1
    });
}

/// Counts a payment outcome: `settled` or `failed` (settlement), `ledger_failed` (no ledger row),
/// `delivered_unmarked` (the guard did not record the delivery).
pub fn payment(family: &'static str, result: &'static str) {
    REGISTRY.with(|r| *r.borrow_mut().payments.entry((family, result)).or_default() += 1);
}

/// Observes one engine run's wall time.
pub fn engine_latency(ms: u64) {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        for (i, bound) in LATENCY_BUCKETS_MS.iter().enumerate() {
            if ms <= *bound {
                r.latency_buckets[i] += 1;
            }
        }
        r.latency_count += 1;
        r.latency_sum_ms += ms;
    });
}

/// Renders every counter as Prometheus text exposition format 0.0.4.
pub fn render() -> String {
    REGISTRY.with(|r| {
        let r = r.borrow();
        let mut out = String::new();
        out.push_str("# HELP cm_requests_total Requests answered, by family, route and outcome.\n");
        out.push_str("# TYPE cm_requests_total counter\n");
        for ((family, route, outcome), n) in &r.requests {
            let _ = writeln!(
                out,
                "cm_requests_total{{family=\"{family}\",route=\"{route}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str("# HELP cm_free_tier_exhausted_total Free calls refused by the allowance.\n");
        out.push_str("# TYPE cm_free_tier_exhausted_total counter\n");
        for (family, n) in &r.free_tier_exhausted {
            let _ = writeln!(out, "cm_free_tier_exhausted_total{{family=\"{family}\"}} {n}");
        }
        out.push_str("# HELP cm_payments_total Payment outcomes: settlement, ledger row, delivery mark.\n");
        out.push_str("# TYPE cm_payments_total counter\n");
        for ((family, result), n) in &r.payments {
            let _ = writeln!(
                out,
                "cm_payments_total{{family=\"{family}\",result=\"{result}\"}} {n}"
            );
        }
        out.push_str("# HELP cm_engine_latency_ms Engine wall time per call.\n");
        out.push_str("# TYPE cm_engine_latency_ms histogram\n");
        for (i, bound) in LATENCY_BUCKETS_MS.iter().enumerate() {
            let _ = writeln!(
                out,
                "cm_engine_latency_ms_bucket{{le=\"{bound}\"}} {}",
                r.latency_buckets[i]
            );
        }
        let _ = writeln!(out, "cm_engine_latency_ms_bucket{{le=\"+Inf\"}} {}", r.latency_count);
        let _ = writeln!(out, "cm_engine_latency_ms_sum {}", r.latency_sum_ms);
        let _ = writeln!(out, "cm_engine_latency_ms_count {}", r.latency_count);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_cumulative_buckets() {
        request(
            "token-efficiency",
            "/token-efficiency/precheck",
            "ok".into(),
        );
        request(
            "token-efficiency",
            "/token-efficiency/precheck",
            "ok".into(),
        );
        engine_latency(3);
        let text = render();
        assert!(text.contains(
            "cm_requests_total{family=\"token-efficiency\",route=\"/token-efficiency/precheck\",outcome=\"ok\"} 2"
        ));
        assert!(text.contains("cm_engine_latency_ms_bucket{le=\"2\"} 0"));
        assert!(text.contains("cm_engine_latency_ms_bucket{le=\"5\"} 1"));
        assert!(text.contains("cm_engine_latency_ms_count 1"));
    }
}
