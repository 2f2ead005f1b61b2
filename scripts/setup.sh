#!/usr/bin/env bash
# Installs whatever is missing, idempotently: the wasm target, worker-build, wasm-bindgen-cli (at the
# lockfile's version), the npm tooling (wrangler, wasm-opt, oracles) and the local Solana VM's packages.
# A second run does nothing but check versions.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if [ "$(worker-build --version 2>/dev/null | awk '{print $NF}')" != "$WORKER_BUILD_VERSION" ]; then
  cargo install worker-build --version "$WORKER_BUILD_VERSION" --locked
fi
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  # Not --locked: one of its locked dependencies is no longer on the registry.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

npm_install() { # dir
  local dir="$1"
  [ -f "$dir/package.json" ] || return 0
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.installed" ]; then
    # npm ci, falling back to npm install where npm ci rejects a lockfile whose optional platform
    # packages (litesvm's other-OS binaries) have no registry entry.
    (cd "$dir" && { npm ci --no-audit --no-fund --loglevel=error 2>/dev/null \
      || npm install --no-audit --no-fund --loglevel=error; } && touch node_modules/.installed)
  fi
}
npm_install "$ROOT"
npm_install "$ROOT/tests/e2e/x402/svm"

# Debian's chromium: the review report's browser test (tests/e2e/core/review_report.test.mjs) loads the report in it.
command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# The official x402 Python SDK's MCP client (tests/e2e/mcp/x402_python.test.mjs): a venv with the pinned
# packages of tests/e2e/mcp/requirements.txt. Debian's python3 keeps venv/ensurepip in python3-venv.
python_venv() { # dir requirements
  local dir="$1" requirements="$2"
  if [ ! -x "$dir/bin/python" ] || [ "$requirements" -nt "$dir/.installed" ]; then
    if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv
    fi
    [ -x "$dir/bin/python" ] || { rm -rf "$dir" && python3 -m venv "$dir"; }
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" && touch "$dir/.installed"
  fi
}
python_venv "$ROOT/tests/e2e/mcp/.venv" "$ROOT/tests/e2e/mcp/requirements.txt"

# A dev signing key for local runs (production reads the SIGNING_KEY secret).
if ! grep -qs '^SIGNING_KEY=' "$ROOT/.dev.vars"; then
  echo "SIGNING_KEY=$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))')" >> "$ROOT/.dev.vars"
fi
