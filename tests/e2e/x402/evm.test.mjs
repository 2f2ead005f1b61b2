// x402 `exact` on EVM, end to end and offline: anvil as a local Base Sepolia with the EIP-3009
// USDC-like token at the Base Sepolia USDC address (tests/e2e/x402/evm/chain.mjs), the official
// facilitator code (@x402/evm ExactEvmScheme beside the Solana scheme, tests/e2e/x402/facilitator.mjs),
// the worker under wrangler dev, and the stock client (@x402/fetch + @x402/evm, no hooks).
// The stock client pays every paid route, and the quickstart examples/evm/pay-and-verify.mjs runs
// green here; then the attack table, each refused with nothing charged; at the end the merchant's
// balanceOf is exactly price × delivered calls, with one ledger row per delivered call.
// The money rules under settle faults (the facilitator's test-only fault switch, as faults.test.mjs uses
// it on Solana): an answer lost or stalled after the authorization landed is reconciled from the chain
// (authorizationState, then the AuthorizationUsed log and its receipt) and delivered once; a settle lost
// before submitting is PAYMENT_UNCERTAIN, never "not consumed", and the retry as told lands it once.
// Ports: worker 18200, facilitator 18201, anvil 18202.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPaymentFromConfig, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { startChain, KEYS, WALLETS, EVM_NETWORK, USDC, CHAIN_ID } from "./evm/chain.mjs";
import { startFacilitator } from "./facilitator.mjs";
import { startWorker, d1, ROOT } from "../lib/worker.mjs";

const PORTS = { worker: 18200, facilitator: 18201, anvil: 18202 };
const contract = JSON.parse(readFileSync(join(ROOT, "corpus", "context-budget-pack", "contract.json"), "utf8"));
// Every paid route with a valid body and its price (token-opt/levers is raised to A's price so a
// cross-route spend is stopped by the binding alone, not by the amount).
const ROUTES = {
  budget: { path: "/token-efficiency/budget", body: { payload: JSON.stringify({ items: [1, 1, 2], note: "" }), budget_tokens: 5 }, price: 20000n, table: "ledger_token_efficiency" },
  audit: {
    path: "/context-composition/audit",
    body: { envelope_version: "context-composition-envelope/1", declared_format_id: "anthropic-messages", record: [{ role: "user", content: "hi" }] },
    price: 50000n,
    table: "ledger_context_composition",
  },
  pack: { path: "/v1/x402/context-budget-pack", body: contract.exampleInput, price: 5000n, table: "ledger_context_budget_pack", pack: true },
  levers: { path: "/token-opt/levers", body: { truncate: { blocks: ["a"], max_chars: 10 } }, price: 20000n, table: "ledger_token_opt" },
  toon: { path: "/token-opt/toon", body: { payload: '{"a":[{"x":1,"y":2},{"x":3,"y":4}]}' }, price: 5000n, table: "ledger_token_opt" },
};

let chain, facilitator, worker;
let startBalance;
let expected = 0n; // price × delivered calls
let deliveredCalls = 0;

const SETTLE_TIMEOUT_MS = 4000;
const newKey = () => "evm-" + randomBytes(12).toString("hex");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const decode = (b64) => JSON.parse(Buffer.from(b64, "base64").toString("utf8"));
const encode = (value) => Buffer.from(JSON.stringify(value), "utf8").toString("base64");
const merchantBalance = () => chain.balance(WALLETS.merchant);

function post(route, { key, headers = {}, body = route.body } = {}) {
  return fetch(worker.url + route.path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "Idempotency-Key": key } : {}), ...headers },
    body: JSON.stringify(body),
  });
}

const startEvmFacilitator = () =>
  startFacilitator({
    port: PORTS.facilitator,
    rpcUrl: "http://127.0.0.1:9", // the Solana scheme is registered but never used here
    quiet: true,
    faults: true, // armed only by the settle-fault cases below
    evm: { rpcUrl: chain.rpcUrl, privateKey: KEYS.facilitator, network: EVM_NETWORK },
  });

before(async () => {
  chain = await startChain({ port: PORTS.anvil });
  facilitator = await startEvmFacilitator();
  worker = await startWorker({
    port: PORTS.worker,
    logLevel: "warn",
    vars: {
      FACILITATOR_URL: facilitator.url,
      EVM_84532_RPC_URL: chain.rpcUrl,
      PRICE_TOKEN_OPT_LEVERS: String(ROUTES.levers.price),
      // The settle-fault cases stall an answer past this; every other settle answers in milliseconds.
      SETTLE_TIMEOUT_MS: String(SETTLE_TIMEOUT_MS),
    },
  });
  startBalance = await merchantBalance();
});

after(async () => {
  await worker?.stop();
  await facilitator?.close();
  await chain?.stop();
});

/** The challenge's EVM requirement for a route (and the whole PAYMENT-REQUIRED). */
async function challenge(route, key) {
  const res = await post(route, { key });
  assert.equal(res.status, 402, `${route.path}: unpaid call must be challenged`);
  await res.arrayBuffer();
  const required = decode(res.headers.get("PAYMENT-REQUIRED"));
  const evm = required.accepts.find((a) => a.network === EVM_NETWORK);
  assert.ok(evm, "an EVM requirement is offered");
  return { required, evm };
}

/** A PAYMENT-SIGNATURE for `requirement` built by the official client (optionally with an identifier). */
async function stockPayment(required, requirement, { wallet = "client", identifier } = {}) {
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(KEYS[wallet])));
  const payload = await client.createPaymentPayload({ ...required, accepts: [requirement] });
  if (identifier) payload.extensions = { "payment-identifier": { info: { required: true, id: identifier } } };
  return { payload, header: encodePaymentSignatureHeader(payload) };
}

/** Signs an authorization with chosen fields (for windows the official client never builds). */
async function signedPayment(requirement, fields, wallet = "client") {
  const account = privateKeyToAccount(KEYS[wallet]);
  const authorization = {
    from: account.address,
    to: requirement.payTo,
    value: requirement.amount,
    validAfter: "0",
    validBefore: String(Math.floor(Date.now() / 1000) + 60),
    nonce: "0x" + randomBytes(32).toString("hex"),
    ...fields,
  };
  const signature = await account.signTypedData({
    domain: { name: requirement.extra.name, version: requirement.extra.version, chainId: Number(requirement.network.split(":")[1] ?? CHAIN_ID), verifyingContract: requirement.asset },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" }, { name: "to", type: "address" }, { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" }, { name: "validBefore", type: "uint256" }, { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "TransferWithAuthorization",
    message: { ...authorization, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) },
  });
  return { x402Version: 2, accepted: requirement, payload: { authorization, signature } };
}

async function refusedFree(res, status, code, what) {
  assert.equal(res.status, status, `${what}: status`);
  const body = await res.json();
  assert.equal(body.code, code, `${what}: code`);
  if (status !== 409 && status !== 429) assert.equal(body.payment, "not verified, not consumed", `${what}: payment untouched`);
  // A refusal about a delivered payment names it by its original receipt; no other refusal carries one.
  const aboutDelivered = ["payment_replayed", "payment_redelivery_mismatch"].includes(code);
  if (!aboutDelivered) assert.equal(res.headers.get("PAYMENT-RESPONSE"), null, `${what}: no receipt`);
  return body;
}

/** A lost answer retried as told: delivered again, signed, with the original receipt (nothing counted: no second charge). */
async function redelivered(res, receipt, what) {
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  const again = decode(res.headers.get("PAYMENT-RESPONSE"));
  assert.equal(again.transaction, receipt.transaction, `${what}: the original receipt`);
  assert.equal(again.network, EVM_NETWORK, `${what}: its network`);
  const body = await res.json();
  assert.ok(body.signature?.sig, `${what}: signed like the first answer`);
  return body;
}

function delivered(route, res) {
  const receipt = decode(res.headers.get("PAYMENT-RESPONSE"));
  assert.equal(receipt.success, true);
  assert.equal(receipt.network, EVM_NETWORK);
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
  expected += route.price;
  deliveredCalls += 1;
  return receipt;
}

test("the challenge offers EIP-3009 USDC on Base Sepolia beside Solana, with the EIP-712 domain", async () => {
  const { required, evm } = await challenge(ROUTES.budget, newKey());
  assert.ok(required.accepts[0].network.startsWith("solana:"), "Solana stays first");
  assert.deepEqual(evm, {
    scheme: "exact", network: EVM_NETWORK, amount: "20000", asset: USDC, payTo: WALLETS.merchant,
    maxTimeoutSeconds: 60, extra: { name: "USDC", version: "2" },
  });
});

test("the stock client (@x402/fetch + @x402/evm, no hooks, no extra header) pays every criteria route; exactly the price moves", async () => {
  const pay = wrapFetchWithPaymentFromConfig(fetch, {
    schemes: [{ network: EVM_NETWORK, client: new ExactEvmScheme(privateKeyToAccount(KEYS.client)) }],
  });
  for (const route of Object.values(ROUTES).filter((r) => !r.pack)) {
    const before = await merchantBalance();
    const res = await pay(worker.url + route.path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(route.body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${route.path}: ${text.slice(0, 200)}`);
    const receipt = delivered(route, res);
    assert.equal(receipt.payer.toLowerCase(), WALLETS.client.toLowerCase());
    assert.equal(await merchantBalance(), before + route.price, route.path);
  }
  // The worker forwarded our resource and bazaar declaration with each EVM payment too: the
  // official extraction a cataloguing facilitator runs lists each paid route.
  const listed = facilitator.discovered.filter((d) => d.at === "/settle").map((d) => d.info);
  for (const route of Object.values(ROUTES).filter((r) => !r.pack)) {
    const info = listed.find((i) => i?.resourceUrl === worker.url + route.path);
    assert.ok(info, `${route.path}: no valid bazaar declaration reached /settle`);
    assert.equal(info.method, "POST");
    assert.equal(info.serviceName, "context-meter");
  }
});

test("the pack route (its contract: key required, payment-identifier = key) is paid on EVM", async () => {
  const route = ROUTES.pack;
  const key = newKey();
  const { required, evm } = await challenge(route, key);
  const { header } = await stockPayment(required, evm, { identifier: key });
  const before = await merchantBalance();
  const res = await post(route, { key, headers: { "PAYMENT-SIGNATURE": header } });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), JSON.stringify(contract.exampleResponse));
  delivered(route, res);
  assert.equal(await merchantBalance(), before + route.price);
  // Without the identifier the pack refuses it, free.
  const key2 = newKey();
  const second = await challenge(route, key2);
  const bare = await stockPayment(second.required, second.evm);
  await refusedFree(await post(route, { key: key2, headers: { "PAYMENT-SIGNATURE": bare.header } }), 400, "payment_identifier_mismatch", "pack without identifier");
  assert.equal(await merchantBalance(), before + route.price);
});

test("the EVM quickstart (examples/evm/pay-and-verify.mjs) pays the budget and pack routes and verifies both reports", async () => {
  const example = join("examples", "evm", "pay-and-verify.mjs");
  const before = await merchantBalance();
  const env = { ...process.env, CM_URL: worker.url, EVM_RPC_URL: chain.rpcUrl, PAYER_PRIVATE_KEY: KEYS.client };
  // Asynchronously: the facilitator runs in this process and must keep answering meanwhile.
  const run = await promisify(execFile)(process.execPath, [example], { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 })
    .catch((e) => assert.fail(`${example} failed (${e.code ?? e.signal}):\n${e.stdout}\n${e.stderr}`));
  const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => l.path), [ROUTES.budget.path, ROUTES.pack.path]);
  for (const line of lines) {
    const route = line.path === ROUTES.pack.path ? ROUTES.pack : ROUTES.budget;
    assert.equal(line.status, 200, JSON.stringify(line));
    assert.equal(line.verified, true, JSON.stringify(line));
    assert.equal(BigInt(line.paid_units), route.price, JSON.stringify(line));
    assert.match(line.transaction, /^0x[0-9a-f]{64}$/, JSON.stringify(line));
    const mined = await chain.publicClient.getTransactionReceipt({ hash: line.transaction });
    assert.equal(mined.status, "success", line.transaction);
    expected += route.price;
    deliveredCalls += 1;
  }
  assert.equal(await merchantBalance(), before + ROUTES.budget.price + ROUTES.pack.price);
  // And it can fail: a payer without USDC (anvil account 0, never minted) is refused, nothing
  // moves, and the example says so in its lines and its exit status.
  const unfunded = await promisify(execFile)(process.execPath, [example], { cwd: ROOT, env: { ...env, PAYER_PRIVATE_KEY: KEYS.minter }, encoding: "utf8", timeout: 120_000 })
    .then(() => assert.fail("an unfunded payer must not exit 0"), (e) => e);
  assert.equal(unfunded.code, 1, unfunded.stderr);
  for (const line of unfunded.stdout.trim().split("\n").map((l) => JSON.parse(l))) {
    assert.notEqual(line.status, 200, JSON.stringify(line));
    assert.equal(line.verified, false, JSON.stringify(line));
    assert.equal(line.transaction, null, JSON.stringify(line));
  }
  assert.equal(await merchantBalance(), before + ROUTES.budget.price + ROUTES.pack.price);
});

test("a delivered authorization: the identical retry is delivered again (also after a facilitator restart); another key or route is refused", async () => {
  const A = ROUTES.budget;
  const B = ROUTES.levers; // same price as A
  const key = newKey();
  const { required, evm } = await challenge(A, key);
  const { header } = await stockPayment(required, evm);
  const first = await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } });
  assert.equal(first.status, 200);
  const receipt = delivered(A, first);
  const before = await merchantBalance();

  await redelivered(await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } }), receipt, "lost answer, identical retry");
  // A changed body under the delivered payment is not the paid call: refused, nothing delivered.
  const changed = await post(A, { key, headers: { "PAYMENT-SIGNATURE": header }, body: { ...A.body, payload: JSON.stringify({ items: [1, 1, 2], note: "changed" }) } });
  await refusedFree(changed, 409, "payment_redelivery_mismatch", "changed body after delivery");
  await refusedFree(await post(A, { key: newKey(), headers: { "PAYMENT-SIGNATURE": header } }), 409, "payment_bound_elsewhere", "replay, another key");
  await refusedFree(await post(B, { key: newKey(), headers: { "PAYMENT-SIGNATURE": header } }), 409, "payment_bound_elsewhere", "cross-route");
  await refusedFree(await post(B, { key, headers: { "PAYMENT-SIGNATURE": header } }), 409, "payment_bound_elsewhere", "cross-route, same key");

  await facilitator.close();
  facilitator = await startEvmFacilitator();
  await refusedFree(await post(A, { key: newKey(), headers: { "PAYMENT-SIGNATURE": header } }), 409, "payment_bound_elsewhere", "after a facilitator restart");
  await redelivered(await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } }), receipt, "identical retry after a facilitator restart");
  assert.equal(await merchantBalance(), before, "no retry or replay moved money");
});

test("without an Idempotency-Key an authorization is bound by its own identity: replayed, reused with a key or on another route, refused", async () => {
  const A = ROUTES.budget;
  const B = ROUTES.levers; // same price as A
  const { required, evm } = await challenge(A);
  const { header } = await stockPayment(required, evm);
  const first = await post(A, { headers: { "PAYMENT-SIGNATURE": header } });
  assert.equal(first.status, 200, await first.clone().text());
  const receipt = delivered(A, first);
  await first.arrayBuffer();
  const before = await merchantBalance();
  await redelivered(await post(A, { headers: { "PAYMENT-SIGNATURE": header } }), receipt, "keyless identical retry");
  await refusedFree(await post(A, { key: newKey(), headers: { "PAYMENT-SIGNATURE": header } }), 409, "payment_bound_elsewhere", "keyless, then under a key");
  await refusedFree(await post(B, { headers: { "PAYMENT-SIGNATURE": header } }), 409, "payment_bound_elsewhere", "keyless, then on another route");
  // And the other way: an authorization first used under a key is not free to use without one.
  const key = newKey();
  const second = await challenge(A, key);
  const keyed = await stockPayment(second.required, second.evm);
  const paid = await post(A, { key, headers: { "PAYMENT-SIGNATURE": keyed.header } });
  assert.equal(paid.status, 200);
  delivered(A, paid);
  await paid.arrayBuffer();
  const after = await merchantBalance();
  assert.equal(after, before + A.price);
  await refusedFree(await post(A, { headers: { "PAYMENT-SIGNATURE": keyed.header } }), 409, "payment_bound_elsewhere", "keyed, then keyless");
  assert.equal(await merchantBalance(), after);
});

test("a concurrent duplicate settles once", async () => {
  const A = ROUTES.budget;
  const key = newKey();
  const { required, evm } = await challenge(A, key);
  const { header } = await stockPayment(required, evm);
  const before = await merchantBalance();
  const answers = await Promise.all([0, 1, 2].map(() => post(A, { key, headers: { "PAYMENT-SIGNATURE": header } })));
  const statuses = answers.map((r) => r.status).sort();
  assert.equal(statuses.filter((s) => s === 200).length, 1, `one delivery: ${statuses}`);
  // The others: 409 (in progress, or delivered) or 429 INVALID_RETRY_AFTER (the key's retry rule).
  assert.ok(statuses.every((s) => s === 200 || s === 409 || s === 429), `${statuses}`);
  for (const r of answers) if (r.status === 200) delivered(A, r);
  for (const r of answers) await r.arrayBuffer();
  assert.equal(await merchantBalance(), before + A.price);
});

test("the attack table: every wrong authorization is refused with nothing charged", async () => {
  const A = ROUTES.budget;
  const before = await merchantBalance();
  const now = Math.floor(Date.now() / 1000);
  const cases = [
    ["wrong to (signed for another payTo)", async (req, evm) => (await stockPayment(req, { ...evm, payTo: WALLETS.client2 })).header, 402, "payment_requirements_mismatch"],
    ["wrong to (our accepted, another recipient)", async (req, evm) => encode(await signedPayment(evm, { to: WALLETS.client2 })), 402, "payment_invalid_payee"],
    ["wrong value", async (req, evm) => encode(await signedPayment(evm, { value: "19999" })), 402, "payment_invalid_amount"],
    ["wrong asset", async (req, evm) => encode(await signedPayment({ ...evm, asset: WALLETS.house }, {})), 402, "payment_requirements_mismatch"],
    ["wrong chain", async (req, evm) => encode(await signedPayment({ ...evm, network: "eip155:8453" }, {})), 402, "payment_requirements_mismatch"],
    ["expired window", async (req, evm) => encode(await signedPayment(evm, { validBefore: String(now - 1) })), 402, "payment_authorization_expired"],
    ["not-yet-valid window", async (req, evm) => encode(await signedPayment(evm, { validAfter: String(now + 120), validBefore: String(now + 80) })), 402, "payment_authorization_not_yet_valid"],
    ["window too long", async (req, evm) => encode(await signedPayment(evm, { validBefore: String(now + 3600) })), 402, "payment_authorization_window_too_long"],
    ["tampered signature", async (req, evm) => {
      const p = await signedPayment(evm, {});
      const s = p.payload.signature;
      p.payload.signature = s.slice(0, 10) + (s[10] === "a" ? "b" : "a") + s.slice(11);
      return encode(p);
    }, 402, "payment_verify_rejected"],
    ["malformed nonce", async (req, evm) => { const p = await signedPayment(evm, {}); p.payload.authorization.nonce = "0x1234"; return encode(p); }, 402, "payment_authorization_malformed"],
    ["malformed signature", async (req, evm) => { const p = await signedPayment(evm, {}); p.payload.signature = "0xzz"; return encode(p); }, 402, "payment_signature_malformed"],
    ["not a payload", async () => encode({ x402Version: 2, accepted: { network: EVM_NETWORK }, payload: "x" }), 402, "payment_authorization_malformed"],
    ["not base64 JSON", async () => "%%%", 400, "payment_header_malformed"],
  ];
  for (const [what, build, status, code] of cases) {
    const key = newKey();
    const { required, evm } = await challenge(A, key);
    const header = await build(required, evm);
    await refusedFree(await post(A, { key, headers: { "PAYMENT-SIGNATURE": header } }), status, code, what);
    assert.equal(await merchantBalance(), before, `${what}: nothing charged`);
  }
});

test("an EVM address is a free-tier wallet", async () => {
  const res = await post({ path: "/token-efficiency/precheck", body: ROUTES.budget.body }, { headers: { "X-Caller": WALLETS.client2 } });
  assert.equal(res.status, 200, await res.clone().text());
  await res.arrayBuffer();
  const bad = await post({ path: "/token-efficiency/precheck", body: ROUTES.budget.body }, { headers: { "X-Caller": WALLETS.client2.slice(0, 41) } });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).code, "caller_invalid");
});

/** Pays `route` under a new key with the stock client while `fault` is armed on /settle: the answer. */
async function payThroughFault(route, fault) {
  const key = newKey();
  const { required, evm } = await challenge(route, key);
  const { header } = await stockPayment(required, evm);
  const settledBefore = facilitator.settled.length;
  facilitator.fault(fault);
  const started = Date.now();
  const res = await post(route, { key, headers: { "PAYMENT-SIGNATURE": header } });
  return { key, header, res, ms: Date.now() - started, landed: () => facilitator.settled.slice(settledBefore).filter((s) => s.success) };
}

/** A delivery after a fault: one authorization landed, and the receipt names its transaction. */
async function deliveredOnce(route, { key, header, res, landed }, before, what) {
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  const receipt = delivered(route, res);
  await res.arrayBuffer();
  const transactions = landed().map((s) => s.transaction);
  assert.equal(transactions.length, 1, `${what}: one settlement landed`);
  assert.equal(receipt.transaction, transactions[0], `${what}: the receipt names the transaction that landed`);
  assert.equal(await merchantBalance(), before + route.price, `${what}: charged once`);
  // The same request again (a lost answer): delivered again with the original receipt, nothing charged.
  await redelivered(await post(route, { key, headers: { "PAYMENT-SIGNATURE": header } }), receipt, `${what}: identical retry`);
  assert.equal(await merchantBalance(), before + route.price, `${what}: the retry moved nothing`);
}

test("settle connection dropped after the authorization landed: reconciled from the chain, delivered once", async () => {
  const before = await merchantBalance();
  const paid = await payThroughFault(ROUTES.budget, { settle: "drop-after-submit" });
  await deliveredOnce(ROUTES.budget, paid, before, "dropped after submit");
});

test("settle answer stalled past the worker's timeout after landing: the chain is asked, delivered once", async () => {
  const before = await merchantBalance();
  const paid = await payThroughFault(ROUTES.audit, { settle: "stall-after-submit", stallMs: SETTLE_TIMEOUT_MS + 3000 });
  console.log(`[window] EVM settle answer stalled: delivered after ${paid.ms} ms (settle timeout ${SETTLE_TIMEOUT_MS} ms + chain check)`);
  assert.ok(paid.ms < SETTLE_TIMEOUT_MS + 3000, "answered before the stalled settle answer arrived");
  await deliveredOnce(ROUTES.audit, paid, before, "stalled after submit");
});

test("settle answers pending after landing: reconciled, delivered once", async () => {
  const before = await merchantBalance();
  const paid = await payThroughFault(ROUTES.toon, { settle: "pending-after-submit" });
  await deliveredOnce(ROUTES.toon, paid, before, "pending after submit");
});

test("settle dropped before submitting, twice: 409 PAYMENT_UNCERTAIN (never 'not consumed'), nothing moved; the retry as told lands it once", async () => {
  const route = ROUTES.budget;
  const before = await merchantBalance();
  // Twice: the call's settle, then the reconciliation's re-submission of the same authorization.
  const paid = await payThroughFault(route, { settle: "drop-before-submit", times: 2 });
  const first = paid.res;
  const body = await first.json();
  assert.equal(first.status, 409, JSON.stringify(body));
  assert.equal(body.code, "PAYMENT_UNCERTAIN");
  assert.match(body.payment, /uncertain/);
  assert.notEqual(body.payment, "not verified, not consumed", "uncertainty is never 'not consumed'");
  const retryAfter = Number(first.headers.get("retry-after"));
  assert.ok(retryAfter >= 1, "Retry-After");
  assert.equal(first.headers.get("PAYMENT-RESPONSE"), null);
  assert.equal(await merchantBalance(), before, "nothing moved");
  assert.equal(paid.landed().length, 0);
  // Retried before Retry-After: told to wait again, nothing moved.
  const early = await post(route, { key: paid.key, headers: { "PAYMENT-SIGNATURE": paid.header } });
  await refusedFree(early, 429, "INVALID_RETRY_AFTER", "retried early");
  assert.equal(await merchantBalance(), before);
  // As told: the chain says the authorization is unused and still valid, so the same one is settled.
  await sleep(retryAfter * 1000 + 150);
  const retried = await post(route, { key: paid.key, headers: { "PAYMENT-SIGNATURE": paid.header } });
  await deliveredOnce(route, { ...paid, res: retried }, before, "retry as told after drop-before-submit");
});

test("the merchant received exactly price × delivered calls, one ledger row per delivered call", async () => {
  assert.ok(deliveredCalls >= 6, `delivered ${deliveredCalls}`);
  assert.equal(await merchantBalance(), startBalance + expected);
  const tables = [...new Set(Object.values(ROUTES).map((r) => r.table))];
  let rows = 0;
  for (const table of tables) {
    const found = d1(worker.persist, `SELECT payer, tx_sig, fee_lamports, price_usdc_units FROM ${table}`);
    for (const row of found) {
      assert.match(row.tx_sig, new RegExp(`^${EVM_NETWORK}:0x[0-9a-f]{64}$`), "an EVM row's reference names its chain (CAIP-2) and the 0x transaction hash, delivered");
      assert.equal(row.fee_lamports, 0, "no Solana fee on an EVM payment");
      assert.equal(row.payer, WALLETS.client.toLowerCase());
    }
    rows += found.length;
  }
  assert.equal(rows, deliveredCalls);
});
