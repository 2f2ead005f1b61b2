// Harness for the context-composition/v1 corpus.
//
//   node harness.mjs                       verify the corpus pin only
//   node harness.mjs URL [--interval-ms N] verify the pin, then POST every case to
//                                          URL/context-composition/precheck and compare
//
// A refusal case passes when the HTTP status matches and the body names the refusal code. A
// measured or could-not-measure case passes when the answer is 200 and its JSON, without the
// `signature` member and with `issued_at` checked for shape only (a live worker stamps its own
// clock), equals the expected pre-check report under JCS. Prints `N passed, N failed`.
// --interval-ms spaces the calls (the free tier allows one call per caller every 5,000 ms).

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jcs } from './reference.mjs';

// A fixed test wallet (base58 of 32 bytes) for the X-Caller header; CC_HARNESS_CALLER overrides it.
const HARNESS_CALLER = process.env.CC_HARNESS_CALLER ?? '8SFqwqnq4whPhs8icwHA2hQg3hUoN1qrCLK1SBx3WKwe';

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
const iv = rest.indexOf('--interval-ms');
const interval = iv >= 0 ? Number(rest[iv + 1]) : 0;

function bodyOf(c) {
  if (c.body_base64 !== undefined) return Buffer.from(c.body_base64, 'base64');
  let s = c.body;
  if (c.body_fill) s = s.replace('@@FILL@@', c.body_fill.char.repeat(c.body_fill.count));
  return Buffer.from(s, 'utf8');
}

let passed = 0;
let failed = 0;
for (const c of corpus.cases) {
  let ok = false;
  let detail = '';
  try {
    const res = await fetch(`${url.replace(/\/$/, '')}/context-composition/precheck`, {
      method: 'POST',
      // The free tier needs a wallet: cases without a body `caller` name one in X-Caller.
      headers: { 'content-type': 'application/json', 'x-caller': HARNESS_CALLER },
      body: bodyOf(c),
    });
    const text = await res.text();
    if (c.expect.refusal) {
      ok = res.status === c.expect.refusal.status && text.includes(c.expect.refusal.code);
      detail = `status ${res.status}`;
    } else {
      const got = JSON.parse(text);
      const want = { ...c.expect.precheck };
      // A live worker stamps its own clock: issued_at is checked for shape, not value.
      const stampOk = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(got.issued_at ?? '');
      for (const o of [got, want]) { delete o.signature; delete o.issued_at; }
      ok = res.status === 200 && stampOk && jcs(got) === jcs(want);
      detail = `status ${res.status}`;
    }
  } catch (e) {
    detail = String(e?.message ?? e);
  }
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL ${c.name}: ${detail}`);
  }
  if (interval > 0) await new Promise((r) => setTimeout(r, interval));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
