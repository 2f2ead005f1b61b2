// Fault injection on the money path, against real workerd (wrangler dev, local D1 + Durable
// Objects), the local Solana VM and the official-package facilitator with its test-only fault
// switch (tests/e2e/x402/facilitator.mjs). Ports 8970-8989: worker 8970, VM 8971, facilitator 8972.
//
// After every case the balance identities are checked and printed:
//   merchant balance == start + price × delivered calls;
//   no payer charged twice under one key (landed transactions carrying the key's memo ≤ 1);
//   a payer who retried as told was never charged without delivery (every key with a landed
//   payment ended delivered).
// Every retry rule of the key record has a case here that fails when the rule is broken.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, readFileSync, accessSync, constants } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSvm, tokenBalance, rpc, memoFor } from "./stack.mjs";
import { startFacilitator } from "./facilitator.mjs";
import { createPaymentHeader } from "./client.mjs";
import { ROOT, d1 } from "../lib/worker.mjs";
import { NETWORK } from "./wallets.mjs";

const WORKER_PORT = 8970;
const SVM_PORT = 8971;
const FACILITATOR_PORT = 8972;
const PRICE = 20000n;
const LEASE_MS = 6000;
const SETTLE_TIMEOUT_MS = 3000;
const PER_KEY = 30;
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");
const TE = { path: "/token-efficiency/budget", body: JSON.stringify({ payload: JSON.stringify({ a: 1 }), budget_tokens: 100 }) };
const packExample = JSON.parse(readFileSync(join(ROOT, "corpus", "context-budget-pack", "contract.json"), "utf8")).exampleInput;
const PACK = { path: "/v1/x402/context-budget-pack", body: JSON.stringify(packExample) };

let svm, facilitator, worker, merchant, wallets, persist;
let startBalance;
let delivered = 0n;
/** Every key a payment was presented under: { route, key, wallets:Set, delivered:boolean }. */
const keys = new Map();

const quietEnv = () => ({ ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_UPDATE_NOTIFIER: "1" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const newKey = () => "flt-" + randomBytes(12).toString("hex");
const decode = (b64) => JSON.parse(Buffer.from(b64, "base64").toString("utf8"));

function stateRoot() {
  try {
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return tmpdir();
  }
}

/** wrangler dev on WORKER_PORT over `persist` (kept across restarts). */
async function startWorkerProcess() {
  const vars = {
    FACILITATOR_URL: `http://127.0.0.1:${FACILITATOR_PORT}`,
    SOLANA_RPC_URL: `http://127.0.0.1:${SVM_PORT}`,
    PAYMENT_LEASE_MS: String(LEASE_MS),
    SETTLE_TIMEOUT_MS: String(SETTLE_TIMEOUT_MS),
    PAY_ATTEMPTS_PER_KEY: String(PER_KEY),
    PAY_ATTEMPTS_PER_WALLET: "100000",
    PRICE_CONTEXT_BUDGET_PACK: String(PRICE),
  };
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(WORKER_PORT), "--show-interactive-dev-session=false", "--persist-to", persist, "--log-level", "warn"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child = spawn(WRANGLER, args, { cwd: ROOT, env: quietEnv(), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const url = `http://127.0.0.1:${WORKER_PORT}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${out}`);
    try {
      const r = await fetch(url + "/");
      await r.arrayBuffer();
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      process.kill(-child.pid, "SIGKILL");
      throw new Error(`wrangler dev not ready:\n${out}`);
    }
    await sleep(250);
  }
  return {
    url,
    logs: () => out,
    kill: async () => {
      try { process.kill(-child.pid, "SIGKILL"); } catch {}
      await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    },
  };
}

function post(route, { key, body = route.body, headers = {} } = {}) {
  return fetch(worker.url + route.path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "Idempotency-Key": key } : {}), ...headers },
    body,
  });
}

/** An official-client payment for (route, key) from `wallet`; the key is tracked for the identities. */
async function pay(route, key, wallet = "client") {
  const res = await post(route, { key });
  assert.equal(res.status, 402, "unpaid call must be challenged");
  await res.arrayBuffer();
  const { header } = await createPaymentHeader(res.headers.get("PAYMENT-REQUIRED"), { rpcUrl: svm.url, wallet, idempotencyKey: key });
  const entry = keys.get(key) ?? { route, key, wallets: new Set(), delivered: false };
  entry.wallets.add(wallet);
  keys.set(key, entry);
  return header;
}

async function answer(res) {
  const text = await res.text();
  let body = null;
  try { body = JSON.parse(text); } catch {}
  return { status: res.status, body, text, retryAfter: res.headers.get("retry-after"), receipt: res.headers.get("payment-response") };
}

function markDelivered(key) {
  delivered += 1n;
  keys.get(key).delivered = true;
}

/** Sends the same request again whenever told to wait (409 uncertain/in progress, 429), as a client should. */
async function retryAsTold(send, { max = 12 } = {}) {
  const seen = [];
  for (let i = 0; i < max; i++) {
    const a = await answer(await send());
    seen.push(`${a.status}${a.body?.code ? ":" + a.body.code : ""}`);
    const wait = a.retryAfter ? Number(a.retryAfter) : null;
    if ((a.status === 409 || a.status === 429) && wait !== null && a.body?.code !== "payment_replayed") {
      await sleep(wait * 1000 + 150);
      continue;
    }
    return { ...a, seen };
  }
  throw new Error(`still told to wait after ${max} tries: ${seen.join(" ")}`);
}

const merchantBalance = () => tokenBalance(svm.url, merchant);

/** Landed payments carrying a key's memo, over every wallet that paid under it. */
async function landedUnder(entry) {
  const memo = memoFor(entry.route.path, entry.key);
  let count = 0;
  for (const wallet of entry.wallets) {
    const history = await rpc(svm.url, "getSignaturesForAddress", [wallets.atas[wallet], { limit: 1000 }]);
    count += history.filter((h) => h.err === null && (h.memo ?? "").includes(memo)).length;
  }
  return count;
}

/** The three identities, checked and printed after every case. */
async function identities(label) {
  const balance = await merchantBalance();
  const expected = startBalance + PRICE * delivered;
  let chargedTwice = 0;
  let chargedUndelivered = 0;
  for (const entry of keys.values()) {
    const landed = await landedUnder(entry);
    if (landed > 1) chargedTwice += 1;
    if (landed >= 1 && !entry.delivered) chargedUndelivered += 1;
  }
  console.log(`[identities] ${label}: merchant ${balance} = start ${startBalance} + ${PRICE} × ${delivered} delivered (${expected}); ` +
    `keys ${keys.size}, charged twice under one key: ${chargedTwice}, charged without delivery: ${chargedUndelivered}`);
  assert.equal(balance, expected, `${label}: merchant balance == price × delivered calls`);
  assert.equal(chargedTwice, 0, `${label}: no payer charged twice under one key`);
  assert.equal(chargedUndelivered, 0, `${label}: a payer who retried as told was never charged without delivery`);
}

before(async () => {
  persist = mkdtempSync(join(stateRoot(), "cm-faults-"));
  execFileSync(WRANGLER, ["d1", "migrations", "apply", "context-meter", "--local", "--persist-to", persist], { cwd: ROOT, env: quietEnv(), stdio: "pipe" });
  svm = await startSvm({ port: SVM_PORT });
  facilitator = await startFacilitator({ port: FACILITATOR_PORT, rpcUrl: svm.url, quiet: true, faults: true, keepAliveMs: 120_000 });
  wallets = await rpc(svm.url, "testAddresses");
  merchant = wallets.wallets.merchant;
  worker = await startWorkerProcess();
  startBalance = await merchantBalance();
});

after(async () => {
  await worker?.kill();
  await facilitator?.close();
  await svm?.stop();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

test("settle answer stalls past the worker's timeout after submitting: the chain is asked at once, delivered once", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  facilitator.fault({ settle: "stall-after-submit", stallMs: SETTLE_TIMEOUT_MS + 4000 });
  const started = Date.now();
  const a = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(a.status, 200, a.text);
  console.log(`[window] settle answer stalled: delivered after ${Date.now() - started} ms (settle timeout ${SETTLE_TIMEOUT_MS} ms + chain check)`);
  markDelivered(key);
  const receipt = decode(a.receipt);
  assert.equal(receipt.success, true);
  // The same request again (the answer was lost): delivered again with the original
  // PAYMENT-RESPONSE, nothing charged.
  const again = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(again.status, 200, again.text);
  assert.equal(decode(again.receipt).transaction, receipt.transaction);
  assert.ok(again.body.signature?.sig, "signed like the first answer");
  await identities("settle stalled after submit");
});

test("settle connection dropped after submitting: reconciled from the chain, delivered once", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  facilitator.fault({ settle: "drop-after-submit" });
  const a = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(a.status, 200, a.text);
  markDelivered(key);
  assert.equal(decode(a.receipt).success, true);
  await identities("settle dropped after submit");
});

test("settle answers pending after submitting: reconciled, delivered once", async () => {
  const key = newKey();
  const header = await pay(PACK, key);
  facilitator.fault({ settle: "pending-after-submit" });
  const a = await answer(await post(PACK, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(a.status, 200, a.text);
  markDelivered(key);
  await identities("settle pending after submit");
});

test("settle dropped before submitting, twice: 409 PAYMENT_UNCERTAIN, claim kept; early retry INVALID_RETRY_AFTER; retry as told lands it once", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  const before = await merchantBalance();
  facilitator.fault({ settle: "drop-before-submit", times: 2 });
  const started = Date.now();
  const first = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(first.status, 409, first.text);
  assert.equal(first.body.code, "PAYMENT_UNCERTAIN");
  assert.ok(Number(first.retryAfter) >= 1, "Retry-After");
  console.log(`[window] PAYMENT_UNCERTAIN answered after ${Date.now() - started} ms, Retry-After ${first.retryAfter} s`);
  assert.notEqual(first.body.payment, "not verified, not consumed", "uncertainty is never 'not consumed'");
  assert.match(first.body.payment, /uncertain/);
  assert.equal(await merchantBalance(), before);
  // Another proof while uncertain: 409, nothing charged.
  const other = await pay(TE, key, "client2");
  const conflict = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": other } }));
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.code, "payment_proof_conflict");
  // Retried before Retry-After: 429 INVALID_RETRY_AFTER.
  const early = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(early.status, 429);
  assert.equal(early.body.code, "INVALID_RETRY_AFTER");
  assert.ok(Number(early.retryAfter) >= 1);
  assert.equal(await merchantBalance(), before);
  // As told: after Retry-After, the same request reconciles (not found, blockhash valid → re-submitted).
  await sleep(Number(first.retryAfter) * 1000 + 150);
  const retried = Date.now();
  const done = await retryAsTold(() => post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(done.status, 200, done.seen.join(" "));
  console.log(`[window] the retry as told reconciled and delivered in ${Date.now() - retried} ms`);
  markDelivered(key);
  await identities("settle dropped before submit, reconciled");
});

test("uncertain payment whose blockhash expired unlanded: released and said so; the key takes a new payment", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  const before = await merchantBalance();
  facilitator.fault({ settle: "drop-before-submit", times: 2 });
  const first = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(first.status, 409, first.text);
  assert.equal(first.body.code, "PAYMENT_UNCERTAIN");
  await rpc(svm.url, "testExpireBlockhash");
  await sleep(Number(first.retryAfter) * 1000 + 150);
  const released = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(released.status, 402, released.text);
  assert.equal(released.body.code, "payment_released");
  assert.match(released.body.payment, /released/);
  assert.ok(released.receipt === null || decode(released.receipt).success === false);
  assert.equal(await merchantBalance(), before, "nothing moved");
  // The released proof is not accepted again as a fresh claim (its blockhash is gone), a new one is.
  const fresh = await pay(TE, key);
  const done = await retryAsTold(() => post(TE, { key, headers: { "PAYMENT-SIGNATURE": fresh } }));
  assert.equal(done.status, 200, done.seen.join(" "));
  markDelivered(key);
  await identities("uncertain then definitely failed, paid again");
});

test("worker restarts while /settle is in flight: the retry reconciles and delivers, charged once", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  facilitator.fault({ settle: "stall-after-submit", stallMs: 20_000 });
  const inflight = post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }).then(answer, (e) => ({ status: 0, error: e }));
  // Wait until the facilitator has settled (the payment landed), then kill the worker mid-request.
  const settledBefore = facilitator.settled.length;
  for (let i = 0; i < 100 && facilitator.settled.length === settledBefore; i++) await sleep(100);
  assert.equal(facilitator.settled.length, settledBefore + 1, "the settle ran");
  await worker.kill();
  const lost = await inflight;
  assert.notEqual(lost.status, 200, "the killed request delivered nothing");
  const killedAt = Date.now();
  worker = await startWorkerProcess();
  const done = await retryAsTold(() => post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }), { max: 20 });
  assert.equal(done.status, 200, done.seen.join(" "));
  assert.ok(done.seen.includes("409:payment_in_progress"), "the lease held until it ended: " + done.seen.join(" "));
  console.log(`[window] worker killed mid-settle: restart + lease (${LEASE_MS} ms) + reconciliation delivered ${Date.now() - killedAt} ms later (${done.seen.join(" ")})`);
  markDelivered(key);
  await identities("worker restarted during settle");
});

test("worker restarts between claim and settle (during /verify): nothing moved, the retry claims afresh and delivers once", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  const before = await merchantBalance();
  facilitator.fault({ verify: "stall", stallMs: 4000 });
  const inflight = post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }).then(answer, (e) => ({ status: 0, error: e }));
  await sleep(1500);
  await worker.kill();
  const lost = await inflight;
  assert.notEqual(lost.status, 200);
  assert.equal(await merchantBalance(), before, "nothing moved before settle");
  worker = await startWorkerProcess();
  const done = await retryAsTold(() => post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }), { max: 20 });
  assert.equal(done.status, 200, done.seen.join(" "));
  markDelivered(key);
  await identities("worker restarted between claim and settle");
});

test("many concurrent retries with one key and proof: one delivery, one charge, the rest told to wait", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  const answers = await Promise.all(Array.from({ length: 12 }, () => post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }).then(answer)));
  const ok = answers.filter((a) => a.status === 200);
  assert.ok(ok.length >= 1, answers.map((a) => `${a.status}:${a.body?.code ?? ""}`).join(" "));
  // Any 200 beyond the first is a re-delivery of the same payment (one receipt, one charge).
  assert.equal(new Set(ok.map((a) => decode(a.receipt).transaction)).size, 1, "one payment delivered");
  markDelivered(key);
  for (const a of answers.filter((x) => x.status !== 200)) {
    assert.ok([409, 429].includes(a.status), `${a.status} ${a.text}`);
    assert.ok(["payment_in_progress", "INVALID_RETRY_AFTER"].includes(a.body.code), a.body.code);
    assert.ok(Number(a.retryAfter) >= 1, "told when to retry");
  }
  // Every one of them retrying as told ends at the original delivery, never a second charge.
  const later = await Promise.all(answers.filter((a) => a.status !== 200).map(() => retryAsTold(() => post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }))));
  for (const a of later) {
    assert.equal(a.status, 200, a.seen.join(" "));
    assert.equal(decode(a.receipt).transaction, decode(ok[0].receipt).transaction);
  }
  await identities("concurrent retries under one key");
});

test("a retry with a changed route, body or proof is refused free", async () => {
  const before = await merchantBalance();
  // Route: the key was first used on the budget route; a pack payment under it is IDEMPOTENCY_CONFLICT.
  const key = newKey();
  const header = await pay(TE, key);
  const first = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(first.status, 200, first.text);
  markDelivered(key);
  // The pack looks its key up before it challenges (a key holding a payment is never challenged
  // anew), so even the unpaid request is told.
  const routeConflict = await answer(await post(PACK, { key }));
  assert.equal(routeConflict.status, 409);
  assert.equal(routeConflict.body.code, "IDEMPOTENCY_CONFLICT");
  assert.equal(routeConflict.receipt, null);
  // Proof: another wallet's payment under a delivered key.
  const other = await pay(TE, key, "client2");
  const proofConflict = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": other } }));
  assert.equal(proofConflict.status, 409);
  assert.equal(proofConflict.body.code, "payment_proof_conflict");
  // Body, criteria family: no fingerprint; the delivered proof with another body's figures gets
  // 409 payment_redelivery_mismatch and no report.
  const changed = JSON.stringify({ payload: JSON.stringify({ bb: [2, 3] }), budget_tokens: 100 });
  const teBody = await answer(await post(TE, { key, body: changed, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(teBody.status, 409);
  assert.equal(teBody.body.code, "payment_redelivery_mismatch");
  assert.equal(teBody.body.budget_tokens, undefined, "no report");
  // Body, pack: INVALID_RETRY_INPUT (keyed fingerprint of release, route and body).
  const packKey = newKey();
  const packHeader = await pay(PACK, packKey);
  const packed = await answer(await post(PACK, { key: packKey, headers: { "PAYMENT-SIGNATURE": packHeader } }));
  assert.equal(packed.status, 200, packed.text);
  markDelivered(packKey);
  const changedPack = JSON.stringify({ ...packExample, budgetUnits: packExample.budgetUnits + 1 });
  const inputConflict = await answer(await post(PACK, { key: packKey, body: changedPack, headers: { "PAYMENT-SIGNATURE": packHeader } }));
  assert.equal(inputConflict.status, 409);
  assert.equal(inputConflict.body.code, "INVALID_RETRY_INPUT");
  // The same body and proof after delivery (a lost answer): the same result, the original receipt.
  const same = await answer(await post(PACK, { key: packKey, headers: { "PAYMENT-SIGNATURE": packHeader } }));
  assert.equal(same.status, 200, same.text);
  assert.equal(same.text, packed.text, "the pack is deterministic: the same bytes");
  assert.equal(decode(same.receipt).transaction, decode(packed.receipt).transaction);
  assert.equal(await merchantBalance(), before + 2n * PRICE, "only the two deliveries were charged");
  await identities("changed route, body or proof");
});

test("payment attempts per key are rate limited: 429 with Retry-After; nothing charged", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  const first = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(first.status, 200, first.text);
  markDelivered(key);
  // The identical retry is a re-delivery: never counted, never limited.
  const redelivered = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
  assert.equal(redelivered.status, 200, redelivered.text);
  // Another proof under the delivered key is a conflict, and conflicts are counted.
  const other = await pay(TE, key, "client2");
  const statuses = [];
  for (let i = 1; i < PER_KEY; i++) statuses.push((await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": other } }))).status);
  assert.ok(statuses.every((s) => s === 409), statuses.join(" "));
  const limited = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": other } }));
  assert.equal(limited.status, 429);
  assert.equal(limited.body.code, "payment_rate_limited");
  assert.ok(Number(limited.retryAfter) >= 1 && Number(limited.retryAfter) <= 60);
  await identities("per-key attempt rate");
});

test("contract statuses: payment-identifier not the key → 400; Content-Encoding other than identity → 415 (free and paid routes)", async () => {
  const key = newKey();
  const header = await pay(TE, key);
  const payload = decode(header);
  payload.extensions["payment-identifier"].info.id = newKey();
  const mismatch = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(payload)).toString("base64") } }));
  assert.equal(mismatch.status, 400);
  assert.equal(mismatch.body.code, "payment_identifier_mismatch");
  for (const [route, headers] of [[TE, { "Idempotency-Key": newKey() }], [{ path: "/token-efficiency/precheck", body: TE.body }, {}], [PACK, { "Idempotency-Key": newKey() }]]) {
    const res = await answer(await fetch(worker.url + route.path, { method: "POST", headers: { "content-type": "application/json", "content-encoding": "gzip", ...headers }, body: route.body }));
    assert.equal(res.status, 415, route.path);
  }
  const identity = await fetch(worker.url + TE.path, { method: "POST", headers: { "content-type": "application/json", "content-encoding": "identity", "Idempotency-Key": newKey() }, body: TE.body });
  assert.equal(identity.status, 402, "identity is accepted");
  await identity.arrayBuffer();
  await identities("contract statuses");
});

// ---- The ledger outbox: D1 unavailable while paying (a real fault: another process holds an
// exclusive lock on the local D1 file), and the worker gone before the row was written.

/** Holds an exclusive lock on the local D1 database file until `release()` (python3's sqlite3). */
async function lockD1() {
  const file = execFileSync("find", [persist, "-path", "*miniflare-D1DatabaseObject*", "-name", "*.sqlite"]).toString().trim().split("\n")[0];
  assert.ok(file, "the local D1 file");
  const holder = spawn("python3", ["-c", "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('locked',flush=True)\nsys.stdin.read()", file], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise((resolve, reject) => { holder.stdout.once("data", resolve); holder.once("exit", reject); });
  return { release: () => new Promise((r) => { holder.once("exit", r); holder.stdin.end(); }) };
}

/** The ledger rows of a payment's transaction (by its reference, delivered or not). */
function rowsOf(transaction) {
  // instr, not LIKE: D1 refuses a LIKE pattern longer than 50 bytes, and a signature has 88.
  return d1(persist, `SELECT tx_sig, price_usdc_units FROM ledger_token_efficiency WHERE instr(tx_sig, '${transaction}') > 0`);
}

async function untilRow(transaction, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    let rows = [];
    try {
      rows = rowsOf(transaction);
    } catch (e) {
      // wrangler's own read of the file can meet the worker's writer; say so and read again.
      console.log(`[outbox] ledger read failed, retrying: ${(String(e.stdout ?? "") + String(e.stderr ?? "")).replace(/\s+/g, " ").slice(0, 300)}`);
      if (Date.now() > deadline) throw e;
    }
    if (rows.length > 0 || Date.now() > deadline) return rows;
    await sleep(1000);
  }
}

/** A budget call paid and delivered while D1 is locked (then `whileLocked`); its transaction. */
async function paidWhileD1Locked({ whileLocked = async () => {} } = {}) {
  const key = newKey();
  const header = await pay(TE, key);
  const lock = await lockD1();
  try {
    const a = await answer(await post(TE, { key, headers: { "PAYMENT-SIGNATURE": header } }));
    assert.equal(a.status, 200, a.text);
    markDelivered(key);
    await whileLocked();
    return decode(a.receipt).transaction;
  } finally {
    await lock.release();
  }
}

test("D1 unavailable while paying: the call is delivered, and its row arrives once D1 is back, exactly once, with no retry", async () => {
  const transaction = await paidWhileD1Locked();
  const started = Date.now();
  const rows = await untilRow(transaction, 60_000);
  console.log(`[outbox] D1 locked during the call: its row arrived ${Date.now() - started} ms after the lock was released`);
  assert.deepEqual(rows, [{ tx_sig: `${NETWORK}:${transaction}`, price_usdc_units: Number(PRICE) }], "one delivered row");
  await sleep(3000);
  assert.equal(rowsOf(transaction).length, 1, "still one row: the outbox stopped once D1 confirmed");
  await identities("D1 unavailable while paying");
});

test("the worker gone after delivering while D1 was down: the row arrives after it restarts, with no request under the key", async () => {
  const transaction = await paidWhileD1Locked({ whileLocked: () => worker.kill() });
  worker = await startWorkerProcess();
  const started = Date.now();
  const rows = await untilRow(transaction, 90_000);
  console.log(`[outbox] worker killed with the row unwritten: the row arrived ${Date.now() - started} ms after the restart`);
  assert.deepEqual(rows, [{ tx_sig: `${NETWORK}:${transaction}`, price_usdc_units: Number(PRICE) }], "one delivered row");
  await identities("worker gone with the row unwritten");
});

test("GET /ready names each rail's checks with closed codes: 200 only when every configured rail can take money", async () => {
  const res = await fetch(worker.url + "/ready");
  const body = await res.json();
  const solana = body.rails.x402.find((r) => r.network === NETWORK);
  assert.deepEqual(solana, { network: NETWORK, ready: true, configured: "ok", facilitator: "ok", rpc: "ok" }, JSON.stringify(body));
  assert.equal(body.d1, "ok");
  assert.equal(body.durable_objects, "ok");
  assert.equal(body.signing_key, "ok");
  // This file starts no EVM chain and no Tempo node, while the embedded defaults configure both.
  const base = body.rails.x402.find((r) => r.network === "eip155:84532");
  assert.equal(base.ready, false);
  assert.equal(base.rpc, "rpc_unavailable");
  assert.equal(body.rails.mpp.rpc, "rpc_unavailable");
  assert.equal(res.status, 503, "a configured rail that cannot take money makes the service not ready");
  assert.equal(body.ready, false);
  const codes = new Set(["ok", "not_configured", "config_invalid", "facilitator_unavailable", "scheme_unsupported", "rpc_unavailable", "chain_mismatch", "unavailable"]);
  for (const rail of [...body.rails.x402, body.rails.mpp]) {
    for (const [k, v] of Object.entries(rail)) if (!["network", "ready"].includes(k)) assert.ok(codes.has(v), `${k}: ${v}`);
  }
});
