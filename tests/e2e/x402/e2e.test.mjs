// End-to-end payment attacks against the running worker (wrangler dev) whose FACILITATOR_URL
// points at the facilitator this file starts. Each attack checks the merchant's balance on the VM
// afterwards; at the end the merchant must have received exactly price × delivered calls.
//
// Environment (defaults in brackets):
//   WORKER_URL          a running worker, e.g. http://127.0.0.1:8787; without it the suite starts its own
//                       under wrangler dev (local D1 + DOs) and also checks the D1 ledger
//   SVM_PORT [8899], FACILITATOR_PORT [8790]   must match the worker's FACILITATOR_URL
//   E2E_ROUTE_A [/token-efficiency/budget], E2E_ROUTE_ID_A [token-efficiency/budget],
//   E2E_BODY_A [{"payload":"{\"a\":1}","budget_tokens":100}], E2E_PRICE_A [20000]
//   E2E_ROUTE_B, E2E_BODY_B   a second paid route (same-payment-on-another-route attack)
//   E2E_START_SVM [1]         0 when the VM is already running on SVM_PORT
// Run: WORKER_URL=http://127.0.0.1:8787 node --test tests/e2e/x402/e2e.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { startSvm, tokenBalance, rpc } from "./stack.mjs";
import { startFacilitator } from "./facilitator.mjs";
import { payingFetch, createPaymentHeader } from "./client.mjs";
import { craftPaymentHeader } from "./craft.mjs";
import { SVM_PORT, FACILITATOR_PORT } from "./wallets.mjs";
import { startWorker, d1 } from "../lib/worker.mjs";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/worker.mjs";

let WORKER = process.env.WORKER_URL;
let ownWorker = null;
const A = {
  path: process.env.E2E_ROUTE_A ?? "/token-efficiency/budget",
  body: process.env.E2E_BODY_A ?? JSON.stringify({ payload: JSON.stringify({ a: 1 }), budget_tokens: 100 }),
  price: BigInt(process.env.E2E_PRICE_A ?? 20000),
};
// Route B defaults to the budget-pack route at the same price as A (our own worker is started with
// PRICE_CONTEXT_BUDGET_PACK = A's price), so only the memo binding can stop a cross-route spend.
const packExample = () => JSON.stringify(JSON.parse(readFileSync(join(ROOT, "corpus", "context-budget-pack", "contract.json"), "utf8")).exampleInput);
const B = process.env.E2E_ROUTE_B
  ? { path: process.env.E2E_ROUTE_B, body: process.env.E2E_BODY_B ?? "{}" }
  : process.env.WORKER_URL ? null : { path: "/v1/x402/context-budget-pack", body: packExample() };
const skip = false;

let svm, facilitator, svmUrl, merchant;
let delivered = 0n;
let startBalance;

const newKey = () => "e2e-" + randomBytes(12).toString("hex");
const decode = (b64) => JSON.parse(Buffer.from(b64, "base64").toString("utf8"));

function post(route, { key, body = route.body, headers = {} } = {}) {
  return fetch(WORKER + route.path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "Idempotency-Key": key } : {}), ...headers },
    body,
  });
}

/** The challenge for (route, key), and an official-client payment for it. */
async function paymentFor(route, key, wallet = "client") {
  const res = await post(route, { key });
  assert.equal(res.status, 402, "unpaid call must be challenged");
  const requiredHeader = res.headers.get("PAYMENT-REQUIRED");
  assert.ok(requiredHeader);
  const { header } = await createPaymentHeader(requiredHeader, { rpcUrl: svmUrl, wallet, idempotencyKey: key });
  return { header, required: decode(requiredHeader) };
}

const merchantBalance = () => tokenBalance(svmUrl, merchant);

async function assertNothingMoved(before, what) {
  assert.equal(await merchantBalance(), before, `${what}: the merchant's balance must not move`);
}

async function assertRefusedUnconsumed(res, status, what) {
  assert.equal(res.status, status, what);
  const body = await res.json();
  assert.equal(typeof body.code, "string", what);
  assert.equal(typeof body.message, "string", what);
  if (status !== 409) assert.equal(body.payment, "not verified, not consumed", what);
  return body;
}

before(async () => {
  if (!WORKER) {
    ownWorker = await startWorker({ port: 8841, vars: { PRICE_CONTEXT_BUDGET_PACK: String(A.price) } });
    WORKER = ownWorker.url;
  }
  if (process.env.E2E_START_SVM !== "0") {
    svm = await startSvm({ port: SVM_PORT });
    svmUrl = svm.url;
  } else {
    svmUrl = `http://127.0.0.1:${SVM_PORT}`;
  }
  facilitator = await startFacilitator({ port: FACILITATOR_PORT, rpcUrl: svmUrl, quiet: true });
  merchant = (await rpc(svmUrl, "testAddresses")).wallets.merchant;
  startBalance = await merchantBalance();
});

after(async () => {
  await facilitator?.close();
  await svm?.stop();
  await ownWorker?.stop();
});

test("unpaid call → 402 with an x402 v2 challenge bound to route and key", { skip }, async () => {
  const key = newKey();
  const res = await post(A, { key });
  assert.equal(res.status, 402);
  const required = decode(res.headers.get("PAYMENT-REQUIRED"));
  assert.equal(required.x402Version, 2);
  assert.equal(required.accepts[0].scheme, "exact");
  assert.equal(required.accepts[0].amount, String(A.price));
  assert.match(required.accepts[0].extra.memo, /^cm:[0-9a-f]{32}$/);
  // A criteria route checks the payment-identifier only when it is sent (the pack requires it).
  assert.equal(required.extensions["payment-identifier"].info.required, A.path.includes("context-budget-pack"));
});

test("the official client pays; exactly the price moves; PAYMENT-RESPONSE success", { skip }, async () => {
  const before = await merchantBalance();
  const pay = await payingFetch({ rpcUrl: svmUrl });
  const res = await pay(WORKER + A.path, { method: "POST", headers: { "content-type": "application/json", "Idempotency-Key": newKey() }, body: A.body });
  assert.equal(res.status, 200);
  const receipt = decode(res.headers.get("PAYMENT-RESPONSE"));
  assert.equal(receipt.success, true);
  assert.equal(await merchantBalance(), before + A.price);
  delivered += 1n;
});

test("a paid budget-pack call returns the contract's exampleResponse byte for byte, signature detached", { skip: B && !process.env.E2E_ROUTE_B ? false : "no pack route" }, async () => {
  const contract = JSON.parse(readFileSync(join(ROOT, "corpus", "context-budget-pack", "contract.json"), "utf8"));
  const before = await merchantBalance();
  const pay = await payingFetch({ rpcUrl: svmUrl });
  const res = await pay(WORKER + B.path, { method: "POST", headers: { "content-type": "application/json", "Idempotency-Key": newKey() }, body: B.body });
  assert.equal(res.status, 200);
  assert.ok(res.headers.get("report-signature"));
  assert.equal(await res.text(), JSON.stringify(contract.exampleResponse));
  assert.equal(await merchantBalance(), before + A.price);
  delivered += 1n;
});

test("a lost answer retried as told is delivered again, charged once, also after restarting the facilitator", { skip }, async () => {
  const key = newKey();
  const { header } = await paymentFor(A, key);
  const first = await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } });
  assert.equal(first.status, 200);
  const { signature: firstSignature, ...firstReport } = await first.json();
  const receipt = first.headers.get("PAYMENT-RESPONSE");
  assert.ok(receipt && firstSignature, "the first answer's receipt and signature");
  delivered += 1n;
  const before = await merchantBalance();
  // The answer was lost: the identical retry (same key, body, PAYMENT-SIGNATURE) gets the result.
  const again = async (what) => {
    const res = await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } });
    assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
    const { signature, ...report } = await res.json();
    assert.deepEqual(report, firstReport, `${what}: the paid call's report, as of the paid call's time`);
    assert.equal(signature.key_id, firstSignature.key_id, `${what}: signed like the first answer`);
    assert.equal(res.headers.get("PAYMENT-RESPONSE"), receipt, `${what}: the original receipt`);
  };
  await again("identical retry");
  await facilitator.close();
  facilitator = await startFacilitator({ port: FACILITATOR_PORT, rpcUrl: svmUrl, quiet: true });
  await again("identical retry after a facilitator restart");
  await assertNothingMoved(before, "re-deliveries");
});

test("the pack's paid key is paid for: the same key and body with no credential gets the same bytes, never a challenge", { skip: B && !process.env.E2E_ROUTE_B ? false : "no pack route" }, async () => {
  const key = newKey();
  const { header } = await paymentFor(B, key);
  const first = await post(B, { key, headers: { "PAYMENT-SIGNATURE": header } });
  assert.equal(first.status, 200);
  const firstBody = await first.text();
  const receipt = first.headers.get("PAYMENT-RESPONSE");
  delivered += 1n;
  const before = await merchantBalance();
  for (const [headers, what] of [[{ "PAYMENT-SIGNATURE": header }, "identical retry"], [{}, "no credential"]]) {
    const res = await post(B, { key, headers });
    assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
    assert.equal(await res.text(), firstBody, `${what}: the same bytes (the pack is deterministic)`);
    assert.equal(res.headers.get("PAYMENT-RESPONSE"), receipt, `${what}: the original receipt`);
    assert.ok(res.headers.get("report-signature"), `${what}: signed like the first answer`);
  }
  await assertNothingMoved(before, "pack re-deliveries");
});

test("the same payment under another Idempotency-Key or on another route is refused", { skip }, async () => {
  const key = newKey();
  const { header } = await paymentFor(A, key);
  const before = await merchantBalance();
  // Under another key the payment-identifier no longer equals the key: 400, as the contract says.
  await assertRefusedUnconsumed(await post(A, { key: newKey(), headers: { "PAYMENT-SIGNATURE": header } }), 400, "other key");
  if (B) await assertRefusedUnconsumed(await post(B, { key, headers: { "PAYMENT-SIGNATURE": header } }), 402, "other route");
  await assertNothingMoved(before, "misbound payment");
  // Not consumed: the payment still works where it belongs.
  assert.equal((await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } })).status, 200);
  delivered += 1n;
});

test("two identical paid requests at once → exactly one charge, one result", { skip }, async () => {
  const key = newKey();
  const { header } = await paymentFor(A, key);
  const before = await merchantBalance();
  const answers = await Promise.all([0, 1].map(() => post(A, { key, headers: { "PAYMENT-SIGNATURE": header } })));
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 409]);
  assert.equal(await merchantBalance(), before + A.price);
  delivered += 1n;
});

for (const [name, change, status] of [
  ["wrong amount", { amount: 1 }, 402],
  ["extra instruction", { extraInstruction: true }, 402],
  ["fee payer as transfer authority", { authorityIsFeePayer: true }, 402],
  ["compute-unit price above the cap", { cuPrice: 10_000_000 }, 402],
]) {
  test(`crafted payment refused: ${name}`, { skip }, async () => {
    const key = newKey();
    const res = await post(A, { key });
    const required = decode(res.headers.get("PAYMENT-REQUIRED"));
    const header = await craftPaymentHeader({ rpcUrl: svmUrl, required, idempotencyKey: key, change });
    const before = await merchantBalance();
    await assertRefusedUnconsumed(await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } }), status, name);
    await assertNothingMoved(before, name);
  });
}

// Real wallets add Lighthouse assertions to the client's transaction (Phantom one, Solflare two);
// the scheme allows them and so does the worker. The VM runs a stand-in at Lighthouse's address.
async function craftedFor(route, key, change) {
  const res = await post(route, { key });
  assert.equal(res.status, 402, "unpaid call must be challenged");
  const required = decode(res.headers.get("PAYMENT-REQUIRED"));
  return craftPaymentHeader({ rpcUrl: svmUrl, required, idempotencyKey: key, change });
}

for (const [name, tail] of [
  ["Phantom-shaped payment (Lighthouse, memo)", ["lighthouse", "memo"]],
  ["Solflare-shaped payment (Lighthouse, Lighthouse, memo)", ["lighthouse", "lighthouse", "memo"]],
]) {
  test(`${name} → 200; exactly the price moves`, { skip }, async () => {
    const key = newKey();
    const header = await craftedFor(A, key, { tail });
    const before = await merchantBalance();
    const res = await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } });
    assert.equal(res.status, 200, name);
    assert.equal(decode(res.headers.get("PAYMENT-RESPONSE")).success, true, name);
    assert.equal(await merchantBalance(), before + A.price, name);
    delivered += 1n;
  });
}

for (const [name, change, code] of [
  ["two memos", { tail: ["memo", "memo"] }, "payment_memo_count"],
  ["Lighthouse before the transfer", { lighthouseBeforeTransfer: true }, "payment_instruction_layout"],
  ["seven instructions", { tail: ["lighthouse", "lighthouse", "lighthouse", "memo"] }, "payment_instruction_layout"],
  ["memo, Lighthouse, Lighthouse (the sixth must be the memo)", { tail: ["memo", "lighthouse", "lighthouse"] }, "payment_instruction_layout"],
]) {
  test(`layout refused free: ${name}`, { skip }, async () => {
    const key = newKey();
    const header = await craftedFor(A, key, change);
    const before = await merchantBalance();
    const body = await assertRefusedUnconsumed(await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } }), 402, name);
    assert.equal(body.code, code, name);
    await assertNothingMoved(before, name);
  });
}

for (const [name, field, value] of [
  ["wrong mint", "asset", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"],
  ["wrong payee", "payTo", "8SFqwqnq4whPhs8icwHA2hQg3hUoN1qrCLK1SBx3WKwe"],
  ["wrong network", "network", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"],
]) {
  test(`payment refused: ${name}`, { skip }, async () => {
    const key = newKey();
    const { header } = await paymentFor(A, key);
    const payload = decode(header);
    payload.accepted[field] = value;
    const tampered = Buffer.from(JSON.stringify(payload)).toString("base64");
    const before = await merchantBalance();
    await assertRefusedUnconsumed(await post(A, { key, headers: { "PAYMENT-SIGNATURE": tampered } }), 402, name);
    await assertNothingMoved(before, name);
  });
}

test("tampered signature is refused", { skip }, async () => {
  const key = newKey();
  const { header } = await paymentFor(A, key);
  const payload = decode(header);
  const tx = Buffer.from(payload.payload.transaction, "base64");
  tx[1 + 64 + 5] ^= 0xff; // inside the client's signature (the second one)
  payload.payload.transaction = tx.toString("base64");
  const before = await merchantBalance();
  await assertRefusedUnconsumed(
    await post(A, { key, headers: { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(payload)).toString("base64") } }),
    402,
    "tampered signature",
  );
  await assertNothingMoved(before, "tampered signature");
});

test("expired blockhash: passes local checks, fails verify, nothing moves", { skip }, async () => {
  const key = newKey();
  const { header } = await paymentFor(A, key);
  await rpc(svmUrl, "testExpireBlockhash");
  const before = await merchantBalance();
  await assertRefusedUnconsumed(await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } }), 402, "expired blockhash");
  await assertNothingMoved(before, "expired blockhash");
});

test("oversized, non-base64 and x402 v1 headers are refused", { skip }, async () => {
  const before = await merchantBalance();
  await assertRefusedUnconsumed(await post(A, { key: newKey(), headers: { "PAYMENT-SIGNATURE": "A".repeat(12300) } }), 400, "oversized");
  await assertRefusedUnconsumed(await post(A, { key: newKey(), headers: { "PAYMENT-SIGNATURE": "%%% not base64 %%%" } }), 400, "non-base64");
  await assertRefusedUnconsumed(await post(A, { key: newKey(), headers: { "X-PAYMENT": "eyJ4NDAyVmVyc2lvbiI6MX0=" } }), 400, "v1");
  await assertNothingMoved(before, "bad headers");
});

test("a payment sent with a malformed body is refused free; nothing moves; the payment stays usable", { skip }, async () => {
  const key = newKey();
  const { header } = await paymentFor(A, key);
  const before = await merchantBalance();
  const res = await post(A, { key, body: "{not json", headers: { "PAYMENT-SIGNATURE": header } });
  assert.equal(res.status >= 400 && res.status < 500 && res.status !== 402, true, "free validation refusal");
  await assertNothingMoved(before, "malformed body");
  assert.equal((await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } })).status, 200);
  delivered += 1n;
});

test("after the run: the merchant received exactly price × delivered calls", { skip }, async () => {
  assert.equal(await merchantBalance(), startBalance + A.price * delivered);
});

test("after the run: the ledger has exactly one row per delivered call, payment facts only", { skip: process.env.WORKER_URL ? "external worker" : false }, async () => {
  const rows = d1(ownWorker.persist, "SELECT * FROM ledger_token_efficiency");
  const packRows = d1(ownWorker.persist, "SELECT * FROM ledger_context_budget_pack");
  assert.equal(packRows.length, 2, "the byte-for-byte pack and the re-delivered pack: one row each, none for a re-delivery");
  assert.equal(packRows[0].op, "pack");
  assert.equal(BigInt(rows.length + packRows.length), delivered);
  for (const row of rows) {
    assert.equal(row.price_usdc_units, Number(A.price));
    assert.equal(row.cad_pending, 1);
    assert.equal(row.house, 0);
    // The reference names the chain (CAIP-2) and the transaction: solana:<genesis>:<signature>.
    assert.match(row.tx_sig, /^solana:[1-9A-HJ-NP-Za-km-z]{32}:[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    assert.ok(row.fee_lamports >= 5000);
    assert.match(row.verdict, /^PAYLOAD BUDGET — payload tokens: \d+ — effective budget: 100 — FITS — /);
  }
  assert.equal(new Set(rows.map((r) => r.tx_sig)).size, rows.length);
});
