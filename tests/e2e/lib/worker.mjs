// Starts the built worker under real workerd (`wrangler dev`) with a fresh local D1 and Durable
// Object state, for one test file. The bundle must already be built (scripts/build.sh); the
// migrations are applied once per test process into a template directory, which each worker's
// persistence directory starts as a copy of. Everything the worker prints is kept in `logs()` (the
// retention tests scan it).
import { spawn, execFileSync } from 'node:child_process';
import { accessSync, constants, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const WRANGLER = join(ROOT, 'node_modules', '.bin', 'wrangler');

function quietEnv(extra = {}) {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    NO_UPDATE_NOTIFIER: '1',
    ...extra,
  };
}

// Where the local D1 and Durable Object state lives: memory (/dev/shm) when there is one. On a
// small VM's disk, workerd's per-object SQLite fsyncs stall for seconds under a burst (50 concurrent
// fresh wallets, or a busy CI machine) and every request in flight is dropped; production storage is
// not a local disk. CM_STATE_DIR overrides; TMPDIR is still honoured when /dev/shm is absent.
export function stateRoot() {
  if (process.env.CM_STATE_DIR) return process.env.CM_STATE_DIR;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

let template; // this process's migrated local D1, applied once

/**
 * A new directory under `root` holding a local D1 with every migration applied. The migrations run
 * once per test process, into a template; each caller gets a copy (a copy costs milliseconds, a
 * `wrangler d1 migrations apply` about a second). Applying is retried on a fresh directory, at most
 * three times: under a loaded CI machine wrangler's local apply has failed once with an internal
 * assertion ("false == true") on a migration that applies everywhere else.
 */
function migratedCopy(root, prefix) {
  if (!template) {
    let lastError;
    for (let attempt = 1; attempt <= 3 && !template; attempt++) {
      const dir = mkdtempSync(join(stateRoot(), 'cm-migrated-'));
      try {
        execFileSync(WRANGLER, ['d1', 'migrations', 'apply', 'context-meter', '--local', '--persist-to', dir], {
          cwd: ROOT, env: quietEnv(), stdio: 'pipe',
        });
        template = dir;
        process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      } catch (e) {
        lastError = e;
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (!template) throw lastError;
  }
  const persist = mkdtempSync(join(root, prefix));
  cpSync(template, persist, { recursive: true });
  return persist;
}

/**
 * @param {{port: number, vars?: Record<string,string>, logLevel?: string}} opts  logLevel: wrangler's
 *   (default debug: the retention tests scan everything the worker prints)
 * @returns {Promise<{url: string, persist: string, pid: number, logs: () => string, stop: () => Promise<void>}>}
 */
export async function startWorker({ port, vars = {}, logLevel = 'debug' }) {
  const persist = migratedCopy(stateRoot(), 'cm-e2e-');
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--show-interactive-dev-session=false',
    '--persist-to', persist, '--log-level', logLevel];
  for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
  const child = spawn(WRANGLER, args, { cwd: ROOT, env: quietEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const notReady = await untilAnswering(url, 90_000, () => {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${out}`);
  });
  if (notReady) {
    process.kill(-child.pid, 'SIGKILL');
    throw new Error(`wrangler dev not ready in 90 s:\n${out}`);
  }
  return {
    url,
    persist,
    pid: child.pid, // also its process group (detached)
    logs: () => out,
    stop: async () => {
      try { process.kill(-child.pid, 'SIGTERM'); } catch {}
      await new Promise((r) => setTimeout(r, 300));
      try { process.kill(-child.pid, 'SIGKILL'); } catch {}
      rmSync(persist, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until a worker that sat idle (while another worker of the same file started or served) answers GET /,
 * which no quota counts. A request that fails on the connection (a stale pooled socket, or the dev
 * proxy mid-restart on a loaded machine) is retried here, so the counted request that follows is sent
 * once. After 10 s of failures it throws with the cause and the worker's last output.
 */
export async function awake(w) {
  const failure = await untilAnswering(w.url, 10_000);
  if (failure) {
    throw new Error(`worker at ${w.url} did not answer for 10 s: ${failure.cause?.code ?? failure.message}\n${w.logs().slice(-3000)}`);
  }
}

/**
 * GETs `url`/ every 250 ms until it answers 2xx (then resolves to null) or `ms` have passed (then
 * resolves to the last failure). `check` runs before every try and may throw to stop early. The
 * one readiness poll behind startWorker and awake.
 */
async function untilAnswering(url, ms, check = () => {}) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    check();
    try {
      const r = await fetch(url + '/');
      // Read the body: an unread body leaves undici's socket paused, so it never sees the server
      // close the idle connection (after 5 s) and reuses it for the next request, which then fails
      // with "other side closed" (seen as a flaky first request after a quiet `before`).
      await r.arrayBuffer();
      if (r.ok) return null;
      last = new Error(`GET / answered ${r.status}`);
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs SQL against the worker's local D1 (same persistence directory) and returns the rows. */
export function d1(persist, sql) {
  const out = execFileSync(WRANGLER, ['d1', 'execute', 'context-meter', '--local', '--persist-to', persist,
    '--json', '--command', sql], { cwd: ROOT, env: quietEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(out.toString())[0].results;
}

/** A deterministic valid Solana address (base58 of 32 bytes) for test wallet number `n`. */
export function wallet(n) {
  const bytes = Buffer.alloc(32);
  bytes.writeUInt32BE(n + 1, 28);
  bytes[0] = 7;
  const A = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let x = BigInt('0x' + bytes.toString('hex'));
  let s = '';
  while (x > 0n) { s = A[Number(x % 58n)] + s; x /= 58n; }
  return s;
}

/** A fresh local D1 with every migration applied (no worker running). */
export function freshD1() {
  const persist = migratedCopy(tmpdir(), 'cm-d1-');
  return { persist, drop: () => rmSync(persist, { recursive: true, force: true }) };
}
