// Independent Node implementation of context-budget-pack, written from the contract text and the
// ARCHITECTURE §8 readings (docs/ARCHITECTURE.md) (not from the Rust engine), used to derive the pinned corpus' expected outputs.
// Real JSON.parse / JSON.stringify, Node's crypto SHA-256, JavaScript string comparison and slicing
// (UTF-16 code units). Deterministic: a seeded PRNG draws the random cases.
//
//   node corpus/context-budget-pack/gen-corpus.mjs            # writes corpus.json next to this file
//   node corpus/context-budget-pack/gen-corpus.mjs --check    # regenerates and compares with the pin
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const contractText = readFileSync(join(here, 'contract.json'), 'utf8');
const contract = JSON.parse(contractText);
const sha256 = (s) => createHash('sha256').update(s).digest('hex');

// RFC 8785 for the values this family handles (integers, strings, booleans, null, arrays, objects):
// keys sorted by UTF-16 code units (Array#sort's default), JSON.stringify for scalars.
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
}

const FINDING = {
  RESERVED_UNITS_OVER_BUDGET: 'reservedUnits exceeds budgetUnits; no candidate can be packed within the budget.',
  REQUIRED_SET_OVER_BUDGET: 'reservedUnits plus the costs of the required candidates exceed budgetUnits; no content was packed.',
  SOURCE_MISSING: "The candidate's sourceId names no source; the candidate was excluded.",
  INVALID_SPAN: "The candidate's span is reversed, runs past its source, or splits a surrogate pair; the candidate was excluded.",
};

const isHigh = (u) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u) => u >= 0xdc00 && u <= 0xdfff;
const cutsPair = (text, at) => at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at));

// The selection, from the contract description.
export function packResult(input) {
  const budget = input.budgetUnits;
  const reserved = input.reservedUnits ?? 0;
  const dedupe = input.deduplicate ?? true;
  const textOf = new Map(input.sources.map((s) => [s.id, s.text]));
  const cands = input.candidates.map((c, index) => ({
    ...c, priority: c.priority ?? 0, required: c.required ?? false, index,
  }));
  for (const c of cands) {
    if (!textOf.has(c.sourceId)) { c.broken = 'source_missing'; continue; }
    const text = textOf.get(c.sourceId);
    if (c.start > c.end || c.end > text.length || cutsPair(text, c.start) || cutsPair(text, c.end)) {
      c.broken = 'invalid_span';
      continue;
    }
    c.text = text.slice(c.start, c.end);
  }
  const ranked = [...cands].sort((a, b) => {
    if (a.required !== b.required) return a.required ? -1 : 1;
    if (a.priority !== b.priority) return b.priority - a.priority;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  const validRequired = ranked.filter((c) => c.required && !c.broken);
  const requiredCost = validRequired.reduce((sum, c) => sum + c.costUnits, 0);
  const requiredOver = validRequired.length > 0 && reserved + requiredCost > budget;
  const selected = [];
  const excluded = [];
  let used = reserved;
  for (const c of ranked) {
    if (c.broken) { excluded.push({ id: c.id, reason: c.broken, duplicateOf: null }); continue; }
    if (requiredOver) { excluded.push({ id: c.id, reason: 'required_set_over_budget', duplicateOf: null }); continue; }
    if (!c.required && dedupe) {
      const twin = selected.find((s) => s.text === c.text);
      if (twin) { excluded.push({ id: c.id, reason: 'duplicate_text', duplicateOf: twin.id }); continue; }
    }
    if (c.required || used + c.costUnits <= budget) {
      used += c.costUnits;
      selected.push({ id: c.id, sourceId: c.sourceId, start: c.start, end: c.end, text: c.text, costUnits: c.costUnits, priority: c.priority });
    } else {
      excluded.push({ id: c.id, reason: 'budget', duplicateOf: null });
    }
  }
  const findings = [];
  const finding = (code, severity, path) => findings.push({ code, severity, path, message: FINDING[code] });
  if (reserved > budget) finding('RESERVED_UNITS_OVER_BUDGET', 'error', '/reservedUnits');
  if (requiredOver) finding('REQUIRED_SET_OVER_BUDGET', 'error', '/candidates');
  for (const c of ranked) {
    if (c.broken) finding(c.broken === 'source_missing' ? 'SOURCE_MISSING' : 'INVALID_SPAN', c.required ? 'error' : 'warning', `/candidates/${c.index}`);
  }
  const requiredSatisfied = cands.filter((c) => c.required).every((c) => selected.some((s) => s.id === c.id));
  return {
    profile: 'caller-cost-context-pack-v1',
    requiredSatisfied,
    withinBudget: used <= budget,
    usedUnits: used,
    remainingUnits: Math.max(0, budget - used),
    offsetUnit: 'UTF-16-code-units',
    selected,
    excluded,
    findings: findings.slice(0, 200),
    findingCount: findings.length,
    errorCount: findings.filter((f) => f.severity === 'error').length,
    truncated: findings.length > 200,
  };
}

export function respond(input) {
  const normalized = {
    sources: input.sources.map((s) => ({ id: s.id, text: s.text })),
    candidates: input.candidates.map((c) => ({ ...c, priority: c.priority ?? 0, required: c.required ?? false })),
    budgetUnits: input.budgetUnits,
    reservedUnits: input.reservedUnits ?? 0,
    deduplicate: input.deduplicate ?? true,
  };
  const result = packResult(input);
  return {
    operation: 'context-budget-pack',
    version: '0.29.0',
    result,
    provenance: {
      inputSha256: sha256(jcs(normalized)),
      outputSha256: sha256(JSON.stringify(result)),
      deterministic: true,
      externalRequests: 0,
    },
  };
}

// mulberry32
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['a', 'b', 'the ', 'Approval', ' ', '.', '"', '\\', '\n', '\u0001', '\u2028', 'é', '€', '😀', '𝄞', '\u{ff61}', '\u007f'];
const ID_CHARS = ['a', 'b', 'c', 'Z', '0', '_', '\u{ff61}', '😀', 'é', '"'];

function randomCase(rand) {
  const pick = (arr) => arr[Math.floor(rand() * arr.length)];
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const randomId = (prefix) => prefix + Array.from({ length: int(0, 3) }, () => pick(ID_CHARS)).join('');
  const sourceCount = int(0, 4);
  const sources = [];
  const seen = new Set();
  for (let i = 0; i < sourceCount; i++) {
    const id = randomId('s');
    if (seen.has(id)) continue;
    seen.add(id);
    // Repeated short pieces make identical slices (deduplication) likely.
    const pieces = Array.from({ length: int(0, 12) }, () => pick(PIECES));
    sources.push({ id, text: rand() < 0.5 ? pieces.join('') : pieces.slice(0, 3).join('').repeat(int(1, 4)) });
  }
  const candidateCount = int(0, 14);
  const candidates = [];
  const ids = new Set();
  for (let i = 0; i < candidateCount; i++) {
    const id = randomId('c');
    if (ids.has(id)) continue;
    ids.add(id);
    const source = sources.length && rand() < 0.92 ? pick(sources) : null;
    const sourceId = source ? source.id : randomId('missing');
    const len = source ? source.text.length : 5;
    let start = int(0, len + 1);
    let end = rand() < 0.85 ? int(start, len + 1) : int(0, len + 1);
    if (rand() < 0.2 && source) { start = 0; end = len; }
    const c = { id, sourceId, start, end, costUnits: int(1, rand() < 0.8 ? 6 : 40) };
    if (rand() < 0.6) c.priority = int(0, 3) * (rand() < 0.2 ? 33 : 1);
    if (rand() < 0.3) c.required = rand() < 0.6;
    candidates.push(c);
  }
  const input = { sources, candidates, budgetUnits: int(0, 40) };
  if (rand() < 0.5) input.reservedUnits = int(0, rand() < 0.8 ? 6 : 50);
  if (rand() < 0.3) input.deduplicate = rand() < 0.5;
  return input;
}

// Refusals that a small body can show (each body's answer follows from the contract text).
function refusalCases() {
  const ok = { sources: [{ id: 's', text: 'abc' }], candidates: [{ id: 'c', sourceId: 's', start: 0, end: 1, costUnits: 1 }], budgetUnits: 5 };
  const withChange = (f) => { const v = JSON.parse(JSON.stringify(ok)); f(v); return JSON.stringify(v); };
  const cases = [
    ['malformed: trailing comma', '{"sources":[],"candidates":[],"budgetUnits":1,}', 400, 'MALFORMED_JSON'],
    ['malformed: leading BOM', '\ufeff' + JSON.stringify(ok), 400, 'MALFORMED_JSON'],
    ['malformed: empty body', '', 400, 'MALFORMED_JSON'],
    ['malformed: two texts', JSON.stringify(ok) + JSON.stringify(ok), 400, 'MALFORMED_JSON'],
    ['schema: root array', '[]', 422, 'SCHEMA_VIOLATION'],
    ['schema: extra member', withChange((v) => { v.extra = 1; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: extra candidate member', withChange((v) => { v.candidates[0].note = 'x'; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: budgetUnits missing', withChange((v) => { delete v.budgetUnits; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: fractional start', withChange((v) => { v.candidates[0].start = 0.5; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: costUnits 0', withChange((v) => { v.candidates[0].costUnits = 0; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: priority 101', withChange((v) => { v.candidates[0].priority = 101; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: negative budget', withChange((v) => { v.budgetUnits = -1; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: empty id', withChange((v) => { v.sources[0].id = ''; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: id of 81 code points', withChange((v) => { v.candidates[0].id = '😀'.repeat(81); }), 422, 'SCHEMA_VIOLATION'],
    ['schema: required as string', withChange((v) => { v.candidates[0].required = 'true'; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: deduplicate null', withChange((v) => { v.deduplicate = null; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: reservedUnits over maximum', withChange((v) => { v.reservedUnits = 1000001; }), 422, 'SCHEMA_VIOLATION'],
    ['schema: end over maximum', withChange((v) => { v.candidates[0].end = 90001; }), 422, 'SCHEMA_VIOLATION'],
    ['limit: budgetUnits over limit', withChange((v) => { v.budgetUnits = 1000001; }), 413, 'INPUT_LIMIT'],
    ['limit: 101 sources', withChange((v) => { v.sources = Array.from({ length: 101 }, (_, i) => ({ id: 's' + i, text: '' })); }), 413, 'INPUT_LIMIT'],
    ['limit: 201 candidates', withChange((v) => { v.candidates = Array.from({ length: 201 }, (_, i) => ({ id: 'c' + i, sourceId: 's', start: 0, end: 0, costUnits: 1 })); }), 413, 'INPUT_LIMIT'],
    ['unsafe: __proto__ member', '{"__proto__":{},"sources":[],"candidates":[],"budgetUnits":1}', 422, 'UNSAFE_KEY'],
    ['unsafe: constructor inside a source', '{"sources":[{"id":"s","text":"t","constructor":1}],"candidates":[],"budgetUnits":1}', 422, 'UNSAFE_KEY'],
    ['unsafe: escaped prototype key', '{"sources":[],"candidates":[],"budgetUnits":1,"x":{"prot\\u006ftype":1}}', 422, 'UNSAFE_KEY'],
    ['unicode: lone high surrogate in text', '{"sources":[{"id":"s","text":"a\\ud83d"}],"candidates":[],"budgetUnits":1}', 422, 'INVALID_UNICODE'],
    ['unicode: lone low surrogate in an unknown key', '{"sources":[],"candidates":[],"budgetUnits":1,"\\udc00":1}', 422, 'INVALID_UNICODE'],
    ['duplicate source ids', withChange((v) => { v.sources.push({ id: 's', text: 'x' }); }), 422, 'DUPLICATE_ID'],
    ['duplicate candidate ids', withChange((v) => { v.candidates.push({ ...v.candidates[0] }); }), 422, 'DUPLICATE_ID'],
    ['complexity: depth 21', '{"sources":[],"candidates":[],"budgetUnits":1,"x":' + '['.repeat(20) + ']'.repeat(20) + '}', 413, 'COMPLEXITY_LIMIT'],
    ['complexity: 8001 values', '{"sources":[],"candidates":[],"budgetUnits":1,"x":[' + Array(7996).fill('0').join(',') + ']}', 413, 'COMPLEXITY_LIMIT'],
    // At the limits the text is read and the schema refuses the unknown member instead.
    ['complexity: exactly 8000 values reaches the schema', '{"sources":[],"candidates":[],"budgetUnits":1,"x":[' + Array(7995).fill('0').join(',') + ']}', 422, 'SCHEMA_VIOLATION'],
    ['complexity: exactly depth 20 reaches the schema', '{"sources":[],"candidates":[],"budgetUnits":1,"x":' + '['.repeat(19) + ']'.repeat(19) + '}', 422, 'SCHEMA_VIOLATION'],
    ['evaluation: span characters over 2,000,000', withChange((v) => { v.candidates = Array.from({ length: 23 }, (_, i) => ({ id: 'c' + i, sourceId: 's', start: 0, end: 90000, costUnits: 1 })); }), 413, 'EVALUATION_LIMIT'],
  ];
  return cases.map(([name, body, status, code]) => ({ name, body, expect: { status, code } }));
}

function acceptedEdgeCases() {
  return [
    ['integer written as 5.0 and 5e0', '{"sources":[{"id":"s","text":"hello world"}],"candidates":[{"id":"c","sourceId":"s","start":0.0,"end":5e0,"costUnits":1.0}],"budgetUnits":5}'],
    ['repeated key keeps the last value', '{"sources":[{"id":"s","text":"hello"}],"candidates":[],"budgetUnits":1,"budgetUnits":7}'],
    ['span characters exactly 2,000,000 (broken spans count)', JSON.stringify({ sources: [{ id: 's', text: 'ab' }], candidates: Array.from({ length: 25 }, (_, i) => ({ id: 'c' + i, sourceId: 's', start: 10000, end: 90000, costUnits: 1 })), budgetUnits: 3 })],
  ];
}

function build() {
  const cases = [];
  const example = contract.exampleInput;
  cases.push({ name: 'contract exampleInput', body: JSON.stringify(example), expect: { status: 200, response: JSON.stringify(respond(example)) } });
  for (const [name, body] of acceptedEdgeCases()) {
    const parsed = JSON.parse(body);
    delete parsed.x;
    cases.push({ name, body, expect: { status: 200, response: JSON.stringify(respond(parsed)) } });
  }
  const rand = prng(20261202);
  for (let i = 0; i < 150; i++) {
    const input = randomCase(rand);
    cases.push({ name: `random ${i}`, body: JSON.stringify(input), expect: { status: 200, response: JSON.stringify(respond(input)) } });
  }
  cases.push(...refusalCases());
  const corpus = {
    family: 'context-budget-pack',
    contractSha256: sha256(jcs(contract)),
    generator: 'gen-corpus.mjs (independent Node implementation; mulberry32 seed 20261202)',
    node: process.version,
    cases,
  };
  corpus.sha256 = sha256(jcs(corpus));
  return corpus;
}

const corpus = build();
const exampleOk = JSON.stringify(respond(contract.exampleInput)) === JSON.stringify(contract.exampleResponse);
if (!exampleOk) {
  console.error('the independent implementation does not reproduce the contract exampleResponse');
  process.exit(1);
}
const out = join(here, 'corpus.json');
if (process.argv.includes('--check')) {
  const pinned = JSON.parse(readFileSync(out, 'utf8'));
  const { sha256: pin, ...rest } = pinned;
  const same = pin === sha256(jcs(rest)) && pin === corpus.sha256;
  console.log(same ? 'corpus pin OK' : 'corpus pin MISMATCH');
  process.exit(same ? 0 : 1);
}
writeFileSync(out, JSON.stringify(corpus, null, 1) + '\n');
console.log(`${corpus.cases.length} cases, sha256 ${corpus.sha256}`);
