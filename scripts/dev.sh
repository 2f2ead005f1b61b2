#!/usr/bin/env bash
# `make dev`: install what is missing, build, apply D1 migrations locally, and serve the worker at
# http://127.0.0.1:8787 with local D1 and Durable Objects, on the embedded [vars] defaults — with the
# local payment stacks those defaults name (scripts/dev-stacks.mjs: Solana VM + facilitator, anvil as
# Base Sepolia, anvil as Tempo) and a funded payer in .dev-payer.json, so that
# `node examples/<rail>/pay-and-verify.mjs` with no variables pays and verifies on every rail.
# The stacks start while the worker builds and stop when the worker stops (Ctrl-C, or a signal).
#   PORT        the worker's port (default 8787)
#   DEV_STACKS  0: serve the worker alone, without the payment stacks
#   DEV_BUILD   0: serve the bundle already in build/ (worker-build redoes wasm-bindgen and wasm-opt
#               even when cargo has nothing to do: about 40 s on a 2-core machine)
#   PERSIST_TO  a --persist-to directory for the local D1 and Durable Object state (default: wrangler's)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
port="${PORT:-8787}"
persist=()
[ -n "${PERSIST_TO:-}" ] && persist=(--persist-to "$PERSIST_TO")

stacks=
stop_stacks() {
  [ -n "$stacks" ] || return 0
  # Its own process group (setsid): the Solana VM and Base's anvil are in it; it stops Tempo's anvil
  # itself on SIGTERM and removes .dev-payer.json. Whatever is left after 5 s is killed.
  # Tempo's anvil is outside the group: its pid is read from the payer file before the stacks
  # remove it, so it is stopped even when the stacks are killed before they stop it themselves.
  local tempo
  tempo=$(node -e 'try { process.stdout.write(String(require("./.dev-payer.json").pids.tempo ?? "")) } catch {}' 2>/dev/null || true)
  kill -TERM -- "-$stacks" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$stacks" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$stacks" 2>/dev/null || true
  if [ -n "$tempo" ]; then
    kill -TERM "$tempo" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$tempo" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$tempo" 2>/dev/null || true
  fi
  stacks=
}
if [ "${DEV_STACKS:-1}" != 0 ]; then
  trap stop_stacks EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
  rm -f .dev-payer.json
  CM_URL="http://127.0.0.1:$port" DEV_STACKS_PARENT=$$ setsid node scripts/dev-stacks.mjs &
  stacks=$!
fi

if [ "${DEV_BUILD:-1}" != 0 ]; then
  bash scripts/build.sh
else
  worker_wasm >/dev/null
fi
wrangler d1 migrations apply context-meter --local "${persist[@]}"

if [ -n "$stacks" ]; then
  for _ in $(seq 1200); do
    [ -f .dev-payer.json ] && break
    if ! kill -0 "$stacks" 2>/dev/null; then
      echo "make dev: the local payment stacks did not start (above); DEV_STACKS=0 serves the worker alone" >&2
      exit 1
    fi
    sleep 0.1
  done
  [ -f .dev-payer.json ] || { echo "make dev: the local payment stacks were not ready in 120 s" >&2; exit 1; }
fi
# Not exec: the traps above stop the stacks once the worker has stopped.
wrangler dev --ip 127.0.0.1 --port "$port" --show-interactive-dev-session=false "${persist[@]}"
