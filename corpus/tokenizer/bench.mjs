// Node side of the tokenizer benchmark (scripts/bench-tokenizer.sh drives it).
//   node corpus/tokenizer/bench.mjs make <out.txt>   the 1 MiB mixed corpus: the oracle corpus's
//       whole strings (prose, JSON, code, whitespace, digits, emoji, CJK, Arabic, marks, BOM/NEL,
//       long words, random Unicode) concatenated in file order and cut at 1 MiB of UTF-8.
//   node corpus/tokenizer/bench.mjs run <corpus.txt>  gpt-tokenizer 4.0.0 cold start and throughput.
import { readFileSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { round, writeSection } from '../../bench/section.mjs'

const [mode, file] = process.argv.slice(2)
const MIB = 1024 * 1024

if (mode === 'make') {
  const oracle = new URL('./oracle.jsonl', import.meta.url)
  const texts = readFileSync(oracle, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((e) => e.k !== 'prefixes').map((e) => e.t)
  let out = ''
  for (let i = 0; Buffer.byteLength(out) < MIB; i++) out += texts[i % texts.length] + '\n'
  let size = 0
  const kept = []
  for (const cp of out) {
    size += Buffer.byteLength(cp)
    if (size > MIB) break
    kept.push(cp)
  }
  writeFileSync(file, kept.join(''))
} else if (mode === 'run') {
  const text = readFileSync(file, 'utf8')
  const bytes = Buffer.byteLength(text)
  const t0 = performance.now()
  const { encode } = await import('gpt-tokenizer/encoding/cl100k_base')
  const options = { disallowedSpecial: new Set() }
  const firstIds = encode('hello world', options)
  const cold = performance.now() - t0
  // The merge cache makes repeated runs over the same text faster than first sight; report both.
  let t = performance.now()
  const tokens = encode(text, options).length
  const first = performance.now() - t
  let best = Infinity
  for (let i = 0; i < 3; i++) {
    t = performance.now()
    encode(text, options)
    best = Math.min(best, performance.now() - t)
  }
  const mbps = (ms) => (bytes / MIB / (ms / 1000)).toFixed(2)
  console.log(`gpt-tokenizer (node ${process.versions.node}): cold start (import + first encode) ${cold.toFixed(1)} ms [${firstIds.length} ids]`)
  console.log(`gpt-tokenizer: ${bytes} bytes -> ${tokens} tokens; first pass ${first.toFixed(1)} ms = ${mbps(first)} MiB/s; warm (merge cache) best of 3 ${best.toFixed(1)} ms = ${mbps(best)} MiB/s`)
  writeSection('tokenizer-node', {
    node: process.version, corpus_bytes: bytes, tokens,
    cold_start_ms: round(cold, 1), first_pass_ms: round(first, 2), warm_best_of_3_ms: round(best, 2),
  })
} else {
  throw new Error('usage: bench.mjs make|run <file>')
}
