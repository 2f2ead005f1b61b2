# Sourced by the other scripts: the environment that keeps worker-build and wrangler offline
# (GitHub downloads are unreachable here; every tool comes from crates.io or npm).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$ROOT/node_modules/.bin:$PATH"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-wasm-bindgen}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$ROOT/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$ROOT/node_modules/.bin/esbuild}"
export WRANGLER_SEND_METRICS=false
export CLOUDFLARE_CF_FETCH_ENABLED=false
export NO_UPDATE_NOTIFIER=1
WORKER_BUILD_VERSION=0.8.7
# wasm-bindgen-cli must equal the wasm-bindgen the lockfile resolved.
WASM_BINDGEN_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' "$ROOT/Cargo.lock")"
# The release wasm: worker-build writes build/index_bg.wasm (and the shim wrangler runs,
# build/worker/shim.mjs). Every script that needs the wasm finds it through worker_wasm.
WORKER_WASM_PATH=build/index_bg.wasm
worker_wasm() { # [ROOT]: prints the built wasm's path; fails, saying so, when there is none
  local wasm="${1:-$ROOT}/$WORKER_WASM_PATH"
  if [ ! -f "$wasm" ]; then
    echo "no wasm at $wasm: run scripts/build.sh" >&2
    return 1
  fi
  echo "$wasm"
}
