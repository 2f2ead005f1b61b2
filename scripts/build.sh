#!/usr/bin/env bash
# Builds the release worker bundle (build/index.js + build/index_bg.wasm) with the offline toolchain,
# then drops the wasm's `name` section (see scripts/strip-wasm-names.mjs). scripts/bundle-size.sh
# checks the result against the size limit.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
worker-build --release
node scripts/strip-wasm-names.mjs build/index_bg.wasm
