#!/usr/bin/env bash
# `make load`: a load run against the worker in real workerd (wrangler dev, local D1 + Durable
# Objects) on loopback, every row bounded in time (bench/load.mjs says what each row sends and how
# answers are checked). Installs what is missing, builds the release bundle, then runs the rows;
# exits non-zero on any 5xx, connection error or wrong answer. Whatever bench/load.mjs started
# (wrangler dev, the local Solana VM, the facilitator) is ended here too, even if it dies.
# Not part of `make test`: it takes about ten minutes and measures rather than tests.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
echo "== wasm release build"
mkdir -p target/load
bash scripts/build.sh >target/worker-build.log 2>&1 || { tail -50 target/worker-build.log; exit 1; }

export LOAD_PIDS="$ROOT/target/load/pids"
: >"$LOAD_PIDS"
end_children() {
  while read -r kind id; do
    case "$kind" in
      group) kill -KILL -- "-$id" 2>/dev/null || true ;;
      dir) case "$id" in */cm-e2e-*) rm -rf -- "$id" ;; esac ;;
    esac
  done <"$LOAD_PIDS"
}
trap end_children EXIT
# The worker's local D1 and Durable Object state (one SQLite file per Allowance object, i.e. per fresh
# wallet) lives in memory (/dev/shm, see tests/e2e/lib/worker.mjs): on this VM's disk, fsync stalls of
# several seconds dropped every request in flight (wrangler's "Your worker restarted mid-request" 503s;
# 125 of 838 answers at 20.9 req/s on disk vs 0 of 3,392 at 83.9 req/s on tmpfs, same row, same hour).
# LOAD_STATE_DIR=/tmp shows the disk-bound figures.
if [ -n "${LOAD_STATE_DIR:-}" ]; then export CM_STATE_DIR="$LOAD_STATE_DIR"; fi
echo "== load (local state in ${CM_STATE_DIR:-/dev/shm when writable})"
node bench/load.mjs
