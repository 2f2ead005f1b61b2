#!/usr/bin/env bash
# Builds the release worker bundle (build/index.js + build/index_bg.wasm) with the offline toolchain,
# then drops the wasm's `name` section (see scripts/strip-wasm-names.mjs). scripts/bundle-size.sh
# checks the result against the size limit.
#   CARGO_FEATURES   cargo features to build with (default none: the production bundle);
#                    scripts/bench.sh sets `bench-routes` for the benchmark-only routes.
# build/features.txt records the features the bundle was built with (tests/e2e/core/bench_route.test.mjs
# reads it to know whether the benchmark routes must be there).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
features="${CARGO_FEATURES:-}"
if [ -n "$features" ]; then
  worker-build --release --features "$features"
else
  worker-build --release
fi
node scripts/strip-wasm-names.mjs "$(worker_wasm)"
echo "$features" >build/features.txt
