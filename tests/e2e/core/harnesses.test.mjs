// Each family's published corpus harness, run as a client would run it against a live worker under
// real workerd: every pinned case's free check must answer as the independent implementation says.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startWorker, wallet, ROOT } from '../lib/worker.mjs';

const run = promisify(execFile);
let w;
before(async () => {
  w = await startWorker({ port: 8861, vars: { FREE_MIN_INTERVAL_MS: '0', FREE_PER_DAY: '100000' } });
});
after(async () => { await w?.stop(); });

async function harness(family, ...args) {
  const { stdout } = await run('node', [join(ROOT, 'corpus', family, 'harness.mjs'), w.url, ...args], {
    cwd: ROOT, maxBuffer: 64 << 20, timeout: 600_000,
  }).catch((e) => ({ stdout: e.stdout + '\n' + e.stderr }));
  const line = stdout.trim().split('\n').reverse().find((l) => /^\d+ passed, \d+ failed/.test(l));
  assert.ok(line, `${family}: no summary line\n${stdout.slice(-2000)}`);
  const [, passed, failed] = line.match(/^(\d+) passed, (\d+) failed/).map(Number);
  return { passed, failed, stdout };
}

test('token-efficiency corpus prechecks', async () => {
  const r = await harness('token-efficiency');
  assert.equal(r.failed, 0, r.stdout.slice(-3000));
  assert.ok(r.passed >= 80);
});

test('context-composition corpus prechecks', async () => {
  const r = await harness('context-composition');
  assert.equal(r.failed, 0, r.stdout.slice(-3000));
  assert.ok(r.passed >= 60);
});

test('context-budget-pack corpus preflights', async () => {
  const r = await harness('context-budget-pack', '--header', `X-Caller: ${wallet(77)}`);
  assert.equal(r.failed, 0, r.stdout.slice(-3000));
  assert.ok(r.passed >= 100);
});
