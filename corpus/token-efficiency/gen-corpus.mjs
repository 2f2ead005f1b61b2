// Generates corpus.json for token-efficiency/v1: every case's expected output is derived by the
// independent JavaScript implementation in oracle.mjs (real JSON.parse/JSON.stringify, npm
// gpt-tokenizer), never from the Rust engine. Deterministic: same inputs → same corpus and pin.
//
//   node corpus/token-efficiency/gen-corpus.mjs        (writes corpus.json beside this file)

import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BODY_CAP, base58Encode, budgetOp, corpusPin, count, expect, marker, validate } from './oracle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const NOW0 = Date.UTC(2026, 11, 2, 12, 0, 0, 0);
const cases = [];

const callerFor = (id) => base58Encode([...createHash('sha256').update(`token-efficiency-corpus/v1/${id}`).digest()]);

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const WORDS = 'alpha beta gamma delta budget token payload result search query index field value river stone cloud quick brown fox jumps over lazy dog market signal'.split(' ');
function words(n, seed) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
  return out.join(' ');
}

function bodyOf(payload, budget, opts = {}, id) {
  const body = { payload, budget_tokens: budget };
  if (opts.keep !== undefined) body.keep_fields = opts.keep;
  if (opts.reserve !== undefined) body.reserve_tokens = opts.reserve;
  if (opts.caller !== null) body.caller = opts.caller ?? callerFor(id);
  return JSON.stringify(body);
}

function add(id, note, payload, budget, opts = {}) {
  const body = opts.rawBody ?? bodyOf(payload, budget, opts, id);
  console.error(`  ${cases.length} ${id}`);
  const c = { id, note, now_ms: NOW0 + cases.length * 61_001 + (cases.length % 7) * 13 };
  if (opts.bodyBase64) c.body_base64 = opts.bodyBase64;
  else c.body = body;
  const bytes = opts.bodyBase64 ? Buffer.from(opts.bodyBase64, 'base64') : Buffer.from(body, 'utf8');
  const t0 = Date.now();
  c.expect = expect(new Uint8Array(bytes), c.now_ms);
  c.body_bytes = bytes.length;
  const ms = Date.now() - t0;
  if (ms > 2000) console.error(`  ${id}: ${ms} ms`);
  cases.push(c);
  return c;
}

// The counts after each op when every op runs (budget 1): used to place budgets on boundaries.
function chain(payload, keep = []) {
  const req = validate(new TextEncoder().encode(bodyOf(payload, 1, { keep }, 'chain')));
  const r = budgetOp(req, { stopBeforeS4: true });
  const after = { P: r.P, S1: r.P, S2: r.P, S3: r.P };
  let last = r.P;
  for (const op of ['S-1', 'S-2', 'S-3']) {
    for (const e of r.receipt) if (e.op === op) last = e.tokens_after;
    after[op.replace('-', '')] = last;
  }
  return after;
}

const J = JSON.stringify;
const long = (n, unit = 'x') => unit.repeat(n);

// ---------------------------------------------------------------- FITS and plain verdicts
{
  const p = J({ query: 'weather in Lyon', results: [{ title: 'Forecast', temp: 11.5 }] });
  const P = count(p);
  add('fits-exact-boundary', 'budget equals the payload tokens: FITS, nothing runs', p, P);
  add('over-by-one', 'budget one below: OVER by 1, shaping starts (nothing to remove, S-4 cuts)', p, P - 1);
  add('fits-huge-budget', 'budget 2^53', p, 2 ** 53);
  add('fits-reserve-boundary', 'reserve_tokens moves the effective budget onto the boundary', p, P + 7, { reserve: 7 });
  add('over-reserve', 'reserve_tokens makes it OVER by 2', p, P + 5, { reserve: 7 });
  add('reserve-zero', 'reserve_tokens 0 is no reserve', p, P, { reserve: 0 });
  add('text-fits', 'plain text fits', 'The quick brown fox jumps over the lazy dog.', 20);
  add('text-empty', 'an empty payload is text-only and fits', '', 1);
  add('text-whitespace', 'a whitespace-only payload is text-only', ' \n\t ', 1);
  add('budget-exponent', 'budget_tokens 1e3 is 1000', p, 1e3);
}

// ---------------------------------------------------------------- S-1
{
  const p = J(['alpha', 'beta', 'alpha', 'gamma', 'beta', 'alpha']);
  const c = chain(p);
  add('s1-root-array', 'S-1 on the root array (path ""), index at removal', p, c.S1);
  add('s1-root-array-one-short', 'one below the S-1 result: S-2, S-3 start (nothing), S-4 cuts', p, c.S1 - 1);
  const nested = J([[1, 1, 2, 1], 3, [1, 1, 2, 1], 3, { x: [4, 4], y: [[5], [5]] }]);
  add('s1-preorder', 'an array is deduplicated before its surviving entries are visited', nested, chain(nested).S1);
  const objs = J({ items: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 2 }] });
  add('s1-object-key-order', 'objects with different key order are not byte-identical', objs, chain(objs).S1);
  const nums = J(JSON.parse('{"n":[1,1.0,10e-1,-0,0,1e21,1000000000000000000000]}'));
  add('s1-number-forms', 'numbers compared in canonical form (1, 1.0, 10e-1; -0 and 0; 1e21)', '{"n":[1,1.0,10e-1,-0,0,1e21,1000000000000000000000]}', chain(nums).S1);
  const kept = J({ keep: ['same', 'same', 'same'], other: 'text here' });
  add('s1-ignores-keep', 'S-1 ignores keep_fields', kept, chain(kept, ['keep']).S1, { keep: ['keep'] });
  const many = J({ rows: Array.from({ length: 300 }, (_, i) => ({ id: i % 40, tag: i % 3 ? 'even' : 'odd' })) });
  add('s1-many', '300 rows with 40 distinct → 260 removals', many, chain(many).S1);
  const strs = J({ a: ['x', 'y'], b: ['x', 'x'], c: [[], [], {}, {}, null, null, '', ''] });
  add('s1-empties', 'duplicate empties and nulls in arrays are S-1 removals', strs, chain(strs).S1);
}

// ---------------------------------------------------------------- S-2
{
  const p = J({ a: null, b: '', c: [], d: {}, e: 0, f: false, g: ' ', h: 'keep me', i: [null, '', {}] });
  const c = chain(p);
  add('s2-basic', 'null, "", [], {} removed; 0, false, " " kept; array elements never removed', p, c.S2);
  const cascade = J({ a: { b: null, c: { d: [], e: { f: '' } } }, g: 1, h: { i: {} } });
  add('s2-cascade', 'children before parents; emptiness cascades', cascade, chain(cascade).S2);
  const keep1 = J({ a: null, b: { c: null }, d: '' });
  add('s2-keep-top', 'keep_fields protects a null top-level field', keep1, chain(keep1, ['a']).S2, { keep: ['a'] });
  const deep = J({ a: { b: { c: null, x: null }, y: null }, z: null });
  add('s2-keep-depth3', 'keep "a.b.c" protects the field and its ancestors from S-2', deep, chain(deep, ['a.b.c']).S2, { keep: ['a.b.c'] });
  const arr = J({ results: [{ title: null, url: null }, { title: '', url: 'u' }], meta: null });
  add('s2-keep-through-array', 'keep "results.title" protects title in every element', arr, chain(arr, ['results.title']).S2, { keep: ['results.title'] });
  add('s2-keep-nothing', 'a keep path naming nothing protects nothing', arr, chain(arr, ['nope.nothing']).S2, { keep: ['nope.nothing'] });
  const under = J({ a: { b: null, c: { d: null } }, e: null });
  add('s2-keep-covers-subtree', 'protection covers everything under the kept field', under, chain(under, ['a']).S2, { keep: ['a'] });
  const dotted = J({ 'a.b': null, a: { b: null } });
  add('s2-dotted-key', 'keys are joined raw: "a.b" names both', dotted, chain(dotted, ['a.b']).S2, { keep: ['a.b'] });
  const rootArr = J([{ a: null }, { b: { c: '' } }, null, '']);
  add('s2-root-array', 'fields inside root-array elements; elements themselves stay', rootArr, chain(rootArr).S2);
  const emptyKey = J({ '': { '': null, x: 1 }, y: null });
  add('s2-empty-keys', 'empty keys in paths', emptyKey, chain(emptyKey).S2);
}

// ---------------------------------------------------------------- S-3
{
  for (const n of [2001, 2009, 2010, 2059, 2060, 2061, 5000]) {
    const p = J({ s: long(n, 'a'), t: 'short' });
    add(`s3-len-${n}`, `a ${n}-character string (growth below 2,060, equal at 2,060)`, p, chain(p).S3);
  }
  const astral = J({ e: long(2100, '😀'), c: long(2100, 'e\u0301') });
  add('s3-astral-combining', 'characters are code points: astral counts one, combining marks count', astral, chain(astral).S3);
  const lone = '{"s":"' + long(1999, 'b') + '\\ud800' + long(10, 'c') + '"}';
  add('s3-lone-surrogate', 'a lone-surrogate escape counts as one character and is written back as its escape', lone, chain(lone).S3);
  const keptLong = J({ keep: long(3000, 'k'), drop: long(3000, 'd') });
  add('s3-keep', 'a keep-protected long string is not truncated', keptLong, chain(keptLong, ['keep']).S3, { keep: ['keep'] });
  const elems = J({ list: [long(2500, 'p'), 'short', long(2100, 'q')], [long(2500, 'K')]: 1 });
  add('s3-array-elements-not-keys', 'array elements are truncated; keys never', elems, chain(elems).S3);
  const rootStr = J(long(3000, 'r'));
  add('s3-root-string-untouched', 'the root is not a field: S-3 never touches it; S-4 does', rootStr, 500);
  const words3 = J({ doc: words(2500, 7), other: words(50, 8) });
  add('s3-words', 'S-3 on natural text', words3, chain(words3).S3);
  const keepArr = J({ results: [{ body: long(2500, 'z') }, { body: long(2500, 'y') }] });
  add('s3-keep-through-array', 'keep "results.body" protects body in every element', keepArr, chain(keepArr, ['results']).S3 + 10, { keep: ['results'] });
}

// ---------------------------------------------------------------- combinations
{
  const p = J({
    query: 'shoes',
    results: [
      { id: 1, title: 'Runner', desc: words(60, 1), img: null, tags: ['a', 'b', 'a'] },
      { id: 2, title: 'Trail', desc: words(700, 2) + long(1500, 'w'), img: '', tags: [] },
      { id: 1, title: 'Runner', desc: words(60, 1), img: null, tags: ['a', 'b', 'a'] },
    ],
    debug: { trace: null, spans: [] },
  });
  const c = chain(p);
  add('combo-stop-after-s1', 'S-1 brings it within exactly; S-2 does not start', p, c.S1);
  add('combo-stop-after-s2', 'S-2 brings it within exactly', p, c.S2);
  add('combo-stop-after-s3', 'S-3 brings it within exactly', p, c.S3);
  add('combo-s4', 'all four operations', p, c.S3 - 30);
  add('combo-s4-keep', 'all four, S-4 never cuts the kept field', p, 120, { keep: ['query', 'results.title'] });
  add('combo-s4-small', 'a small budget: S-4 keeps a short prefix', p, 25);
  add('combo-reserve', 'reserve_tokens with all four', p, c.S3, { reserve: 40 });
}

// ---------------------------------------------------------------- S-4 and text-only
{
  const t = words(400, 3);
  const P = count(t);
  add('text-s4', 'text-only: S-4 alone', t, Math.floor(P / 2));
  add('text-s4-one-short', 'text-only, one token over', t, P - 1);
  const m0 = count(marker([...t].length, 'S-4'));
  add('text-s4-marker-only', 'budget holds exactly the marker: L = 0', t, m0);
  add('exhaust-marker-too-big', 'budget below the marker: not shapable', t, m0 - 1);
  add('text-not-monotone', 'counts are not monotone over prefixes: the true largest boundary', 'The quick brown fox jumps over the lazy dog. The quick brown fox.', 17);
  add('text-bom', 'a leading U+FEFF is not JSON whitespace: text-only', '\ufeff{"a":1}', 3);
  add('text-bom-fits', 'a leading U+FEFF payload that fits', '\ufeff{"a":[1,1]}', 50);
  add('text-special-tokens', 'special-token spellings are ordinary text', 'hello <|endoftext|> world <|fim_prefix|> ' + words(40, 4), 20);
  add('text-malformed-json', 'almost-JSON is text-only', '{"a": [1, 2, 3,]}' + words(30, 5), 12);
  add('text-unicode', 'astral, combining and CJK in text-only', '日本語のテキスト 😀😀😀 e\u0301e\u0301 ' + words(40, 6), 15);
  add('text-crlf', 'line breaks and tabs in text', 'line one\r\nline two\n\tindented  \n\n' + words(30, 9), 14);
  const scalar = J(words(300, 10));
  add('json-root-string-s4', 'a JSON root string: op set json, S-4 only', scalar, 40);
  add('json-root-number', 'a JSON root number fits', '  -0.0e0 ', 1);
  add('json-root-literal-over', 'a JSON root literal over a 1-token budget is not shapable', 'false', 1);
  const kept = J({ head: 'intro', body: words(300, 11), tail: 'end' });
  add('s4-floor-keep', 'S-4 floor: never cut inside the kept field', kept, 60, { keep: ['head'] });
  add('s4-floor-last-field', 'the kept field is last: the floor is near the end', kept, count(kept) - 2, { keep: ['tail'] });
  add('exhaust-keep-over-budget', 'kept content alone exceeds the budget', kept, 30, { keep: ['body'] });
  add('exhaust-keep-nested', 'nested kept fields count once (outermost span)', J({ a: { b: words(80, 12), c: 'x' }, d: words(80, 13) }), 20, { keep: ['a', 'a.b'] });
}

// ---------------------------------------------------------------- canonical form details
{
  const keys = '{"b":1,"4294967295":2,"4294967294":3,"1":4,"01":5,"-1":6,"a":7,"b":8,"10":null,"2":""}';
  add('keys-integer-like', 'array-index keys first ascending; duplicates keep first position, last value', keys, 1000);
  add('keys-integer-like-s2', 'S-2 paths over reordered keys', keys, count(JSON.stringify(JSON.parse(keys))) - 3);
  add('keys-proto', '__proto__ is an ordinary own key', '{"__proto__":{"x":null},"y":[1,1]}', 5);
  add('keys-duplicate-nested', 'duplicate keys: last value wins at first position', '{"a":{"x":1},"b":2,"a":{"y":null,"z":[3,3]}}', 6);
  add('numbers-exotic', 'exotic numbers print as JavaScript prints them', '[1e21,1E-7,0.1,-0,5e-324,9007199254740993,1E400,-1e400,1.50,100,2e-7,123456789012345678901234]', 1000);
  add('numbers-exotic-s1', 'exotic numbers deduplicated in canonical form', '[1E400,-1e400,1e400,0.1,1e-1,-0,0]', 10);
  add('strings-escapes', 'escapes re-written as JSON.stringify writes them', '["\\u0041\\u00e9\\/\\b\\f\\n\\r\\t\\u001f\\u007f\\u2028\\"","\\ud83d\\ude00"]', 1000);
  add('strings-lone-surrogates', 'lone surrogates written back as escapes', '{"a":"\\udc00x\\ud800","b":"\\ud800\\ud800","c":["\\ud800","\\ud800"]}', 8);
  add('keys-lone-surrogate-path', 'a key with a lone surrogate: its path spells the escape', '{"k\\ud800":null,"z":"' + words(20, 14) + '"}', 12);
  add('keys-astral', 'astral and combining keys in paths', '{"😀":null,"e\\u0301":"","ok":[{"😀":{}}],"w":"' + words(10, 15) + '"}', 12);
  add('whitespace-json', 'insignificant whitespace is dropped by the canonical form', ' {\n  "a" : [ 1 , 1 ] ,\r\n\t"b" : null\n} ', 4);
  add('bom-inside-string', 'U+FEFF inside a JSON string is content', '{"a":"\ufeffx","b":null,"c":"\ufeff"}', 5);
}

// ---------------------------------------------------------------- refusals (free, static)
{
  const ok = { payload: 'x', budget_tokens: 5 };
  const raw = (id, note, obj) => add(id, note, null, null, { rawBody: typeof obj === 'string' ? obj : J(obj) });
  add('refuse-not-utf8', 'body not UTF-8', null, null, { bodyBase64: Buffer.from([0x7b, 0xff, 0x7d]).toString('base64') });
  raw('refuse-not-json', 'body not JSON', '{"payload": "x", budget_tokens: 5}');
  raw('refuse-bom-body', 'a body with a leading U+FEFF is not JSON', '\ufeff' + J(ok));
  raw('refuse-not-object', 'body JSON but not an object', '[{"payload":"x","budget_tokens":5}]');
  raw('refuse-lone-surrogate', 'a lone surrogate in the body', '{"payload":"a\\udc00b","budget_tokens":5}');
  raw('refuse-lone-surrogate-key', 'a lone surrogate in a body key', '{"payload":"x","budget_tokens":5,"\\ud800":1}');
  raw('refuse-unknown-field', 'a member outside the input contract', { ...ok, keep_field: ['a'] });
  raw('refuse-payload-missing', 'payload missing', { budget_tokens: 5 });
  raw('refuse-payload-object', 'payload not a string', { payload: { a: 1 }, budget_tokens: 5 });
  raw('refuse-payload-null', 'payload null', { payload: null, budget_tokens: 5 });
  raw('refuse-budget-missing', 'budget_tokens missing', { payload: 'x' });
  raw('refuse-budget-zero', 'budget_tokens zero', { payload: 'x', budget_tokens: 0 });
  raw('refuse-budget-negative-zero', 'budget_tokens -0', '{"payload":"x","budget_tokens":-0}');
  raw('refuse-budget-negative', 'budget_tokens negative', { payload: 'x', budget_tokens: -5 });
  raw('refuse-budget-fraction', 'budget_tokens fractional', { payload: 'x', budget_tokens: 5.5 });
  raw('refuse-budget-string', 'budget_tokens a string', { payload: 'x', budget_tokens: '5' });
  raw('refuse-budget-over-2-53', 'budget_tokens above 2^53', '{"payload":"x","budget_tokens":9007199254740994}');
  raw('refuse-budget-infinite', 'budget_tokens 1e400', '{"payload":"x","budget_tokens":1e400}');
  raw('refuse-reserve-negative', 'reserve_tokens negative', { ...ok, reserve_tokens: -1 });
  raw('refuse-reserve-fraction', 'reserve_tokens fractional', { ...ok, reserve_tokens: 0.5 });
  raw('refuse-reserve-string', 'reserve_tokens a string', { ...ok, reserve_tokens: '1' });
  raw('refuse-reserve-equal', 'reserve_tokens = budget_tokens', { ...ok, reserve_tokens: 5 });
  raw('refuse-reserve-above', 'reserve_tokens > budget_tokens', { ...ok, reserve_tokens: 9 });
  raw('refuse-keep-not-array', 'keep_fields not an array', { ...ok, keep_fields: 'a' });
  raw('refuse-keep-number', 'keep_fields with a number', { ...ok, keep_fields: ['a', 1] });
  raw('refuse-keep-empty-string', 'keep_fields with an empty path', { ...ok, keep_fields: [''] });
  raw('refuse-caller-invalid', 'caller not base58', { ...ok, caller: '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl' });
  raw('refuse-caller-short', 'caller decodes to fewer than 32 bytes', { ...ok, caller: '1111111111' });
  raw('refuse-caller-number', 'caller not a string', { ...ok, caller: 12 });
  raw('refuse-payload-too-deep', 'payload nested deeper than 1,000', { payload: '['.repeat(1001) + ']'.repeat(1001), budget_tokens: 5 });
  raw('no-caller-precheck', 'no caller: the pre-check refuses (caller_missing); the budget op runs', { payload: 'a b c', budget_tokens: 5 });
  const deepOk = { payload: '['.repeat(1000) + ']'.repeat(1000), budget_tokens: 5000, caller: callerFor('deep-1000') };
  raw('deep-1000', '1,000 levels is accepted', deepOk);
  add('deep-1000-shaped', '1,000 levels through S-1..S-4 (long paths)', '{"a":'.repeat(998) + '[null,null,"",{"b":null}]' + '}'.repeat(998), 60);
  add('deep-keep-floor', 'a kept field deep inside: the floor is its span end', '{"x":{"y":{"z":"' + words(30, 21) + '"},"w":"' + words(60, 22) + '"}}', 62, { keep: ['x.y.z'] });
  add('s1-removes-kept-entry', 'S-1 removes a duplicate entry holding a kept field; the floor ignores it', J({ r: [{ k: 'same' }, { k: 'same' }], t: words(80, 23) }), 40, { keep: ['r.k'] });
  raw('deep-unbalanced-text', 'over 1,000 unbalanced brackets are not JSON: text-only, not refused', { payload: '['.repeat(1500), budget_tokens: 5000, caller: callerFor('deep-unbalanced-text') });
}

// ---------------------------------------------------------------- at the 262,144-byte cap
{
  const margin = 64; // room for the harness to re-derive the caller
  const target = BODY_CAP - margin;
  const padTo = (make) => {
    let lo = 1;
    let hi = 1;
    const size = (n) => Buffer.byteLength(bodyOf(make(n), 1, {}, 'size'));
    while (size(hi) < target) hi *= 2;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (size(mid) <= target) lo = mid;
      else hi = mid - 1;
    }
    return make(lo);
  };
  const rows = (n) =>
    J({
      results: Array.from({ length: n }, (_, i) => ({ id: i, title: `Result ${i}`, snippet: words(12, i), score: (i * 37) % 101 })),
    });
  const big = padTo(rows);
  const P = count(big);
  add('cap-json-fits', 'a JSON payload at the cap that fits', big, P);
  add('cap-json-s4', 'a JSON payload at the cap needing S-4 (S-1..S-3 find nothing)', big, P - 40);
  const text = padTo((n) => words(n, 99));
  add('cap-text-s4', 'a text payload at the cap needing S-4', text, count(text) - 25);
  const mixed = padTo((n) =>
    J({
      rows: Array.from({ length: n }, (_, i) => ({ id: i, body: words(40, 1000 + i), note: i % 200 === 0 ? null : 'n' })),
      dups: ['same', 'same', 'same', 'same', 'same'],
      long: [long(2600, 'L'), long(2600, 'M')],
    }),
  );
  const mc = chain(mixed);
  add('cap-mixed-s1-s4', 'at the cap: S-1, S-2, S-3 then S-4 near the end', mixed, mc.S3 - 30);
  add('cap-mixed-stop-s3', 'at the cap: S-3 lands exactly on the budget', mixed, mc.S3);
  const longs = padTo((n) => J({ docs: Array.from({ length: n }, (_, i) => words(450, 5000 + i)) }));
  add('cap-many-s3', 'at the cap: many S-3 truncations', longs, chain(longs).S3);
  const keepLast = padTo((n) => J({ body: words(n, 77), tail: words(60, 78) }));
  add('cap-exhaust-keep', 'at the cap: the kept tail alone exceeds the budget', keepLast, 30, { keep: ['tail'] });
  const exact = (() => {
    const base = { payload: '', budget_tokens: 1000000, caller: callerFor('cap-exact') };
    const pad = BODY_CAP - Buffer.byteLength(J(base));
    return J({ ...base, payload: words(pad, 4).slice(0, pad) });
  })();
  add('cap-exact-bytes', 'a body of exactly 262,144 bytes is accepted', null, null, { rawBody: exact });
  add('cap-over-by-one', 'a body of 262,145 bytes is refused naming the cap', null, null, { rawBody: exact.replace('"payload":"', '"payload":" ') });
}

// ---------------------------------------------------------------- every kind of exhaustion
// The free pre-check's verdict is the budget op's: where the op cannot shape the payload within the
// stated constraints, both say OVER — NOT SHAPABLE (cases above already exhaust: exhaust-*,
// json-root-literal-over, cap-exhaust-keep; these add one per kind, with the boundary beside it).
{
  const enc = (text) => new TextEncoder().encode(text);
  const exhausts = (payload, budget, keep) =>
    budgetOp(validate(enc(bodyOf(payload, budget, { keep }, 'least')))).exhaustion !== null;
  // The least budget the op can shape within (S-1..S-3 find nothing in these payloads, so exhaustion
  // is monotone in the budget); bisected, then both sides checked. Only places budgets: every
  // expectation is still the oracle's own result for the case.
  const leastShapable = (payload, keep = []) => {
    let lo = 1;
    let hi = count(payload);
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (exhausts(payload, mid, keep)) lo = mid + 1;
      else hi = mid;
    }
    if (exhausts(payload, lo, keep) || !exhausts(payload, lo - 1, keep)) throw new Error('not a boundary');
    return lo;
  };
  // 1. Kept content alone exceeds the effective budget.
  const kept = J({ head: 'intro', body: words(120, 31), tail: 'end' });
  add('exhaust-keep-reserve', 'kept content alone exceeds the budget left by a reserve above 2^32 (budget 2^32 + 30, reserve 2^32)', kept, 2 ** 32 + 30, { keep: ['body'], reserve: 2 ** 32 });
  const edited = J({ dups: [1, 1, 1], gone: null, empty: '', keep: words(90, 32) });
  add('exhaust-keep-after-s1-s2', 'S-1 and S-2 run, then kept content alone is over: the payload comes back unchanged, empty receipt', edited, 25, { keep: ['keep'] });
  // 2. The budget cannot hold the S-4 marker outside the protected spans.
  const plain = J({ a: words(100, 33), b: [words(20, 34)] });
  const least = leastShapable(plain);
  add('exhaust-marker-json', 'JSON, no keep: one below the least budget S-4 can meet (its marker does not fit)', plain, least - 1);
  add('marker-json-boundary', 'JSON, no keep: the least budget S-4 can meet: OVER by E', plain, least);
  const smallKept = J({ id: 'k1', body: words(150, 35) });
  const leastKept = leastShapable(smallKept, ['id']);
  add('exhaust-marker-after-keep', 'the kept field fits, the marker after it does not', smallKept, leastKept - 1, { keep: ['id'] });
  add('marker-after-keep-boundary', 'the least budget that holds the kept field and the marker: OVER by E', smallKept, leastKept, { keep: ['id'] });
  const text = words(200, 36);
  add('exhaust-text-budget-one', 'text-only, budget 1: not shapable', text, 1);
  add('exhaust-text-reserve', 'text-only, reserve leaves 3 tokens: not shapable', text, 9_007_199_254_740_991, { reserve: 9_007_199_254_740_988 });
  // 3. The retained prefix must reach a protected field far over budget.
  const far = J({ body: words(300, 37), tail: 'end' });
  add('exhaust-floor-far', 'the kept field is last and small; the prefix up to it is far over the budget', far, 40, { keep: ['tail'] });
  const farArr = J({ results: [{ t: words(120, 38) }, { t: words(120, 39), id: 'x' }], more: words(40, 40) });
  add('exhaust-floor-through-array', 'the floor is the end of a kept field inside the last array element', farArr, 60, { keep: ['results.id'] });
  const farThenMore = J({ body: words(300, 37), tail: 'end', after: words(60, 41) });
  const leastFar = leastShapable(farThenMore, ['tail']);
  add('exhaust-floor-far-boundary-minus-one', 'one below the least budget whose prefix reaches the kept field and holds the marker', farThenMore, leastFar - 1, { keep: ['tail'] });
  add('floor-far-boundary', 'the least budget whose prefix reaches the kept field and holds the marker: OVER by E', farThenMore, leastFar, { keep: ['tail'] });
}

for (const c of cases) {
  if (c.body !== undefined && c.body_base64 === undefined && Buffer.byteLength(c.body) !== c.body_bytes) throw new Error(c.id);
}
const corpus = {
  id: 'token-efficiency-corpus/v1',
  criteria_id: 'token-efficiency/v1',
  tokenizer: 'cl100k_base/gpt-tokenizer@4.0.0 encode(text, {disallowedSpecial: new Set()})',
  generated_by: 'corpus/token-efficiency/gen-corpus.mjs + oracle.mjs (independent JavaScript implementation)',
  node: process.version,
  unicode: process.versions.unicode,
  tokenizer_probes: ['The quic', 'The quick', '\ufeff', 'a\ufeffb', '\ufeff{"a":1}', 'x\u0085y', ' \u0085 ', '<|endoftext|>'].map((text) => ({ text, tokens: count(text) })),
  cases,
};
corpus.sha256 = corpusPin(corpus);
writeFileSync(join(here, 'corpus.json'), JSON.stringify(corpus, null, 1) + '\n');
console.log(`${cases.length} cases, sha256 ${corpus.sha256}`);

