// The first command runs the main job (issue 45): `make dev` serves the worker together with the local
// payment stacks its embedded [vars] name (scripts/dev-stacks.mjs) and a funded payer, and the README's
// quickstart, `node examples/<rail>/pay-and-verify.mjs` with no variables, pays and verifies on every
// rail against it; when `make dev` stops (Ctrl-C: SIGINT to its process group) the stacks stop with it.
// It runs `make dev` as a new user would, on the default ports (worker 8787 and the stacks' ports from
// wrangler.toml), so it skips, saying so in one line, when any of them is taken (a `make dev` of your own).
// Its local D1 and Durable Object state goes to a scratch PERSIST_TO, not to the checkout's; it serves the
// bundle already in build/ (DEV_BUILD=0: `make test` has just built it, and a rebuild costs ~40 s) when
// there is one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, stateRoot } from '../lib/worker.mjs';
import { localVars, DEV_PAYER_FILE } from '../../../scripts/dev-stacks.mjs';

const WORKER = 'http://127.0.0.1:8787';
const vars = localVars();
const PORTS = {
  worker: 8787,
  ...Object.fromEntries(['SOLANA_RPC_URL', 'FACILITATOR_URL', 'EVM_84532_RPC_URL', 'TEMPO_RPC_URL']
    .map((name) => [name, Number(new URL(vars[name]).port)])),
};
// What the examples would otherwise read: the quickstart runs with none of it.
const EXAMPLE_VARS = ['CM_URL', 'SOLANA_RPC_URL', 'PAYER_KEYPAIR', 'EVM_RPC_URL', 'TEMPO_RPC_URL', 'PAYER_PRIVATE_KEY'];

let dev, out = '', persist, payer, skipped = null;

const portFree = (port) => new Promise((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
});
/** A process that has not exited (a zombie has). */
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  for (const [name, port] of Object.entries(PORTS)) {
    if (!(await portFree(port))) {
      skipped = `port ${port} (${name}) is in use: is a \`make dev\` running? dev_quickstart needs the default ports`;
      console.error(`SKIP dev_quickstart: ${skipped}`);
      return;
    }
  }
  persist = mkdtempSync(join(stateRoot(), 'cm-dev-'));
  const env = { ...process.env, PERSIST_TO: persist };
  delete env.PORT;
  delete env.DEV_STACKS;
  if (existsSync(join(ROOT, 'build', 'index_bg.wasm'))) env.DEV_BUILD = '0';
  else delete env.DEV_BUILD;
  const started = Date.now();
  dev = spawn('make', ['dev'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout.on('data', (d) => (out += d));
  dev.stderr.on('data', (d) => (out += d));
  // Up when the worker answers (make dev starts it once the stacks have written the payer).
  for (;;) {
    if (dev.exitCode !== null) assert.fail(`make dev exited with ${dev.exitCode}:\n${out.slice(-4000)}`);
    if (Date.now() - started > 300_000) assert.fail(`make dev not serving in 300 s:\n${out.slice(-4000)}`);
    try {
      const r = await fetch(WORKER + '/');
      await r.arrayBuffer();
      if (r.ok) break;
    } catch {}
    await sleep(250);
  }
  console.error(`dev_quickstart: make dev served in ${Date.now() - started} ms`);
  payer = JSON.parse(readFileSync(DEV_PAYER_FILE, 'utf8'));
});

after(async () => {
  if (dev && dev.exitCode === null) {
    try { process.kill(-dev.pid, 'SIGKILL'); } catch {}
  }
  // Whatever a failed stop left running would hold the ports (and this file's pipes) for the next file.
  const left = Object.values(payer?.pids ?? {}).filter(alive);
  for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch {}
  if (left.length) rmSync(DEV_PAYER_FILE, { force: true });
  dev?.stdout.destroy();
  dev?.stderr.destroy();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

async function quickstart(rail) {
  const env = { ...process.env };
  for (const name of EXAMPLE_VARS) delete env[name];
  const example = join('examples', rail, 'pay-and-verify.mjs');
  const run = await promisify(execFile)(process.execPath, [example], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 })
    .catch((e) => assert.fail(`${example} with no variables failed (${e.code ?? e.signal}):\n${e.stdout}\n${e.stderr}\n${out.slice(-3000)}`));
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.length >= 1, `${example}: ${run.stdout}`);
  for (const line of lines) {
    assert.equal(line.status, 200, `${example}: ${JSON.stringify(line)}`);
    assert.equal(line.verified, true, `${example}: ${JSON.stringify(line)}`);
    assert.ok(line.transaction, `${example}: ${JSON.stringify(line)}`);
  }
  return lines;
}

test('make dev: every rail\'s quickstart, with no variables, pays and verifies against it', async (t) => {
  if (skipped) return t.skip(skipped);
  assert.equal(payer.cm_url, WORKER);
  assert.deepEqual(Object.keys(payer.pids).sort(), ['base', 'stacks', 'svm', 'tempo']);
  const started = Date.now();
  const [solana, evm, mpp] = await Promise.all(['solana', 'evm', 'mpp'].map(quickstart));
  assert.deepEqual(solana.map((l) => l.path), ['/token-efficiency/budget', '/v1/x402/context-budget-pack']);
  assert.deepEqual(evm.map((l) => l.path), ['/token-efficiency/budget', '/v1/x402/context-budget-pack']);
  assert.deepEqual(mpp.map((l) => l.path), ['/v1/mpp/context-budget-pack']);
  // A Tempo account of the local anvil pays once (tests/e2e/mpp/stack.mjs, freshPayer): the stacks fund
  // the next payer, and the MPP quickstart runs green again.
  const first = payer.mpp.address;
  for (let i = 0; JSON.parse(readFileSync(DEV_PAYER_FILE, 'utf8')).mpp.address === first; i++) {
    assert.ok(i < 100, 'the Tempo payer was not renewed in 10 s');
    await sleep(100);
  }
  await quickstart('mpp');
  console.error(`dev_quickstart: the quickstarts ran in ${Date.now() - started} ms`);
});

test('stopping make dev (Ctrl-C) stops the stacks and removes the payer file', async (t) => {
  if (skipped) return t.skip(skipped);
  const exited = new Promise((resolve) => dev.once('exit', resolve));
  process.kill(-dev.pid, 'SIGINT');
  let timer;
  const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 30_000, 'timeout')))]);
  clearTimeout(timer);
  assert.notEqual(code, 'timeout', `make dev did not stop in 30 s:\n${out.slice(-3000)}`);
  for (let i = 0; Object.values(payer.pids).some(alive) && i < 50; i++) await sleep(100);
  for (const [name, pid] of Object.entries(payer.pids)) assert.equal(alive(pid), false, `${name} (pid ${pid}) still runs`);
  for (const [name, port] of Object.entries(PORTS)) assert.ok(await portFree(port), `port ${port} (${name}) still taken`);
  assert.equal(existsSync(DEV_PAYER_FILE), false, '.dev-payer.json left behind');
});
