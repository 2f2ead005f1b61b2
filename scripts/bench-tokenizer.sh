#!/usr/bin/env bash
# Tokenizer benchmark, one run on one 1 MiB mixed corpus (see benches/tokenizer.rs for what it prints).
# 1. writes target/tokenizer-bench/mixed.txt from the oracle corpus (Node, deterministic);
# 2. runs the Rust benchmark (release profile): ours, stock tiktoken-rs, cold start, worst case, S-4;
# 3. times npm gpt-tokenizer 4.0.0 in Node on the same file;
# 4. times this tokenizer against the one before issue 31's caches, in one process
#    (scripts/bench-tokenizer-ab.sh).
# The workerd figure needs the deployed/dev worker and is measured separately.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=target/tokenizer-bench/mixed.txt
mkdir -p "$(dirname "$corpus")"
node corpus/tokenizer/bench.mjs make "$corpus"
cargo bench --bench tokenizer -- "$corpus"
node corpus/tokenizer/bench.mjs run "$corpus"
if [ -n "${BENCH_OUT:-}" ]; then # make bench keeps the printed lines in its data (bench/section.mjs)
  bash scripts/bench-tokenizer-ab.sh | tee "$BENCH_OUT/tokenizer-ab.txt"
else
  bash scripts/bench-tokenizer-ab.sh
fi
