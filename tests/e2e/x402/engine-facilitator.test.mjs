// The Rust engine's facilitator request, sent to the real facilitator: a fresh official-client
// payment is checked by the engine (cargo test --test payment live_round_trip), the body the
// worker would POST is verified and settled by @x402/core + @x402/svm on the VM, and the settle
// answer is read back by the engine; the same for wallet layouts with Lighthouse instructions (the
// VM runs a stand-in at Lighthouse's address, see svm/server.mjs). Needs cargo. Run: node --test tests/e2e/x402/engine-facilitator.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { getTransactionDecoder, getBase64Encoder } from "@solana/kit";
import { startStack, tokenBalance, paymentRequired, toBase64Json } from "./stack.mjs";
import { createPaymentHeader } from "./client.mjs";
import { craftPaymentHeader } from "./craft.mjs";
import { NETWORK, USDC_MINT } from "./wallets.mjs";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack.stop(); });

function cargoLive(env) {
  const run = spawnSync("cargo", ["test", "-q", "--test", "payment", "live_round_trip", "--", "--ignored"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stdout + run.stderr);
}

async function engineRoundTrip(header, { route, key, price }) {
  const dir = mkdtempSync(join(tmpdir(), "cm-pay-"));
  const { wallets } = stack.svm;
  const config = { network: NETWORK, asset: USDC_MINT, pay_to: wallets.merchant, fee_payer: stack.facilitator.feePayer, max_timeout_seconds: 60, cu_price_cap_microlamports: 5_000_000 };
  writeFileSync(join(dir, "in.json"), JSON.stringify({ config, route, idempotency_key: key, price_units: price, header }));
  cargoLive({ PAYMENT_LIVE_IN: join(dir, "in.json"), PAYMENT_LIVE_OUT: join(dir, "out.json") });
  const { body, claim_key } = JSON.parse(readFileSync(join(dir, "out.json"), "utf8"));

  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(JSON.parse(Buffer.from(header, "base64")).payload.transaction));
  assert.equal(claim_key, createHash("sha256").update(tx.messageBytes).digest("hex"));

  const post = async (path) => (await fetch(stack.facilitator.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json();
  const verified = await post("/verify");
  assert.equal(verified.isValid, true, JSON.stringify(verified));
  assert.equal(verified.payer, wallets.client);
  const before = await tokenBalance(stack.svm.url, wallets.merchant);
  const settled = await post("/settle");
  assert.equal(settled.success, true, JSON.stringify(settled));
  assert.equal(await tokenBalance(stack.svm.url, wallets.merchant), before + BigInt(price));
  writeFileSync(join(dir, "settle.json"), JSON.stringify(settled));
  cargoLive({ PAYMENT_LIVE_SETTLE_ANSWER: join(dir, "settle.json") });
}

const requiredFor = ({ route, key, price }) =>
  paymentRequired({ route, key, price, payTo: stack.svm.wallets.merchant, feePayer: stack.facilitator.feePayer, url: "http://127.0.0.1/x" });

test("what the engine sends verifies and settles at the official facilitator", async () => {
  const call = { route: "token-efficiency/budget", key: "live-round-trip-key-01", price: 20000 };
  const { header } = await createPaymentHeader(toBase64Json(requiredFor(call)), { rpcUrl: stack.svm.url, idempotencyKey: call.key });
  await engineRoundTrip(header, call);
});

test("Phantom- and Solflare-shaped payments: the engine passes them, the facilitator settles them", async () => {
  for (const [n, tail] of [["02", ["lighthouse", "memo"]], ["03", ["lighthouse", "lighthouse", "memo"]]]) {
    const call = { route: "token-efficiency/budget", key: `live-round-trip-key-${n}`, price: 20000 };
    const header = await craftPaymentHeader({ rpcUrl: stack.svm.url, required: requiredFor(call), idempotencyKey: call.key, change: { tail } });
    await engineRoundTrip(header, call);
  }
});
