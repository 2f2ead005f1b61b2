// MPP over MCP end to end: mppx 0.11's stock MCP client (`McpClient.wrap` from `mppx/mcp/client` on
// @modelcontextprotocol/sdk 1.32.2's Client + StreamableHTTPClientTransport) pays the pack tool
// `context_budget_pack` on the worker's stateless `POST /mcp` (wrangler dev, local D1 and Durable
// Objects) with pathUSD on a local Tempo chain (anvil 1.7.1 `--network tempo`, tests/e2e/mpp/stack.mjs).
// Checked: the paid call (receipt with challengeId, the signed report, the recipient's balance +price),
// a lost answer retried under the same key (delivered again, no second transfer, one ledger row), the
// same credential sent again,
// tools/list's declaration of the pack, and a pack credential sent to a tool with no MPP rail.
// The pack's unpaid call also runs its x402 route, whose 402 needs the facilitator's /supported: the
// official x402 facilitator of the x402 suite serves it (no Solana VM: nothing is paid over x402 here).
// Ports: worker 18520, chain 18521, facilitator 18522 (its Solana RPC 18523 is named, never opened).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpClient } from "mppx/mcp/client";
import { Credential } from "mppx";
import { startWorker, d1 } from "../lib/worker.mjs";
import { startFacilitator } from "../x402/facilitator.mjs";
import { startAnvil, freshPayer, balance, chargeMethod, rpc, RECIPIENT } from "../mpp/stack.mjs";

const TOOL = "context_budget_pack";
const MPP_PATH = "/v1/mpp/context-budget-pack";
const PRICE = 5000n;
const CREDENTIAL = "org.paymentauth/credential";
const REQUIRED = "org.paymentauth/payment-required";
const RECEIPT = "org.paymentauth/receipt";
const SIGNATURE = "context-meter/report-signature";

let chain, facilitator, worker, mcpUrl, example, publicKey;
const newKey = () => "mcp-mpp-" + randomBytes(12).toString("hex");

before(async () => {
  chain = await startAnvil({ port: 18521 });
  // Its Solana RPC is never reached (no x402 payment is verified or settled here).
  facilitator = await startFacilitator({ port: 18522, rpcUrl: "http://127.0.0.1:18523", quiet: true });
  worker = await startWorker({
    port: 18520,
    logLevel: "info",
    vars: {
      TEMPO_RPC_URL: chain.url, TEMPO_CHAIN_ID: String(chain.chainId), TEMPO_RECIPIENT: RECIPIENT,
      FACILITATOR_URL: facilitator.url,
    },
  });
  mcpUrl = new URL(worker.url + "/mcp");
  const openapi = await (await fetch(worker.url + "/openapi.json")).json();
  example = openapi.paths[MPP_PATH].post.requestBody.content["application/json"].example;
  assert.ok(example && typeof example === "object", "the contract's example input");
  publicKey = (await (await fetch(worker.url + "/")).json()).signing.public_key;
});

after(async () => {
  await worker?.stop();
  await facilitator?.close();
  chain?.stop();
});

/**
 * An SDK client connected to /mcp, every POST of the connection carrying `idempotencyKey` (the
 * transport's headers are per connection), and the wire kept: each POST's JSON body and answer.
 * `account` given: wrapped with mppx's McpClient (tempo charge on the local chain).
 */
async function connect({ idempotencyKey, account } = {}) {
  const wire = [];
  const recording = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === "POST" && typeof init.body === "string") {
      const text = await res.clone().text();
      wire.push({ request: JSON.parse(init.body), status: res.status, response: text ? JSON.parse(text) : null });
    }
    return res;
  };
  const headers = idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {};
  const transport = new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers }, fetch: recording });
  const client = new Client({ name: "context-meter-e2e-mppx", version: "0.0.0" });
  await client.connect(transport);
  if (account) {
    McpClient.wrap(client, {
      methods: [chargeMethod(chain.url, chain.chainId, account)],
    });
  }
  return { client, wire, calls: () => wire.filter((w) => w.request.method === "tools/call") };
}

// RFC 8785 for the report's values (strings, integers, arrays, objects), as examples/mpp verifies.
const jcs = (v) =>
  v === null || typeof v !== "object" ? JSON.stringify(v)
  : Array.isArray(v) ? `[${v.map(jcs).join(",")}]`
  : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(",")}}`;

/** The detached Ed25519 signature (`_meta["context-meter/report-signature"]`) over the report's JCS bytes. */
function verifies(report, signature) {
  const keyId = createHash("sha256").update(Buffer.from(publicKey, "base64")).digest("hex").slice(0, 16);
  if (signature?.alg !== "Ed25519" || signature.key_id !== keyId) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey, "base64").toString("base64url") }, format: "jwk" });
  return verify(null, Buffer.from(jcs(report), "utf8"), key, Buffer.from(signature.sig, "base64"));
}

/** Asserts a delivered pack result; returns its report. */
function delivered(result, what) {
  assert.notEqual(result.isError, true, `${what}: not isError (${JSON.stringify(result).slice(0, 600)})`);
  assert.equal(result._meta?.["context-meter/status"], 200, `${what}: the route answered 200`);
  assert.equal(result._meta?.[REQUIRED], undefined, `${what}: no challenge on a delivery`);
  const report = JSON.parse(result.content[0].text);
  assert.deepEqual(result.structuredContent, report, `${what}: structuredContent is the text's report`);
  return report;
}

let paid; // case (a)'s connection, key, result and receipt, for (b) and (d)

test("(a) a fresh payer pays context_budget_pack with mppx's McpClient: receipt with challengeId, a signed report, recipient +price", async () => {
  const account = await freshPayer(chain.url, chain.chainId);
  const key = newKey();
  const conn = await connect({ idempotencyKey: key, account });
  const before = await balance(chain.url, RECIPIENT);
  const result = await conn.client.callTool({ name: TOOL, arguments: example });
  const report = delivered(result, "paid call");

  // The wire: the unpaid call answered a tool result with both rails' challenges, then the paid retry.
  const [unpaid, retry, ...more] = conn.calls();
  assert.equal(more.length, 0, "two tools/call: the unpaid call and one paid retry");
  assert.equal(unpaid.status, 200);
  const offered = unpaid.response.result;
  assert.equal(offered.isError, true);
  assert.ok(offered.structuredContent?.x402Version && Array.isArray(offered.structuredContent.accepts), "x402's PaymentRequired in structuredContent");
  const required = offered._meta[REQUIRED];
  assert.equal(required.httpStatus, 402);
  assert.equal(required.challenges.length, 1);
  const challenge = required.challenges[0];
  assert.equal(challenge.method, "tempo");
  assert.equal(challenge.intent, "charge");
  assert.deepEqual(challenge.request, {
    amount: String(PRICE),
    currency: "0x20c0000000000000000000000000000000000000",
    methodDetails: { chainId: chain.chainId, supportedModes: ["push"] },
    recipient: RECIPIENT,
  });
  assert.equal(retry.status, 200);
  const credential = retry.request.params._meta?.[CREDENTIAL];
  assert.equal(credential?.challenge?.id, challenge.id, "the credential echoes the challenge");
  assert.equal(credential.payload.type, "hash");
  assert.deepEqual(retry.request.params.arguments, example, "the same arguments on the retry");

  // The receipt: the MCP form of Payment-Receipt plus the challenge it settled.
  const receipt = result._meta[RECEIPT];
  assert.equal(receipt.status, "success");
  assert.equal(receipt.method, "tempo");
  assert.equal(receipt.challengeId, challenge.id);
  assert.match(receipt.reference, /^0x[0-9a-f]{64}$/);
  assert.deepEqual(result.receipt, receipt, "mppx copies the receipt to result.receipt");
  assert.equal((await rpc(chain.url, "eth_getTransactionReceipt", [receipt.reference])).status, "0x1");

  // The report verifies offline against the worker's published key.
  assert.ok(verifies(report, result._meta[SIGNATURE]), "the detached signature verifies");
  assert.equal(await balance(chain.url, RECIPIENT), before + PRICE, "recipient +price exactly");
  paid = { conn, key, result, receipt, credential, account };
});

// The retried unpaid call meets the x402 route first, whose key record names the MPP route (409
// IDEMPOTENCY_CONFLICT); the tool then asks the MPP route, which delivers the paid key again.
let retried; // (b)'s result and wire

test("(b) the same call again under the same key (a lost answer): no challenge, no second transfer, one ledger row", async (t) => {
  if (!paid) return t.skip("(a) did not pay");
  const before = await balance(chain.url, RECIPIENT);
  const n = paid.conn.calls().length;
  const result = await paid.conn.client.callTool({ name: TOOL, arguments: example });
  const wire = paid.conn.calls().slice(n);
  retried = { result, wire };
  assert.equal(wire.length, 1, `answered on the unpaid call, nothing paid (wire: ${JSON.stringify(wire.map((w) => w.response)).slice(0, 1500)})`);
  assert.equal(wire[0].request.params._meta?.[CREDENTIAL], undefined);
  assert.equal(result._meta?.[REQUIRED], undefined, "no MPP challenge for a paid key");
  assert.equal(await balance(chain.url, RECIPIENT), before, "no second transfer");
  const rows = d1(worker.persist, "SELECT * FROM ledger_context_budget_pack");
  const ours = rows.filter((r) => r.tx_sig === `eip155:${chain.chainId}:${paid.receipt.reference}`);
  assert.equal(ours.length, 1, "exactly one ledger row for the paid call");
  assert.equal(rows.length, 1, "and no other row");
  assert.equal(ours[0].payer, paid.account.address.toLowerCase());
  assert.equal(ours[0].price_usdc_units, Number(PRICE));
  assert.equal(ours[0].op, "pack");
  // Control: the HTTP MPP route itself replays the paid key's delivery to an unpaid request.
  const http = await fetch(worker.url + MPP_PATH, { method: "POST", headers: { "content-type": "application/json", "Idempotency-Key": paid.key }, body: JSON.stringify(example) });
  assert.equal(http.status, 200, "HTTP: the MPP route re-delivers");
  assert.equal(await http.text(), paid.result.content[0].text, "HTTP: the same report");
  assert.equal(await balance(chain.url, RECIPIENT), before);
});

test("(b) ... and the retried call is delivered again: the same signed report", (t) => {
  if (!retried) return t.skip("(b) did not run");
  const { result, wire } = retried;
  const report = delivered(result, `retry (wire: ${JSON.stringify(wire.map((w) => w.response)).slice(0, 1500)})`);
  assert.equal(result.content[0].text, paid.result.content[0].text, "the same report");
  assert.ok(verifies(report, result._meta[SIGNATURE]), "signed like the first answer");
});

test("(b') the same credential sent again (bare SDK client, the key's connection): delivered again, the original receipt, no transfer", async (t) => {
  if (!paid) return t.skip("(a) did not pay");
  const before = await balance(chain.url, RECIPIENT);
  const { client } = await connect({ idempotencyKey: paid.key });
  try {
    const result = await client.callTool({ name: TOOL, arguments: example, _meta: { [CREDENTIAL]: paid.credential } });
    const report = delivered(result, "the credential again");
    assert.equal(result.content[0].text, paid.result.content[0].text, "the same report");
    assert.deepEqual(result._meta[RECEIPT], paid.receipt, "the original receipt, with its challengeId");
    assert.ok(verifies(report, result._meta[SIGNATURE]));
  } finally {
    await client.close();
  }
  assert.equal(await balance(chain.url, RECIPIENT), before, "no transfer");
  assert.equal(d1(worker.persist, "SELECT * FROM ledger_context_budget_pack").length, 1, "still one ledger row");
});

test("(c) tools/list through the SDK client: context_budget_pack sold over mpp, with no outputSchema", async () => {
  const { client } = await connect();
  try {
    const { tools } = await client.listTools();
    const pack = tools.find((t) => t.name === TOOL);
    assert.ok(pack, "the pack is listed");
    assert.ok(pack._meta?.["context-meter/rails"]?.includes("mpp"), `rails ${JSON.stringify(pack._meta?.["context-meter/rails"])}`);
    assert.ok(pack._meta["context-meter/rails"].includes("x402"));
    assert.equal(pack.outputSchema, undefined, "no outputSchema on a paid tool");
    assert.equal(pack._meta["context-meter/access"]?.usdc_units, Number(PRICE));
    const budget = tools.find((t) => t.name === "token_efficiency_budget");
    assert.ok(budget, "token_efficiency_budget is listed");
    assert.ok(!budget._meta?.["context-meter/rails"]?.includes("mpp"), "no MPP rail on token_efficiency_budget");
  } finally {
    await client.close();
  }
});

/** The example input of the x402 route a listed tool runs. */
async function exampleOf(toolName) {
  const { client } = await connect();
  try {
    const { tools } = await client.listTools();
    const route = tools.find((t) => t.name === toolName)._meta["context-meter/route"];
    const openapi = await (await fetch(worker.url + "/openapi.json")).json();
    return openapi.paths[route].post.requestBody.content["application/json"].example;
  } finally {
    await client.close();
  }
}

test("(d) a pack credential sent to token_efficiency_budget (no MPP rail) moves nothing: x402's payment required, recipient unchanged", async () => {
  const args = await exampleOf("token_efficiency_budget");
  // A fresh, unused credential for a pack challenge: the stock charge method broadcasts its transfer
  // when it builds the credential (push mode), so the balance is read after that.
  const packKey = newKey();
  const offer = await connect({ idempotencyKey: packKey });
  const unpaid = await offer.client.callTool({ name: TOOL, arguments: example });
  await offer.client.close();
  assert.equal(unpaid.isError, true);
  const challenge = unpaid._meta[REQUIRED].challenges[0];
  const serialized = await chargeMethod(chain.url, chain.chainId, await freshPayer(chain.url, chain.chainId)).createCredential({ challenge });
  const fresh = JSON.parse(JSON.stringify(Credential.deserialize(serialized)));
  assert.equal(fresh.challenge.id, challenge.id);
  const credentials = [["a fresh pack credential", fresh], ...(paid ? [["case (a)'s delivered credential", paid.credential]] : [])];

  for (const [what, credential] of credentials) {
    for (const key of [packKey, newKey()]) {
      const before = await balance(chain.url, RECIPIENT);
      const { client } = await connect({ idempotencyKey: key });
      try {
        // The bare SDK client (not wrapped): the credential is sent as is, and the x402 answer is seen.
        const result = await client.callTool({ name: "token_efficiency_budget", arguments: args, _meta: { [CREDENTIAL]: credential } });
        assert.equal(result.isError, true, `${what}: not delivered`);
        assert.equal(result._meta?.["context-meter/status"], 402, `${what}: the x402 route's 402`);
        assert.ok(result.structuredContent?.x402Version && Array.isArray(result.structuredContent.accepts), `${what}: x402's PaymentRequired`);
        assert.equal(result._meta?.[RECEIPT], undefined, `${what}: no MPP receipt`);
        assert.equal(result._meta?.[REQUIRED], undefined, `${what}: no MPP challenge (no MPP rail)`);
        assert.equal(result._meta?.[SIGNATURE], undefined, `${what}: no report`);
      } finally {
        await client.close();
      }
      assert.equal(await balance(chain.url, RECIPIENT), before, `${what}: recipient unchanged`);
    }
  }
  assert.equal(d1(worker.persist, "SELECT * FROM ledger_token_efficiency").length, 0, "no token-efficiency ledger row");
  const packRows = d1(worker.persist, "SELECT tx_sig FROM ledger_context_budget_pack");
  assert.equal(packRows.length, paid ? 1 : 0, "the fresh credential was not redeemed on the pack either");
});

