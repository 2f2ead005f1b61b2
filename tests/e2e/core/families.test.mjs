// The four families through real workerd: served documents (with the published key and the ledger
// column list that must equal the live D1 schema), signed free checks that verify offline, free
// validation refusals that are static and come before any payment, and the x402 challenge on every
// paid route.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startWorker, wallet, d1, ROOT } from '../lib/worker.mjs';
import { verifyReport } from '../../../corpus/verify.mjs';
import { startPaidWorker } from '../x402/stack.mjs';
import { SVM_PORT, FACILITATOR_PORT } from '../x402/wallets.mjs';
import { checkedFetch } from '../lib/schema.mjs';

// Every answer is held to the worker's OpenAPI document (status documented, JSON body valid).
const fetch = checkedFetch;

// A challenge names the facilitator's fee payer, so the local VM and facilitator run too.
let stack, w, key;
before(async () => {
  stack = await startPaidWorker({ svmPort: SVM_PORT, facilitatorPort: FACILITATOR_PORT, workerPort: 8831, vars: { FREE_MIN_INTERVAL_MS: '0' } });
  ({ worker: w, key } = stack);
});
after(() => stack?.stop());

const post = (path, body, headers = {}) => fetch(w.url + path, {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

const DOCS = [
  ['/token-efficiency/criteria', 'ledger_token_efficiency'],
  ['/context-composition/criteria', 'ledger_context_composition'],
  ['/context-budget-pack/contract', 'ledger_context_budget_pack'],
  ['/token-opt/criteria', 'ledger_token_opt'],
];

test('served documents carry the published key and a ledger list equal to the live D1 schema', async () => {
  for (const [path, table] of DOCS) {
    const r = await fetch(w.url + path);
    assert.equal(r.status, 200, path);
    const doc = await r.json();
    assert.equal(doc.signing.public_key, key, path);
    const live = d1(w.persist, `PRAGMA table_info(${table})`).map((c) => c.name);
    assert.deepEqual(doc.ledger_columns, live, path);
  }
});

const TE = { payload: JSON.stringify({ items: [1, 1, 2], note: '' }), budget_tokens: 5 };
const COMPOSITION = {
  envelope_version: 'context-composition-envelope/1',
  declared_format_id: 'letta-af',
};

test('token-efficiency precheck is signed, verifies offline, and never carries a shaped payload', async () => {
  const r = await post('/token-efficiency/precheck', { ...TE, caller: wallet(11) });
  assert.equal(r.status, 200);
  const report = await r.json();
  assert.equal(verifyReport(report, key), null);
  const text = JSON.stringify(report);
  assert.match(text, /PAYLOAD BUDGET — payload tokens: \d+ — effective budget: 5 — /);
  assert.ok(!('shaped_payload' in report) && !('receipt' in report));
  // A tampered copy does not verify.
  assert.notEqual(verifyReport({ ...report, tampered: 1 }, key), null);
});

// A real Letta file from the shared samples (not part of this repository): skipped, loudly, without them.
const LETTA_SAMPLE = join(ROOT, '..', 'shared', 'samples', 'letta-af', 'customer_service.af');
const LETTA_SKIP = !existsSync(LETTA_SAMPLE)
  && 'SKIPPED: ../shared/samples/letta-af/customer_service.af is absent; put the shared samples beside the repository to run it';
if (LETTA_SKIP) console.error(LETTA_SKIP);

test('context-composition precheck on a real Letta file is signed and echoes none of it', { skip: LETTA_SKIP }, async () => {
  const raw = readFileSync(LETTA_SAMPLE, 'utf8');
  const record = JSON.parse(raw);
  const r = await post('/context-composition/precheck', { ...COMPOSITION, record, caller: wallet(12) });
  assert.equal(r.status, 200);
  const report = await r.json();
  assert.equal(verifyReport(report, key), null);
});

test('budget-pack preflight takes the free-tier wallet from X-Caller and is signed', async () => {
  const contract = JSON.parse(readFileSync(join(ROOT, 'corpus', 'context-budget-pack', 'contract.json'), 'utf8'));
  const r = await post('/context-budget-pack/preflight', contract.exampleInput, { 'x-caller': wallet(13) });
  assert.equal(r.status, 200);
  const detached = r.headers.get('report-signature');
  const report = await r.json();
  assert.ok(!('signature' in report), 'the contract body stays closed');
  assert.equal(verifyReport(report, key, detached), null);
  assert.notEqual(verifyReport({ ...report, valid: !report.valid }, key, detached), null);
});

test('malformed bodies are refused free, statically, before any payment is looked at', async () => {
  const canary = 'CANARY-7f3a9';
  for (const [path, body] of [
    ['/token-efficiency/budget', `{"payload": 1, "budget_tokens": 5, "x": "${canary}"}`],
    ['/token-efficiency/budget', `["${canary}"]`],
    ['/token-efficiency/budget', `{"payload": "${canary}", "budget_tokens": 0}`],
    ['/context-composition/audit', `{"envelope_version": "${canary}"}`],
    ['/v1/x402/context-budget-pack', `{"${canary}": 1}`],
    ['/token-opt/levers', `not json ${canary}`],
    ['/token-opt/toon', `{"${canary}": `],
  ]) {
    const r = await post(path, body, { 'payment-signature': 'eyJ4NDAyVmVyc2lvbiI6Mn0=', 'idempotency-key': 'k'.repeat(20) });
    assert.ok(r.status >= 400 && r.status < 500 && r.status !== 402, `${path} ${r.status}`);
    const text = await r.text();
    assert.ok(!text.includes(canary), `${path} echoed input`);
    assert.match(text, /not verified, not consumed/, `${path} must say the payment was untouched`);
  }
});

test('every paid route answers a valid request without payment with an x402 v2 challenge', async () => {
  const contract = JSON.parse(readFileSync(join(ROOT, 'corpus', 'context-budget-pack', 'contract.json'), 'utf8'));
  const cases = [
    ['/token-efficiency/budget', TE, 20000],
    ['/v1/x402/context-budget-pack', contract.exampleInput, 5000],
    ['/token-opt/toon', { payload: '{"a":[{"x":1,"y":2},{"x":3,"y":4}]}' }, 5000],
  ];
  for (const [path, body, amount] of cases) {
    const r = await post(path, body, { 'idempotency-key': 'challenge-key-0001' });
    assert.equal(r.status, 402, path);
    const required = JSON.parse(Buffer.from(r.headers.get('payment-required'), 'base64').toString());
    assert.equal(required.x402Version, 2);
    assert.equal(required.accepts[0].scheme, 'exact');
    assert.equal(required.accepts[0].amount, String(amount), path);
    await r.arrayBuffer();
  }
});
