// Generates corpus/token-opt/toon-crosscheck.json: pseudo-random JSON documents (seeded, so the file is
// reproducible) encoded by the REFERENCE implementation, npm @toon-format/toon, plus the cl100k token
// counts of the TOON text and of JSON.stringify by npm gpt-tokenizer. The Rust engine is never consulted.
// Usage: node corpus/token-opt/gen-toon-crosscheck.mjs > corpus/token-opt/toon-crosscheck.json
import { encode as toonEncode } from '@toon-format/toon'
import { encode as tokenize } from 'gpt-tokenizer/encoding/cl100k_base'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

const toonVersion = JSON.parse(readFileSync(new URL('../../node_modules/@toon-format/toon/package.json', import.meta.url), 'utf8')).version
const tokVersion = JSON.parse(readFileSync(new URL('../../node_modules/gpt-tokenizer/package.json', import.meta.url), 'utf8')).version
const count = (text) => tokenize(text, { disallowedSpecial: new Set() }).length

// mulberry32: a tiny deterministic PRNG.
let seed = 0x70c0ffee
function rand() {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const int = (n) => Math.floor(rand() * n)
const pick = (xs) => xs[int(xs.length)]

const STRINGS = ['', ' ', 'a', 'hello world', ' lead', 'trail ', '\tx', 'true', 'false', 'null', 'True', '42', '-3.14',
  '05', '+1', '1e-6', '1E+9', '.5', '1.', '0x10', '1_000', 'a:b', 'say "hi"', 'back\\slash', '[x]', '{y}', 'a,b', 'a|b',
  'a\tb', 'line\nbreak', 'cr\rx', '\u0001ctl', '\u001f', '-', '-x', '#', '#tag', 'x#y', 'x-y', 'café', 'naïve', '日本語',
  '😀 emoji', 'Ω≈ç√', '\u00a0nbsp', 'a b c', 'path/to/file.txt', 'https://e.x/a?b=c', 'snake_case', 'dot.key', '\ufeffbom',
  'x\u2028y', 'ok', 'yes', 'no', 'NaN', 'Infinity', '-0', '0', '007', '1.5000', 'e5', '12abc', '=', '@', '!', '$5']
const KEYS = ['id', 'name', 'a', 'b', 'c', 'value', 'my-key', 'a.b', 'x y', '1x', '_u', 'n2', '', '0', '1', '10', '2', '01',
  '-1', 'key:colon', 'q"uote', 'k[0]', 'k{1}', 'ünï', '日本', 'A', 'z_9.x', '#h', 'tab\tkey', 'new\nline']
const NUMBERS = [0, -0, 1, -1, 42, 3.14, -2.5, 1e6, 1e-6, 1e-7, 1.5e-10, 1e21, 1e20, 123456789012345, 9007199254740991,
  9007199254740993, 0.1, 0.30000000000000004, 1.7976931348623157e308, 5e-324, 100, 1e300, -1e-300, 2 ** 31, 0.5, 1.25e-5,
  999999999999999900000, 1424953923781206.2]

function primitive() {
  switch (int(5)) {
    case 0: return pick(STRINGS)
    case 1: return pick(NUMBERS)
    case 2: return rand() < 0.5
    case 3: return null
    default: return int(1000) - 500
  }
}
function keys(n) {
  const ks = []
  while (ks.length < n) { const k = pick(KEYS); if (!ks.includes(k)) ks.push(k) }
  return ks
}
// A uniform row shape (possibly with nested-uniform groups), to exercise tabular and keyed forms.
function shape(depth) {
  const ks = keys(1 + int(4))
  return ks.map((k) => [k, depth < 2 && rand() < 0.25 ? shape(depth + 1) : null])
}
function fill(sh, mutate) {
  const o = {}
  const order = rand() < 0.3 ? [...sh].reverse() : sh
  for (const [k, sub] of order) o[k] = sub ? fill(sub, mutate) : primitive()
  if (mutate && rand() < 0.3) {
    const k = pick(Object.keys(o) .length ? Object.keys(o) : ['id'])
    o[k] = pick([[], {}, [1, 2], { z: 1 }, null])
  }
  return o
}
function value(depth) {
  if (depth > 4) return primitive()
  switch (int(10)) {
    case 0: case 1: return primitive()
    case 2: return Array.from({ length: int(6) }, () => primitive())
    case 3: { const sh = shape(0); const mutate = rand() < 0.3; return Array.from({ length: 1 + int(5) }, () => fill(sh, mutate)) }
    case 4: { const sh = shape(0); const o = {}; for (const k of keys(1 + int(4))) o[k] = fill(sh, rand() < 0.2); return o }
    case 5: return Array.from({ length: int(5) }, () => value(depth + 1))
    case 6: return Array.from({ length: 1 + int(3) }, () => Array.from({ length: int(4) }, () => primitive()))
    default: {
      const o = {}
      for (const k of keys(int(6))) o[k] = value(depth + 1)
      return o
    }
  }
}

const cases = []
const OPTIONS = [{}, {}, {}, { delimiter: '\t' }, { delimiter: '|' }, { indentSize: 4 }, { indentSize: 1, delimiter: '|' }]
for (let i = 0; i < 1500; i++) {
  const v = value(0)
  const json = JSON.stringify(v)
  const options = pick(OPTIONS)
  const toon = toonEncode(JSON.parse(json), options)
  cases.push({ json, options, toon, toon_tokens: count(toon), json_tokens: count(json) })
}

// RFC 8785 canonical form (keys by UTF-16 code units; JSON.stringify strings and numbers).
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`
  const ks = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${ks.map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`
}
const corpus = {
  id: 'token-opt-toon-crosscheck/v1',
  generator: 'corpus/token-opt/gen-toon-crosscheck.mjs',
  reference: `@toon-format/toon@${toonVersion}`,
  tokenizer: `gpt-tokenizer@${tokVersion} cl100k_base (no special tokens)`,
  cases,
}
corpus.sha256 = createHash('sha256').update(jcs(corpus)).digest('hex')
process.stdout.write(JSON.stringify(corpus, null, 1) + '\n')
