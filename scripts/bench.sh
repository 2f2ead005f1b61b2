#!/usr/bin/env bash
# `make bench`: every benchmark, each printing figures measured in ONE run on this machine (report
# ratios, not absolute times: the machines are small and noisy).
#  1. tokenizer natively: ours vs stock tiktoken-rs vs gpt-tokenizer in Node on one 1 MiB mixed corpus,
#     cold start, worst case (one 256 KiB word), S-4 prefix search vs bisection with full re-tokenization;
#  2. the production bundle: its size by section, the first request to a fresh workerd isolate, ours
#     vs a hello-world workers-rs floor (bench/hello-world), the composition audit in workerd, and a
#     free MCP tool call against the same HTTP precheck (bench/mcp-workerd.mjs, issue 44's 1.1x);
#  3. the bench build (cargo feature bench-routes, the /bench/* routes of src/edge/bench.rs): the routes
#     checked against the oracles (tests/e2e/core/bench_route.test.mjs), then the same corpus through the
#     worker in real workerd vs gpt-tokenizer in Node;
#  4. engine targets natively (release): token-efficiency budget/precheck at the cap vs one tokenization,
#     context-composition audit at the caps, TOON vs serde_json;
#  5. the same token-efficiency bodies (written by 4) through the bench build in real workerd;
#  6. the run as data: each step above wrote its figures to target/bench/ (BENCH_OUT, see
#     bench/section.mjs); scripts/bench-data.mjs merges them, with the date and the machine, into
#     docs/bench/latest.json, and scripts/bench-charts.mjs draws docs/bench/*.svg from it and writes
#     docs/benchmarks.md's headline table. Commit the three together: tests/scripts/bench_charts.test.mjs
#     holds the charts and the table to the committed data.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
export BENCH_OUT="$ROOT/target/bench"
rm -rf "$BENCH_OUT" && mkdir -p "$BENCH_OUT"
date -u +%Y-%m-%dT%H:%M:%SZ >"$BENCH_OUT/started.txt"
# What was measured: the commit, and whether tracked files other than the docs (docs/, *.md) differed from it.
git rev-parse --short HEAD >"$BENCH_OUT/commit.txt"
git status --porcelain --untracked-files=no -- . ':!docs' ':!*.md' >"$BENCH_OUT/changes.txt"
cut -d' ' -f1-3 /proc/loadavg >"$BENCH_OUT/loadavg-start.txt"
echo "== tokenizer (native, Node)"
bash scripts/bench-tokenizer.sh
echo "== production bundle: size, first request"
bash scripts/build.sh >target/worker-build.log 2>&1 || { tail -50 target/worker-build.log; exit 1; }
bash scripts/bundle-size.sh --sections
bash scripts/first-request.sh
node bench/composition-workerd.mjs
node bench/mcp-workerd.mjs
echo "== bench build (bench-routes): routes checked, then workerd"
CARGO_FEATURES=bench-routes bash scripts/build.sh >target/worker-build-bench.log 2>&1 \
  || { tail -50 target/worker-build-bench.log; exit 1; }
# Printed, not held to the production limit: the bench routes are never deployed (64 KiB of slack).
BUNDLE_GZIP_LIMIT=$((1572864 + 65536)) bash scripts/bundle-size.sh
node --test tests/e2e/core/bench_route.test.mjs
node bench/workerd.mjs target/tokenizer-bench/mixed.txt
echo "== engines (release, ignored timing tests)"
mkdir -p target/te-bench
TE_BENCH_DUMP=target/te-bench cargo bench --quiet --bench token_efficiency 2>/dev/null
# (a failing timing test fails the bench; only grep's "no line left" is forgiven)
cargo test --release --quiet --test composition -- --ignored corpus:: --nocapture 2>/dev/null | { grep -v '^$' || true; } \
  | tee "$BENCH_OUT/composition-native.txt"
cargo test --release --quiet --test token_opt -- --ignored toon_speed:: --nocapture 2>/dev/null | { grep -v '^$' || true; } \
  | tee "$BENCH_OUT/toon-native.txt"
echo "== token-efficiency in workerd (the bodies of the native benchmark above)"
node bench/token-efficiency-workerd.mjs target/te-bench
echo "== the run as data: docs/bench/latest.json, docs/bench/*.svg, docs/benchmarks.md's headline table"
cut -d' ' -f1-3 /proc/loadavg >"$BENCH_OUT/loadavg-end.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >"$BENCH_OUT/finished.txt"
mkdir -p docs/bench
node scripts/bench-data.mjs "$BENCH_OUT" docs/bench/latest.json
node scripts/bench-charts.mjs
