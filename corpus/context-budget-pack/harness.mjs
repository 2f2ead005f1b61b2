// Runs the pinned context-budget-pack corpus against a running worker's FREE preflight route.
//
//   node corpus/context-budget-pack/harness.mjs http://127.0.0.1:8787 [--header 'Name: value' ...]
//
// First verifies the corpus pin (sha256 of the JCS form without its sha256 member) and the pinned
// contract hash. Then, per case: a refusal case must answer its HTTP status and code (looked up as
// body.code or body.error.code); an accepted case must answer 200 with valid = true and the
// inputSha256 of the expected paid response (the preflight never returns packed content, so the
// paid result itself is checked by the Rust corpus test and by the paid end-to-end tests).
// Prints `N passed, N failed` and exits non-zero on any failure.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sha256 = (s) => createHash('sha256').update(s).digest('hex');
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
}

const args = process.argv.slice(2);
const base = args.find((a) => !a.startsWith('--') && /^https?:/.test(a));
if (!base) {
  console.error('usage: harness.mjs <worker-url> [--header "Name: value" ...]');
  process.exit(2);
}
const extraHeaders = {};
args.forEach((a, i) => {
  if (a === '--header' && args[i + 1]) {
    const [name, ...rest] = args[i + 1].split(':');
    extraHeaders[name.trim()] = rest.join(':').trim();
  }
});

const corpus = JSON.parse(readFileSync(join(here, 'corpus.json'), 'utf8'));
const contract = JSON.parse(readFileSync(join(here, 'contract.json'), 'utf8'));
const { sha256: pin, ...unpinned } = corpus;
if (sha256(jcs(unpinned)) !== pin || corpus.contractSha256 !== sha256(jcs(contract))) {
  console.error('corpus pin MISMATCH: regenerate with gen-corpus.mjs and review the diff');
  process.exit(1);
}

let passed = 0;
let failed = 0;
for (const c of corpus.cases) {
  const res = await fetch(new URL('/context-budget-pack/preflight', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...extraHeaders },
    body: c.body,
  });
  let body = null;
  try { body = await res.json(); } catch { body = null; }
  let ok;
  if (c.expect.status === 200) {
    const want = JSON.parse(c.expect.response).provenance.inputSha256;
    ok = res.status === 200 && body?.valid === true && body?.inputSha256 === want;
  } else {
    const code = body?.code ?? body?.error?.code;
    ok = res.status === c.expect.status && code === c.expect.code;
  }
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL ${c.name}: HTTP ${res.status}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
