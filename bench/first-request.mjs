// First request to a fresh workerd isolate (issue 31 target 2): context-meter against the floor, a
// hello-world workers-rs worker built with the same toolchain, crate versions and release profile
// (bench/hello-world). Each sample is a fresh `wrangler dev` (a new workerd process, so a new
// isolate): wait until it says it is ready and its port accepts connections, let it sit idle for
// IDLE_MS so nothing of the start-up is still running, then time ONE request end to end (sent,
// answered, body read). No request reaches the worker before the timed one (no readiness GET).
// Kinds alternate within each round (ours GET / (the index: routes, prices, signing key), ours GET
// /metrics (a small text render), ours GET of an unrouted path (404 from the router alone), floor
// GET /) so all see the same machine noise; the figure is the median of STARTS rounds (default 7) of
// each kind. It also prints how long each start took to be ready (spawn to "Ready on" + port open).
//   node bench/first-request.mjs   (both bundles built: scripts/build.sh and
//                                   scripts/first-request.sh, which also runs this)
// Ports 18500-18599 (the perf range of the e2e suites).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ROOT } from '../tests/e2e/lib/worker.mjs';
import { round, writeSection } from './section.mjs';

const STARTS = Number(process.env.STARTS ?? 7);
const IDLE_MS = Number(process.env.IDLE_MS ?? 1500);
const WRANGLER = join(ROOT, 'node_modules', '.bin', 'wrangler');
const FLOOR_DIR = join(ROOT, 'bench', 'hello-world');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const wasm of [join(ROOT, 'build', 'index_bg.wasm'), join(FLOOR_DIR, 'build', 'index_bg.wasm')]) {
  if (!existsSync(wasm)) throw new Error(`${wasm} missing: run scripts/first-request.sh (it builds both)`);
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

// One fresh `wrangler dev` in `dir`; resolves once it printed "Ready on" and its port accepts.
async function start(dir, port) {
  const persist = mkdtempSync(join('/tmp', 'cm-first-'));
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--show-interactive-dev-session=false',
    '--persist-to', persist, '--log-level', 'info'];
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_UPDATE_NOTIFIER: '1' };
  const child = spawn(WRANGLER, args, { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const stop = async () => {
    try { process.kill(-child.pid, 'SIGTERM'); } catch {}
    await sleep(300);
    try { process.kill(-child.pid, 'SIGKILL'); } catch {}
    rmSync(persist, { recursive: true, force: true });
  };
  const spawned = performance.now();
  const deadline = Date.now() + 90_000;
  while (!(out.includes('Ready on') && (await portOpen(port)))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev in ${dir} not ready:\n${out.slice(-2000)}`);
    }
    await sleep(50);
  }
  return { stop, readyMs: performance.now() - spawned };
}

async function timed(url) {
  const t = performance.now();
  const r = await fetch(url);
  const body = await r.arrayBuffer();
  return { ms: performance.now() - t, status: r.status, bytes: body.byteLength };
}

const kinds = [
  { name: 'ours GET /', dir: ROOT, path: '/', status: 200 },
  { name: 'ours GET /metrics', dir: ROOT, path: '/metrics', status: 200 },
  { name: 'ours GET /unrouted (404)', dir: ROOT, path: '/unrouted', status: 404 },
  { name: 'floor GET / (hello world)', dir: FLOOR_DIR, path: '/', status: 200, floor: true },
];
const samples = kinds.map(() => ({ first: [], second: [], ready: [] }));
let port = 18500;
for (let round = 0; round < STARTS; round++) {
  for (const [k, kind] of kinds.entries()) {
    port = port >= 18599 ? 18500 : port + 1;
    const w = await start(kind.dir, port);
    try {
      await sleep(IDLE_MS);
      const first = await timed(`http://127.0.0.1:${port}${kind.path}`);
      if (first.status !== kind.status) throw new Error(`${kind.name} answered ${first.status}`);
      const second = await timed(`http://127.0.0.1:${port}${kind.path}`);
      samples[k].first.push(first.ms);
      samples[k].second.push(second.ms);
      samples[k].ready.push(w.readyMs);
    } finally {
      await w.stop();
    }
  }
}
const floor = median(samples[kinds.findIndex((kind) => kind.floor)].first);
const wasmSize = (dir) => statSync(join(dir, 'build', 'index_bg.wasm')).size;
console.log(`first request to a fresh workerd isolate (wrangler dev, idle ${IDLE_MS} ms after ready; ` +
  `median of ${STARTS} fresh starts each, kinds alternating; wasm ours ${wasmSize(ROOT)} B, floor ${wasmSize(FLOOR_DIR)} B):`);
for (const [k, kind] of kinds.entries()) {
  const first = median(samples[k].first);
  console.log(`  ${kind.name}: first ${first.toFixed(1)} ms (${(first / floor).toFixed(2)}x the floor; ` +
    `all ${samples[k].first.map((x) => x.toFixed(1)).join(', ')}), second ${median(samples[k].second).toFixed(1)} ms; ` +
    `start to ready ${(median(samples[k].ready) / 1000).toFixed(2)} s`);
}
writeSection('first-request', {
  starts: STARTS,
  idle_ms: IDLE_MS,
  wasm_bytes: { ours: wasmSize(ROOT), floor: wasmSize(FLOOR_DIR) },
  kinds: kinds.map((kind, k) => ({
    name: kind.name,
    path: kind.path,
    floor: Boolean(kind.floor),
    first_ms: round(median(samples[k].first), 2),
    first_all_ms: samples[k].first.map((x) => round(x, 2)),
    second_ms: round(median(samples[k].second), 2),
    ready_ms: round(median(samples[k].ready), 0),
  })),
});
