// Tokenizer throughput in real workerd (wrangler dev) against gpt-tokenizer in this Node, measured
// in ONE run on the same text. The worker is started with BENCH_ROUTES=1, which enables the
// benchmark-only route POST /bench/tokenizer?repeat=N (src/edge/bench.rs): the whole corpus goes in
// one text body and is tokenized N times with tokenizer::count, nothing else (no JSON, Durable
// Object or D1). N is chosen so the per-request overhead (measured with repeat=0: the same body sent,
// read and answered without tokenizing) is under 5% of the request; the figure reported is the
// gross one (overhead included) and, for reference, the net one (overhead subtracted).
// Rounds alternate workerd and Node so both see the same machine noise.
//   [PORT=8851] node bench/workerd.mjs CORPUS.txt   (the bench build must be there:
//                                        CARGO_FEATURES=bench-routes bash scripts/build.sh; the corpus is the
//                                        tokenizer benchmark's 1 MiB mixed file, see scripts/bench.sh)
// Before/after in one run: WORKERD_BENCH_BEFORE=ROOT also starts the worker built in another checkout
// ROOT (its own build/ and tests/e2e/lib/worker.mjs, on PORT + 1); every round then times both builds,
// alternating which goes first, and the last line prints the before/after ratio of the medians.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { startWorker } from '../tests/e2e/lib/worker.mjs';
import { round, writeSection } from './section.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const MAX_REPEAT = 64;
const OVERHEAD_SHARE = 0.05;
// The probe is noisy: N is sized for 2%, well under the allowed share.
const OVERHEAD_AIM = 0.02;

if (!readFileSync(new URL('../build/features.txt', import.meta.url), 'utf8').includes('bench-routes')) {
  throw new Error('the built bundle has no bench routes: CARGO_FEATURES=bench-routes bash scripts/build.sh');
}
const corpus = readFileSync(process.argv[2], 'utf8');
const mib = Buffer.byteLength(corpus) / (1 << 20);
const options = { disallowedSpecial: new Set() };

const PORT = Number(process.env.PORT ?? 8851);
const BEFORE = process.env.WORKERD_BENCH_BEFORE;
const w = await startWorker({ port: PORT, vars: { BENCH_ROUTES: '1' }, logLevel: 'warn' });
let before = null;
try {
  if (BEFORE) {
    const other = await import(pathToFileURL(join(resolve(BEFORE), 'tests/e2e/lib/worker.mjs')).href);
    before = await other.startWorker({ port: PORT + 1, vars: { BENCH_ROUTES: '1' }, logLevel: 'warn' });
  }
  const call = async (text, repeat, attempts = 3, url = w.url) => {
    const t = performance.now();
    let r;
    try {
      r = await fetch(`${url}/bench/tokenizer?repeat=${repeat}`, {
        method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: text,
      });
    } catch (err) {
      // A pooled keep-alive connection workerd closed while Node timed gpt-tokenizer (EPIPE on
      // write): that attempt is not timed; retry on a fresh connection.
      if (attempts <= 1) throw err;
      return call(text, repeat, attempts - 1, url);
    }
    const body = await r.json();
    if (r.status !== 200) throw new Error(`bench route ${r.status}`);
    return { ms: performance.now() - t, body };
  };
  const cold = await call('hello world', 1);

  // gpt-tokenizer's first pass (no merge cache yet), then the check that both count the same.
  let t = performance.now();
  const expected = encode(corpus, options).length;
  const nodeFirst = performance.now() - t;
  const once = await call(corpus, 1);
  if (once.body.tokens !== expected) {
    throw new Error(`count differs: workerd ${once.body.tokens}, gpt-tokenizer ${expected}`);
  }

  // Pick N so the overhead is under 5% of a request.
  const overheadProbe = [];
  const singleProbe = [];
  for (let i = 0; i < 3; i++) {
    overheadProbe.push((await call(corpus, 0)).ms);
    singleProbe.push((await call(corpus, 1)).ms);
  }
  const perPass = Math.max(median(singleProbe) - median(overheadProbe), 0.1);
  const repeat = Math.min(MAX_REPEAT,
    Math.max(1, Math.ceil((median(overheadProbe) * (1 - OVERHEAD_AIM)) / (OVERHEAD_AIM * perPass))));

  const overhead = [];
  const worker = [];
  const node = [];
  const beforeOverhead = [];
  const beforeWorker = [];
  const timeBefore = async () => {
    beforeOverhead.push((await call(corpus, 0, 3, before.url)).ms);
    const r = await call(corpus, repeat, 3, before.url);
    if (r.body.tokens !== expected) throw new Error('the before build counts differently');
    beforeWorker.push(r.ms);
  };
  for (let i = 0; i < ROUNDS; i++) {
    if (before && i % 2 === 0) await timeBefore();
    overhead.push((await call(corpus, 0)).ms);
    const r = await call(corpus, repeat);
    if (r.body.tokens !== expected) throw new Error('count differs under repeat');
    worker.push(r.ms);
    if (before && i % 2 === 1) await timeBefore();
    t = performance.now();
    for (let k = 0; k < repeat; k++) encode(corpus, options);
    node.push((performance.now() - t) / repeat);
  }
  const gross = median(worker) / repeat;
  const net = (median(worker) - median(overhead)) / repeat;
  const share = median(overhead) / median(worker);
  const rate = (ms) => (mib / (ms / 1000)).toFixed(2);
  console.log(`corpus: ${mib.toFixed(2)} MiB mixed text, ${expected} tokens (workerd count = gpt-tokenizer count); ` +
    `median of ${ROUNDS} rounds, ${repeat} passes per request`);
  console.log(`workerd cold first request (tokenizer setup + isolate): ${cold.ms.toFixed(1)} ms`);
  console.log(`workerd /bench/tokenizer: ${median(worker).toFixed(1)} ms per request of ${repeat} passes = ` +
    `${gross.toFixed(1)} ms per pass (${rate(gross)} MiB/s incl. overhead); overhead (repeat=0) ` +
    `${median(overhead).toFixed(1)} ms = ${(share * 100).toFixed(1)}% of the request; net ${net.toFixed(1)} ms per pass (${rate(net)} MiB/s)`);
  console.log(`gpt-tokenizer 4.0.0 in Node ${process.version}: first pass ${nodeFirst.toFixed(1)} ms (${rate(nodeFirst)} MiB/s); ` +
    `warm (merge cache) ${median(node).toFixed(1)} ms per pass (${rate(median(node))} MiB/s)`);
  if (share >= OVERHEAD_SHARE) console.log(`WARNING: overhead ${(share * 100).toFixed(1)}% is over ${OVERHEAD_SHARE * 100}%`);
  console.log(`ratio workerd vs gpt-tokenizer warm: ${(median(node) / gross).toFixed(2)}x incl. overhead, ` +
    `${(median(node) / net).toFixed(2)}x net; vs first pass ${(nodeFirst / gross).toFixed(2)}x`);
  // A before/after run is a comparison, not the run's figures: only a plain run is kept as data.
  if (!before) {
    writeSection('tokenizer-workerd', {
      corpus_bytes: Buffer.byteLength(corpus),
      tokens: expected,
      rounds: ROUNDS,
      passes_per_request: repeat,
      cold_first_request_ms: round(cold.ms, 1),
      request_ms: round(median(worker), 2),
      overhead_ms: round(median(overhead), 2),
      pass_ms: round(gross, 3),
      pass_net_ms: round(net, 3),
      gpt_tokenizer: { node: process.version, first_pass_ms: round(nodeFirst, 2), warm_pass_ms: round(median(node), 3) },
    });
  }
  if (before) {
    const beforeGross = median(beforeWorker) / repeat;
    const beforeNet = (median(beforeWorker) - median(beforeOverhead)) / repeat;
    console.log(`before (${BEFORE}): ${beforeGross.toFixed(1)} ms per pass (${rate(beforeGross)} MiB/s incl. overhead), ` +
      `net ${beforeNet.toFixed(1)} ms (${rate(beforeNet)} MiB/s); after/before speed ${(beforeGross / gross).toFixed(3)}x ` +
      `incl. overhead, ${(beforeNet / net).toFixed(3)}x net; before vs gpt-tokenizer warm ${(median(node) / beforeGross).toFixed(2)}x`);
  }
} finally {
  await w.stop();
  if (before) await before.stop();
}
