// context-composition/v1 request numbers under real workerd (wasm32, where usize is 32 bits): the
// stated counts (harness_stated_counts.per_message[] and .total, generic-message-list stated_tokens
// and stated_total) at 2^32 - 1, 2^32 and 2^53 - 1 are accepted and reproduced exactly, 2^53 and
// above are refused free, sums of stated figures past 2^64 stay exact, and integer-like member
// names around 2^32 keep JavaScript's order in compact JSON. Every answer is compared with the
// independent reference (corpus/context-composition/reference.mjs); the paid audit, the only
// surface that prints the figures, is paid through the local VM and facilitator by the official
// x402 client. Ports 8920 (worker), 8921 (VM), 8922 (facilitator).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startWorker, wallet, ROOT } from '../lib/worker.mjs';
import { verifyReport, jcs } from '../../../corpus/verify.mjs';
import * as ref from '../../../corpus/context-composition/reference.mjs';
import { startPaidWorker } from '../x402/stack.mjs';
import { createPaymentHeader } from '../x402/client.mjs';
import { checkedFetch } from '../lib/schema.mjs';

// Every answer is held to the worker's OpenAPI document (status documented, JSON body valid).
const fetch = checkedFetch;

const WORKER_PORT = 8920;
const SVM_PORT = 8921;
const FACILITATOR_PORT = 8922;
const CRITERIA = JSON.parse(readFileSync(join(ROOT, 'corpus', 'context-composition', 'context-composition-v1.criteria.json'), 'utf8'));
const V = ref.ENVELOPE_VERSION;
const U32_MAX = 4294967295;
const TWO_32 = 4294967296;
const SAFE_MAX = 9007199254740991;

let stack, w, key;
before(async () => {
  stack = await startPaidWorker({ svmPort: SVM_PORT, facilitatorPort: FACILITATOR_PORT, workerPort: WORKER_PORT, vars: { FREE_MIN_INTERVAL_MS: '0', FACILITATOR_URL: `http://127.0.0.1:${FACILITATOR_PORT}` } });
  ({ worker: w, key } = stack);
});
after(() => stack?.stop());

let walletNo = 900;
const post = (path, body, headers = {}) => fetch(w.url + path, {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-caller': wallet(walletNo++), ...headers }, body,
});
const withoutStamp = (r) => { const { signature, issued_at, ...rest } = r; return rest; };
const gen = (messages, record = {}, envelope = {}) =>
  JSON.stringify({ envelope_version: V, declared_format_id: 'generic-message-list', record: { messages, ...record }, ...envelope });

// Valid bodies carrying each number in each place a number is read.
const ACCEPTED = [];
for (const n of [U32_MAX, TWO_32, SAFE_MAX]) {
  ACCEPTED.push([`harness total ${n}`, gen([{ role: 'user', text: 'a'.repeat(40) }], {}, { harness_stated_counts: { total: n } })]);
  ACCEPTED.push([`harness per_message ${n}`, gen([{ role: 'user', text: 'a'.repeat(40) }, { role: 'assistant', text: 'b' }], {}, { harness_stated_counts: { per_message: [n, null] } })]);
  ACCEPTED.push([`record stated_tokens and stated_total ${n}`, gen([{ role: 'user', text: 'x', stated_tokens: n }], { stated_total: n })]);
}
// A sum of 2,051 figures of 2^53 - 1 is past 2^64 (a u64 sum would wrap).
const SUM_PAST_2_64 = `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[`
  + `${'{"role":"user","text":"x","stated_tokens":9007199254740991},'.repeat(2050)}{"role":"user","text":"end","stated_tokens":9007199254740991}]}}`;
const KEYS = `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"use the tools"}],"tool_schemas":[`
  + '{"4294967296":"a","4294967295":"b","4294967294":"c","9007199254740991":"d","1":"e"},'
  + '{"4294967295":"b","4294967296":"a","9007199254740991":"d","1":"e","4294967294":"c"},'
  + '{"n":[4294967295,4294967296,9007199254740991,9007199254740993,18446744073709551616]}]}}';

test('stated counts at 2^32 - 1, 2^32 and 2^53 - 1: prechecks equal the reference', async () => {
  for (const [name, body] of [...ACCEPTED, ['sum past 2^64', SUM_PAST_2_64], ['keys around 2^32', KEYS]]) {
    const r = await post('/context-composition/precheck', body);
    assert.equal(r.status, 200, name);
    const got = await r.json();
    assert.equal(verifyReport(got, key), null, name);
    const want = ref.precheck(ref.parse(Buffer.from(body)), 0, CRITERIA);
    assert.equal(jcs(withoutStamp(got)), jcs(withoutStamp(want)), name);
    if (name !== 'keys around 2^32') assert.equal(got.assessability[10].status, 'ASSESSABLE', `${name}: F-10`);
  }
});

test('2^53 and above are refused free, never wrapped into range', async () => {
  const over = [
    ['harness total 2^53', gen([{ role: 'user', text: 'x' }], {}, { harness_stated_counts: { total: 9007199254740992 } }), 'stated_counts_invalid'],
    ['harness per_message 2^64', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"x"}]},"harness_stated_counts":{"per_message":[18446744073709551616]}}`, 'stated_counts_invalid'],
    ['harness total 2^32 + 2^64', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"x"}]},"harness_stated_counts":{"total":18446744078004518912}}`, 'stated_counts_invalid'],
    ['record stated_tokens 2^53', gen([{ role: 'user', text: 'x', stated_tokens: 9007199254740992 }]), 'record_does_not_parse_as_declared_format'],
    ['record stated_total 2^64 + 1', `{"envelope_version":"${V}","declared_format_id":"generic-message-list","record":{"messages":[{"role":"user","text":"x"}],"stated_total":18446744073709551617}}`, 'record_does_not_parse_as_declared_format'],
  ];
  for (const [name, body, code] of over) {
    assert.throws(() => ref.parse(Buffer.from(body)), (e) => e.code === code, `reference: ${name}`);
    const r = await post('/context-composition/precheck', body);
    assert.equal(r.status, 400, name);
    assert.equal((await r.json()).code, code, name);
  }
});

async function paidAudit(body, n) {
  const idempotencyKey = `cc-numbers-${n}-${Date.now()}`;
  const unpaid = await post('/context-composition/audit', body, { 'idempotency-key': idempotencyKey });
  assert.equal(unpaid.status, 402);
  const { header } = await createPaymentHeader(unpaid.headers.get('payment-required'), { rpcUrl: stack.svm.url, idempotencyKey });
  return post('/context-composition/audit', body, { 'idempotency-key': idempotencyKey, 'payment-signature': header });
}

test('paid audits print the stated figures exactly (M12), sums past 2^64 included', async () => {
  const bodies = [
    ['per_message 2^32 - 1, 2^32, 2^53 - 1 and total 2^53 - 1', gen(
      [{ role: 'user', text: 'a'.repeat(40) }, { role: 'assistant', text: 'b'.repeat(40) }, { role: 'user', text: 'c'.repeat(40) }],
      {}, { harness_stated_counts: { per_message: [U32_MAX, TWO_32, SAFE_MAX], total: SAFE_MAX } })],
    ['sum past 2^64', SUM_PAST_2_64],
    ['keys around 2^32', KEYS],
  ];
  let n = 0;
  for (const [name, body] of bodies) {
    const r = await paidAudit(body, n++);
    assert.equal(r.status, 200, name);
    const got = await r.json();
    assert.equal(verifyReport(got, key), null, name);
    const want = ref.audit(ref.parse(Buffer.from(body)), 0, CRITERIA).report;
    assert.equal(jcs(withoutStamp(got)), jcs(withoutStamp(want)), name);
    if (name === 'sum past 2^64') {
      const m12 = got.factors[10].result;
      assert.equal(m12.aggregate_over_covered.stated_tokens, (2051n * 9007199254740991n).toString());
      assert.equal(m12.per_message[0].stated_tokens, SAFE_MAX);
    }
    if (name.startsWith('per_message')) {
      assert.deepEqual(got.factors[10].result.per_message.map((u) => u.stated_tokens), [U32_MAX, TWO_32, SAFE_MAX]);
    }
  }
});
