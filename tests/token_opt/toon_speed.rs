//! Release-mode measurement of the TOON target: encoding a 256 KiB JSON payload natively takes at most
//! twice serde_json's compact serialisation of the same value.
//! Run: `cargo test --release --test token_opt -- --ignored toon_speed:: --nocapture`

use context_meter::engine::token_opt::json_js::to_js_key_order;
use context_meter::engine::token_opt::toon::{encode, ToonOptions};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A deterministic ~256 KiB payload mixing the shapes TOON distinguishes: tabular rows with a
/// nested group, a keyed table, primitive arrays, free text needing quotes, and a non-uniform list.
fn payload() -> Value {
    let words = [
        "alpha",
        "beta gamma",
        "delta:epsilon",
        "zeta, eta",
        "\"theta\"",
        "iota",
        "kappa-1",
        "42",
    ];
    let mut rows = Vec::new();
    let mut keyed = serde_json::Map::new();
    let mut mixed = Vec::new();
    let mut i: u64 = 0;
    loop {
        rows.push(json!({
            "id": i,
            "name": words[(i % 8) as usize],
            "score": (i as f64) * 0.37 + 0.5,
            "active": i % 3 == 0,
            "owner": { "login": format!("user{}", i % 97), "tier": words[((i + 3) % 8) as usize] },
        }));
        keyed.insert(
            format!("k{i}"),
            json!({ "a": i, "b": words[(i % 5) as usize] }),
        );
        mixed.push(if i % 2 == 0 {
            json!({ "tags": ["x", "y", words[(i % 8) as usize]], "note": "free text with spaces" })
        } else {
            json!([i, "s", null, 1.5e-7])
        });
        i += 1;
        if i % 64 == 0 {
            let v = json!({ "rows": rows, "keyed": keyed, "mixed": mixed });
            if serde_json::to_string(&v).unwrap().len() >= 256 * 1024 {
                return v;
            }
        }
    }
}

fn best_of<F: FnMut() -> usize>(runs: usize, mut f: F) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
#[ignore = "release-mode timing; run explicitly"]
fn toon_of_256_kib_is_within_twice_serde_json_compact() {
    let mut value = payload();
    to_js_key_order(&mut value);
    let json_len = serde_json::to_string(&value).unwrap().len();
    let options = ToonOptions::default();
    let serde = best_of(30, || serde_json::to_string(&value).unwrap().len());
    let toon = best_of(30, || encode(&value, &options).len());
    let toon_len = encode(&value, &options).len();
    println!(
        "payload {json_len} bytes JSON, {toon_len} bytes TOON; serde_json::to_string {:?}, toon::encode {:?}, ratio {:.2}",
        serde,
        toon,
        toon.as_secs_f64() / serde.as_secs_f64()
    );
    assert!(json_len >= 256 * 1024);
    assert!(
        toon <= serde * 2,
        "TOON {toon:?} > 2 × serde_json {serde:?}"
    );
}
