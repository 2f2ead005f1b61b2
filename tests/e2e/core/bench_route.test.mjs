// The benchmark-only routes POST /bench/tokenizer and /bench/token-efficiency (src/edge/bench.rs)
// against real workerd. They are compiled in only with the cargo feature `bench-routes`
// (scripts/build.sh records the features in build/features.txt):
// - in the production build (`make test`), they answer exactly like an unknown path, with or
//   without BENCH_ROUTES=1, and the route checks below are skipped with a line saying where they run;
// - in the bench build (`make bench` runs this file first, scripts/bench.sh), they are closed exactly
//   like an unknown path unless BENCH_ROUTES=1; when open, the tokenizer route's count equals npm
//   gpt-tokenizer's (the independent oracle) on texts the oracle corpus holds, and the
//   token-efficiency route's figures equal the token-efficiency corpus's expectations (derived by its
//   own JavaScript implementation) on every case.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { startWorker, awake, ROOT } from '../lib/worker.mjs';

// build/features.txt is written by every scripts/build.sh run: its absence is a failure, not a skip.
const FEATURES = readFileSync(join(ROOT, 'build', 'features.txt'), 'utf8').trim().split(',').filter(Boolean);
const BENCH_BUILD = FEATURES.includes('bench-routes');
const ROUTE_CHECKS = BENCH_BUILD ? {} : {
  skip: 'production build (no bench-routes feature): make bench runs these against its bench-routes build',
};
if (!BENCH_BUILD) console.log(`SKIPPED the /bench route checks: ${ROUTE_CHECKS.skip}`);

let closed;
let open;
before(async () => {
  // wrangler.toml has no BENCH_ROUTES: `closed` runs with the production vars.
  closed = await startWorker({ port: 8891, logLevel: 'warn' });
  open = await startWorker({ port: 8892, vars: { BENCH_ROUTES: '1' }, logLevel: 'warn' });
  await awake(closed); // idle while `open` started
});
after(async () => {
  await closed?.stop();
  await open?.stop();
});

const post = (w, text, query = '') => fetch(`${w.url}/bench/tokenizer${query}`, {
  method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: text,
});

const oracleTexts = () => readFileSync(join(ROOT, 'corpus/tokenizer/oracle.jsonl'), 'utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.k !== 'prefixes').map((e) => e.t);

const answersLikeAnUnknownPath = async (w) => {
  const unknown = await fetch(w.url + '/bench/nope', { method: 'POST', body: 'x' });
  const unknownText = await unknown.text();
  for (const bench of [
    await post(w, 'hello world', '?repeat=3'),
    await fetch(`${w.url}/bench/token-efficiency?op=count`, { method: 'POST', body: '{"payload":"x","budget_tokens":1}' }),
  ]) {
    assert.equal(bench.status, 404);
    assert.equal(bench.status, unknown.status);
    assert.equal(bench.headers.get('content-type'), unknown.headers.get('content-type'));
    assert.equal(await bench.text(), unknownText);
  }
  assert.equal(await (await fetch(w.url + '/bench/tokenizer')).text(), 'NOT COVERED');
};

test('the production build has no bench routes: even with BENCH_ROUTES=1 they answer like an unknown path',
  { skip: BENCH_BUILD && 'bench-routes build' }, async () => {
    await answersLikeAnUnknownPath(open);
  });

test('without BENCH_ROUTES the route answers exactly like an unknown path', async () => {
  await answersLikeAnUnknownPath(closed);
  // Neither the index nor the OpenAPI document lists it, open or closed.
  for (const w of [closed, open]) {
    const doc = await (await fetch(w.url + '/openapi.json')).json();
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/bench')));
    assert.ok(!JSON.stringify(await (await fetch(w.url + '/')).json()).includes('/bench'));
  }
});

test('with BENCH_ROUTES=1 its count equals gpt-tokenizer on oracle texts and on their join', ROUTE_CHECKS, async () => {
  const texts = oracleTexts().filter((t) => t.length > 0);
  const sample = texts.filter((_, i) => i % 97 === 0);
  assert.ok(sample.length > 20);
  for (const text of sample) {
    const r = await post(open, text);
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.equal(body.tokens, encode(text, { disallowedSpecial: new Set() }).length, JSON.stringify(text.slice(0, 80)));
    assert.equal(body.repeat, 1);
    assert.equal(body.bytes, Buffer.byteLength(text));
  }
  const joined = texts.join('\n').slice(0, 300_000);
  const r = await post(open, joined, '?repeat=4');
  const body = await r.json();
  assert.equal(body.tokens, encode(joined, { disallowedSpecial: new Set() }).length);
  assert.equal(body.repeat, 4);
});

test('repeat is capped at 64, 0 tokenizes nothing, and the body is never echoed', ROUTE_CHECKS, async () => {
  const secret = 'do-not-echo-' + 'z'.repeat(20);
  const over = await post(open, secret, '?repeat=65');
  assert.equal(over.status, 400);
  const overText = await over.text();
  assert.ok(!overText.includes(secret));
  // Closed-form like every route's refusal: static message, numbers only.
  assert.deepEqual(JSON.parse(overText), {
    code: 'repeat_invalid',
    message: 'repeat must be an integer from 0 to 64',
    max_repeat: 64,
  });
  assert.equal((await post(open, secret, '?repeat=-1')).status, 400);
  const invalid = await post(open, Buffer.from([0x7a, 0xff, 0xfe]));
  assert.equal(invalid.status, 400);
  assert.equal((await invalid.json()).code, 'body_not_utf8');
  const zero = await (await post(open, secret, '?repeat=0')).json();
  assert.deepEqual(zero, { tokens: null, repeat: 0, bytes: secret.length });
  const top = await post(open, secret, '?repeat=64');
  const text = await top.text();
  assert.equal(top.status, 200);
  assert.ok(!text.includes(secret));
  assert.equal(JSON.parse(text).tokens, encode(secret).length);
});

const teCases = () => JSON.parse(readFileSync(join(ROOT, 'corpus/token-efficiency/corpus.json'), 'utf8')).cases;
const teBody = (c) => (c.body_base64 ? Buffer.from(c.body_base64, 'base64') : c.body);
const tePost = (w, body, op, repeat = 1, more = '') => fetch(`${w.url}/bench/token-efficiency?op=${op}&repeat=${repeat}${more}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body,
});

test('/bench/token-efficiency: every corpus case\'s figures or refusal, as the corpus expects them', ROUTE_CHECKS, async () => {
  const cases = teCases();
  assert.ok(cases.length >= 80);
  let measured = 0;
  for (const c of cases) {
    const body = teBody(c);
    if (c.expect.refusal) {
      // The refusal its routes answer: same status and code, nothing echoed.
      const r = await tePost(open, body, 'precheck');
      assert.equal(r.status, c.expect.refusal.status, c.id);
      assert.equal((await r.json()).code, c.expect.refusal.code, c.id);
      continue;
    }
    const budget = await (await tePost(open, body, 'budget', 2)).json();
    assert.equal(budget.tokens, c.expect.budget.submitted.tokens, c.id);
    assert.equal(budget.shaped_tokens, c.expect.budget.shaped.tokens, c.id);
    assert.equal(budget.repeat, 2);
    assert.equal(budget.bytes, Buffer.byteLength(body));
    // The budget path without its signed body: the same figures, no answer written.
    const engine = await (await tePost(open, body, 'engine', 2)).json();
    assert.deepEqual(engine, { ...budget, op: 'engine', answer_bytes: null }, c.id);
    const precheck = await tePost(open, body, 'precheck');
    const sign = await tePost(open, body, 'sign', 2);
    if (c.expect.precheck.refusal) {
      assert.equal(precheck.status, c.expect.precheck.refusal.status, c.id);
      assert.equal((await precheck.json()).code, c.expect.precheck.refusal.code, c.id);
      assert.equal((await sign.json()).code, c.expect.precheck.refusal.code, c.id);
    } else {
      const answer = await precheck.json();
      assert.equal(answer.tokens, c.expect.precheck.payload_tokens, c.id);
      // The same report signed: the same answer length (its timestamps have one length).
      assert.deepEqual(await sign.json(), { ...answer, op: 'sign', repeat: 2 }, c.id);
    }
    const count = await (await tePost(open, body, 'count', 3)).json();
    assert.deepEqual(count, {
      op: 'count', repeat: 3, bytes: Buffer.byteLength(body),
      tokens: c.expect.budget.submitted.tokens, shaped_tokens: null, answer_bytes: null,
    });
    const analyse = await (await tePost(open, body, 'analyse', 2)).json();
    assert.deepEqual(analyse, {
      op: 'analyse', repeat: 2, bytes: Buffer.byteLength(body),
      tokens: c.expect.budget.submitted.tokens, shaped_tokens: null, answer_bytes: null,
    });
    const parse = await (await tePost(open, body, 'parse', 2)).json();
    assert.deepEqual(parse, {
      op: 'parse', repeat: 2, bytes: Buffer.byteLength(body), tokens: null, shaped_tokens: null, answer_bytes: null,
    });
    measured++;
  }
  assert.equal(measured, cases.filter((c) => !c.expect.refusal).length);
});

test('/bench/token-efficiency?op=digest hashes (and op=write writes) exactly the bytes the budget answer\'s signature covers', ROUTE_CHECKS, async () => {
  for (const id of ['cap-json-s4', 'reserve-zero']) {
    const c = teCases().find((x) => x.id === id);
    const body = teBody(c);
    const budget = await (await tePost(open, body, 'budget')).json();
    const digest = await (await tePost(open, body, 'digest', 2)).json();
    // The signed bytes are the answer without `,"signature":{…}` (a 16-hex key id, an 88-character signature).
    const member = JSON.stringify({ signature: { alg: 'Ed25519', key_id: 'k'.repeat(16), sig: 's'.repeat(88) } }).length - 1;
    assert.deepEqual(digest, {
      op: 'digest', repeat: 2, bytes: Buffer.byteLength(body), tokens: c.expect.budget.submitted.tokens,
      shaped_tokens: null, answer_bytes: budget.answer_bytes - member,
    }, id);
    // WebCrypto over the same bytes, whole and in 1000-byte messages: the route refuses
    // (digest_failed) unless its first message's digest is sha2's.
    for (const chunk of ['', '&chunk=1000']) {
      const native = await tePost(open, body, 'digest-native', 2, chunk);
      assert.equal(native.status, 200, `${id}${chunk}`);
      assert.deepEqual(await native.json(), { ...digest, op: 'digest-native' }, `${id}${chunk}`);
    }
    const write = await (await tePost(open, body, 'write', 2)).json();
    assert.deepEqual(write, { ...digest, op: 'write' }, id);
  }
  const c = teCases().find((x) => x.id === 'reserve-zero');
  const chunked = await (await tePost(open, teBody(c), 'digest', 1, '&chunk=7')).json();
  assert.equal(chunked.op, 'digest');
  const zero = await tePost(open, teBody(c), 'digest', 1, '&chunk=0');
  assert.equal(zero.status, 400);
  assert.deepEqual(await zero.json(), { code: 'chunk_invalid', message: 'chunk must be a positive integer' });
});

test('/bench/token-efficiency runs the precheck route\'s path: the same answer length, nothing echoed', ROUTE_CHECKS, async () => {
  const c = teCases().find((x) => x.id === 'reserve-zero');
  const body = teBody(c);
  const real = await fetch(`${open.url}/token-efficiency/precheck`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body,
  });
  assert.equal(real.status, 200);
  const answer = await real.text();
  const bench = await (await tePost(open, body, 'precheck', 0)).json();
  assert.deepEqual(bench, {
    op: 'precheck', repeat: 0, bytes: Buffer.byteLength(body), tokens: null, shaped_tokens: null, answer_bytes: null,
  });
  const once = await (await tePost(open, body, 'precheck')).json();
  assert.equal(once.answer_bytes, Buffer.byteLength(answer));
  const secret = 'do-not-echo-' + 'q'.repeat(20);
  const bad = await tePost(open, JSON.stringify({ payload: secret, budget_tokens: 5, x: secret }), 'nope');
  assert.equal(bad.status, 400);
  const badText = await bad.text();
  assert.ok(!badText.includes(secret));
  assert.deepEqual(JSON.parse(badText), { code: 'op_invalid', message: 'op must be count, analyse, parse, precheck, budget, engine, sign, digest, digest-native or write' });
  const unknown = await tePost(open, JSON.stringify({ payload: secret, budget_tokens: 5, x: secret }), 'budget');
  assert.equal(unknown.status, 400);
  const unknownText = await unknown.text();
  assert.ok(!unknownText.includes(secret));
  assert.equal(JSON.parse(unknownText).code, 'body_unknown_field');
  assert.equal((await tePost(open, body, 'count', 65)).status, 400);
});
