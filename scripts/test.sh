#!/usr/bin/env bash
# `make test`: install what is missing, then run every test — the native Rust suite (unit, corpus,
# oracle), clippy and rustfmt, the wasm release build, and the end-to-end suite against real workerd
# (wrangler dev) with local D1 and Durable Objects. Ends with the runners' summary lines.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy (-D warnings)"
cargo clippy --all-targets --quiet -- -D warnings
echo "== cargo test (native)"
cargo test --quiet 2>&1 | tee target/cargo-test.log
echo "== wasm release build"
bash scripts/build.sh >target/worker-build.log 2>&1 || { tail -50 target/worker-build.log; exit 1; }
echo "== bundle size (gzip -9 of the wasm against its limit)"
bash scripts/bundle-size.sh
ls -l build/worker/*.wasm 2>/dev/null || true
echo "== end-to-end (wrangler dev, local D1 + Durable Objects)"
mapfile -t e2e < <(ls tests/e2e/*.test.mjs tests/x402/*.test.mjs tests/mpp/*.test.mjs)
node --test --test-concurrency=1 "${e2e[@]}"
