// Verifies the corpus pin, then runs the free pre-check of every corpus case against a running
// worker and compares the verdict (without its check-end time) and the headline counts.
//
//   node corpus/token-efficiency/harness.mjs http://127.0.0.1:8787
//   node corpus/token-efficiency/harness.mjs --pin-only
//
// Every case's body carries its own caller wallet (base58 of 32 bytes derived from the case id), so
// the free tier's per-wallet minimum interval never delays the run. To run again within the same
// UTC day without touching the same wallets' daily allowance, set TE_HARNESS_SALT (each case's
// caller is then derived from the salt and the case id). A 402 from the free tier is retried after
// TE_HARNESS_WAIT_MS (default 5100) once. Prints `N passed, N failed`; exits 1 on any failure.

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { base58Encode, corpusPin } from './oracle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const corpus = JSON.parse(readFileSync(join(here, 'corpus.json'), 'utf8'));
const pin = corpusPin(corpus);
if (pin !== corpus.sha256) {
  console.error(`corpus pin MISMATCH: file says ${corpus.sha256}, content hashes to ${pin}`);
  process.exit(1);
}
console.log(`corpus ${corpus.id}: ${corpus.cases.length} cases, pin ${pin} verified`);
const target = process.argv[2];
if (!target || target === '--pin-only') process.exit(0);
const base = target.replace(/\/+$/, '');
const salt = process.env.TE_HARNESS_SALT;
const waitMs = Number(process.env.TE_HARNESS_WAIT_MS ?? 5100);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let passed = 0;
let failed = 0;
const fail = (id, why) => {
  failed++;
  console.log(`FAIL ${id}: ${why}`);
};

// The served criteria must publish the same pin.
try {
  const res = await fetch(`${base}/token-efficiency/criteria`);
  const doc = await res.json();
  if (doc?.corpus?.sha256 === pin) passed++;
  else fail('criteria', `served corpus pin ${doc?.corpus?.sha256} != ${pin}`);
} catch (e) {
  fail('criteria', `GET /token-efficiency/criteria failed (${e.message})`);
}

function bodyFor(c) {
  if (c.body_base64 !== undefined) return Buffer.from(c.body_base64, 'base64');
  if (salt && !c.expect.refusal) {
    const body = JSON.parse(c.body);
    if (typeof body.caller === 'string') {
      body.caller = base58Encode([...createHash('sha256').update(`token-efficiency-harness/${salt}/${c.id}`).digest()]);
      return Buffer.from(JSON.stringify(body), 'utf8');
    }
  }
  return Buffer.from(c.body, 'utf8');
}

function findCode(v) {
  if (v === null || typeof v !== 'object') return undefined;
  if (typeof v.code === 'string') return v.code;
  for (const x of Object.values(v)) {
    const found = findCode(x);
    if (found !== undefined) return found;
  }
  return undefined;
}

const withoutTime = (verdict) => (typeof verdict === 'string' ? verdict.replace(/ — [^—]*$/, '') : verdict);

async function post(body) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}/token-efficiency/precheck`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    if (res.status === 402 && attempt < 1) {
      await sleep(waitMs);
      continue;
    }
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json };
  }
}

for (const c of corpus.cases) {
  let res;
  try {
    res = await post(bodyFor(c));
  } catch (e) {
    fail(c.id, `request failed (${e.message})`);
    continue;
  }
  const refusal = c.expect.refusal ?? c.expect.precheck.refusal;
  if (refusal) {
    const code = findCode(res.json);
    if (res.status === refusal.status && code === refusal.code) passed++;
    else fail(c.id, `got ${res.status} ${code}, want ${refusal.status} ${refusal.code}`);
    continue;
  }
  if (res.status !== 200 || !res.json) {
    fail(c.id, `status ${res.status} ${findCode(res.json) ?? ''}`);
    continue;
  }
  const want = c.expect.precheck;
  const diffs = [];
  if (withoutTime(res.json.verdict) !== withoutTime(want.verdict)) {
    diffs.push(`verdict "${res.json.verdict}" want "${want.verdict}"`);
  }
  for (const f of ['fits', 'operation_set', 'payload_tokens', 'payload_chars', 'effective_budget', 'excess_tokens']) {
    if (res.json[f] !== want[f]) diffs.push(`${f} ${res.json[f]} want ${want[f]}`);
  }
  if ('shaped_payload' in res.json || 'receipt' in res.json) diffs.push('the pre-check returned paid substance');
  if (diffs.length) fail(c.id, diffs.join('; '));
  else passed++;
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
