#!/usr/bin/env bash
# Issue 31 target 2 (run by `make bench`): builds the hello-world floor worker (bench/hello-world, its
# own Cargo project and lockfile, same worker-build, wasm-bindgen, wasm-opt and release profile as
# ours: opt-level "z", fat LTO, one codegen unit; the crates ours builds at 3 are not in the floor;
# name section dropped the same way) unless its bundle is newer than its sources, then times
# the first request to a fresh workerd isolate for ours and the floor (bench/first-request.mjs).
# Ours must be built first (scripts/build.sh).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT/bench/hello-world"
wasm=build/index_bg.wasm
if [ ! -f "$wasm" ] || [ -n "$(find src Cargo.toml Cargo.lock -newer "$wasm" 2>/dev/null)" ]; then
  worker-build --release >"$ROOT/target/hello-world-build.log" 2>&1 \
    || { tail -20 "$ROOT/target/hello-world-build.log"; exit 1; }
  node "$ROOT/scripts/strip-wasm-names.mjs" "$wasm"
fi
cd "$ROOT"
node bench/first-request.mjs
