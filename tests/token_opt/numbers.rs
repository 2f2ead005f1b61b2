//! Request numbers at 2^32 − 1, 2^32, 2^32 + 1 and 2^53 − 1, natively. usize is 64 bits here, so
//! a wrap cannot happen in this process; what is tested is the number handling itself: each count
//! is parsed into a `u64` field (a `usize` field would not compile against these assertions), is
//! the value JavaScript reads, is echoed as sent, and decides what the reference decides (the
//! levers corpus holds the reference's own outcomes at these values; tests/e2e/core/to_numbers.test.mjs
//! runs the same cases in workerd, where usize is 32 bits).

use context_meter::engine::token_opt::{parse_levers, parse_toon, run_levers};
use context_meter::engine::ClosedError;
use serde_json::Value;

const VALUES: [u64; 4] = [
    4_294_967_295,
    4_294_967_296,
    4_294_967_297,
    9_007_199_254_740_991,
];

fn report(body: &str) -> Value {
    let req = parse_levers(body.as_bytes()).unwrap_or_else(|r| panic!("refused {}", r.code()));
    Value::Object(run_levers(&req, 0).unwrap().report)
}

#[test]
fn max_chars_is_kept_whole_and_a_turn_within_it_is_not_cut() {
    for n in VALUES {
        let body = format!(
            r#"{{"truncate":{{"blocks":["{}","m","t"],"max_chars":{n}}}}}"#,
            "s".repeat(60)
        );
        let req = parse_levers(body.as_bytes()).unwrap();
        let max_chars: u64 = req.truncate.as_ref().unwrap().max_chars;
        assert_eq!(max_chars, n);
        let out = &report(&body)["outputs"]["truncate"];
        assert_eq!(out["truncated"], false, "{n}");
        assert_eq!(out["max_chars"].as_u64(), Some(n));
    }
    // Control: the value a 32-bit wrap of 2^32 + 40 gives does cut this turn.
    let body = format!(
        r#"{{"truncate":{{"blocks":["{}","m","t"],"max_chars":40}}}}"#,
        "s".repeat(60)
    );
    assert_eq!(report(&body)["outputs"]["truncate"]["truncated"], true);
}

#[test]
fn top_k_past_the_group_keeps_the_whole_group() {
    let candidates: Vec<String> = (0..5)
        .map(|i| format!(r#"{{"id":"c{i}","category":"d","score":0.5,"text":"t"}}"#))
        .collect();
    for n in VALUES {
        let body = format!(
            r#"{{"c9":{{"candidates":[{}],"per_category":{{"d":{{"top_k":{n}}}}}}}}}"#,
            candidates.join(",")
        );
        let req = parse_levers(body.as_bytes()).unwrap();
        let top_k: Option<u64> = req.c9.as_ref().unwrap().per_category[0].1.top_k;
        assert_eq!(top_k, Some(n));
        let out = &report(&body)["outputs"]["c9"];
        assert_eq!(out["signal"], "ok", "{n}");
        assert_eq!(out["counts"]["selected"], 5, "{n}");
    }
}

#[test]
fn detail_fetches_is_echoed_as_sent_and_multiplies_as_javascript_does() {
    for n in VALUES {
        let body = format!(
            r#"{{"schema":{{"tools":[{{"name":"t","full":"a full description","slim":"t","detail_fetches":{n}}}]}}}}"#
        );
        let req = parse_levers(body.as_bytes()).unwrap();
        let fetches: u64 = req.schema.as_ref().unwrap()[0].detail_fetches;
        assert_eq!(fetches, n);
        let r = report(&body);
        assert_eq!(
            r["outputs"]["schema"]["tools"][0]["detail_fetches"].as_u64(),
            Some(n)
        );
        let full_tokens = r["measurements"][0]["tokens"]["before"].as_f64().unwrap();
        let detail = r["measurements"][0]["tokens"]["overhead_items"]["detail"]
            .as_f64()
            .unwrap();
        // JavaScript's `fetches * tokens`: one correctly rounded double product.
        assert_eq!(detail, n as f64 * full_tokens, "{n}");
        assert_eq!(r["gate"]["schema"], false);
    }
}

#[test]
fn indent_size_never_wraps_into_range_and_counts_past_2_to_the_53_are_refused() {
    for n in VALUES {
        let body = format!(r#"{{"payload":[1],"indent_size":{n}}}"#);
        assert_eq!(
            parse_toon(body.as_bytes()).map(|_| ()).unwrap_err().code(),
            "toon_options_invalid"
        );
    }
    let over = br#"{"truncate":{"blocks":["a"],"max_chars":9007199254740994}}"#;
    assert_eq!(parse_levers(over).unwrap_err().code(), "truncate_invalid");
    // 2^53 + 1 is read as JSON.parse reads it: the double 2^53.
    let rounded = br#"{"truncate":{"blocks":["a"],"max_chars":9007199254740993}}"#;
    assert_eq!(
        parse_levers(rounded).unwrap().truncate.unwrap().max_chars,
        1 << 53
    );
}
