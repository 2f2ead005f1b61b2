#!/usr/bin/env bash
# `make review`: the fleet review's checkpoint report per family, printed, and the HTML report written
# (review/out/report.html, or HTML=FILE). Local D1 by default (its migrations applied first, PERSIST_TO=DIR for
# a --persist-to directory); REMOTE=1 reads the deployed database through wrangler, which holds the credentials.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
[ -x node_modules/.bin/wrangler ] || bash scripts/setup.sh
args=()
if [ -n "${REMOTE:-}" ]; then
  args+=(--remote)
else
  [ -n "${PERSIST_TO:-}" ] && args+=(--persist-to "$PERSIST_TO")
  wrangler d1 migrations apply context-meter --local "${args[@]}" >/dev/null
fi
[ -n "${HTML:-}" ] && args+=(--html "$HTML")
exec node review/review.mjs report "${args[@]}"
