// Request numbers at 2^32 - 1, 2^32 and 2^53 - 1 through real workerd, where usize is 32 bits: a cast
// that is harmless natively wraps here (top_k 2^32 → 0, max_chars 4294967336 → 40). Ports 8930-8939.
//
// token-opt (paid): each body is a case of the pinned levers corpus, whose expectations the reference
// module itself produced (corpus/token-opt/gen-levers-corpus.mjs runs the TypeScript reference under
// Node, JavaScript numbers); it is paid by the official x402 client against the local Solana VM and
// facilitator and the report is compared with the reference's outcome. indent_size (toon) past 8 is a
// free refusal at every value, so 2^32 + 1 cannot wrap to 1.
// context-budget-pack (free preflight, X-Caller wallet): every number member at each value is refused
// with the code the contract's inputSchema gives (its limits block names budgetUnits → INPUT_LIMIT,
// every other maximum → SCHEMA_VIOLATION); none is narrowed into range.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startWorker, wallet, ROOT } from '../lib/worker.mjs';
import { startSvm } from '../x402/stack.mjs';
import { startFacilitator } from '../x402/facilitator.mjs';
import { createPaymentHeader } from '../x402/client.mjs';
import { checkedFetch } from '../lib/schema.mjs';

// Every answer is held to the worker's OpenAPI document (status documented, JSON body valid).
const fetch = checkedFetch;

const SVM = 8930;
const FACILITATOR = 8931;
const WORKER = 8932;
const VALUES = ['4294967295', '4294967296', '9007199254740991'];

let w;
let svm;
let facilitator;
before(async () => {
  svm = await startSvm({ port: SVM });
  facilitator = await startFacilitator({ port: FACILITATOR, rpcUrl: svm.url, quiet: true });
  w = await startWorker({
    port: WORKER,
    logLevel: 'warn',
    vars: { FREE_MIN_INTERVAL_MS: '0', FACILITATOR_URL: `http://127.0.0.1:${FACILITATOR}` },
  });
});
after(async () => { await w?.stop(); await facilitator?.close(); await svm?.stop(); });

const post = (path, body, headers = {}) => fetch(w.url + path, {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
});

let keyCounter = 0;
async function paid(path, body) {
  const key = `to-numbers-${process.pid}-${String(keyCounter++).padStart(4, '0')}`;
  const unpaid = await post(path, body, { 'idempotency-key': key });
  const unpaidText = await unpaid.text();
  assert.equal(unpaid.status, 402, `${path} unpaid: ${unpaidText.slice(0, 300)}`);
  const { header } = await createPaymentHeader(unpaid.headers.get('payment-required'), { rpcUrl: svm.url, idempotencyKey: key });
  const r = await post(path, body, { 'idempotency-key': key, 'payment-signature': header });
  const text = await r.text();
  assert.equal(r.status, 200, `${path} paid: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const corpus = JSON.parse(readFileSync(join(ROOT, 'corpus', 'token-opt', 'levers-corpus.json'), 'utf8'));
const caseNamed = (name) => {
  const c = corpus.cases.find((x) => x.name === name);
  assert.ok(c, `corpus case "${name}"`);
  return c;
};

for (const n of VALUES) {
  test(`token-opt levers at ${n}: the worker answers what the reference answers`, async () => {
    for (const name of [`c9 top_k ${n} keeps every eligible chunk`, `c9 fallback top_k ${n} keeps every matching chunk`]) {
      const c = caseNamed(name);
      const want = c.expect.c9.output;
      const report = await paid('/token-opt/levers', c.body);
      const ids = JSON.parse(c.body).c9.candidates.map((x) => x.id);
      const out = report.outputs.c9;
      assert.equal(out.signal, want.signal, name);
      assert.deepEqual(out.selected.map((x) => x.id), want.selected.map((i) => ids[i]), name);
      assert.deepEqual(out.dropped.map((x) => x.id), want.dropped.map((i) => ids[i]), name);
      assert.equal(out.context, want.context, name);
      assert.deepEqual(report.gate, c.expect.gate, name);
    }
    {
      const c = caseNamed(`truncate max_chars ${n} cuts nothing`);
      const report = await paid('/token-opt/levers', c.body);
      const out = report.outputs.truncate;
      assert.deepEqual(out.blocks, c.expect.truncate.output.blocks);
      assert.equal(out.truncated, c.expect.truncate.output.truncated);
      assert.equal(out.truncated, false, 'a cap past the turn cuts nothing');
      assert.equal(out.max_chars, Number(n), 'max_chars is echoed as sent');
    }
    {
      const c = caseNamed(`schema detail_fetches ${n}`);
      const report = await paid('/token-opt/levers', c.body);
      const m = report.measurements[0];
      const want = c.expect.schema.measurement;
      assert.deepEqual(m.tokens, want.tokens, 'exact figures, as JavaScript numbers');
      assert.deepEqual(m.estimate, want.estimate, "the reference's own estimate");
      assert.equal(m.enabled, want.enabled);
      assert.deepEqual(report.outputs.schema.tools.map((t) => t.detail_fetches), [Number(n), Number(n)], 'echoed as sent');
      assert.deepEqual(report.gate, c.expect.gate);
    }
  });
}

test('token-opt toon: indent_size at 2^32 - 1, 2^32 + 1, 2^53 - 1 is a free refusal (never wraps to 1..8)', async () => {
  for (const n of ['4294967295', '4294967297', '9007199254740991']) {
    const r = await post('/token-opt/toon', `{"payload":{"a":[1,2]},"indent_size":${n}}`, { 'idempotency-key': 'to-numbers-toon-00001' });
    assert.equal(r.status, 400, n);
    assert.equal((await r.json()).code, 'toon_options_invalid', n);
  }
});

test('token-opt: a count past 2^53 is a free refusal; 2^53 + 1 reads as 2^53 (as JSON.parse reads it)', async () => {
  let r = await post('/token-opt/levers', '{"truncate":{"blocks":["a"],"max_chars":9007199254740994}}', { 'idempotency-key': 'to-numbers-big-000001' });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).code, 'truncate_invalid');
  r = await post('/token-opt/levers', '{"truncate":{"blocks":["a"],"max_chars":9007199254740993}}', { 'idempotency-key': 'to-numbers-big-000002' });
  assert.equal(r.status, 402, 'accepted: only payment is missing');
  await r.arrayBuffer();
});

test('context-budget-pack preflight: every number member at 2^32 - 1, 2^32, 2^53 - 1 is refused as the contract says', async () => {
  const contract = JSON.parse(readFileSync(join(ROOT, 'corpus', 'context-budget-pack', 'contract.json'), 'utf8'));
  const schema = contract.inputSchema;
  const candidate = schema.properties.candidates.items.properties;
  const base = { sources: [{ id: 's', text: 'abc' }], candidates: [{ id: 'c', sourceId: 's', start: 0, end: 1, costUnits: 1, priority: 0 }], budgetUnits: 5, reservedUnits: 0 };
  const fields = [
    ['budgetUnits', schema.properties.budgetUnits, (v, x) => { v.budgetUnits = x; }],
    ['reservedUnits', schema.properties.reservedUnits, (v, x) => { v.reservedUnits = x; }],
    ...['start', 'end', 'costUnits', 'priority'].map((k) => [k, candidate[k], (v, x) => { v.candidates[0][k] = x; }]),
  ];
  // A control: the base body is accepted.
  let r = await post('/context-budget-pack/preflight', JSON.stringify(base), { 'x-caller': wallet(930) });
  assert.equal(r.status, 200, await r.text());
  let n = 931;
  for (const value of VALUES) {
    for (const [name, rule, set] of fields) {
      assert.ok(Number(value) > rule.maximum, `${name}: the value is past the schema maximum`);
      const expected = name in contract.limits ? ['INPUT_LIMIT', 413] : ['SCHEMA_VIOLATION', 422];
      const body = JSON.parse(JSON.stringify(base));
      set(body, 0);
      const text = JSON.stringify(body).replace(`"${name}":0`, `"${name}":${value}`);
      r = await post('/context-budget-pack/preflight', text, { 'x-caller': wallet(n++) });
      const answer = await r.json();
      const code = answer?.code ?? answer?.error?.code;
      assert.deepEqual([code, r.status], expected, `${name} = ${value}`);
    }
  }
});
