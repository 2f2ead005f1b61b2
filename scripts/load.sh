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
echo "== load"
node bench/load.mjs
