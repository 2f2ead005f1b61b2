// Harness for the context-composition/v1 corpus.
//
//   node harness.mjs                       verify the corpus pin only
//   node harness.mjs URL [--interval-ms N] verify the pin, check that URL/context-composition/criteria
//                                          serves it, then POST every case to
//                                          URL/context-composition/precheck and compare
//
// A refusal case passes when the HTTP status matches and the body names the refusal code. A
// measured or could-not-measure case passes when the answer is 200 and its JSON, without the
// `signature` member and with `issued_at` checked for shape only (a live worker stamps its own
// clock), equals the expected pre-check report under JCS. Prints `N passed, N failed`.
//
// Wallets: each case's X-Caller is its own wallet, base58 of sha256("context-composition-harness/"
// + salt + "/" + case name), so the free tier's per-wallet minimum interval (5,000 ms) never spaces
// the calls and the run takes seconds. The salt is CC_HARNESS_SALT (default "default"): a run again
// within the same UTC day on the same wallets spends one more of each wallet's 100 daily calls; a
// new salt gives new wallets. A case whose body names its own `caller` is answered for that wallet
// (the body's caller is the one the worker uses), so a 402 from the free tier is retried once after
// CC_HARNESS_WAIT_MS (default 5100). --interval-ms N still spaces the calls when asked.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jcs } from './reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const corpus = JSON.parse(readFileSync(join(here, 'corpus.json'), 'utf8'));
const { sha256, ...unpinned } = corpus;
const pin = createHash('sha256').update(jcs(unpinned)).digest('hex');
if (pin !== sha256) {
  console.error(`corpus pin mismatch: computed ${pin}, recorded ${sha256}`);
  process.exit(2);
}
console.log(`corpus pin ok: ${pin} (${corpus.cases.length} cases)`);

const [url, ...rest] = process.argv.slice(2);
if (!url) process.exit(0);
const base = url.replace(/\/+$/, '');
const iv = rest.indexOf('--interval-ms');
const interval = iv >= 0 ? Number(rest[iv + 1]) : 0;
const salt = process.env.CC_HARNESS_SALT ?? 'default';
const waitMs = Number(process.env.CC_HARNESS_WAIT_MS ?? 5100);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(bytes) {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let out = '';
  while (n > 0n) { out = B58[Number(n % 58n)] + out; n /= 58n; }
  for (const b of bytes) { if (b === 0) out = `1${out}`; else break; }
  return out;
}
/** The case's own wallet (a Solana address: base58 of 32 bytes). */
const walletOf = (c) => base58(createHash('sha256').update(`context-composition-harness/${salt}/${c.name}`).digest());

function bodyOf(c) {
  if (c.body_base64 !== undefined) return Buffer.from(c.body_base64, 'base64');
  let s = c.body;
  if (c.body_fill) s = s.replace('@@FILL@@', c.body_fill.char.repeat(c.body_fill.count));
  return Buffer.from(s, 'utf8');
}

let passed = 0;
let failed = 0;
const fail = (name, why) => {
  failed++;
  console.log(`FAIL ${name}: ${why}`);
};

// The served criteria must publish the same pin.
try {
  const doc = await (await fetch(`${base}/context-composition/criteria`)).json();
  if (doc?.corpus?.sha256 === pin) passed++;
  else fail('criteria', `served corpus pin ${doc?.corpus?.sha256} != ${pin}`);
} catch (e) {
  fail('criteria', `GET /context-composition/criteria failed (${e.message})`);
}

async function precheck(c) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}/context-composition/precheck`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-caller': walletOf(c) },
      body: bodyOf(c),
    });
    const text = await res.text();
    if (res.status !== 402 || attempt > 0 || c.expect.refusal?.status === 402) return { res, text };
    await sleep(waitMs);
  }
}

for (const c of corpus.cases) {
  try {
    const { res, text } = await precheck(c);
    if (c.expect.refusal) {
      if (res.status !== c.expect.refusal.status || !text.includes(c.expect.refusal.code)) {
        fail(c.name, `status ${res.status}, expected ${c.expect.refusal.status} ${c.expect.refusal.code}`);
      } else passed++;
    } else {
      const got = JSON.parse(text);
      const want = { ...c.expect.precheck };
      // A live worker stamps its own clock: issued_at is checked for shape, not value.
      const stampOk = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(got.issued_at ?? '');
      for (const o of [got, want]) { delete o.signature; delete o.issued_at; }
      if (res.status === 200 && stampOk && jcs(got) === jcs(want)) passed++;
      else fail(c.name, `status ${res.status}${stampOk ? '' : ', issued_at malformed'}${res.status === 200 ? ', report differs' : ''}`);
    }
  } catch (e) {
    fail(c.name, String(e?.message ?? e));
  }
  if (interval > 0) await sleep(interval);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
