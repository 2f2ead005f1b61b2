// Tokenizer and engine timings in real workerd (wrangler dev), against gpt-tokenizer in this Node,
// measured in ONE run on the same text. The worker is reached through the free precheck of
// token-efficiency with a text-only payload (so the engine's work is one tokenization), at the
// 256 KiB body cap; the 1 MB mixed corpus is sent as four such bodies.
//   node bench/workerd.mjs CORPUS.txt   (the bundle must be built: scripts/build.sh; the corpus is the
//                                        tokenizer benchmark's 1 MiB mixed file, see scripts/bench.sh)
import { readFileSync } from 'node:fs';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { startWorker, wallet } from '../tests/e2e/lib/worker.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ROUNDS = Number(process.env.ROUNDS ?? 7);

const corpus = readFileSync(process.argv[2], 'utf8');
const chunks = [];
// Chunks of whole code points, each well under the 256 KiB body cap once JSON-escaped.
const points = Array.from(corpus);
for (let i = 0; i < points.length; i += 100_000) chunks.push(points.slice(i, i + 100_000).join(''));

const w = await startWorker({ port: 8851, vars: { FREE_MIN_INTERVAL_MS: '0', FREE_PER_DAY: '100000' } });
try {
  const call = async (payload, caller) => {
    const t = performance.now();
    const r = await fetch(w.url + '/token-efficiency/precheck', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payload, budget_tokens: 1, caller }),
    });
    const body = await r.json();
    if (r.status !== 200) throw new Error(`precheck ${r.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - t, body };
  };
  const cold = await call('hello world', wallet(900));
  const tiny = [];
  for (let i = 0; i < ROUNDS; i++) tiny.push((await call('hello world', wallet(901))).ms);
  const worker = [];
  for (let i = 0; i < ROUNDS; i++) {
    let total = 0;
    for (const c of chunks) total += (await call(c, wallet(902))).ms;
    worker.push(total);
  }
  const node = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    for (const c of chunks) encode(c, { disallowedSpecial: new Set() });
    node.push(performance.now() - t);
  }
  const mb = Buffer.byteLength(corpus) / (1 << 20);
  const overhead = median(tiny) * chunks.length;
  console.log(`corpus: ${mb.toFixed(2)} MiB mixed text in ${chunks.length} requests, median of ${ROUNDS}`);
  console.log(`workerd cold first request (tokenizer setup + isolate): ${cold.ms.toFixed(1)} ms; warm tiny request ${median(tiny).toFixed(1)} ms`);
  console.log(`workerd precheck, whole corpus: ${median(worker).toFixed(1)} ms (${(mb / (median(worker) / 1000)).toFixed(2)} MiB/s incl. HTTP); net of tiny-request overhead ${(median(worker) - overhead).toFixed(1)} ms`);
  console.log(`gpt-tokenizer 4.0.0 in Node ${process.version}: ${median(node).toFixed(1)} ms (${(mb / (median(node) / 1000)).toFixed(2)} MiB/s)`);
  console.log(`ratio workerd (net) vs gpt-tokenizer: ${(median(node) / (median(worker) - overhead)).toFixed(2)}x`);
} finally {
  await w.stop();
}
