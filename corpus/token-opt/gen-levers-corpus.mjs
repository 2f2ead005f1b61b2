// Generates corpus/token-opt/levers-corpus.json: levers requests with the behaviour the TypeScript
// REFERENCE module (../shared/spec/token-opt.reference.ts.diff) exhibits on them, and exact cl100k
// counts of the texts it produces by npm gpt-tokenizer. The reference is extracted from the diff and
// transpiled with esbuild at generation time (it is not copied into this repository). The Rust engine
// is never consulted.
// Usage: node corpus/token-opt/gen-levers-corpus.mjs > corpus/token-opt/levers-corpus.json
import { encode as tokenize } from 'gpt-tokenizer/encoding/cl100k_base'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const here = new URL('.', import.meta.url).pathname
const shared = [join(here, '../../../shared'), join(here, '../../../../shared')].find((d) => {
  try { readFileSync(join(d, 'spec/token-opt.reference.ts.diff')); return true } catch { return false }
})
const diff = readFileSync(join(shared, 'spec/token-opt.reference.ts.diff'), 'utf8').split('\n')
const start = diff.findIndex((l) => l.startsWith('@@'))
const ts = diff.slice(start + 1).filter((l) => l.startsWith('+')).map((l) => l.slice(1)).join('\n') + '\n'
const dir = mkdtempSync(join(tmpdir(), 'token-opt-ref-'))
writeFileSync(join(dir, 'token-opt.ts'), ts)
execFileSync(join(here, '../../node_modules/.bin/esbuild'), [join(dir, 'token-opt.ts'), '--format=esm', `--outfile=${join(dir, 'token-opt.mjs')}`, '--log-level=warning'])
const ref = await import(join(dir, 'token-opt.mjs'))
const diffSha = createHash('sha256').update(readFileSync(join(shared, 'spec/token-opt.reference.ts.diff'))).digest('hex')

const count = (text) => tokenize(text, { disallowedSpecial: new Set() }).length
const est = (n) => `est:~${n}`

let seed = 0x0b7e11e5
function rand() {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const int = (n) => Math.floor(rand() * n)
const pick = (xs) => xs[int(xs.length)]

// One lever measurement: exact tokens from the texts, estimates from the reference's measureLeverFull.
function measurement(lever, part, before, after, items) {
  const o = { retrieval: 0, discovery: 0, detail: 0, marker: 0, ...items.tokens }
  const oc = { retrievalChars: 0, discoveryChars: 0, detailChars: 0, markerChars: 0, ...items.chars }
  const overhead = o.retrieval + o.discovery + o.detail + o.marker
  const gross = before.tokens - after.tokens
  const net = gross - overhead
  const r = ref.measureLeverFull(lever, before.chars, after.chars, oc)
  return {
    lever, part,
    tokens: { before: before.tokens, after: after.tokens, overhead, overhead_items: o, gross, net },
    estimate: { before: est(r.before), after: est(r.after), overhead: est(r.overhead), gross: est(r.gross), net: est(r.net) },
    enabled: net > 0,
    enabled_by_estimate: r.enabled,
  }
}
const sized = (text) => ({ chars: text.length, tokens: count(text) })

function expectC9(c9) {
  const chunks = c9.candidates.map((c) => ({ ...c }))
  const perCategory = c9.per_category
    ? Object.fromEntries(Object.entries(c9.per_category).map(([k, v]) => [k, { topK: v.top_k ?? undefined, cutoff: v.cutoff ?? undefined }]))
    : undefined
  const r = ref.c9Filter(chunks, { perCategory }, c9.query ?? undefined)
  const context = ref.buildC9Context(r.selected)
  const before = sized(ref.buildC9Context(chunks))
  const injected = sized(context)
  return {
    output: {
      signal: r.signal, notice: r.notice, recall: r.recall,
      selected: r.selected.map((c) => chunks.indexOf(c)),
      dropped: r.dropped.map((c) => chunks.indexOf(c)),
      context, injected_chars: r.injectedChars, injected_estimate: est(r.injectedTokens),
    },
    measurement: measurement('c9', 'c9', before, { chars: 0, tokens: 0 }, {
      tokens: { retrieval: injected.tokens }, chars: { retrievalChars: injected.chars },
    }),
  }
}

function expectFilter(f) {
  let out
  try { out = ref.filterFields(f.response, f.allowed, f.required ?? []) } catch { return { refusal: 'filter_required_missing' } }
  return {
    output: { response: JSON.stringify(out) },
    measurement: measurement('filter-truncate', 'filter', sized(JSON.stringify(f.response)), sized(JSON.stringify(out)), { tokens: {}, chars: {} }),
  }
}

// The documented hard-cap repair (criteria interpretation note) for the one branch where the
// reference overruns its own cap: two blocks whose fitted tail leaves no room for the join newline.
function fit(text, budget) {
  if (text.length <= budget) return text
  if (budget <= 0) return ''
  if (budget === 1) return '…'
  return `${text.slice(0, budget - 1)}…`
}
function expectTruncate(t) {
  let r = ref.truncateTurn(t.blocks, t.max_chars)
  let overran = false
  if (r.blocks.join('\n').length > t.max_chars) {
    overran = true
    if (t.blocks.length !== 2) throw new Error('only the two-block branch is known to overrun')
    if (t.max_chars === 0) r = { blocks: [''], truncated: true, markerChars: 0 }
    else {
      const tail = fit(t.blocks[1], t.max_chars - 1)
      r = { blocks: [fit(t.blocks[0], Math.max(0, t.max_chars - tail.length - 1)), tail], truncated: true, markerChars: 0 }
    }
  }
  const marker = r.markerChars > 0 ? `…[+${t.blocks.length - 2} truncated]…` : ''
  return {
    reference_overran_cap: overran,
    output: { blocks: r.blocks, truncated: r.truncated, marker_chars: r.markerChars },
    measurement: measurement('filter-truncate', 'truncate', sized(t.blocks.join('\n')), sized(r.blocks.join('\n')), {
      tokens: { marker: marker ? count(marker) : 0 }, chars: { markerChars: r.markerChars },
    }),
  }
}

// Schema cases use the reference's own tool table: the caller submits exactly the full and slim
// descriptions the reference holds (describeTool), or nothing for a tool it does not know.
const KNOWN = ['memory_search', 'kv_search', 'code_query', 'pantheon://resources', 'kv_get', 'kv_store', 'context_save',
  'context_get', 'memory_recall', 'memory_list', 'code_neighbors', 'execute_code_script']
function schemaTools() {
  return Array.from({ length: int(6) }, () => {
    const name = rand() < 0.85 ? pick(KNOWN) : pick(['unknown_tool', 'my.tool', 'x'])
    const t = { name }
    if (ref.isKnownTool(name)) { t.full = ref.describeTool(name, true); t.slim = ref.describeTool(name, false) }
    const fetches = int(4) === 0 ? int(3) : 0
    if (fetches > 0 || rand() < 0.2) t.detail_fetches = fetches
    return t
  })
}
function expectSchema(s) {
  let beforeChars = 0, afterChars = 0, detailChars = 0, before = 0, after = 0, detail = 0
  for (const t of s.tools) {
    const full = ref.describeTool(t.name, true), slim = ref.describeTool(t.name, false)
    beforeChars += full.length; before += count(full)
    afterChars += slim.length; after += count(slim)
    const fetches = t.detail_fetches ?? 0
    detailChars += fetches * ref.fullDetailChars(t.name)
    detail += ref.fullDetailChars(t.name) > 0 ? fetches * count(full) : 0
  }
  return {
    output: { descriptions: s.tools.map((t) => ref.describeTool(t.name, false)) },
    measurement: measurement('schema', 'schema', { chars: beforeChars, tokens: before }, { chars: afterChars, tokens: after }, {
      tokens: { detail }, chars: { detailChars },
    }),
  }
}

// ── inputs ──
const WORDS = ['cache', 'Cache', 'CAFÉ', 'café', 'école', 'ecole', 'token', 'budget', 'retry', 'timeout', 'x', 'a1', '42',
  'naïve', 'über', 'Straße', 'ΣΊΣΥΦΟΣ', 'данные', '数据', 'résumé', 'ﬁle', '①②', 'the', 'of', 'index']
const text = (n) => Array.from({ length: n }, () => pick(WORDS)).join(pick([' ', ', ', '. ', ' - ']))
const SCORES = [0, 0.1, 0.2, 0.25, 0.29999, 0.3, 0.31, 0.5, 0.5, 0.75, 0.9, 1, -0.2, 1.5, 0.3333333333333333]
function c9Input() {
  const cats = ['docs', 'code', 'memory', 'kv']
  const candidates = Array.from({ length: int(9) }, (_, i) => ({
    id: `c${i}`, category: pick(cats.slice(0, 1 + int(3))), score: rand() < 0.5 ? pick(SCORES.slice(0, 6)) : pick(SCORES), text: text(1 + int(8)),
  }))
  const c9 = { candidates }
  const q = int(6)
  if (q === 1) c9.query = text(1 + int(3))
  if (q === 2) c9.query = pick(['', '   ', 'x', '!!!', 'zzz qqq', 'CAFE', 'Ecole token'])
  if (q === 3) c9.query = pick(WORDS) + ' ' + pick(WORDS)
  if (rand() < 0.4) {
    c9.per_category = {}
    for (const c of cats) if (rand() < 0.5) {
      const cfg = {}
      if (rand() < 0.6) cfg.top_k = int(4)
      if (rand() < 0.6) cfg.cutoff = pick([0, 0.1, 0.5, 0.95, 2])
      c9.per_category[c] = cfg
    }
  }
  return c9
}
const RESP_KEYS = ['id', 'title', 'url', 'score', 'embedding', 'result_info', 'snippet', '2', '10', 'meta']
function filterInput() {
  const response = {}
  for (const k of RESP_KEYS) if (rand() < 0.6) response[k] = k === 'embedding' ? Array.from({ length: 8 }, () => rand()) : pick([text(3), 1.5, null, true, { n: text(2) }, [1, 'a']])
  const allowed = RESP_KEYS.filter(() => rand() < 0.4)
  if (rand() < 0.3) allowed.reverse()
  const f = { response, allowed }
  if (rand() < 0.5) f.required = RESP_KEYS.filter(() => rand() < 0.2)
  return f
}
function truncateInput() {
  const blocks = Array.from({ length: int(6) }, () => text(int(12)))
  return { blocks, max_chars: pick([0, 1, 2, 3, 5, 10, 17, 18, 19, 20, 25, 40, 80, 200, 1000]) }
}

const cases = []
// A case's expectations are computed on JSON.parse of the body text, the value the worker receives
// (so a raw text can carry what a JavaScript literal cannot: -0, an own __proto__ member).
const addRaw = (name, text) => {
  const body = JSON.parse(text)
  const expect = {}
  for (const [k, f] of [['c9', expectC9], ['filter', expectFilter], ['truncate', expectTruncate], ['schema', expectSchema]]) {
    if (body[k]) {
      const e = f(body[k])
      if (e.refusal) { cases.push({ name, body: text, expect: { refusal: e.refusal } }); return }
      expect[k] = e
    }
  }
  const measurements = ['c9', 'filter', 'truncate', 'schema'].filter((k) => expect[k]).map((k) => expect[k].measurement)
  const flags = ref.applyGate(ref.DEFAULT_FLAGS, measurements.map((m) => ({ name: m.lever, net: m.tokens.net })))
  const gate = {}
  for (const m of measurements) gate[m.lever] = flags[m.lever]
  cases.push({ name, body: text, expect: { ...expect, gate } })
}
const add = (name, body) => addRaw(name, JSON.stringify(body))

// Hand-written cases, one per documented behaviour of the reference.
const ch = (id, category, score, text) => ({ id, category, score, text })
add('c9 empty input', { c9: { candidates: [] } })
add('c9 empty input with query', { c9: { candidates: [], query: 'cache' } })
add('c9 ok: top-3 default, cutoff 0.3 inclusive', { c9: { candidates: [ch('a', 'd', 0.3, 'x'), ch('b', 'd', 0.29999, 'y'), ch('c', 'd', 0.9, 'z'), ch('e', 'd', 0.5, 'w'), ch('f', 'd', 0.7, 'v')] } })
add('c9 ties keep submitted order', { c9: { candidates: [ch('a', 'd', 0.5, 'x'), ch('b', 'd', 0.5, 'y'), ch('c', 'd', 0.5, 'z'), ch('e', 'd', 0.5, 'w')] } })
add('c9 per-category top_k and cutoff', { c9: { candidates: [ch('a', 'd', 0.5, 'x'), ch('b', 'k', 0.2, 'y'), ch('c', 'k', 0.15, 'z')], per_category: { k: { top_k: 1, cutoff: 0.1 }, d: { top_k: 0 } } } })
add('c9 all dropped without query', { c9: { candidates: [ch('a', 'd', 0.1, 'cache miss'), ch('b', 'd', 0.2, 'token budget')] } })
add('c9 all dropped, blank query', { c9: { candidates: [ch('a', 'd', 0.1, 'cache miss')], query: '   ' } })
add('c9 fallback-relative on lexical overlap', { c9: { candidates: [ch('a', 'd', 0.1, 'cache miss'), ch('b', 'd', 0.2, 'token budget'), ch('c', 'e', 0.05, 'Café cache')], query: 'CAFE cache' } })
add('c9 nonsense query', { c9: { candidates: [ch('a', 'd', 0.1, 'cache miss')], query: 'zzz qqq' } })
add('c9 single-letter query terms are ignored → nonsense', { c9: { candidates: [ch('a', 'd', 0.1, 'a b c')], query: 'a b' } })
add('c9 fallback ranks lexical, then relative, then score, then position', { c9: { candidates: [ch('a', 'd', 0.2, 'token'), ch('b', 'd', 0.1, 'token budget'), ch('c', 'd', 0.25, 'budget'), ch('e', 'd', 0.25, 'token'), ch('f', 'd', 0.05, 'token budget retry')], query: 'token budget' } })
add('c9 ok selection ignores query overlap', { c9: { candidates: [ch('a', 'd', 0.9, 'cache')], query: 'zzz' } })
add('c9 negative and zero max score', { c9: { candidates: [ch('a', 'd', -0.5, 'cache'), ch('b', 'd', 0, 'cache token')], query: 'cache' } })
add('filter keeps allowed in allowed order', { filter: { response: { id: 1, title: 't', embedding: [0.1, 0.2], result_info: { n: 1 } }, allowed: ['title', 'id', 'absent'] } })
add('filter required present', { filter: { response: { id: 1, title: 't' }, allowed: ['id'], required: ['id', 'title'] } })
add('filter required missing', { filter: { response: { id: 1 }, allowed: ['id'], required: ['id', 'title', 'url'] } })
add('filter integer-like keys come first', { filter: { response: { b: 1, 10: 2, 2: 3 }, allowed: ['b', '10', '2'] } })
add('truncate fits', { truncate: { blocks: ['abc', 'def'], max_chars: 7 } })
add('truncate one block', { truncate: { blocks: ['abcdefghij'], max_chars: 5 } })
add('truncate one block cap 1', { truncate: { blocks: ['abcdefghij'], max_chars: 1 } })
add('truncate two blocks within cap', { truncate: { blocks: ['head block', 'tail'], max_chars: 9 } })
add('truncate two blocks: reference overruns its cap', { truncate: { blocks: ['abc', 'defgh'], max_chars: 5 } })
add('truncate two blocks cap 0', { truncate: { blocks: ['abc', 'defgh'], max_chars: 0 } })
add('truncate many blocks: head, marker, tail', { truncate: { blocks: ['summary of the turn', 'middle one', 'middle two', 'the tail block'], max_chars: 40 } })
add('truncate many blocks: marker alone', { truncate: { blocks: ['a', 'b', 'c', 'd'], max_chars: 10 } })
add('truncate many blocks: marker sliced', { truncate: { blocks: ['aaaaaaaaaaaa', 'b', 'c', 'dddddddddd'], max_chars: 3 } })
add('truncate empty turn', { truncate: { blocks: [], max_chars: 0 } })
add('schema slim by default, detail fetched twice', { schema: { tools: [{ name: 'memory_search', full: ref.describeTool('memory_search', true), slim: ref.describeTool('memory_search', false), detail_fetches: 2 }] } })
add('schema unknown tool falls back to its name', { schema: { tools: [{ name: 'unknown_tool', detail_fetches: 3 }] } })
add('all four levers', {
  c9: { candidates: [ch('a', 'd', 0.9, 'cache policy'), ch('b', 'd', 0.1, 'noise')], query: 'cache' },
  filter: { response: { id: 1, embedding: [1, 2, 3] }, allowed: ['id'] },
  truncate: { blocks: ['s', 'm', 't'], max_chars: 100 },
  schema: { tools: [{ name: 'kv_get', full: ref.describeTool('kv_get', true), slim: ref.describeTool('kv_get', false) }] },
})

// -0 and 0 are equal scores: `b.score - a.score` is 0 for them, so they tie and keep submitted order,
// in the selection and in the fallback ranking (JSON.stringify writes -0 as 0: raw texts).
addRaw('c9 -0 and 0 tie in the selection', '{"c9":{"candidates":[{"id":"a","category":"d","score":-0,"text":"x"},{"id":"b","category":"d","score":0,"text":"y"},{"id":"c","category":"d","score":-0,"text":"z"},{"id":"e","category":"d","score":0,"text":"w"}],"per_category":{"d":{"top_k":2,"cutoff":-1}}}}')
addRaw('c9 0 before -0 keeps submitted order too', '{"c9":{"candidates":[{"id":"a","category":"d","score":0,"text":"x"},{"id":"b","category":"d","score":-0,"text":"y"},{"id":"c","category":"d","score":0.5,"text":"z"}],"per_category":{"d":{"top_k":2,"cutoff":-0}}}}')
addRaw('c9 -0 and 0 tie in the fallback ranking', '{"c9":{"candidates":[{"id":"a","category":"d","score":-0,"text":"cache"},{"id":"b","category":"d","score":0,"text":"cache"},{"id":"c","category":"d","score":-0,"text":"cache miss"}],"query":"cache","per_category":{"d":{"top_k":1}}}}')
addRaw('c9 -0 ties 0 after equal relative scores', '{"c9":{"candidates":[{"id":"a","category":"d","score":-0,"text":"token"},{"id":"b","category":"d","score":0,"text":"token"},{"id":"c","category":"e","score":0.1,"text":"token"},{"id":"f","category":"e","score":-0,"text":"token"},{"id":"g","category":"e","score":0,"text":"token"}],"query":"token budget","per_category":{"d":{"top_k":1},"e":{"top_k":2}}}}')
// An own __proto__ member (JSON.parse creates one) is never kept: out[key] = raw[key] runs the
// __proto__ setter instead of creating a member.
addRaw('filter drops an own __proto__ member (object value)', '{"filter":{"response":{"id":1,"__proto__":{"x":1},"title":"t"},"allowed":["__proto__","id","x"]}}')
addRaw('filter drops an own __proto__ member (primitive value), required passes', '{"filter":{"response":{"__proto__":"p","2":true,"id":1},"allowed":["id","__proto__","2"],"required":["__proto__","id"]}}')
addRaw('filter drops an own __proto__ member (null value)', '{"filter":{"response":{"__proto__":null,"a":[1]},"allowed":["__proto__"]}}')
// Request numbers at and past 2^32 (where a 32-bit usize wraps) and at 2^53 - 1, as JavaScript reads them.
const BIG = ['4294967295', '4294967296', '4294967297', '4294967336', '9007199254740991']
const five = (score) => [0, 1, 2, 3, 4].map((i) => `{"id":"c${i}","category":"d","score":${score},"text":"token budget ${i}"}`).join(',')
for (const n of BIG) {
  addRaw(`c9 top_k ${n} keeps every eligible chunk`, `{"c9":{"candidates":[${five(0.5)}],"per_category":{"d":{"top_k":${n}}}}}`)
  addRaw(`c9 fallback top_k ${n} keeps every matching chunk`, `{"c9":{"candidates":[${five(0.1)}],"query":"token","per_category":{"d":{"top_k":${n}}}}}`)
  addRaw(`truncate max_chars ${n} cuts nothing`, `{"truncate":{"blocks":["a summary of this turn, longer than forty characters","middle","the tail block of the turn, also long"],"max_chars":${n}}}`)
  addRaw(`schema detail_fetches ${n}`, JSON.stringify({ schema: { tools: [{ name: 'memory_search', full: ref.describeTool('memory_search', true), slim: ref.describeTool('memory_search', false), detail_fetches: 0 }, { name: 'kv_get', full: ref.describeTool('kv_get', true), slim: ref.describeTool('kv_get', false), detail_fetches: 0 }] } }).replace(/"detail_fetches":0/g, `"detail_fetches":${n}`))
}
addRaw('truncate max_chars 40 cuts (the value 4294967336 wraps to on a 32-bit usize)', '{"truncate":{"blocks":["a summary of this turn, longer than forty characters","middle","the tail block of the turn, also long"],"max_chars":40}}')
// Unicode 17 letters (CJK Extension J, U+323B0..) are terms under V8's \p{L}; older tables split them.
addRaw('c9 fallback on Unicode 17 letters (CJK Extension J)', JSON.stringify({ c9: { candidates: [ch('a', 'd', 0.1, 'x \u{323B0}\u{323B1} y'), ch('b', 'd', 0.2, 'cache')], query: '\u{323B0}\u{323B1}' } }))
addRaw('c9 fallback: marks removed after NFKD, compatibility forms folded', JSON.stringify({ c9: { candidates: [ch('a', 'd', 0.1, 'ﬁle Ａｂｃ ①② x\u0301y'), ch('b', 'd', 0.2, 'résumé')], query: 'FILE abc 12 xy RESUME' } }))
addRaw('c9 a code point Node holds unassigned is no letter (U+209D)', JSON.stringify({ c9: { candidates: [ch('a', 'd', 0.1, 'a\u209Db'), ch('b', 'd', 0.2, 'zzz')], query: 'awb' } }))

for (let i = 0; i < 400; i++) {
  const body = {}
  const which = 1 + int(15)
  if (which & 1) body.c9 = c9Input()
  if (which & 2) body.filter = filterInput()
  if (which & 4) body.truncate = truncateInput()
  if (which & 8) body.schema = { tools: schemaTools() }
  add(`generated ${i}`, body)
}

function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`
  const ks = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${ks.map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`
}
const corpus = {
  id: 'token-opt-levers-corpus/v1',
  generator: 'corpus/token-opt/gen-levers-corpus.mjs',
  reference: `spec/token-opt.reference.ts.diff sha256:${diffSha}`,
  tokenizer: 'gpt-tokenizer@4.0.0 cl100k_base (no special tokens)',
  cases,
}
corpus.sha256 = createHash('sha256').update(jcs(corpus)).digest('hex')
process.stdout.write(JSON.stringify(corpus, null, 1) + '\n')
