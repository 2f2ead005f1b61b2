// MPP end to end: the stock mppx 0.11 client pays the real worker (wrangler dev, local D1 and Durable
// Objects) on a local Tempo chain (anvil 1.7.1 `--network tempo`, the real pathUSD TIP-20 precompile),
// and the attack table. Every attack checks that nothing was delivered (no 200, no report) and the
// recipient's pathUSD balance; at the end the D1 ledger holds exactly one row per delivered call.
// Ports 18300-18399: worker 18300, chain 18301, a second chain (another chain id) 18302 (the example's
// recording proxy takes a free port).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { generatePrivateKey } from "viem/accounts";
import { Challenge, Credential, Receipt } from "mppx";
import { startWorker, d1, ROOT } from "../lib/worker.mjs";
import {
  startAnvil, balance, mppxClient, chargeMethod, freshPayer, memoFor, pushTransfer, rpc,
  PAYER, RECIPIENT, STRANGER, ALPHA_USD,
} from "./stack.mjs";

const PATH = "/v1/mpp/context-budget-pack";
const PRICE = 5000n;
const contract = JSON.parse(readFileSync(join(ROOT, "corpus", "context-budget-pack", "contract.json"), "utf8"));
const BODY = JSON.stringify(contract.exampleInput);
const REALM = "127.0.0.1";

let chain, otherChain, worker, url;
let delivered = 0;
const payers = new Set([PAYER.address.toLowerCase()]);
async function stockPayer(privateKey) {
  const account = await freshPayer(chain.url, chain.chainId, privateKey);
  payers.add(account.address.toLowerCase());
  return account;
}
const newKey = () => "mpp-" + randomBytes(12).toString("hex");
const source = (chainId = chain.chainId) => `did:pkh:eip155:${chainId}:${PAYER.address}`;

before(async () => {
  chain = await startAnvil({ port: 18301 });
  otherChain = await startAnvil({ port: 18302, chainId: 4217 });
  worker = await startWorker({
    port: 18300,
    logLevel: "info",
    vars: { TEMPO_RPC_URL: chain.url, TEMPO_CHAIN_ID: String(chain.chainId), TEMPO_RECIPIENT: RECIPIENT },
  });
  url = worker.url + PATH;
});

after(async () => {
  await worker?.stop();
  chain?.stop();
  otherChain?.stop();
});

function post({ key, body = BODY, authorization, path = PATH } = {}) {
  const headers = { "content-type": "application/json" };
  if (key) headers["Idempotency-Key"] = key;
  if (authorization) headers.authorization = authorization;
  return fetch(worker.url + path, { method: "POST", headers, body });
}

/** The worker's challenge for (key, body). */
async function challengeFor(key, body = BODY) {
  const r = await post({ key, body });
  assert.equal(r.status, 402);
  assert.equal(r.headers.get("content-type"), "application/problem+json");
  const problem = await r.json();
  assert.equal(problem.type, "https://paymentauth.org/problems/payment-required");
  return Challenge.fromResponse(r);
}

/** A hash credential for `challenge` and a transaction hash. */
function hashCredential(challenge, hash, src = source()) {
  return Credential.serialize({ challenge, payload: { type: "hash", hash }, source: src });
}

/** Asserts a refusal: the status, nothing delivered, a problem+json body with `code`. */
async function refused(response, status, code, what) {
  assert.equal(response.status, status, `${what}: status`);
  assert.equal(response.headers.get("payment-receipt"), null, `${what}: no receipt`);
  assert.equal(response.headers.get("report-signature"), null, `${what}: no report`);
  const body = await response.json();
  if (code) assert.equal(body.code, code, `${what}: code`);
  if (status === 402 && code !== undefined) {
    assert.ok(response.headers.get("www-authenticate")?.startsWith("Payment "), `${what}: fresh challenge`);
  }
  return body;
}

test("the challenge: 402 WWW-Authenticate Payment, method tempo, intent charge, the request as the draft encodes it", async () => {
  const challenge = await challengeFor(newKey());
  assert.equal(challenge.method, "tempo");
  assert.equal(challenge.intent, "charge");
  assert.equal(challenge.realm, REALM);
  assert.deepEqual(challenge.request, {
    amount: String(PRICE),
    currency: "0x20c0000000000000000000000000000000000000",
    methodDetails: { chainId: chain.chainId, supportedModes: ["push"] },
    recipient: RECIPIENT,
  });
  const ttl = Date.parse(challenge.expires) - Date.now();
  assert.ok(ttl > 200_000 && ttl <= 300_000, `expires in ${ttl} ms`);
  assert.match(challenge.id, /^[A-Za-z0-9_-]{43}$/);
});

test("the stock mppx client pays and gets the contract's exampleResponse byte for byte", async () => {
  const before = await balance(chain.url, RECIPIENT);
  const mppx = mppxClient(chain.url, chain.chainId, await stockPayer());
  const res = await mppx.fetch(url, { method: "POST", headers: { "content-type": "application/json", "Idempotency-Key": newKey() }, body: BODY });
  assert.equal(res.status, 200);
  assert.ok(res.headers.get("report-signature"));
  const receipt = Receipt.fromResponse(res);
  assert.equal(receipt.method, "tempo");
  assert.equal(receipt.status, "success");
  assert.match(receipt.reference, /^0x[0-9a-f]{64}$/);
  assert.equal(await res.text(), JSON.stringify(contract.exampleResponse));
  assert.equal(await balance(chain.url, RECIPIENT), before + PRICE);
  const tx = await rpc(chain.url, "eth_getTransactionReceipt", [receipt.reference]);
  assert.equal(tx.status, "0x1");
  delivered += 1;
});

test("the stock mppx client run twice under one key (a lost answer): one transfer, the result twice, the original receipt", async () => {
  const before = await balance(chain.url, RECIPIENT);
  const mppx = mppxClient(chain.url, chain.chainId, await stockPayer());
  const key = newKey();
  const call = () => mppx.fetch(url, { method: "POST", headers: { "content-type": "application/json", "Idempotency-Key": key }, body: BODY });
  const first = await call();
  assert.equal(first.status, 200);
  const receipt = first.headers.get("payment-receipt");
  assert.equal(await first.text(), JSON.stringify(contract.exampleResponse));
  delivered += 1;
  assert.equal(await balance(chain.url, RECIPIENT), before + PRICE);
  // The client lost the answer and runs the same call again: the key is paid for, so the worker
  // answers the unpaid request with the result; no challenge, so the client pays nothing.
  const second = await call();
  assert.equal(second.status, 200);
  assert.equal(await second.text(), JSON.stringify(contract.exampleResponse), "the same result");
  assert.equal(second.headers.get("payment-receipt"), receipt, "the original receipt");
  assert.ok(second.headers.get("report-signature"), "signed like the first answer");
  assert.equal(await balance(chain.url, RECIPIENT), before + PRICE, "one transfer under one key");
});

test("concurrent unpaid requests under one key get one challenge", async () => {
  const key = newKey();
  const answers = await Promise.all([post({ key }), post({ key }), post({ key })]);
  const ids = answers.map((r) => {
    assert.equal(r.status, 402);
    return Challenge.fromResponse(r).id;
  });
  assert.equal(new Set(ids).size, 1, "one challenge id for one key");
});

/**
 * A pass-through to the worker on a free port that keeps each POST's status and response body as
 * received, so a test can see what a separate process (the example) was delivered.
 */
async function recordingProxy(target) {
  const seen = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = { ...req.headers };
    delete headers.host;
    delete headers["content-length"];
    const answer = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = Buffer.from(await answer.arrayBuffer());
    if (req.method === "POST") seen.push({ path: req.url, status: answer.status, body: body.toString("utf8") });
    const out = Object.fromEntries([...answer.headers].filter(([k]) => !["content-encoding", "content-length", "transfer-encoding", "connection"].includes(k)));
    res.writeHead(answer.status, out).end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close: () => new Promise((r) => server.close(r)) };
}

test("examples/mpp/pay-and-verify.mjs (the README's MPP quickstart) pays, is delivered the contract's exampleResponse and verifies it", async () => {
  const privateKey = generatePrivateKey();
  await stockPayer(privateKey);
  const before = await balance(chain.url, RECIPIENT);
  const proxy = await recordingProxy(worker.url);
  const env = { ...process.env, CM_URL: proxy.url, TEMPO_RPC_URL: chain.url, PAYER_PRIVATE_KEY: privateKey };
  // Asynchronously: the proxy runs in this process and must keep answering meanwhile.
  const run = await promisify(execFile)(process.execPath, [join("examples", "mpp", "pay-and-verify.mjs")], { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 })
    .catch((e) => assert.fail(`the example failed (${e.code ?? e.signal}):\n${e.stdout}\n${e.stderr}`))
    .finally(() => proxy.close());
  const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 1, run.stdout);
  const [line] = lines;
  assert.deepEqual(Object.keys(line), ["path", "status", "paid_units", "transaction", "verified"]);
  assert.equal(line.path, PATH);
  assert.equal(line.status, 200);
  assert.equal(line.verified, true);
  assert.equal(line.paid_units, Number(PRICE));
  assert.match(line.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal((await rpc(chain.url, "eth_getTransactionReceipt", [line.transaction])).status, "0x1");
  assert.equal(await balance(chain.url, RECIPIENT), before + PRICE);
  // What it was delivered: one 402 challenge, then the contract's exampleResponse byte for byte.
  assert.deepEqual(proxy.seen.map((s) => s.status), [402, 200]);
  assert.equal(proxy.seen[1].body, JSON.stringify(contract.exampleResponse));
  delivered += 1;
});

test("free validation comes first: a malformed body is refused with the contract's code, credential or not", async () => {
  const key = newKey();
  const challenge = await challengeFor(key);
  for (const authorization of [undefined, hashCredential(challenge, "0x" + "11".repeat(32))]) {
    const r = await post({ key, body: '{"sources": [', authorization });
    assert.ok(r.status >= 400 && r.status < 500 && r.status !== 402, `status ${r.status}`);
    assert.equal(r.headers.get("www-authenticate"), null);
  }
  const noKey = await post({});
  assert.equal(noKey.status, 400);
});

test("a delivered credential: the same again → the result again (lost answer), no second transfer; under another key → 402 invalid challenge", async () => {
  const key = newKey();
  const challenge = await challengeFor(key);
  const credential = await chargeMethod(chain.url, chain.chainId, await stockPayer()).createCredential({ challenge });
  const first = await post({ key, authorization: credential });
  assert.equal(first.status, 200);
  assert.equal(await first.text(), JSON.stringify(contract.exampleResponse));
  delivered += 1;
  const before = await balance(chain.url, RECIPIENT);
  const again = await post({ key, authorization: credential });
  assert.equal(again.status, 200, "identical retry after a lost answer");
  assert.equal(await again.text(), JSON.stringify(contract.exampleResponse));
  assert.equal(again.headers.get("payment-receipt"), first.headers.get("payment-receipt"), "the original receipt");
  await refused(await post({ key: newKey(), authorization: credential }), 402, "mpp_challenge_invalid", "other key");
  // Presented on the x402 route it is not a payment there at all: challenged, nothing delivered.
  const x402 = await post({ key, authorization: credential, path: "/v1/x402/context-budget-pack" });
  assert.notEqual(x402.status, 200);
  assert.equal(await balance(chain.url, RECIPIENT), before);
});

test("a challenge for another body (same key) is refused; so is a pull (transaction) credential", async () => {
  const key = newKey();
  const challenge = await challengeFor(key);
  const other = JSON.stringify({ ...contract.exampleInput, budgetUnits: contract.exampleInput.budgetUnits + 1 });
  const paid = await pushTransfer(chain.url, chain.chainId, { amount: PRICE, memo: memoFor(REALM, challenge.id) });
  await refused(await post({ key, body: other, authorization: hashCredential(challenge, paid.transactionHash) }), 402, "mpp_challenge_invalid", "other body");
  const pull = Credential.serialize({ challenge, payload: { type: "transaction", signature: "0x76" + "00".repeat(40) } });
  await refused(await post({ key, authorization: pull }), 402, "mpp_mode_unsupported", "pull");
  // The paid transfer itself still answers its own challenge and body.
  const ok = await post({ key, authorization: hashCredential(challenge, paid.transactionHash) });
  assert.equal(ok.status, 200);
  delivered += 1;
});

test("wrong amount, recipient or token, a failed transaction, an unbound memo: refused, nothing delivered", async () => {
  const cases = [
    ["amount", { amount: PRICE - 1n }, "mpp_transfer_mismatch"],
    ["recipient", { amount: PRICE, to: STRANGER }, "mpp_transfer_mismatch"],
    ["token", { amount: PRICE, token: ALPHA_USD }, "mpp_transfer_mismatch"],
    ["failed", { amount: PRICE, fail: true }, "mpp_transaction_failed"],
    ["memo of another challenge", { amount: PRICE, memoOf: "another-challenge" }, "mpp_memo_unbound"],
    ["no memo", { amount: PRICE, memo: null }, "mpp_transfer_mismatch"],
  ];
  for (const [what, spec, code] of cases) {
    const key = newKey();
    const challenge = await challengeFor(key);
    const memo = spec.memo === null ? undefined : memoFor(REALM, spec.memoOf ?? challenge.id);
    const tx = await pushTransfer(chain.url, chain.chainId, { ...spec, memo });
    assert.equal(tx.status, spec.fail ? "reverted" : "success", `${what}: transaction`);
    const before = await balance(chain.url, RECIPIENT);
    await refused(await post({ key, authorization: hashCredential(challenge, tx.transactionHash) }), 402, code, what);
    assert.equal(await balance(chain.url, RECIPIENT), before, what);
  }
});

test("a payment on another chain: its source is refused, and its hash is unknown here (409, nothing delivered)", async () => {
  const key = newKey();
  const challenge = await challengeFor(key);
  const elsewhere = await pushTransfer(otherChain.url, otherChain.chainId, { amount: PRICE, memo: memoFor(REALM, challenge.id) });
  assert.equal(elsewhere.status, "success");
  await refused(await post({ key, authorization: hashCredential(challenge, elsewhere.transactionHash, source(otherChain.chainId)) }), 402, "mpp_source_invalid", "other chain's source");
  const unknown = await refused(await post({ key, authorization: hashCredential(challenge, elsewhere.transactionHash) }), 409, "mpp_transaction_not_found", "other chain's hash");
  assert.equal(unknown.retry_after_s, 2);
});

test("one challenge, one transaction: a second payment for a paid challenge is refused", async () => {
  const key = newKey();
  const challenge = await challengeFor(key);
  const memo = memoFor(REALM, challenge.id);
  const first = await pushTransfer(chain.url, chain.chainId, { amount: PRICE, memo });
  const second = await pushTransfer(chain.url, chain.chainId, { amount: PRICE, memo });
  assert.equal((await post({ key, authorization: hashCredential(challenge, first.transactionHash) })).status, 200);
  delivered += 1;
  await refused(await post({ key, authorization: hashCredential(challenge, second.transactionHash) }), 409, "payment_proof_conflict", "second payment");
});

// Last: it moves the chain's clock past the challenge's expiry.
test("an expired challenge: a payment that landed after `expires` is refused, nothing delivered", async () => {
  const key = newKey();
  const challenge = await challengeFor(key);
  const late = Math.floor(Date.parse(challenge.expires) / 1000) + 5;
  await rpc(chain.url, "evm_setNextBlockTimestamp", [late]);
  const tx = await pushTransfer(chain.url, chain.chainId, { amount: PRICE, memo: memoFor(REALM, challenge.id) });
  assert.equal(tx.status, "success");
  const before = await balance(chain.url, RECIPIENT);
  await refused(await post({ key, authorization: hashCredential(challenge, tx.transactionHash) }), 402, "mpp_challenge_expired", "expired");
  assert.equal(await balance(chain.url, RECIPIENT), before);
});

test("after the run: the ledger has exactly one row per delivered call, with closed payment facts", () => {
  const rows = d1(worker.persist, "SELECT * FROM ledger_context_budget_pack");
  assert.equal(rows.length, delivered);
  for (const row of rows) {
    assert.equal(row.op, "pack");
    assert.ok(payers.has(row.payer), `payer ${row.payer}`);
    assert.match(row.tx_sig, new RegExp(`^eip155:${chain.chainId}:0x[0-9a-f]{64}$`), "the reference names the chain");
    assert.equal(row.price_usdc_units, Number(PRICE));
    assert.equal(row.fee_lamports, 0);
  }
  assert.equal(new Set(rows.map((r) => r.tx_sig)).size, rows.length);
});
