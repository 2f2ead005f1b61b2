//! Tokenizer benchmark (one run, release profile): `cargo bench --bench tokenizer -- <corpus>`,
//! normally driven by scripts/bench-tokenizer.sh, which first writes the 1 MiB mixed corpus with
//! corpus/tokenizer/bench.mjs and afterwards times gpt-tokenizer in Node on the same file.
//!
//! Prints: cold start (first call in a fresh process) for ours and stock tiktoken-rs; throughput
//! on the mixed corpus for both; the worst case (one 256 KiB word) against the same bytes of mixed
//! text; and S-4 prefix search per query against a binary search that re-tokenizes the whole
//! prefix per probe.
//!
//! With `BENCH_OUT=<dir>` (scripts/bench.sh sets it) the same figures are also written as data to
//! `<dir>/tokenizer-native.json`, one section of docs/bench/latest.json (scripts/bench-data.mjs).

use context_meter::engine::tokenizer::{count, encode, largest_fitting_prefix};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::{Duration, Instant};

const KIB: usize = 1024;
const MIB: f64 = 1024.0 * 1024.0;

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (T, Duration) {
    let (mut value, mut best) = time(&mut f);
    for _ in 1..runs {
        let (v, d) = time(&mut f);
        if d < best {
            best = d;
        }
        value = v;
    }
    (value, best)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn throughput(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / MIB / d.as_secs_f64()
}

/// The largest char boundary at or below `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A deterministic word of `len` ASCII letters (xorshift over a-z).
fn random_letters(len: usize) -> String {
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (b'a' + (state % 26) as u8) as char
        })
        .collect()
}

fn main() {
    let path = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "target/tokenizer-bench/mixed.txt".to_string());
    let mixed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run scripts/bench-tokenizer.sh)"));

    // Cold start: the very first call of each in this process.
    let (first, ours_cold) = time(|| count(black_box("hello world")));
    let (stock, stock_cold) = time(|| tiktoken_rs::cl100k_base().expect("tiktoken table"));
    println!(
        "cold start: ours first count {:.3} ms ({first} tokens; tables are static, nothing is built); \
         tiktoken-rs cl100k_base() {:.1} ms",
        ms(ours_cold),
        ms(stock_cold)
    );

    // Throughput on the mixed corpus.
    let bytes = mixed.len();
    let (ids, ours) = best_of(3, || encode(black_box(&mixed)));
    let (n, ours_count) = best_of(3, || count(black_box(&mixed)));
    assert_eq!(n, ids.len());
    let (stock_ids, stock_time) = best_of(3, || stock.encode_ordinary(black_box(&mixed)));
    let differing = ids.iter().zip(&stock_ids).position(|(a, b)| a != b);
    let mut data = json!({
        "corpus_bytes": bytes,
        "tokens": ids.len(),
        "cold_start_ms": { "ours_first_count": round(ms(ours_cold), 4), "tiktoken_rs_table": round(ms(stock_cold), 2) },
        "ours_encode_ms": round(ms(ours), 3),
        "ours_count_ms": round(ms(ours_count), 3),
        "tiktoken_rs_encode_ordinary_ms": round(ms(stock_time), 3),
        "tiktoken_rs_tokens": stock_ids.len(),
    });
    let (mut worst, mut s4) = (Vec::<Value>::new(), Vec::<Value>::new());
    println!(
        "mixed corpus {bytes} bytes -> {} tokens: ours encode {:.1} ms = {:.1} MiB/s, count {:.1} ms = {:.1} MiB/s; \
         tiktoken-rs encode_ordinary {:.1} ms = {:.1} MiB/s ({} tokens{}) -> ours/stock {:.2}x",
        ids.len(),
        ms(ours),
        throughput(bytes, ours),
        ms(ours_count),
        throughput(bytes, ours_count),
        ms(stock_time),
        throughput(bytes, stock_time),
        stock_ids.len(),
        if differing.is_some() { ", differs: JS \\s / BOM / Unicode tables" } else { "" },
        stock_time.as_secs_f64() / ours.as_secs_f64()
    );

    // Worst case: one 256 KiB word against 256 KiB of mixed text.
    let slice = &mixed[..floor_boundary(&mixed, 256 * KIB)];
    let (_, slice_time) = best_of(3, || count(black_box(slice)));
    for (name, word) in [
        ("random a-z", random_letters(256 * KIB)),
        ("'a' repeated", "a".repeat(256 * KIB)),
    ] {
        let (n, word_time) = best_of(3, || count(black_box(&word)));
        worst.push(json!({ "word": name, "tokens": n, "ms": round(ms(word_time), 3), "mixed_ms": round(ms(slice_time), 3) }));
        println!(
            "worst case, one 256 KiB word ({name}): {n} tokens in {:.1} ms vs 256 KiB mixed {:.1} ms -> {:.2}x",
            ms(word_time),
            ms(slice_time),
            word_time.as_secs_f64() / slice_time.as_secs_f64()
        );
    }
    for kib in [32, 256] {
        let word = random_letters(kib * KIB);
        let (_, t) = time(|| stock.encode_ordinary(black_box(&word)).len());
        worst.push(
            json!({ "word": format!("random a-z, {kib} KiB, tiktoken-rs"), "ms": round(ms(t), 3) }),
        );
        println!(
            "tiktoken-rs stock, one {kib} KiB word (random a-z): {:.1} ms ({:.1} us/KiB)",
            ms(t),
            t.as_secs_f64() * 1e6 / kib as f64
        );
    }

    // S-4 when the cut falls inside one 256 KiB word (the healed path).
    let word_doc = format!("{{\"blob\": \"{}\"}}", random_letters(256 * KIB));
    let word_chars = word_doc.chars().count();
    let word_budget = count(&word_doc) / 2;
    let (found, word_query) = time(|| {
        largest_fitting_prefix(&word_doc, 0, word_chars - 1, word_budget, |l| {
            format!(
                "[…truncated: {} chars removed under token-efficiency/v1 S-4]",
                word_chars - l
            )
        })
    });
    s4.push(json!({ "text": "one 256 KiB word", "budget": word_budget, "ms": round(ms(word_query), 3) }));
    println!(
        "S-4 prefix search inside one 256 KiB word, budget {word_budget}: {:.1} ms per query (L = {found:?})",
        ms(word_query)
    );

    // S-4 when the cut falls inside one long whitespace run (healed like long words).
    let spaces_doc = format!("{{\"pad\": \"{}x\"}}", " ".repeat(256 * KIB));
    let spaces_chars = spaces_doc.chars().count();
    let spaces_budget = count(&spaces_doc) / 2;
    let (found, spaces_query) = time(|| {
        largest_fitting_prefix(&spaces_doc, 0, spaces_chars - 1, spaces_budget, |l| {
            format!(
                "[…truncated: {} chars removed under token-efficiency/v1 S-4]",
                spaces_chars - l
            )
        })
    });
    s4.push(json!({ "text": "one 256 KiB space run", "budget": spaces_budget, "ms": round(ms(spaces_query), 3) }));
    println!(
        "S-4 prefix search inside one 256 KiB space run, budget {spaces_budget}: \
         {:.1} ms per query (L = {found:?})",
        ms(spaces_query)
    );

    // S-4: largest prefix that fits with a marker, per query, vs binary search with full re-tokenization.
    let total_chars = mixed.chars().count();
    let marker = |l: usize| {
        format!(
            "[…truncated: {} chars removed under token-efficiency/v1 S-4]",
            total_chars - l
        )
    };
    for budget_share in [4, 2] {
        let budget = ids.len() / budget_share;
        let (found, ours_query) =
            time(|| largest_fitting_prefix(&mixed, 0, total_chars - 1, budget, marker));
        let cuts: Vec<usize> = mixed.char_indices().map(|(i, _)| i).collect();
        let (bisected, bisect_time) = time(|| {
            let (mut lo, mut hi) = (0usize, total_chars); // bisection: not exact, counts are not monotone
            let mut probes = 0;
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                probes += 1;
                if count(&format!("{}{}", &mixed[..cuts[mid]], marker(mid))) <= budget {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (lo, probes)
        });
        s4.push(json!({
            "text": "1 MiB mixed corpus", "budget": budget, "ms": round(ms(ours_query), 3),
            "bisection_ms": round(ms(bisect_time), 3), "bisection_probes": bisected.1,
        }));
        println!(
            "S-4 prefix search, budget {budget} tokens: ours {:.1} ms per query (L = {found:?}); \
             binary search with full re-tokenization {:.1} ms ({} probes, L = {})",
            ms(ours_query),
            ms(bisect_time),
            bisected.1,
            bisected.0
        );
    }
    data["worst_case_256_kib_word"] = Value::from(worst);
    data["s4_prefix_search"] = Value::from(s4);
    write_section("tokenizer-native", &data);
}

/// `x` to `digits` decimals (the data keeps what the printed line shows, and a bit more).
fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// Writes `data` to `$BENCH_OUT/<name>.json` when BENCH_OUT is set (scripts/bench.sh).
fn write_section(name: &str, data: &Value) {
    if let Ok(dir) = std::env::var("BENCH_OUT") {
        std::fs::create_dir_all(&dir).expect("BENCH_OUT");
        let text = serde_json::to_string_pretty(data).unwrap() + "\n";
        std::fs::write(format!("{dir}/{name}.json"), text).expect("BENCH_OUT section");
    }
}
