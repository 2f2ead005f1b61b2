#!/usr/bin/env bash
# Size check of the release wasm (run after scripts/build.sh; `make test` runs it right after the
# build): prints gzip -9 of the module and the headroom to the limit, and fails above the limit.
# With --sections it also prints the issue-31 table: raw and gzip -9 of the data section (tokenizer
# tables and every other static), the code section, the custom `name` section, and the whole module.
#   BUNDLE_GZIP_LIMIT   bytes (default 1,572,864 = 1.5 MiB, issue 31's target, met since the compact
#                       vocabulary tables and the V8 term classes replaced `regex`; a rail that needs
#                       more must take the room from elsewhere)
#   WASM                the module (default: the one scripts/build.sh writes, build/index_bg.wasm)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
limit="${BUNDLE_GZIP_LIMIT:-1572864}"
target=1572864
wasm="${WASM:-$(worker_wasm)}" || { echo "bundle-size: FAIL, no wasm (run scripts/build.sh)"; exit 1; }
[ -f "$wasm" ] || { echo "bundle-size: FAIL, no wasm at $wasm"; exit 1; }
gz() { gzip -9 -c "$1" | wc -c; }
if [ "${1:-}" = "--sections" ]; then
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
  # Writes each section's payload to $dir/<name>.bin (code, data, name; other sections summed in rest).
  node -e '
    const fs = require("fs"); const [file, dir] = process.argv.slice(1);
    const b = fs.readFileSync(file); let at = 8; const parts = {};
    const leb = () => { let v = 0, s = 0, x; do { x = b[at++]; v += (x & 127) * 2 ** s; s += 7 } while (x & 128); return v };
    while (at < b.length) {
      const id = b[at++], size = leb(), end = at + size; let name = "rest";
      if (id === 10) name = "code"; else if (id === 11) name = "data";
      else if (id === 0) { const n = leb(); if (b.toString("latin1", at, at + n) === "name") name = "name" }
      (parts[name] ||= []).push(b.subarray(id === 0 ? end - size : at, end)); at = end;
    }
    for (const k of ["data", "code", "name", "rest"]) fs.writeFileSync(`${dir}/${k}.bin`, Buffer.concat(parts[k] || []));
  ' "$wasm" "$dir"
  printf '| section | raw | gzip -9 |\n|---|---|---|\n'
  sections=""
  for s in data code name rest; do
    printf '| %s | %s B | %s B |\n' "$s" "$(wc -c <"$dir/$s.bin")" "$(gz "$dir/$s.bin")"
    sections+="\"$s\": {\"raw\": $(wc -c <"$dir/$s.bin"), \"gzip\": $(gz "$dir/$s.bin")}, "
  done
  printf '| whole module | %s B | %s B |\n' "$(wc -c <"$wasm")" "$(gz "$wasm")"
fi
size="$(gz "$wasm")"
headroom=$((limit - size))
if [ "$size" -le "$target" ]; then goal="met, $((target - size)) B under"; else goal="$((size - target)) B to go"; fi
echo "bundle: $wasm $(wc -c <"$wasm") B, gzip -9 $size B; limit $limit B, headroom $headroom B;" \
  "1.5 MiB target ($target B): $goal"
# As data for `make bench` (scripts/bench.sh sets BENCH_OUT; bench/section.mjs says why).
if [ -n "${BENCH_OUT:-}" ] && [ "${1:-}" = "--sections" ]; then
  mkdir -p "$BENCH_OUT"
  printf '{"wasm_bytes": %s, "gzip_bytes": %s, "target_bytes": %s, "sections": {%s}}\n' \
    "$(wc -c <"$wasm")" "$size" "$target" "${sections%, }" >"$BENCH_OUT/bundle.json"
fi
if [ "$size" -gt "$limit" ]; then
  echo "bundle-size: FAIL, gzip -9 of the wasm is $((-headroom)) B over the limit"
  exit 1
fi
