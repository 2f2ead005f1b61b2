#!/usr/bin/env bash
# `make bench`: every benchmark, each printing figures measured in ONE run on this machine (report
# ratios, not absolute times: the machines are small and noisy).
#  1. tokenizer natively: ours vs stock tiktoken-rs vs gpt-tokenizer in Node on one 1 MiB mixed corpus,
#     cold start, worst case (one 256 KiB word), S-4 prefix search vs bisection with full re-tokenization;
#  2. the same corpus through the worker in real workerd (wrangler dev) vs gpt-tokenizer in Node, and the
#     first request to a fresh workerd isolate, ours vs a hello-world workers-rs floor (bench/hello-world);
#  3. engine targets natively (release): token-efficiency budget/precheck at the cap vs one tokenization,
#     context-composition audit at the caps, TOON vs serde_json;
#  4. the same token-efficiency bodies (written by 3) through the worker in real workerd.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
echo "== tokenizer (native, Node)"
bash scripts/bench-tokenizer.sh
echo "== workerd"
bash scripts/build.sh >target/worker-build.log 2>&1
bash scripts/bundle-size.sh --sections || true
node bench/workerd.mjs target/tokenizer-bench/mixed.txt
bash scripts/first-request.sh
node bench/composition-workerd.mjs
echo "== engines (release, ignored timing tests)"
mkdir -p target/te-bench
TE_BENCH_DUMP=target/te-bench cargo bench --quiet --bench token_efficiency 2>/dev/null
cargo test --release --quiet --test composition_corpus -- --ignored --nocapture 2>/dev/null | grep -v '^$' || true
cargo test --release --quiet --test toon_speed -- --ignored --nocapture 2>/dev/null | grep -v '^$' || true
echo "== token-efficiency in workerd (the bodies of the native benchmark above)"
node bench/token-efficiency-workerd.mjs target/te-bench
