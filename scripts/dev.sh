#!/usr/bin/env bash
# `make dev`: install what is missing, build, apply D1 migrations locally, and serve the worker at
# http://127.0.0.1:8787 with local D1 and Durable Objects, on the embedded [vars] defaults.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
bash scripts/build.sh
wrangler d1 migrations apply context-meter --local
exec wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --show-interactive-dev-session=false
