// A stock x402 client pays, with no code of its own, against real workerd (wrangler dev), the
// local Solana VM and the official-package facilitator; then the facilitator demands a CDP-style
// Bearer JWT (really verified) and the worker's credentials are accepted, then refused.
// Ports 18100-18199: worker 18100, VM 18101, facilitator 18102, a worker with 3-second nonces 18103.
//
// "Stock" means exactly the @x402/fetch README's builder pattern: new x402Client()
// .register("solana:*", new ExactSvmScheme(signer, { rpcUrl })) and wrapFetchWithPayment(fetch,
// client) — no extension hook, no Idempotency-Key, no extra header. The only departure is the
// rpcUrl of the local VM. Each criteria route is paid once; the merchant's balance must grow by
// exactly the sum of the prices the challenges named.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import { startSvm, tokenBalance } from "./stack.mjs";
import { startFacilitator } from "./facilitator.mjs";
import { seedOf } from "./wallets.mjs";
import { createPaymentHeader } from "./client.mjs";
import { startWorker, ROOT } from "../lib/worker.mjs";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const WORKER_PORT = 18100;
const SVM_PORT = 18101;
const FACILITATOR_PORT = 18102;
const SHORT_TTL_WORKER_PORT = 18103;
const WALLET_LIMIT_WORKER_PORT = 18104;
const KEY_ID = "organizations/test-org/apiKeys/stock-test";

const ROUTES = [
  { path: "/token-efficiency/budget", body: { payload: JSON.stringify({ a: 1, b: [1, 2, 3] }), budget_tokens: 100 } },
  {
    path: "/context-composition/audit",
    body: {
      envelope_version: "context-composition-envelope/1",
      declared_format_id: "generic-message-list",
      record: { messages: [{ role: "system", text: "You are terse." }, { role: "user", text: "What is 2 + 2?" }] },
    },
  },
  { path: "/token-opt/levers", body: { truncate: { blocks: ["alpha beta gamma delta", "short"], max_chars: 12 } } },
  { path: "/token-opt/toon", body: { payload: { rows: [{ k: "a", v: 1 }, { k: "b", v: 2 }] }, indent_size: 2 } },
];

const PACK_EXAMPLE = JSON.parse(readFileSync(join(ROOT, "corpus", "context-budget-pack", "contract.json"), "utf8")).exampleInput;

let svm, facilitator, worker, merchant, wallets;
let workerKey; // { publicKey } of the worker's CDP credential

const decode = (b64) => JSON.parse(Buffer.from(b64, "base64").toString("utf8"));
const merchantBalance = () => tokenBalance(svm.url, merchant);

/** A fresh Ed25519 CDP-style key: { secret (base64 seed ‖ public), publicKey (KeyObject) }. */
function cdpKey() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(16);
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12);
  return { secret: Buffer.concat([seed, raw]).toString("base64"), publicKey };
}

/** The stock client exactly as the @x402/fetch README builds it. `sent` records what it sent. */
async function stockFetch(sent = []) {
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seedOf("client"));
  const client = new x402Client().register("solana:*", new ExactSvmScheme(signer, { rpcUrl: svm.url }));
  const recording = async (input, init) => {
    const request = new Request(input, init);
    sent.push({ url: request.url, headers: Object.fromEntries(request.headers), body: await request.clone().text() });
    return fetch(request);
  };
  return wrapFetchWithPayment(recording, client);
}

function postJson(fetchImpl, path, body, headers = {}) {
  return fetchImpl(worker.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

before(async () => {
  svm = await startSvm({ port: SVM_PORT });
  ({ wallets } = svm);
  merchant = wallets.merchant;
  facilitator = await startFacilitator({ port: FACILITATOR_PORT, rpcUrl: svm.url, quiet: true });
  workerKey = cdpKey();
  worker = await startWorker({
    port: WORKER_PORT,
    logLevel: "warn",
    vars: {
      FACILITATOR_URL: facilitator.url,
      SOLANA_RPC_URL: svm.url,
      PAY_ATTEMPTS_PER_WALLET: "100000",
      CDP_API_KEY_ID: KEY_ID,
      CDP_API_KEY_SECRET: workerKey.secret,
    },
  });
});

after(async () => {
  await worker?.stop();
  await facilitator?.close();
  await svm?.stop();
});

test("without an Idempotency-Key a criteria route answers a stateless nonce challenge", async () => {
  for (const route of ROUTES) {
    const res = await postJson(fetch, route.path, route.body);
    assert.equal(res.status, 402, route.path);
    const required = decode(res.headers.get("payment-required"));
    assert.match(required.accepts[0].extra.memo, /^cmn1\.[0-9a-f]{32}\.\d{10}\.[0-9a-f]{32}$/, route.path);
    assert.ok(required.accepts[0].extra.memo.length <= 256);
    assert.equal(required.extensions["payment-identifier"].info.required, false, route.path);
    // Two challenges never share a nonce.
    const again = decode((await postJson(fetch, route.path, route.body)).headers.get("payment-required"));
    assert.notEqual(again.accepts[0].extra.memo, required.accepts[0].extra.memo);
  }
  // The pack keeps its contract: no key, no challenge.
  const pack = await postJson(fetch, "/v1/x402/context-budget-pack", PACK_EXAMPLE);
  assert.equal(pack.status, 400);
  assert.equal((await pack.json()).code, "IDEMPOTENCY_KEY_REQUIRED");
});

test("the stock @x402/fetch client pays every criteria route; the merchant gains exactly the prices", async () => {
  const before = await merchantBalance();
  let prices = 0n;
  for (const route of ROUTES) {
    const sent = [];
    const pay = await stockFetch(sent);
    const res = await postJson(pay, route.path, route.body);
    const text = await res.text();
    assert.equal(res.status, 200, `${route.path}: ${text}`);
    const receipt = decode(res.headers.get("payment-response"));
    assert.equal(receipt.success, true, route.path);
    assert.match(receipt.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    assert.equal(sent.length, 2, "one unpaid request, one paid retry");
    assert.equal(sent[1].headers["idempotency-key"], undefined, "the stock client sent no key");
    const paid = decode(sent[1].headers["payment-signature"]);
    assert.equal(paid.extensions?.["payment-identifier"]?.info?.id, undefined, "no identifier was filled");
    prices += BigInt(paid.accepted.amount);
  }
  assert.ok(prices > 0n);
  assert.equal(await merchantBalance(), before + prices);
});

test("a delivered stock payment: the identical retry is delivered again (lost answer); other route or tampered memo refused; nothing more charged", async () => {
  const [te, , levers] = ROUTES;
  const sent = [];
  const res = await postJson(await stockFetch(sent), te.path, te.body);
  assert.equal(res.status, 200, await res.text());
  const header = sent[1].headers["payment-signature"];
  const before = await merchantBalance();

  const replay = await postJson(fetch, te.path, te.body, { "payment-signature": header });
  assert.equal(replay.status, 200, "the identical retry is delivered again");
  assert.ok((await replay.json()).signature?.sig, "signed like the first answer");
  assert.equal(decode(replay.headers.get("payment-response")).success, true, "the original receipt comes back");

  const elsewhere = await postJson(fetch, levers.path, levers.body, { "payment-signature": header });
  assert.equal(elsewhere.status, 402);
  const refusal = await elsewhere.json();
  assert.equal(refusal.code, "payment_nonce_invalid");
  assert.equal(refusal.payment, "not verified, not consumed");

  const tampered = decode(header);
  tampered.accepted.extra.memo = tampered.accepted.extra.memo.replace(/\.(\d+)\./, (_, s) => `.${Number(s) + 1}.`);
  const forged = await postJson(fetch, te.path, te.body, { "payment-signature": Buffer.from(JSON.stringify(tampered)).toString("base64") });
  assert.equal(forged.status, 402);
  assert.equal((await forged.json()).code, "payment_nonce_invalid");

  assert.equal(await merchantBalance(), before, "a replay moved money");
});

test("a stock payment with a key but no payment-identifier pays a criteria route (identifier checked only when sent)", async () => {
  const [, , , toon] = ROUTES;
  const before = await merchantBalance();
  const sent = [];
  const res = await postJson(await stockFetch(sent), toon.path, toon.body, { "Idempotency-Key": `stock-key-${Date.now()}-0001` });
  assert.equal(res.status, 200, await res.text());
  assert.match(decode(sent[1].headers["payment-signature"]).accepted.extra.memo, /^cm:[0-9a-f]{32}$/);
  assert.equal(await merchantBalance(), before + BigInt(decode(sent[1].headers["payment-signature"]).accepted.amount));
});

test("a nonce is honoured until its expiry for a new payment only: expired → 402 free; a delivered payment is still delivered again to its identical retry", async () => {
  const [te] = ROUTES;
  const shortLived = await startWorker({
    port: SHORT_TTL_WORKER_PORT,
    logLevel: "warn",
    vars: { FACILITATOR_URL: facilitator.url, SOLANA_RPC_URL: svm.url, PAY_ATTEMPTS_PER_WALLET: "100000", PAYMENT_NONCE_TTL_SECONDS: "3" },
  });
  try {
    const post = (headers = {}) => fetch(shortLived.url + te.path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(te.body) });
    const before = await merchantBalance();
    // Delivered inside the window, replayed after it: the record's rules still apply.
    const sent = [];
    const paid = await (await stockFetch(sent))(shortLived.url + te.path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(te.body) });
    assert.equal(paid.status, 200, await paid.text());
    const price = BigInt(decode(sent[1].headers["payment-signature"]).accepted.amount);
    // Signed for a challenge, presented after its expiry.
    const challenge = await post();
    assert.equal(challenge.status, 402);
    const { header } = await createPaymentHeader(challenge.headers.get("payment-required"), { rpcUrl: svm.url });
    await new Promise((r) => setTimeout(r, 4000));
    const late = await post({ "payment-signature": header });
    const body = await late.json();
    assert.equal(late.status, 402);
    assert.equal(body.code, "payment_nonce_expired");
    assert.equal(body.payment, "not verified, not consumed");
    assert.match(decode(late.headers.get("payment-required")).accepts[0].extra.memo, /^cmn1\./, "a fresh challenge comes with it");
    const replay = await post({ "payment-signature": sent[1].headers["payment-signature"] });
    assert.equal(replay.status, 200, "re-delivered after the nonce's expiry: the record's rules still apply");
    await replay.arrayBuffer();
    assert.equal(await merchantBalance(), before + price);
  } finally {
    await shortLived.stop();
  }
});

test("the per-wallet limit counts what costs us, not what pays us: a paying wallet past the limit is never 429'd; a wallet sending conflicting proofs is", async () => {
  const [te] = ROUTES;
  const LIMIT = 3;
  const limited = await startWorker({
    port: WALLET_LIMIT_WORKER_PORT,
    logLevel: "warn",
    vars: { FACILITATOR_URL: facilitator.url, SOLANA_RPC_URL: svm.url, PAY_ATTEMPTS_PER_WALLET: String(LIMIT) },
  });
  try {
    const post = (headers = {}) => fetch(limited.url + te.path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(te.body) });
    const before = await merchantBalance();
    // One wallet pays three times the limit in a row, as fast as the stock flow goes: every call delivered.
    const keys = [];
    for (let i = 0; i < 3 * LIMIT; i++) {
      const key = `wallet-paying-${Date.now()}-${i}`;
      keys.push(key);
      const challenge = await post({ "Idempotency-Key": key });
      assert.equal(challenge.status, 402);
      const { header } = await createPaymentHeader(challenge.headers.get("payment-required"), { rpcUrl: svm.url, idempotencyKey: key });
      const paid = await post({ "Idempotency-Key": key, "payment-signature": header });
      assert.equal(paid.status, 200, `paid call ${i}: ${paid.status}`);
      await paid.arrayBuffer();
    }
    const price = 20000n; // the budget op's published price ($0.02)
    assert.equal(await merchantBalance(), before + price * BigInt(3 * LIMIT), "every paid call charged once");
    // Another wallet presents its proofs under keys the first wallet paid: each is a conflict and
    // counts; past the limit it is 429 with Retry-After, free.
    const codes = [];
    for (let i = 0; i <= LIMIT; i++) {
      const key = keys[i];
      const challenge = await post({ "Idempotency-Key": `wallet-conflict-${Date.now()}-${i}` });
      await challenge.arrayBuffer();
      const fresh = await post({ "Idempotency-Key": key });
      const { header } = await createPaymentHeader(fresh.headers.get("payment-required"), { rpcUrl: svm.url, wallet: "client2", idempotencyKey: key });
      await fresh.arrayBuffer();
      const res = await post({ "Idempotency-Key": key, "payment-signature": header });
      const body = await res.json();
      codes.push(`${res.status}:${body.code}`);
      if (i < LIMIT) assert.equal(body.code, "payment_proof_conflict", codes.join(" "));
      else {
        assert.equal(res.status, 429, codes.join(" "));
        assert.equal(body.code, "payment_rate_limited");
        assert.ok(Number(res.headers.get("retry-after")) >= 1);
      }
    }
    assert.equal(await merchantBalance(), before + price * BigInt(3 * LIMIT), "no conflict moved money");
  } finally {
    await limited.stop();
  }
});

test("facilitator authentication: a verified CDP JWT on every call is accepted; a refused key is 503 with nothing charged", async () => {
  const [te] = ROUTES;
  // Accepted: the facilitator now demands the worker's key on /supported, /verify and /settle.
  facilitator.demand({ keyId: KEY_ID, publicKey: workerKey.publicKey });
  const before = await merchantBalance();
  const ok = await postJson(await stockFetch(), te.path, te.body);
  assert.equal(ok.status, 200, await ok.text());
  const price = (await merchantBalance()) - before;
  assert.ok(price > 0n);
  assert.ok(facilitator.auth.verified >= 2, `verified ${facilitator.auth.verified}`); // /verify and /settle at least
  assert.equal(facilitator.auth.rejected, 0);

  // Refused at /verify: another key is demanded.
  facilitator.demand({ keyId: KEY_ID, publicKey: cdpKey().publicKey });
  const atVerify = await postJson(await stockFetch(), te.path, te.body);
  const text = await atVerify.text();
  assert.equal(atVerify.status, 503, text);
  const body = JSON.parse(text);
  assert.equal(body.code, "payment_facilitator_auth_rejected");
  assert.equal(body.payment, "not verified, not consumed");
  assert.doesNotMatch(text + JSON.stringify(Object.fromEntries(atVerify.headers)), /Bearer|eyJ|stock-test|test-org/);
  assert.ok(facilitator.auth.rejected >= 1);

  // Refused at /settle only (verify passes unauthenticated): released, 503, nothing charged.
  facilitator.demand({ keyId: KEY_ID, publicKey: cdpKey().publicKey, paths: ["/settle"] });
  const atSettle = await postJson(await stockFetch(), te.path, te.body);
  const settleText = await atSettle.text();
  assert.equal(atSettle.status, 503, settleText);
  assert.equal(JSON.parse(settleText).code, "payment_facilitator_auth_rejected");
  facilitator.demand(null);

  assert.equal(await merchantBalance(), before + price, "a refused credential moved money");
});
