#!/usr/bin/env bash
# Tokenizer before/after: `scripts/bench-tokenizer-ab.sh [BASE_COMMIT] [ROUNDS]` links this
# worktree's tokenizer and BASE_COMMIT's (default 7bbec8c: the tokenizer before issue 31's caches)
# into bench/tokenizer-ab/main.rs, checks they agree on the 1 MiB mixed corpus, and times them in
# alternating rounds, each side in a fresh process of its own per round (see main.rs for why). Scratch files live in target/tokenizer-ab (nothing is installed).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
base="${1:-7bbec8c}"
rounds="${2:-21}"
work=target/tokenizer-ab
corpus=target/tokenizer-bench/mixed.txt
[ -f "$corpus" ] || { mkdir -p "$(dirname "$corpus")"; node corpus/tokenizer/bench.mjs make "$corpus"; }
rm -rf "$work/base" && mkdir -p "$work/base" "$work/src"
# A base from before the tokenizer became a self-contained crate kept its build script, data and
# test generator outside src/engine/tokenizer.
if git cat-file -e "$base:src/engine/tokenizer/build.rs" 2>/dev/null; then
  # From d78611f on, the tokenizer's dev-dependency (the seeded test generator) is a sibling crate.
  paths=(src/engine/tokenizer)
  git cat-file -e "$base:src/engine/test_rng/Cargo.toml" 2>/dev/null && paths+=(src/engine/test_rng)
  git archive "$base" "${paths[@]}" | tar -x -C "$work/base"
else
  git archive "$base" src/engine/tokenizer src/engine/test_rng.rs build.rs data/cl100k_base.tiktoken \
    data/js-unicode-classes.txt | tar -x -C "$work/base"
fi
# The base's packages (the tokenizer and its hash crate) renamed apart from this worktree's.
find "$work/base" -name Cargo.toml -exec sed -i 's/"context-meter-tokenizer/"context-meter-tokenizer-base/' {} +
cp bench/tokenizer-ab/main.rs "$work/src/main.rs"
libc_version="$(awk '/^name = "libc"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)"
cat >"$work/Cargo.toml" <<TOML
[package]
name = "tokenizer-ab"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
new = { path = "$ROOT/src/engine/tokenizer", package = "context-meter-tokenizer" }
old = { path = "base/src/engine/tokenizer", package = "context-meter-tokenizer-base" }
libc = "=$libc_version"

[profile.release]
opt-level = 3
lto = true
codegen-units = 1
TOML
echo "tokenizer before/after: base $(git rev-parse --short "$base"), worktree $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src/engine/tokenizer || echo ' + changes')"
(cd "$work" && cargo build --release --quiet)
"$work/target/release/tokenizer-ab" "$corpus" "$rounds"
