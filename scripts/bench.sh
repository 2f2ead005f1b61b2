#!/usr/bin/env bash
# `make bench`: every benchmark, each printing figures measured in ONE run on this machine (report
# ratios, not absolute times: the machines are small and noisy).
#  1. tokenizer natively: ours vs stock tiktoken-rs vs gpt-tokenizer in Node on one 1 MiB mixed corpus,
#     cold start, worst case (one 256 KiB word), S-4 prefix search vs bisection with full re-tokenization;
#  2. the same corpus through the worker in real workerd (wrangler dev) vs gpt-tokenizer in Node;
#  3. engine targets natively (release): token-efficiency budget/precheck at the cap vs one tokenization,
#     context-composition audit at the caps, TOON vs serde_json.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
echo "== tokenizer (native, Node)"
bash scripts/bench-tokenizer.sh
echo "== workerd"
bash scripts/build.sh >target/worker-build.log 2>&1
ls -l build/index_bg.wasm | awk '{print "wasm bytes: " $5}'
echo "wasm gzip bytes: $(gzip -9 -c build/index_bg.wasm | wc -c)"
node bench/workerd.mjs target/tokenizer-bench/mixed.txt
node bench/composition-workerd.mjs
echo "== engines (release, ignored timing tests)"
cargo bench --quiet --bench token_efficiency 2>/dev/null
cargo test --release --quiet --test composition_corpus -- --ignored --nocapture 2>/dev/null | grep -v '^$' || true
cargo test --release --quiet --test toon_speed -- --ignored --nocapture 2>/dev/null | grep -v '^$' || true
