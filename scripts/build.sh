#!/usr/bin/env bash
# Builds the release worker bundle (build/worker/shim.mjs + wasm) with the offline toolchain.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
worker-build --release
