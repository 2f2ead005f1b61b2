// The official x402 Python SDK's MCP client pays our MCP tools, on Solana and on Base, against real
// workerd (wrangler dev), the local Solana VM, a local Base Sepolia (anvil with the EIP-3009 USDC-like
// token) and the official-package facilitator serving both (tests/e2e/x402). The client is
// x402_mcp_pay.py: x402.mcp.x402MCPSession over mcp's Streamable HTTP client and ClientSession, the
// SDK's own exact schemes, in the venv scripts/setup.sh installs from requirements.txt.
// Then the guarantees: the merchant gains, on each chain, exactly the prices of the ledger's rows; a
// delivered payment presented for another tool is refused with nothing moved; the identical retry
// of a delivered call (same key, arguments and payment) is delivered again, charged once.
// Ports 18500-18509: worker 18500, VM 18501, anvil 18502, facilitator 18503.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { getBase58Decoder } from "@solana/kit";
import { startSvm, tokenBalance, memoFor } from "../x402/stack.mjs";
import { startFacilitator } from "../x402/facilitator.mjs";
import { seedOf, NETWORK as SOLANA_NETWORK } from "../x402/wallets.mjs";
import { startChain, KEYS, WALLETS, EVM_NETWORK } from "../x402/evm/chain.mjs";
import { startWorker, d1, ROOT } from "../lib/worker.mjs";

const PORTS = { worker: 18500, svm: 18501, anvil: 18502, facilitator: 18503 };
const HERE = join(ROOT, "tests", "e2e", "mcp");
const PYTHON = join(HERE, ".venv", "bin", "python");
const CLIENT = join(HERE, "x402_mcp_pay.py");
const PROTOCOL_VERSION = "2025-11-25"; // what mcp 1.30.0's ClientSession offers
const TOOLS = {
  budget: { name: "token_efficiency_budget", path: "/token-efficiency/budget", table: "ledger_token_efficiency" },
  audit: { name: "context_composition_audit", path: "/context-composition/audit", table: "ledger_context_composition" },
};

let svm, chain, facilitator, worker;
let examples; // route path → the request example /openapi.json publishes
const start = {}; // merchant balances before any payment, per chain
const paid = {}; // what the Python client printed, per case

const newKey = () => "mcp-py-" + randomBytes(12).toString("hex");
// Balance reads are retried once on a connection failure: the ledger reads (wrangler d1, synchronous)
// block this process for seconds, and a pooled keep-alive socket the RPC server closed meanwhile fails
// the next request ("fetch failed"). A read is safe to repeat.
const once = async (read) => {
  try {
    return await read();
  } catch (e) {
    if (!/fetch failed|other side closed|socket/i.test(`${e.message} ${e.cause?.message ?? ""} ${e.details ?? ""}`)) throw e;
    return read();
  }
};
const solanaMerchant = () => once(() => tokenBalance(svm.url, svm.wallets.merchant));
const evmMerchant = () => once(() => chain.balance(WALLETS.merchant));

/** A test wallet's Solana keypair as the base58 64 bytes (seed ‖ public key) the Python SDK reads. */
function solanaKeypair(name) {
  const seed = Buffer.from(seedOf(name));
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const publicKey = createPublicKey(createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }))
    .export({ format: "der", type: "spki" })
    .subarray(12);
  return getBase58Decoder().decode(Buffer.concat([seed, publicKey]));
}

/** Runs the Python client (asynchronously: the facilitator answers from this process meanwhile). */
async function pythonPays({ tool, args, privateKey, key, preferNetwork }) {
  const env = {
    ...process.env,
    SERVER_URL: worker.url + "/mcp",
    TOOL: tool,
    ARGS: JSON.stringify(args),
    PRIVATE_KEY: privateKey,
    SOLANA_RPC_URL: svm.url,
    ...(preferNetwork ? { PREFER_NETWORK: preferNetwork } : {}),
    ...(key ? { IDEMPOTENCY_KEY: key } : {}),
  };
  const run = await promisify(execFile)(PYTHON, [CLIENT], { cwd: HERE, env, encoding: "utf8", timeout: 120_000 })
    .catch((e) => (e.code === 1 && e.stdout ? e : assert.fail(`${CLIENT} failed (${e.code ?? e.signal}):\n${e.stdout}\n${e.stderr}`)));
  const lines = run.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]);
}

/** One raw JSON-RPC tools/call to /mcp, as any MCP client sends it (classic envelope). */
async function rawCall(tool, args, meta, { key } = {}) {
  const res = await fetch(worker.url + "/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_VERSION,
      ...(key ? { "Idempotency-Key": key } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: tool, arguments: args, _meta: meta } }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `tools/call ${tool}: ${text}`);
  const message = JSON.parse(text);
  assert.ok(message.result, `tools/call ${tool}: a result, not an error: ${text}`);
  return message.result;
}

/** The delivered report is signed: a `signature` member, or the detached report signature in _meta. */
function assertSigned(structured, meta, what) {
  const signature = structured?.signature ?? meta?.["context-meter/report-signature"];
  assert.ok(signature?.sig, `${what}: the report is signed: ${JSON.stringify(structured).slice(0, 300)}`);
}

/** The rows of a ledger table: reference (tx_sig), price, payer. */
function ledger(table) {
  return d1(worker.persist, `SELECT tx_sig, price_usdc_units, payer FROM ${table}`);
}

before(async () => {
  assert.ok(existsSync(PYTHON), `no Python venv at ${PYTHON}: run scripts/setup.sh`);
  svm = await startSvm({ port: PORTS.svm });
  chain = await startChain({ port: PORTS.anvil });
  facilitator = await startFacilitator({
    port: PORTS.facilitator,
    rpcUrl: svm.url,
    quiet: true,
    evm: { rpcUrl: chain.rpcUrl, privateKey: KEYS.facilitator, network: EVM_NETWORK },
  });
  worker = await startWorker({
    port: PORTS.worker,
    logLevel: "warn",
    vars: {
      FACILITATOR_URL: facilitator.url,
      SOLANA_RPC_URL: svm.url,
      EVM_84532_RPC_URL: chain.rpcUrl,
      PAY_ATTEMPTS_PER_WALLET: "100000",
      // The audit at the budget's price ($0.02): a payment presented for the other tool is then
      // refused by its binding (resource, memo, key), not by its amount.
      PRICE_CONTEXT_COMPOSITION_AUDIT: "20000",
    },
  });
  const openapi = await (await fetch(worker.url + "/openapi.json")).json();
  examples = {};
  for (const { path } of Object.values(TOOLS)) {
    const example = openapi.paths[path]?.post?.requestBody?.content?.["application/json"]?.example;
    assert.ok(example, `/openapi.json publishes no request example for ${path}`);
    examples[path] = example;
  }
  start.solana = await solanaMerchant();
  start.evm = await evmMerchant();
});

after(async () => {
  await worker?.stop();
  await facilitator?.close();
  await chain?.stop();
  await svm?.stop();
});

test("Solana: the Python SDK's x402MCPSession pays token_efficiency_budget; the report is signed", async () => {
  const tool = TOOLS.budget;
  const key = newKey();
  const before = await solanaMerchant();
  const out = await pythonPays({ tool: tool.name, args: examples[tool.path], privateKey: solanaKeypair("client"), key });
  assert.equal(out.is_error, false, JSON.stringify(out).slice(0, 800));
  assert.equal(out.payment_made, true);
  assert.equal(out.payment_response?.success, true, JSON.stringify(out.payment_response));
  assert.match(out.payment_sent.accepted.network, /^solana:/, "the Solana requirement was chosen");
  assert.equal(out.payment_response.network, out.payment_sent.accepted.network);
  assert.match(out.payment_response.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  assert.equal(out.payment_response.payer, svm.wallets.client);
  assert.ok(out.payment_sent.payload.transaction, "an SVM payload (a partially signed transaction)");
  // The HTTP route's own challenge: its resource URL, and the memo binding route and Idempotency-Key
  // (so the client's connection header reached the route's pipeline).
  assert.equal(out.payment_sent.resource?.url, worker.url + tool.path);
  assert.equal(out.payment_sent.accepted.extra.memo, memoFor(tool.path, key));
  assertSigned(out.structured, null, tool.name);
  assert.deepEqual(JSON.parse(out.text), out.structured, "content[0].text is the structured report");
  const price = BigInt(out.payment_sent.accepted.amount);
  assert.equal(await solanaMerchant(), before + price, "exactly the price moved");
  paid.solana = { ...out, key, tool, args: examples[tool.path] };
});

test("Base (EIP-3009): the Python SDK's x402MCPSession pays context_composition_audit; the report is signed", async () => {
  const tool = TOOLS.audit;
  const key = newKey();
  const before = await evmMerchant();
  const out = await pythonPays({ tool: tool.name, args: examples[tool.path], privateKey: KEYS.client, key, preferNetwork: EVM_NETWORK });
  assert.equal(out.is_error, false, JSON.stringify(out).slice(0, 800));
  assert.equal(out.payment_made, true);
  assert.equal(out.payment_response?.success, true, JSON.stringify(out.payment_response));
  assert.equal(out.payment_response.network, EVM_NETWORK);
  assert.match(out.payment_response.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(out.payment_response.payer?.toLowerCase(), WALLETS.client.toLowerCase());
  assert.equal(out.payment_sent.accepted.network, EVM_NETWORK);
  assert.ok(out.payment_sent.payload.authorization && out.payment_sent.payload.signature, "an EIP-3009 authorization");
  assert.equal(out.payment_sent.resource?.url, worker.url + tool.path, "the HTTP route's resource");
  assert.equal(out.payment_sent.payload.authorization.to.toLowerCase(), WALLETS.merchant.toLowerCase());
  assertSigned(out.structured, out.meta, tool.name);
  const price = BigInt(out.payment_sent.accepted.amount);
  assert.equal(await evmMerchant(), before + price, "exactly the price moved");
  const mined = await chain.publicClient.getTransactionReceipt({ hash: out.payment_response.transaction });
  assert.equal(mined.status, "success");
  paid.evm = { ...out, key, tool, args: examples[tool.path] };
});

for (const rail of ["solana", "evm"]) {
  test(`${rail}: the delivered payment presented for another tool is refused, nothing moved; the identical retry is delivered again, charged once`, async (t) => {
    const first = paid[rail];
    assert.ok(first, `the ${rail} payment case did not pass`);
    const balance = rail === "solana" ? solanaMerchant : evmMerchant;
    const before = await balance();
    const meta = { "x402/payment": first.payment_sent };
    const other = first.tool === TOOLS.budget ? TOOLS.audit : TOOLS.budget;

    // The refusals the HTTP routes give the same replay: on Solana the transfer's memo binds it to its
    // route and key (under a key the memo names another route: requirements mismatch; without one the
    // route wants its stateless nonce, which a keyed memo is not: nonce invalid), both before any
    // verify; on Base the authorization is recorded as bound to its delivered call (409, as
    // tests/e2e/x402/evm.test.mjs has it over HTTP).
    const expected = rail === "solana"
      ? { "same key": [402, "payment_requirements_mismatch"], "a new key": [402, "payment_requirements_mismatch"], "no key": [402, "payment_nonce_invalid"] }
      : { "same key": [409, "payment_bound_elsewhere"], "a new key": [409, "payment_bound_elsewhere"], "no key": [409, "payment_bound_elsewhere"] };
    for (const [what, key] of [["same key", first.key], ["a new key", newKey()], ["no key", null]]) {
      const refused = await rawCall(other.name, examples[other.path], meta, { key });
      const status = refused._meta?.["context-meter/status"];
      const { code, error, payment } = refused.structuredContent ?? {};
      t.diagnostic(`another tool, ${what}: HTTP ${status} ${code ?? error}${payment ? ` (${payment})` : ""}`);
      assert.equal(refused.isError, true, `another tool, ${what}: refused: ${JSON.stringify(refused).slice(0, 600)}`);
      assert.deepEqual([status, code ?? error], expected[what], `another tool, ${what}`);
      if (status === 402) assert.ok(refused.structuredContent.accepts?.length, `another tool, ${what}: a fresh challenge, as x402 over MCP answers`);
      assert.equal(refused._meta?.["x402/payment-response"], undefined, `another tool, ${what}: no receipt`);
      assert.equal(await balance(), before, `another tool, ${what}: nothing moved`);
    }

    const again = await rawCall(first.tool.name, first.args, meta, { key: first.key });
    assert.equal(again.isError, false, `identical retry: ${JSON.stringify(again).slice(0, 600)}`);
    const receipt = again._meta?.["x402/payment-response"];
    assert.equal(receipt?.success, true, "the identical retry carries the receipt");
    assert.equal(receipt.transaction, first.payment_response.transaction, "the original receipt");
    assertSigned(again.structuredContent, again._meta, "identical retry");
    assert.equal(await balance(), before, "the identical retry moved nothing");
    const rows = ledger(first.tool.table).filter((r) => r.tx_sig === `${first.payment_response.network}:${first.payment_response.transaction}`);
    assert.equal(rows.length, 1, "still one ledger row for the payment");
  });
}

test("each chain: the merchant gained exactly the prices of the ledger's rows", async () => {
  assert.ok(paid.solana && paid.evm, "both payment cases passed");
  const balances = { solana: await solanaMerchant(), evm: await evmMerchant() };
  const rows = Object.values(TOOLS).flatMap((t) => ledger(t.table));
  const evmRows = rows.filter((r) => r.tx_sig.startsWith(`${EVM_NETWORK}:`));
  const solanaRows = rows.filter((r) => r.tx_sig.startsWith(`${SOLANA_NETWORK}:`));
  assert.equal(solanaRows.length + evmRows.length, rows.length, `every row names its chain: ${JSON.stringify(rows)}`);
  assert.equal(solanaRows.length, 1, JSON.stringify(rows));
  assert.equal(evmRows.length, 1, JSON.stringify(rows));
  const sum = (list) => list.reduce((s, r) => s + BigInt(r.price_usdc_units), 0n);
  assert.equal(balances.solana - start.solana, sum(solanaRows), "Solana: balance change = Σ ledger prices");
  assert.equal(balances.evm - start.evm, sum(evmRows), "Base: balance change = Σ ledger prices");
  assert.equal(solanaRows[0].tx_sig, `${SOLANA_NETWORK}:${paid.solana.payment_response.transaction}`);
  assert.equal(evmRows[0].tx_sig, `${EVM_NETWORK}:${paid.evm.payment_response.transaction}`);
  assert.equal(sum(solanaRows), BigInt(paid.solana.payment_sent.accepted.amount));
  assert.equal(sum(evmRows), BigInt(paid.evm.payment_sent.accepted.amount));
});
