// token-efficiency at the cap in real workerd (wrangler dev), measured in ONE run: the issue's
// ratios (budget needing S-4 ≤ 1.5×, precheck ≤ 1.1× one tokenization of the payload) where the
// worker actually runs them, in wasm. The worker is started with BENCH_ROUTES=1, which enables
// POST /bench/token-efficiency?op=OP&repeat=N (src/edge/bench.rs): `count` parses the request once
// and counts its canonical payload N times; `analyse` likewise tokenizes it N times with the S-4
// prefix analysis the budget op and an over-budget precheck build; `parse` runs the parse and free validation alone;
// `precheck` and `budget` run N times the whole path their routes run after the free tier or
// payment (parse and free validation, the engine, the signed response body); `digest` hashes N times
// with SHA-512 the bytes the budget answer's Ed25519 signature covers (the report, shaped payload
// included), so one tokenization plus it is the budget path's floor (`digest-native`, when named in
// TE_BENCH_OPS, hashes the same bytes through WebCrypto); `write` writes those bytes N
// times (the JCS writer's share of the budget path; a build older than it: leave it out). Each op's own
// repeat=0 request (body sent and read, `count`'s one parse) is subtracted, so a figure is the
// time of N passes over N; N is sized so that request is at most about 5% of a timed one (at most
// 64 passes). Rounds interleave the ops so machine noise touches them alike; figures are medians
// over rounds.
// `fits` is the precheck of the same body with the budget set to the payload's own count and no
// reserve (the precheck's fits path at its tightest, P = B), as the native benchmark measures it.
// Before timing, each case's figures are checked against npm gpt-tokenizer (the independent
// oracle): the payload's tokens from every op that counts, and the budget op's shaped tokens ≤ budget.
//   node bench/token-efficiency-workerd.mjs DIR   (the bundle must be built: scripts/build.sh;
//   DIR holds the bodies the native benchmark writes with TE_BENCH_DUMP=DIR, see scripts/bench.sh)
// Before/after in one run: TE_BENCH_BEFORE=ROOT also starts the worker built in another checkout
// ROOT (its own build/, wrangler.toml and tests/e2e/lib/worker.mjs) and every round times each op on
// both, alternating which goes first; each line then prints both builds' figures (a build older than
// the `analyse` op answers it op_invalid: leave it out with TE_BENCH_OPS).
// TE_BENCH_PORT (default 8853) is the port of this checkout's worker; the other's is the next one.
// TE_BENCH_CASE=a,b runs only those cases; TE_BENCH_OPS=fits,parse times only those ops (and count).
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { startWorker } from '../tests/e2e/lib/worker.mjs';
import { round, writeSection } from './section.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const MAX_REPEAT = 64;
// The repeat=0 request's share of a timed one that N is sized for.
const OVERHEAD_AIM = 0.05;
// `engine` runs the budget op without writing or signing its report (parse, validation, S-1..S-4),
// so budget less engine is what the signed body costs; `sign` signs the precheck's small report
// as the routes sign one (a signature's fixed cost: the nonce, r·B, two SHA-512 of a few blocks).
const ALL_OPS = ['count', 'analyse', 'parse', 'precheck', 'fits', 'budget', 'digest', 'write', 'engine', 'sign'];
// Timed only when TE_BENCH_OPS names it: `digest-native` hashes the digest op's bytes through
// WebCrypto instead of wasm sha2 (signing stays in wasm: natively about 0.83x of its time, see src/edge/sha512.rs).
const NAMED_ONLY_OPS = ['digest-native'];
// TE_BENCH_OPS=count,fits,... times only those ops (count is always timed: every ratio is to it).
const OPS = process.env.TE_BENCH_OPS
  ? [...ALL_OPS, ...NAMED_ONLY_OPS]
    .filter((op) => op === 'count' || process.env.TE_BENCH_OPS.split(',').includes(op))
  : ALL_OPS;
const PORT = Number(process.env.TE_BENCH_PORT ?? 8853);
const BEFORE = process.env.TE_BENCH_BEFORE;

const dir = process.argv[2];
const only = process.env.TE_BENCH_CASE;
const cases = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => ({ id: f.slice(0, -'.json'.length), body: readFileSync(join(dir, f)) }))
  .filter((c) => !only || only.split(',').includes(c.id));
if (cases.length === 0) throw new Error(`no bodies in ${dir}`);

const canonical = (payload) => {
  try {
    return JSON.stringify(JSON.parse(payload));
  } catch {
    return payload;
  }
};

const builds = [{ name: 'after', w: await startWorker({ port: PORT, vars: { BENCH_ROUTES: '1' }, logLevel: 'warn' }) }];
if (BEFORE) {
  const other = await import(pathToFileURL(join(resolve(BEFORE), 'tests/e2e/lib/worker.mjs')).href);
  builds.unshift({ name: 'before', w: await other.startWorker({ port: PORT + 1, vars: { BENCH_ROUTES: '1' }, logLevel: 'warn' }) });
}
// The run's figures as data (docs/bench/latest.json): kept only for a plain run of every op on every case.
const kept = [];
try {
  const call = async (w, body, op, repeat, attempts = 3) => {
    const t = performance.now();
    let r;
    try {
      r = await fetch(`${w.url}/bench/token-efficiency?op=${op}&repeat=${repeat}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body,
      });
    } catch (err) {
      // A pooled keep-alive connection workerd closed between requests: not timed, retried.
      if (attempts <= 1) throw err;
      return call(w, body, op, repeat, attempts - 1);
    }
    const answer = await r.json();
    if (r.status !== 200) throw new Error(`bench route ${r.status} ${answer.code}`);
    return { ms: performance.now() - t, answer };
  };

  console.log(`token-efficiency at the cap in workerd: median of ${ROUNDS} rounds, ratios to one tokenization ` +
    'of the canonical payload (net of each op\'s repeat=0 request)');
  for (const { id, body } of cases) {
    const request = JSON.parse(body.toString('utf8'));
    const expected = encode(canonical(request.payload), { disallowedSpecial: new Set() }).length;
    const fitsRequest = { ...request, budget_tokens: expected };
    delete fitsRequest.reserve_tokens;
    const bodies = { fits: JSON.stringify(fitsRequest) };
    const send = (w, op, repeat) => call(w, bodies[op] ?? body, op === 'fits' ? 'precheck' : op, repeat);
    const budget = request.budget_tokens - (request.reserve_tokens ?? 0);
    const once = {};
    for (const { name, w } of builds) {
      for (const op of OPS) {
        once[op] = await send(w, op, 1);
        if (op !== 'parse' && once[op].answer.tokens !== expected) {
          throw new Error(`${id} ${name} ${op}: ${once[op].answer.tokens} tokens, gpt-tokenizer ${expected}`);
        }
      }
      if (once.budget && !(once.budget.answer.shaped_tokens <= budget) && expected <= budget) {
        throw new Error(`${id} ${name}: shaped ${once.budget.answer.shaped_tokens} over the budget ${budget}`);
      }
    }
    // Passes per request from probes of the cheapest op that counts (one tokenization).
    const zeros = [];
    const ones = [];
    const probe = builds[builds.length - 1].w;
    for (let i = 0; i < 3; i++) {
      zeros.push((await send(probe, 'count', 0)).ms);
      ones.push((await send(probe, 'count', 1)).ms);
    }
    const perPass = Math.max(median(ones) - median(zeros), 0.05);
    const repeat = Math.min(MAX_REPEAT,
      Math.max(1, Math.ceil((median(zeros) * (1 - OVERHEAD_AIM)) / (OVERHEAD_AIM * perPass))));
    const net = builds.map(() => Object.fromEntries(OPS.map((op) => [op, []])));
    const share = [];
    for (let i = 0; i < ROUNDS; i++) {
      for (const op of OPS) {
        for (let k = 0; k < builds.length; k++) {
          const b = (i + k) % builds.length;
          const zero = await send(builds[b].w, op, 0);
          const full = await send(builds[b].w, op, repeat);
          net[b][op].push((full.ms - zero.ms) / repeat);
          share.push(zero.ms / full.ms);
        }
      }
    }
    const line = (figures) => {
      if (OPS !== ALL_OPS) {
        const count = median(figures.count);
        return `one tokenization ${count.toFixed(2)} ms; ` +
          OPS.filter((op) => op !== 'count').map((op) => `${op} ${(median(figures[op]) / count).toFixed(2)}x`).join(', ');
      }
      const m = Object.fromEntries(OPS.map((op) => [op, median(figures[op])]));
      const count = m.count;
      const x = (ms) => `${(ms / count).toFixed(2)}x`;
      const floor = 1 + m.digest / count;
      return `one tokenization ${count.toFixed(2)} ms (with the S-4 prefix analysis ${x(m.analyse)}); ` +
        `parse alone ${x(m.parse)}; ` +
        `precheck ${x(m.precheck)}, fits path ${x(m.fits)}; budget ${m.budget.toFixed(2)} ms ` +
        `(${x(m.budget)}; floor ${floor.toFixed(2)}x, SHA-512 of the signed bytes ${x(m.digest)}; ` +
        `above the floor ${(m.budget / count - floor).toFixed(2)}x); engine alone ${x(m.engine)}, ` +
        `the JCS writer ${x(m.write)}, one signature of a small report ${(m.sign * 1000).toFixed(0)} us = ${x(m.sign)}`;
    };
    console.log(`${id}: ${body.length} bytes, ${expected} tokens (= gpt-tokenizer), ${repeat} passes per request, ` +
      `shaped ${once.budget?.answer.shaped_tokens} tokens, answer ${once.budget?.answer.answer_bytes} bytes; repeat=0 request ` +
      `${(median(share) * 100).toFixed(1)}% of a timed one`);
    builds.forEach(({ name }, b) => console.log(`  ${builds.length > 1 ? `${name}: ` : ''}${line(net[b])}`));
    kept.push({
      id, body_bytes: body.length, tokens: expected, passes_per_request: repeat,
      shaped_tokens: once.budget?.answer.shaped_tokens ?? null, answer_bytes: once.budget?.answer.answer_bytes ?? null,
      overhead_share: round(median(share), 4),
      ms: Object.fromEntries(OPS.map((op) => [op, round(median(net[builds.length - 1][op]), 4)])),
    });
  }
  if (!BEFORE && !only && OPS === ALL_OPS) writeSection('token-efficiency-workerd', { rounds: ROUNDS, cases: kept });
} finally {
  for (const { w } of builds) await w.stop();
}
