// A refused free check spends nothing (real workerd, the Allowance Durable Object at the default
// 5,000 ms interval): on every family with a free check, refused prechecks/preflights from one
// wallet are followed by a valid one from the same wallet, which must be answered 200 and signed;
// an immediate further call is then 402 too early, proving the 200 was the wallet's one spend.
// token-opt has no free check (the index lists no free-tier route for it). Also: `GET /` prints the
// free-tier limits in force (`[vars]`), not the published defaults.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, awake, wallet } from '../lib/worker.mjs';
import { verifyReport } from '../../../corpus/verify.mjs';
import { checkedFetch } from '../lib/schema.mjs';

// Every answer is held to the worker's OpenAPI document (status documented, JSON body valid).
const fetch = checkedFetch;

const PER_DAY = 37; // not the published 100: the index must print what is in force
let w;
let key;

before(async () => {
  w = await startWorker({ port: 8940, vars: { FREE_PER_DAY: String(PER_DAY) } });
  key = (await (await fetch(w.url + '/')).json()).signing.public_key;
});
after(async () => { await w?.stop(); });

const post = (path, body, headers = {}) => fetch(w.url + path, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** Sends each refused body from `caller` and checks its status and code. */
async function refusedAll(path, cases) {
  for (const [body, headers, status, code] of cases) {
    const r = await post(path, body, headers);
    const answer = await r.json();
    assert.equal(r.status, status, `${code}: ${JSON.stringify(answer)}`);
    assert.equal(answer.code, code);
  }
}

/** The wallet's next call, within the interval, is refused too early: the 200 spent one call. */
async function tooEarly(path, body, headers) {
  const r = await post(path, body, headers);
  const answer = await r.json();
  assert.equal(r.status, 402, JSON.stringify(answer));
  assert.equal(answer.code, 'free_tier_too_early');
}

test('token-efficiency: refused prechecks spend nothing, and X-Caller names the wallet', async () => {
  await awake(w);
  const path = '/token-efficiency/precheck';
  const W = wallet(940);
  const header = { 'x-caller': W };
  const valid = { payload: '{"a":[1,1,2]}', budget_tokens: 3 };
  await refusedAll(path, [
    [{ ...valid, reserve_tokens: 3 }, header, 400, 'reserve_tokens_not_below_budget'],
    [{ ...valid, payload: 1 }, header, 400, 'payload_not_string'],
    [{ ...valid, caller: W, extra: 1 }, {}, 400, 'body_unknown_field'],
    [{ ...valid, caller: 'not-a-wallet' }, header, 400, 'caller_invalid'],
    [valid, { 'x-caller': 'not-a-wallet' }, 400, 'caller_invalid'],
    [valid, {}, 400, 'caller_missing'],
  ]);
  // The wallet in X-Caller alone is enough (as on the other families), and nothing above spent it.
  const r = await post(path, valid, header);
  const report = await r.json();
  assert.equal(r.status, 200, JSON.stringify(report));
  assert.equal(verifyReport(report, key), null);
  // The body's caller and the header name the same allowance.
  await tooEarly(path, { ...valid, caller: W }, {});
});

test('context-composition: refused prechecks spend nothing', async () => {
  const path = '/context-composition/precheck';
  const W = wallet(941);
  const header = { 'x-caller': W };
  const valid = {
    envelope_version: 'context-composition-envelope/1',
    declared_format_id: 'anthropic-messages',
    record: [{ role: 'user', content: 'hello' }],
  };
  await refusedAll(path, [
    [{ ...valid, envelope_version: 'context-composition-envelope/0' }, header, 400, 'envelope_version_not_supported'],
    [{ ...valid, declared_format_id: 'nope' }, header, 400, 'format_not_accepted'],
    [{ ...valid, caller: 'not-a-wallet' }, header, 400, 'caller_invalid'],
    [valid, { 'x-caller': 'not-a-wallet' }, 400, 'caller_invalid'],
    [{ ...valid, harness_stated_counts: [1] }, header, 400, 'stated_counts_invalid'],
  ]);
  const r = await post(path, valid, header);
  const report = await r.json();
  assert.equal(r.status, 200, JSON.stringify(report));
  assert.equal(verifyReport(report, key), null);
  await tooEarly(path, { ...valid, caller: W }, {});
});

test('context-budget-pack: a refused preflight, even one refused for its output, spends nothing', async () => {
  const path = '/context-budget-pack/preflight';
  const W = wallet(942);
  const header = { 'x-caller': W };
  const valid = {
    sources: [{ id: 'memo', text: 'Approval is required. Timing remains tentative.' }],
    candidates: [
      { id: 'rule', sourceId: 'memo', start: 0, end: 21, costUnits: 6, required: true },
      { id: 'timing', sourceId: 'memo', start: 22, end: 47, costUnits: 7, priority: 50 },
    ],
    budgetUnits: 10,
    reservedUnits: 2,
  };
  // Valid input whose packed text would pass the contract's 200,000-byte packedTextJsonBytes limit:
  // the preflight refuses it only after running the selection.
  const overOutput = {
    sources: [{ id: 's', text: 'a'.repeat(50_000) }],
    candidates: Array.from({ length: 4 }, (_, i) => (
      { id: `c${i}`, sourceId: 's', start: 0, end: i === 0 ? 49_999 : 49_998, costUnits: 1 })),
    budgetUnits: 5,
    deduplicate: false,
  };
  await refusedAll(path, [
    [overOutput, header, 413, 'OUTPUT_LIMIT'],
    ['{"sources": [', header, 400, 'MALFORMED_JSON'],
    [valid, { 'x-caller': 'not-a-wallet' }, 400, 'caller_invalid'],
  ]);
  const r = await post(path, valid, header);
  const report = await r.json();
  assert.equal(r.status, 200, JSON.stringify(report));
  assert.equal(verifyReport(report, key, r.headers.get('report-signature')), null);
  await tooEarly(path, valid, header);
});

test('GET / prints the free-tier limits in force', async () => {
  const index = await (await fetch(w.url + '/')).json();
  const free = index.families.flatMap((f) => f.routes.map((r) => ({ family: f.family, ...r })))
    .filter((r) => r.access.kind === 'free-tier');
  assert.deepEqual(free.map((r) => r.family).sort(),
    ['context-budget-pack', 'context-composition', 'token-efficiency']);
  for (const r of free) {
    assert.equal(r.access.per_day, PER_DAY, r.path);
    assert.equal(r.access.min_interval_ms, 5000, r.path);
  }
});
