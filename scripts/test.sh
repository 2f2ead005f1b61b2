#!/usr/bin/env bash
# `make test`: install what is missing, then run every test — the scripts' own checks, the native
# Rust suite (unit, corpus, oracle; one binary per family, tests/<family>/), clippy and rustfmt, the
# wasm release build, and the end-to-end suite (tests/e2e/{core,x402,mpp,mcp}) against real workerd
# (wrangler dev) with local D1 and Durable Objects. Ends with the runners' summary lines.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh

echo "== scripts (the wasm is found where scripts/build.sh writes it, or the script fails)"
node --test tests/scripts/
echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy (-D warnings; and the bench-routes build's lib)"
cargo clippy --all-targets --quiet -- -D warnings
cargo clippy --lib --features bench-routes --quiet -- -D warnings
echo "== cargo test (native)"
cargo test --quiet 2>&1 | tee target/cargo-test.log
echo "== wasm release build (production: no bench routes)"
bash scripts/build.sh >target/worker-build.log 2>&1 || { tail -50 target/worker-build.log; exit 1; }
echo "== bundle size (gzip -9 of the wasm against its limit)"
bash scripts/bundle-size.sh
echo "== end-to-end (wrangler dev, local D1 + Durable Objects)"
mapfile -t e2e < <(ls tests/e2e/*/*.test.mjs)
node --test --test-concurrency=1 "${e2e[@]}"
