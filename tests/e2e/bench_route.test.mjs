// The benchmark-only route POST /bench/tokenizer (src/edge/bench.rs) against real workerd: closed
// exactly like an unknown path unless BENCH_ROUTES=1, and when open its count equals npm
// gpt-tokenizer's (the independent oracle) on texts the oracle corpus holds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { startWorker, awake, ROOT } from './lib/worker.mjs';

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

test('without BENCH_ROUTES the route answers exactly like an unknown path', async () => {
  const unknown = await fetch(closed.url + '/bench/nope', { method: 'POST', body: 'x' });
  const bench = await post(closed, 'hello world', '?repeat=3');
  assert.equal(bench.status, 404);
  assert.equal(bench.status, unknown.status);
  assert.equal(bench.headers.get('content-type'), unknown.headers.get('content-type'));
  assert.equal(await bench.text(), await unknown.text());
  assert.equal(await (await fetch(closed.url + '/bench/tokenizer')).text(), 'NOT COVERED');
  // Neither the index nor the OpenAPI document lists it, open or closed.
  for (const w of [closed, open]) {
    const doc = await (await fetch(w.url + '/openapi.json')).json();
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/bench')));
    assert.ok(!JSON.stringify(await (await fetch(w.url + '/')).json()).includes('/bench'));
  }
});

test('with BENCH_ROUTES=1 its count equals gpt-tokenizer on oracle texts and on their join', async () => {
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

test('repeat is capped at 64, 0 tokenizes nothing, and the body is never echoed', async () => {
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
