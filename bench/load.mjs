// Load run against the built worker in real workerd (`wrangler dev`, local D1 + Durable Objects) on
// loopback, driven by autocannon at a fixed concurrency, every row bounded in time:
//   te-precheck      token-efficiency free prechecks (the corpus's measured cases), each from a wallet
//                    never used before in the run (so the free tier's default limits stay in force);
//   cc-precheck      context-composition free prechecks (the corpus's small measured cases), same;
//   te-precheck-cap  extra row: the token-efficiency cap-* cases (bodies at the 262,144-byte cap) as
//                    free prechecks — NOT a substitute for the paid budget row;
//   te-budget-cap    the paid budget op on the cap-* cases, each request with its own Idempotency-Key
//                    and its own payment, crafted before the row by the official x402 client against
//                    the local Solana VM and settled by the local facilitator (tests/e2e/x402);
//   cc-audit-1mib    the paid audit of one 1,048,576-byte session record (3,000+ messages), same.
// Every Nth 2xx answer of a row is kept and checked after the row (so checking never slows the
// driver): Ed25519 signature (corpus/verify.mjs) and the figures against independent oracles — the
// corpus's expected reports, npm gpt-tokenizer's counts of the payload and of the shaped payload,
// and the context-composition reference implementation's audit of the 1 MiB record. A paid row also
// compares the merchant's balance on the VM and the D1 ledger with the answers delivered.
// Prints a table; exits 1 on any 5xx, connection error or wrong answer.
//
//   node bench/load.mjs        (the bundle must be built: scripts/build.sh; `make load` does it all)
// Environment: LOAD_SECONDS [60] per row, LOAD_CONNECTIONS [50], LOAD_WARMUP_SECONDS [5],
//   LOAD_SAMPLE_EVERY [10], LOAD_PORT [8881] (the VM and the facilitator take the next two ports),
//   LOAD_ROWS (comma-separated subset of the row names above), LOAD_LOG_LEVEL [info] (wrangler's;
//   the worker's output is kept in target/load/worker.log), LOAD_FACILITATOR_KEEPALIVE_MS [120000]
//   (0: Node's default 5 s, see docs/benchmarks.md "Load"), LOAD_PIDS (a file this run appends its child
//   processes to, so scripts/load.sh can end them even if this process dies). CM_STATE_DIR places
//   the worker's local D1 and Durable Object state (default /dev/shm, see tests/e2e/lib/worker.mjs).
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { startWorker, d1, ROOT } from '../tests/e2e/lib/worker.mjs';
import { rpc, tokenBalance, paymentRequired, toBase64Json } from '../tests/e2e/x402/stack.mjs';
import { createPaymentHeader } from '../tests/e2e/x402/client.mjs';
import { verifyReport } from '../corpus/verify.mjs';
import { base58Encode, count as gptTokens } from '../corpus/token-efficiency/oracle.mjs';
import * as composition from '../corpus/context-composition/reference.mjs';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 50);
const WARMUP_SECONDS = Number(process.env.LOAD_WARMUP_SECONDS ?? 5);
const SAMPLE_EVERY = Number(process.env.LOAD_SAMPLE_EVERY ?? 10);
const PORT = Number(process.env.LOAD_PORT ?? 8881);
const ROWS = (process.env.LOAD_ROWS ?? 'te-precheck,cc-precheck,te-precheck-cap,te-budget-cap,cc-audit-1mib').split(',');
const PIDS = process.env.LOAD_PIDS;
/** wrangler's log level (debug also prints workerd's own exceptions, at a CPU cost). */
const LOG_LEVEL = process.env.LOAD_LOG_LEVEL ?? 'info';
/** Idle keep-alive timeout of the local facilitator; 0 keeps Node's default of 5 s. */
const FACILITATOR_KEEPALIVE_MS = Number(process.env.LOAD_FACILITATOR_KEEPALIVE_MS ?? 120_000);
/** Seconds one request may take before autocannon counts a timeout (queueing at c=50 is long). */
const TIMEOUT_SECONDS = 120;
const OUT = join(ROOT, 'target', 'load');
mkdirSync(OUT, { recursive: true });

// autocannon accumulates a response body as `string += chunk`, which decodes every TCP chunk on its
// own and so garbles a multi-byte character split across two chunks. Keep the raw chunks instead
// and decode the whole body once when the response completes.
const PipelinedRequestsQueue = createRequire(import.meta.url)('autocannon/lib/pipelinedRequestsQueue.js');
PipelinedRequestsQueue.prototype.addBody = function addBody(data) {
  const pending = this.peek();
  if (pending) (pending.chunks ??= []).push(Buffer.from(data));
};
const terminateRequest = PipelinedRequestsQueue.prototype.terminateRequest;
PipelinedRequestsQueue.prototype.terminateRequest = function terminate() {
  const done = terminateRequest.call(this);
  if (done) done.body = done.chunks ? Buffer.concat(done.chunks).toString('utf8') : '';
  return done;
};

const log = (...args) => console.log(...args);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const withoutTime = (verdict) => (typeof verdict === 'string' ? verdict.replace(/ — [^—]*$/, '') : verdict);
const decodeB64Json = (b64) => JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));

function remember(kind, id) {
  if (PIDS) appendFileSync(PIDS, `${kind} ${id}\n`);
}

async function portIsFree(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

// ------------------------------------------------------------------------------------ the stack

/** A node script of the x402 stack as its own process group (so it shares neither the driver's
 * event loop nor its fate): resolves with the JSON line it prints when ready, and stop(). */
function startScript(name, script, args) {
  const logFd = openSync(join(OUT, `${name}.log`), 'w');
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', logFd] });
  remember('group', child.pid);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => {
      resolve({
        ...JSON.parse(line),
        pid: child.pid,
        stop: () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} },
      });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} (see target/load/${name}.log)`)));
  });
}

const stack = { worker: null, svm: null, facilitator: null };
async function stopStack() {
  if (stack.worker) writeFileSync(join(OUT, 'worker.log'), stack.worker.logs());
  await stack.worker?.stop().catch(() => {});
  stack.facilitator?.stop();
  stack.svm?.stop();
  stack.worker = stack.facilitator = stack.svm = null;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await stopStack();
    process.exit(130);
  });
}

/** CPU seconds (user + system) used so far by the live processes of one process group. */
function groupCpuSeconds(pgid) {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
      if (Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {} // the process ended meanwhile
  }
  return ticks / 100; // USER_HZ
}

/** Where the CPU goes during a row: cores used by workerd (with wrangler), the facilitator, the
 * VM and this driver, over the row's wall time. */
function cpuMeter() {
  const take = () => ({
    worker: groupCpuSeconds(stack.worker.pid),
    facilitator: groupCpuSeconds(stack.facilitator.pid),
    vm: groupCpuSeconds(stack.svm.pid),
    driver: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage()),
    wall: performance.now() / 1000,
  });
  const start = take();
  return () => {
    const end = take();
    const wall = end.wall - start.wall;
    const cores = {};
    for (const k of ['worker', 'facilitator', 'vm', 'driver']) cores[k] = Number(((end[k] - start[k]) / wall).toFixed(2));
    return cores;
  };
}

// ------------------------------------------------------------------------------------ the inputs

const teCorpus = JSON.parse(readFileSync(join(ROOT, 'corpus', 'token-efficiency', 'corpus.json'), 'utf8'));
const ccCorpus = JSON.parse(readFileSync(join(ROOT, 'corpus', 'context-composition', 'corpus.json'), 'utf8'));
const ccCriteria = JSON.parse(readFileSync(join(ROOT, 'corpus', 'context-composition', 'context-composition-v1.criteria.json'), 'utf8'));
const CALLER_MEMBER = /"caller":"[1-9A-HJ-NP-Za-km-z]+"/g;

/** token-efficiency cases whose precheck is a measured 200 and whose body names one caller. */
function teCases({ cap }) {
  return teCorpus.cases
    .filter((c) => c.body !== undefined && !c.expect.refusal && !c.expect.precheck.refusal)
    .filter((c) => (c.body.match(CALLER_MEMBER) ?? []).length === 1)
    .filter((c) => c.id.startsWith('cap-') === cap)
    .map((c) => ({ ...c, payload: JSON.parse(c.body).payload }));
}

/** gpt-tokenizer's count of the payload as measured: the JSON.stringify of the parsed payload when
 * the operation set is json, else the text itself. */
function payloadTokens(c) {
  const json = c.expect.precheck.operation_set === 'json';
  c.payloadTokens ??= gptTokens(json ? JSON.stringify(JSON.parse(c.payload)) : c.payload);
  return c.payloadTokens;
}

/** Small measured context-composition cases without a body caller (the wallet goes in X-Caller). */
function ccCases() {
  return ccCorpus.cases.filter((c) => c.body !== undefined && !c.body_fill && !c.expect.refusal && !c.body.includes('"caller"'));
}

/** A wallet never used before in this run: base58 of 32 bytes of sha256(run salt, n). */
const walletSalt = randomBytes(8).toString('hex');
let walletCounter = 0;
function freshWallet() {
  return base58Encode([...createHash('sha256').update(`load/${walletSalt}/${walletCounter++}`).digest()]);
}

/** One generic-message-list record of exactly 1 MiB: JSON results, logs, repeated reminders
 * (near-duplicates), code fences, tool calls and results, prose. */
function recordOfOneMiB() {
  const TARGET = 1 << 20;
  const vocabulary = Array.from({ length: 400 }, (_, i) => `term${i}`);
  const prose = (i, n) => Array.from({ length: n }, (_, k) => vocabulary[(i * 7 + k * 13 + (k * k) % 5) % 400]).join(' ');
  const message = (i) => {
    switch (i % 10) {
      case 0: return { role: 'tool', kind: 'tool_result', text: JSON.stringify({ order: i, status: 'shipped', items: [i % 7, i % 11, i % 13], note: vocabulary[i % 400] }) };
      case 1: return { role: 'tool', kind: 'tool_result', text: Array.from({ length: 5 }, (_, k) => `2026-01-01T10:${String(k).padStart(2, '0')}:00Z INFO worker ${i} step ${k} ok`).join('\n') };
      case 2: return { role: 'system', text: 'Reminder: the repository uses two-space indentation and every test must pass before a merge.' };
      case 3: return { role: 'assistant', kind: 'tool_call', has_args: true, text: JSON.stringify({ name: 'search', args: { q: prose(i, 3) } }) };
      case 4: return { role: 'assistant', text: '```js\nfunction f' + i + '(x) {\n  return x * ' + i + ';\n}\n```' };
      case 5: return { role: 'user', text: 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNk'.repeat(8) };
      case 6: return { role: 'user', text: `${prose(i, 40)} tail${i}` };
      default: return { role: 'assistant', text: `${prose(i, 60)} tail${i}`, stated_tokens: 80 + (i % 40) };
    }
  };
  const envelope = (messages) => JSON.stringify({
    envelope_version: composition.ENVELOPE_VERSION, declared_format_id: 'generic-message-list',
    record: { messages, tool_schemas: [{ name: 'search', description: 'search the index' }] },
  });
  const messages = [];
  while (Buffer.byteLength(envelope([...messages, message(messages.length)])) < TARGET - 4096) messages.push(message(messages.length));
  const last = { role: 'user', text: '' };
  last.text = prose(messages.length, 2000).slice(0, TARGET - Buffer.byteLength(envelope([...messages, last])));
  const body = envelope([...messages, last]);
  if (Buffer.byteLength(body) !== TARGET) throw new Error('the 1 MiB record is not 1 MiB');
  return { body, entries: messages.length + 1 };
}

// ------------------------------------------------------------------------------------ checks

const signedOk = (report, key) => {
  const reason = verifyReport(report, key);
  return reason === null ? [] : [`signature: ${reason}`];
};
const withoutStamp = (report) => {
  const { signature, issued_at: issuedAt, ...rest } = report;
  return rest;
};
const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function checkTePrecheck(report, c) {
  const want = c.expect.precheck;
  const wrong = [];
  if (withoutTime(report.verdict) !== withoutTime(want.verdict)) wrong.push(`verdict "${report.verdict}" want "${want.verdict}"`);
  for (const f of ['fits', 'operation_set', 'payload_tokens', 'payload_chars', 'effective_budget', 'excess_tokens']) {
    if (report[f] !== want[f]) wrong.push(`${f} ${report[f]} want ${want[f]}`);
  }
  if (report.payload_tokens !== payloadTokens(c)) wrong.push(`payload_tokens ${report.payload_tokens}, gpt-tokenizer ${payloadTokens(c)}`);
  if ('shaped_payload' in report || 'receipt' in report) wrong.push('the precheck returned paid substance');
  return wrong;
}

function checkTeBudget(report, c) {
  const want = c.expect.budget;
  const wrong = [];
  if (withoutTime(report.verdict) !== withoutTime(want.verdict)) wrong.push(`verdict "${report.verdict}" want "${want.verdict}"`);
  for (const f of ['operation_set', 'submitted', 'shaped', 'shaped_payload', 'receipt', 'applications']) {
    if (!isDeepStrictEqual(report[f], want[f])) wrong.push(`${f} differs from the corpus`);
  }
  if (!isDeepStrictEqual(report.exhaustion ?? null, want.exhaustion)) wrong.push('exhaustion differs from the corpus');
  if (report.submitted?.tokens !== payloadTokens(c)) wrong.push(`submitted.tokens ${report.submitted?.tokens}, gpt-tokenizer ${payloadTokens(c)}`);
  if (typeof report.shaped_payload === 'string' && report.shaped?.tokens !== gptTokens(report.shaped_payload)) {
    wrong.push(`shaped.tokens ${report.shaped?.tokens}, gpt-tokenizer of the shaped payload differs`);
  }
  return wrong;
}

function checkCcReport(report, want) {
  const wrong = [];
  if (!STAMP.test(report.issued_at ?? '')) wrong.push('issued_at is not an ISO timestamp');
  if (composition.jcs(withoutStamp(report)) !== composition.jcs(withoutStamp(want))) wrong.push('report differs from the reference implementation');
  return wrong;
}

function checkPaymentResponse(headers) {
  const value = headers['payment-response'] ?? headers['PAYMENT-RESPONSE'];
  if (!value) return ['no PAYMENT-RESPONSE header'];
  try {
    return decodeB64Json(value).success === true ? [] : ['PAYMENT-RESPONSE is not a success'];
  } catch {
    return ['PAYMENT-RESPONSE does not decode'];
  }
}

// ------------------------------------------------------------------------------------ driving

/**
 * One autocannon run. `next()` gives each request's {body, headers, tag}; every `sampleEvery`-th
 * 2xx answer is kept with its tag for checking, and the first few non-2xx bodies for the report.
 */
function fire({ path, seconds, amount, next, sampleEvery = SAMPLE_EVERY }) {
  const samples = [];
  const refusals = [];
  let answered = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: stack.worker.url,
      connections: CONNECTIONS,
      ...(amount ? { amount } : { duration: seconds }),
      timeout: TIMEOUT_SECONDS,
      requests: [{
        method: 'POST',
        path,
        setupRequest: (request, context) => {
          const { body, headers, tag } = next(() => instance);
          context.tag = tag;
          return { ...request, headers: { 'content-type': 'application/json', ...headers }, body };
        },
        onResponse: (status, body, context, headers) => {
          answered++;
          if (status >= 200 && status < 300) {
            if (answered % sampleEvery === 0) samples.push({ tag: context.tag, body, headers });
          } else if (refusals.length < 10) {
            refusals.push({ status, body: body.slice(0, 400) });
          }
        },
      }],
    }, (error, result) => (error ? reject(error) : resolve({ result, samples, refusals })));
  });
}

/** Figures of one autocannon result. */
function figures(result) {
  const byStatus = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    if (!status.startsWith('2')) byStatus[status] = count;
  }
  return {
    seconds: result.duration,
    responses: result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'],
    ok: result['2xx'],
    rps: (result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx']) / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: byStatus,
    fivexx: result['5xx'],
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** Checks the kept samples; returns {checked, wrong: [reasons]}. First makes sure the checks can
 * fail: the first sample with one figure changed by `tamper` must be caught twice over, by the
 * signature and by the figures. */
function checkSamples(samples, check, key, tamper) {
  if (samples.length) {
    const tampered = JSON.parse(samples[0].body);
    tamper(tampered);
    if (signedOk(tampered, key).length === 0 || check(tampered, samples[0]).length === 0) {
      throw new Error('the answer checks accept a tampered answer');
    }
  }
  const wrong = [];
  for (const s of samples) {
    let report;
    try {
      report = JSON.parse(s.body);
    } catch {
      wrong.push(`${s.tag.id ?? s.tag.name}: body is not JSON`);
      continue;
    }
    const reasons = [...signedOk(report, key), ...check(report, s)];
    if (reasons.length) wrong.push(`${s.tag.id ?? s.tag.name}: ${reasons.join('; ')}`);
  }
  return { checked: samples.length, wrong };
}

async function freeRow(name, path, cases, bodyOf, check, tamper, key) {
  let i = 0;
  const next = () => {
    const c = cases[i++ % cases.length];
    const { body, headers } = bodyOf(c);
    return { body, headers, tag: c };
  };
  if (WARMUP_SECONDS > 0) await fire({ path, seconds: WARMUP_SECONDS, next });
  log(`== ${name}: ${cases.length} cases, ${SECONDS} s at concurrency ${CONNECTIONS}`);
  const cpu = cpuMeter();
  const run = await fire({ path, seconds: SECONDS, next });
  const cores = cpu();
  const verdict = checkSamples(run.samples, (report, s) => check(report, s.tag), key, tamper);
  return { name, ...figures(run.result), ...verdict, cores, refusals: run.refusals, wallets: walletCounter };
}

/** Pre-crafted payments for `path`, each bound to its own Idempotency-Key (official x402 client). */
async function craftPayments({ path, price, feePayer, payTo, n, svmUrl }) {
  const payments = [];
  let made = 0;
  const wallets = ['client', 'client2'];
  const worker = async () => {
    while (made < n) {
      const index = made++;
      const key = `load-${randomBytes(16).toString('hex')}`;
      const required = paymentRequired({ route: path, key, price, payTo, feePayer, url: stack.worker.url + path });
      const { header } = await createPaymentHeader(toBase64Json(required), { rpcUrl: svmUrl, wallet: wallets[index % 2], idempotencyKey: key });
      payments.push({ key, header });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return payments;
}

/** The worker's own challenge for one key must equal the independent JavaScript construction. */
async function challengeTemplate({ path, body, price, payTo }) {
  const key = `load-${randomBytes(16).toString('hex')}`;
  const res = await fetch(stack.worker.url + path, {
    method: 'POST', headers: { 'content-type': 'application/json', 'Idempotency-Key': key }, body,
  });
  await res.arrayBuffer();
  if (res.status !== 402) throw new Error(`${path}: unpaid call answered ${res.status}, not 402`);
  const served = decodeB64Json(res.headers.get('payment-required'));
  const feePayer = served.accepts?.[0]?.extra?.feePayer;
  const mine = paymentRequired({ route: path, key, price, payTo, feePayer, url: stack.worker.url + path });
  if (!isDeepStrictEqual(served, mine)) {
    throw new Error(`${path}: the served challenge differs from the independent construction:\n${JSON.stringify(served)}\n${JSON.stringify(mine)}`);
  }
  return { feePayer };
}

async function paidRow({ name, path, price, ledgerTable, inputs, check, tamper, key, svmUrl, merchant, payTo }) {
  const { feePayer } = await challengeTemplate({ path, body: inputs[0].body, price, payTo });
  let i = 0;
  let pool = [];
  let exhausted = false;
  const next = (runningInstance) => {
    const input = inputs[i++ % inputs.length];
    const payment = pool.pop();
    if (!payment) {
      // Sized from the warm-up's rate with a wide margin; should it still run dry, stop the row
      // rather than send unpaid calls (their 402s would be the driver's doing, not the worker's).
      if (!exhausted) setImmediate(() => runningInstance().stop());
      exhausted = true;
      return { body: input.body, headers: {}, tag: input };
    }
    return { body: input.body, headers: { 'Idempotency-Key': payment.key, 'PAYMENT-SIGNATURE': payment.header }, tag: input };
  };
  const craftStarted = performance.now();
  // Warm-up (also the pilot that sizes the pool): 2 × concurrency paid calls.
  pool = await craftPayments({ path, price, feePayer, payTo, n: 2 * CONNECTIONS, svmUrl });
  const craftRate = pool.length / ((performance.now() - craftStarted) / 1000);
  const warm = await fire({ path, amount: 2 * CONNECTIONS, next });
  const warmFigures = figures(warm.result);
  const pilotRate = warmFigures.responses / warmFigures.seconds;
  const needed = Math.min(Math.ceil(pilotRate * SECONDS * 2) + 2 * CONNECTIONS, 20_000);
  log(`== ${name}: warm-up ${warmFigures.ok}/${warmFigures.responses} 2xx, ${pilotRate.toFixed(1)} answers/s; crafting ${needed} payments (${craftRate.toFixed(0)}/s)`);
  pool = await craftPayments({ path, price, feePayer, payTo, n: needed, svmUrl });
  const ledgerBefore = d1(stack.worker.persist, `SELECT COUNT(*) AS n FROM ${ledgerTable}`)[0].n;
  const balanceBefore = await tokenBalance(svmUrl, merchant);
  log(`== ${name}: ${inputs.length} input(s), ${SECONDS} s at concurrency ${CONNECTIONS}`);
  const cpu = cpuMeter();
  const run = await fire({ path, seconds: SECONDS, next });
  const cores = cpu();
  // Requests still in flight when the row stopped finish server-side: wait until the merchant's
  // balance has not moved for 5 s (at most 120 s).
  let balance = await tokenBalance(svmUrl, merchant);
  for (let still = 0, waited = 0; still < 5 && waited < 120; waited++) {
    await sleep(1_000);
    const now = await tokenBalance(svmUrl, merchant);
    still = now === balance ? still + 1 : 0;
    balance = now;
  }
  const settled = Number(balance - balanceBefore) / price;
  const ledgerRows = d1(stack.worker.persist, `SELECT COUNT(*) AS n FROM ${ledgerTable}`)[0].n - ledgerBefore;
  const verdict = checkSamples(run.samples, (report, s) => [...check(report, s.tag), ...checkPaymentResponse(s.headers)], key, tamper);
  const f = figures(run.result);
  // Every settled payment has its ledger row and vice versa; every 2xx delivered was settled.
  if (settled !== ledgerRows) verdict.wrong.push(`merchant received ${settled} payments, ledger has ${ledgerRows} rows`);
  if (ledgerRows < f.ok) verdict.wrong.push(`${f.ok} paid answers delivered, only ${ledgerRows} ledger rows`);
  return {
    name, ...f, ...verdict, cores, refusals: run.refusals, settled, ledgerRows, exhausted,
    warmup: { ok: warmFigures.ok, responses: warmFigures.responses, fivexx: warmFigures.fivexx, errors: warmFigures.errors, refusals: warm.refusals },
  };
}

// ------------------------------------------------------------------------------------ main

async function main() {
  for (const port of [PORT, PORT + 1, PORT + 2]) {
    if (!(await portIsFree(port))) throw new Error(`port ${port} is in use (set LOAD_PORT)`);
  }
  stack.svm = await startScript('svm', join(ROOT, 'tests', 'e2e', 'x402', 'svm', 'server.mjs'), ['--port', String(PORT + 1)]);
  stack.svm.url = stack.svm.ready;
  const keepAlive = FACILITATOR_KEEPALIVE_MS > 0 ? ['--keep-alive-ms', String(FACILITATOR_KEEPALIVE_MS)] : [];
  stack.facilitator = await startScript('facilitator', join(ROOT, 'tests', 'e2e', 'x402', 'facilitator.mjs'), ['--port', String(PORT + 2), '--rpc', stack.svm.url, ...keepAlive]);
  stack.facilitator.url = stack.facilitator.ready;
  stack.worker = await startWorker({ port: PORT, vars: { FACILITATOR_URL: stack.facilitator.url }, logLevel: LOG_LEVEL });
  remember('group', stack.worker.pid);
  remember('dir', stack.worker.persist);
  const index = await (await fetch(stack.worker.url + '/')).json();
  const key = index.signing.public_key;
  const addresses = await rpc(stack.svm.url, 'testAddresses');
  const merchant = addresses.wallets.merchant;
  const payTo = merchant;
  const prices = { budget: 20_000, audit: 50_000 }; // wrangler.toml [vars] defaults, USDC base units
  log(`worker ${stack.worker.url} (state in ${stack.worker.persist}), VM ${stack.svm.url}, facilitator ${stack.facilitator.url} (keep-alive ${FACILITATOR_KEEPALIVE_MS || 'Node default'} ms); key_id ${index.signing.key_id}`);

  const rows = [];
  if (ROWS.includes('te-precheck')) {
    rows.push(await freeRow('te-precheck', '/token-efficiency/precheck', teCases({ cap: false }),
      (c) => ({ body: c.body.replace(CALLER_MEMBER, `"caller":"${freshWallet()}"`), headers: {} }), checkTePrecheck,
      (report) => { report.payload_tokens += 1; }, key));
  }
  if (ROWS.includes('cc-precheck')) {
    rows.push(await freeRow('cc-precheck', '/context-composition/precheck', ccCases(),
      (c) => ({ body: c.body, headers: { 'X-Caller': freshWallet() } }), (report, c) => checkCcReport(report, c.expect.precheck),
      (report) => { report.record.entries += 1; }, key));
  }
  if (ROWS.includes('te-precheck-cap')) {
    rows.push(await freeRow('te-precheck-cap', '/token-efficiency/precheck', teCases({ cap: true }),
      (c) => ({ body: c.body.replace(CALLER_MEMBER, `"caller":"${freshWallet()}"`), headers: {} }), checkTePrecheck,
      (report) => { report.payload_tokens += 1; }, key));
  }
  if (ROWS.includes('te-budget-cap')) {
    const inputs = teCases({ cap: true }).map((c) => ({ ...c, body: Buffer.from(c.body, 'utf8') }));
    rows.push(await paidRow({
      name: 'te-budget-cap', path: '/token-efficiency/budget', price: prices.budget, ledgerTable: 'ledger_token_efficiency',
      inputs, check: checkTeBudget, tamper: (report) => { report.shaped.tokens += 1; }, key, svmUrl: stack.svm.url, merchant, payTo,
    }));
  }
  if (ROWS.includes('cc-audit-1mib')) {
    const { body, entries } = recordOfOneMiB();
    const started = performance.now();
    const expected = composition.audit(composition.parse(Buffer.from(body, 'utf8')), Date.now(), ccCriteria);
    log(`1 MiB record: ${entries} entries; reference audit ${(performance.now() - started).toFixed(0)} ms, status ${expected.status}: ${expected.report.measurement_line}`);
    if (expected.status !== 200) throw new Error('the 1 MiB record is not chargeable under the reference');
    const input = { id: 'record-1mib', body: Buffer.from(body, 'utf8'), expected: expected.report };
    rows.push(await paidRow({
      name: 'cc-audit-1mib', path: '/context-composition/audit', price: prices.audit, ledgerTable: 'ledger_context_composition',
      inputs: [input], check: (report, c) => checkCcReport(report, c.expected),
      tamper: (report) => { report.M02.text_bytes += 1; }, key, svmUrl: stack.svm.url, merchant, payTo,
    }));
  }
  return rows;
}

function table(rows) {
  const lines = [
    '| row | requests/s | p50 ms | p99 ms | 2xx | non-2xx by status | 5xx | conn. errors | sampled answers verified | CPU cores: workerd / facilitator / VM / driver |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const non2xx = Object.entries(r.non2xx).map(([s, n]) => `${s}: ${n}`).join(', ') || '0';
    lines.push(`| ${r.name} | ${r.rps.toFixed(1)} | ${r.p50} | ${r.p99} | ${r.ok} | ${non2xx} | ${r.fivexx} | ${r.errors} | ${r.checked - r.wrong.length}/${r.checked} | ${r.cores.worker} / ${r.cores.facilitator} / ${r.cores.vm} / ${r.cores.driver} |`);
  }
  return lines.join('\n');
}

let rows = [];
let failure = null;
const loadBefore = loadavg()[0];
try {
  rows = await main();
} catch (error) {
  failure = error;
} finally {
  await stopStack();
}
if (rows.length) {
  const text = table(rows);
  log(`\nload run ${new Date().toISOString().slice(0, 10)}, ${SECONDS} s per row, concurrency ${CONNECTIONS}, every ${SAMPLE_EVERY}th 2xx checked; machine load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after\n`);
  log(text);
  for (const r of rows) {
    const paid = r.settled !== undefined ? `; payments settled ${r.settled}, ledger rows ${r.ledgerRows}${r.exhausted ? ', PAYMENT POOL RAN DRY' : ''}` : '';
    const wallets = r.wallets !== undefined ? `; distinct wallets so far ${r.wallets}` : '';
    log(`${r.name}: ${r.responses} answers in ${r.seconds} s, timeouts ${r.timeouts}${paid}${wallets}`);
    for (const w of r.wrong.slice(0, 10)) log(`  WRONG ${w}`);
    for (const x of r.refusals.slice(0, 3)) log(`  non-2xx ${x.status}: ${x.body}`);
    if (r.warmup && (r.warmup.fivexx || r.warmup.errors)) log(`  warm-up: ${r.warmup.fivexx} 5xx, ${r.warmup.errors} errors`);
  }
  writeFileSync(join(OUT, 'summary.md'), text + '\n');
  writeFileSync(join(OUT, 'summary.json'), JSON.stringify(rows.map(({ refusals, ...r }) => ({ ...r, wrong: r.wrong.slice(0, 50), refusals })), null, 2));
}
const failed = rows.filter((r) => r.fivexx > 0 || r.errors > 0 || r.wrong.length > 0 || (r.warmup && (r.warmup.fivexx > 0 || r.warmup.errors > 0)));
if (failure) {
  console.error(`load run failed: ${failure.stack ?? failure}`);
  process.exit(1);
}
if (failed.length) {
  console.error(`FAILED: ${failed.map((r) => r.name).join(', ')} (5xx, connection errors or wrong answers)`);
  process.exit(1);
}
log('\nno 5xx, no wrong answer');
