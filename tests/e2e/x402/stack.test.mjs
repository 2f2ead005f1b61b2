// Proves the payment stack works end to end without the worker: the official client pays a tiny
// Node resource server (a stub speaking the worker's challenge) through the official facilitator on
// the local VM, and the merchant's balance moves by exactly the price — once.
// Run: node --test tests/e2e/x402/stack.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startStack, tokenBalance, paymentRequired, toBase64Json, rpc } from "./stack.mjs";
import { payingFetch, createPaymentHeader } from "./client.mjs";

const PRICE = 20_000;
const ROUTE = "token-efficiency/budget";
let stack, resource, resourceUrl, wallets;

function requiredFor(key) {
  return paymentRequired({
    route: ROUTE,
    key,
    price: PRICE,
    payTo: wallets.merchant,
    feePayer: stack.facilitator.feePayer,
    url: resourceUrl,
  });
}

async function facilitatorCall(path, paymentPayload, requirements) {
  const res = await fetch(stack.facilitator.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements }),
  });
  return res.json();
}

before(async () => {
  stack = await startStack();
  wallets = stack.svm.wallets;
  // Stub resource server: 402 + PAYMENT-REQUIRED without payment; with payment, verify + settle.
  resource = http.createServer(async (req, res) => {
    const key = req.headers["idempotency-key"];
    const required = requiredFor(key);
    const header = req.headers["payment-signature"];
    if (!header) {
      res.writeHead(402, { "PAYMENT-REQUIRED": toBase64Json(required) });
      return res.end("{}");
    }
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    const verified = await facilitatorCall("/verify", payload, required.accepts[0]);
    if (!verified.isValid) {
      res.writeHead(402, { "PAYMENT-REQUIRED": toBase64Json({ ...required, error: verified.invalidReason }) });
      return res.end("{}");
    }
    const settled = await facilitatorCall("/settle", payload, required.accepts[0]);
    res.writeHead(settled.success ? 200 : 402, { "PAYMENT-RESPONSE": toBase64Json(settled), "content-type": "application/json" });
    res.end(JSON.stringify({ paid: settled.success, id: payload.extensions?.["payment-identifier"]?.info?.id ?? null }));
  });
  await new Promise((r) => resource.listen(0, "127.0.0.1", r));
  resourceUrl = `http://127.0.0.1:${resource.address().port}/${ROUTE}`;
});

after(async () => {
  await new Promise((r) => resource.close(r));
  await stack.stop();
});

test("facilitator advertises its fee payer for the devnet id", async () => {
  const supported = await (await fetch(stack.facilitator.url + "/supported")).json();
  const kind = supported.kinds.find((k) => k.x402Version === 2 && k.network === "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  assert.equal(kind.scheme, "exact");
  assert.equal(kind.extra.feePayer, wallets.feePayer);
});

test("the official client pays once; the merchant receives exactly the price", async () => {
  const before = await tokenBalance(stack.svm.url, wallets.merchant);
  const clientBefore = await tokenBalance(stack.svm.url, wallets.client);
  const pay = await payingFetch({ rpcUrl: stack.svm.url });
  const key = "stack-test-key-0001";
  const res = await pay(resourceUrl, { method: "POST", headers: { "Idempotency-Key": key }, body: "{}" });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(body, { paid: true, id: key });
  const receipt = JSON.parse(Buffer.from(res.headers.get("PAYMENT-RESPONSE"), "base64").toString());
  assert.equal(receipt.success, true);
  assert.equal(receipt.payer, wallets.client);
  assert.equal(await tokenBalance(stack.svm.url, wallets.merchant), before + BigInt(PRICE));
  assert.equal(await tokenBalance(stack.svm.url, wallets.client), clientBefore - BigInt(PRICE));
});

test("the same payment settles only once (the VM refuses the duplicate)", async () => {
  const key = "stack-test-key-0002";
  const required = requiredFor(key);
  const { payload } = await createPaymentHeader(toBase64Json(required), { rpcUrl: stack.svm.url, idempotencyKey: key });
  const before = await tokenBalance(stack.svm.url, wallets.merchant);
  const first = await facilitatorCall("/settle", payload, required.accepts[0]);
  assert.equal(first.success, true);
  const second = await facilitatorCall("/settle", payload, required.accepts[0]);
  assert.equal(second.success, false);
  assert.equal(await tokenBalance(stack.svm.url, wallets.merchant), before + BigInt(PRICE));
});

test("an expired blockhash is refused at verify; nothing moves", async () => {
  const key = "stack-test-key-0003";
  const required = requiredFor(key);
  const { payload } = await createPaymentHeader(toBase64Json(required), { rpcUrl: stack.svm.url, idempotencyKey: key });
  await rpc(stack.svm.url, "testExpireBlockhash");
  const before = await tokenBalance(stack.svm.url, wallets.merchant);
  const verified = await facilitatorCall("/verify", payload, required.accepts[0]);
  assert.equal(verified.isValid, false);
  const settled = await facilitatorCall("/settle", payload, required.accepts[0]);
  assert.equal(settled.success, false);
  assert.equal(await tokenBalance(stack.svm.url, wallets.merchant), before);
});

test("craft.mjs builds payments the official facilitator accepts (so attack variants differ in one thing only)", async () => {
  const { craftPaymentHeader } = await import("./craft.mjs");
  const key = "stack-test-key-0004";
  const required = requiredFor(key);
  const honest = await craftPaymentHeader({ rpcUrl: stack.svm.url, required, idempotencyKey: key });
  const payload = JSON.parse(Buffer.from(honest, "base64").toString("utf8"));
  assert.equal((await facilitatorCall("/verify", payload, required.accepts[0])).isValid, true);
  const extra = await craftPaymentHeader({ rpcUrl: stack.svm.url, required, idempotencyKey: key, change: { amount: 1 } });
  const extraPayload = JSON.parse(Buffer.from(extra, "base64").toString("utf8"));
  const verdict = await facilitatorCall("/verify", extraPayload, required.accepts[0]);
  assert.equal(verdict.isValid, false);
  assert.equal(verdict.invalidReason, "invalid_exact_svm_payload_amount_mismatch");
});

test("the official facilitator verifies and settles real wallets' layouts (Phantom, Solflare) on the VM", async () => {
  const { craftPaymentHeader } = await import("./craft.mjs");
  for (const [i, tail] of [["5", ["lighthouse", "memo"]], ["6", ["lighthouse", "lighthouse", "memo"]], ["7", ["memo", "lighthouse"]]]) {
    const key = `stack-test-key-000${i}`;
    const required = requiredFor(key);
    const header = await craftPaymentHeader({ rpcUrl: stack.svm.url, required, idempotencyKey: key, change: { tail } });
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    const before = await tokenBalance(stack.svm.url, wallets.merchant);
    const verified = await facilitatorCall("/verify", payload, required.accepts[0]);
    assert.equal(verified.isValid, true, `${tail}: ${verified.invalidReason} ${verified.invalidMessage ?? ""}`);
    const settled = await facilitatorCall("/settle", payload, required.accepts[0]);
    assert.equal(settled.success, true, `${tail}: ${settled.errorReason}`);
    assert.equal(await tokenBalance(stack.svm.url, wallets.merchant), before + BigInt(PRICE), `${tail}`);
  }
});

test("@x402/svm 2.27.0 also verifies layouts the scheme text refuses (the worker refuses them before it)", async () => {
  // The facilitator only checks that each instruction after the transfer is Lighthouse or Memo, up
  // to seven instructions; the scheme lists at most six, the sixth a Memo. Verified, never settled.
  const { craftPaymentHeader } = await import("./craft.mjs");
  for (const [i, tail] of [["8", ["memo", "lighthouse", "lighthouse"]], ["9", ["lighthouse", "lighthouse", "lighthouse", "memo"]]]) {
    const key = `stack-test-key-000${i}`;
    const required = requiredFor(key);
    const header = await craftPaymentHeader({ rpcUrl: stack.svm.url, required, idempotencyKey: key, change: { tail } });
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    assert.equal((await facilitatorCall("/verify", payload, required.accepts[0])).isValid, true, `${tail}`);
  }
  const key = "stack-test-key-0010";
  const required = requiredFor(key);
  const twoMemos = await craftPaymentHeader({ rpcUrl: stack.svm.url, required, idempotencyKey: key, change: { tail: ["memo", "memo"] } });
  const verdict = await facilitatorCall("/verify", JSON.parse(Buffer.from(twoMemos, "base64").toString("utf8")), required.accepts[0]);
  assert.equal(verdict.isValid, false);
  assert.equal(verdict.invalidReason, "invalid_exact_svm_payload_memo_count");
});
