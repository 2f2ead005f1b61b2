// Captures PAYMENT-SIGNATURE headers produced by the official client (@x402/fetch + @x402/svm
// 2.27.0) against the local VM, with the expected outcome of the worker's local checks derived
// here independently (message hash with Node's crypto and @solana/kit's decoder, payer = the
// signer's address). Attack cases are real client transactions whose `accepted` was then swapped
// for the honest requirements, so only the transaction itself gives them away.
// Run: node tests/x402/gen-fixtures.mjs > tests/x402/fixtures/payments.json
import { createHash } from "node:crypto";
import { getTransactionDecoder, getBase64Encoder } from "@solana/kit";
import { startSvm, paymentRequired, toBase64Json } from "./stack.mjs";
import { createPaymentHeader } from "./client.mjs";
import { craftPaymentHeader } from "./craft.mjs";
import { NETWORK, USDC_MINT } from "./wallets.mjs";

const svm = await startSvm();
const { wallets } = svm;
const URL_BASE = "http://127.0.0.1:8787";
const CU_PRICE_CAP = 1000;

const honest = (route, key, price) =>
  paymentRequired({ route, key, price, payTo: wallets.merchant, feePayer: wallets.feePayer, url: `${URL_BASE}/${route}` });

function messageHash(header) {
  const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.payload.transaction));
  return createHash("sha256").update(tx.messageBytes).digest("hex");
}

function swapAccepted(header, accepted) {
  const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  payload.accepted = accepted;
  return toBase64Json(payload);
}

const cases = [];
async function capture(name, { route, key, price, signedFor, wallet = "client", present = null, expect }) {
  const challenge = signedFor ?? honest(route, key, price);
  const { header } = await createPaymentHeader(toBase64Json(challenge), { rpcUrl: svm.url, wallet, idempotencyKey: key });
  const presented = present ? swapAccepted(header, present) : header;
  const expected = expect === "ok"
    ? { ok: true, claim_key: messageHash(header), payer: wallets[wallet], amount_units: price, fee_lamports: 2 * 5000 + Math.ceil((20000 * 1) / 1e6), house: wallet === "house" }
    : { error: expect };
  cases.push({ name, route, idempotency_key: key, price_units: price, header: presented, expect: expected });
}

const A = "token-efficiency/budget";
const B = "context-composition/audit";
await capture("official client, honest payment", { route: A, key: "fixture-key-000000001", price: 20000, expect: "ok" });
await capture("official client, other route and price", { route: B, key: "fixture-key-000000002", price: 50000, expect: "ok" });
await capture("house wallet", { route: A, key: "fixture-key-000000003", price: 20000, wallet: "house", expect: "ok" });
await capture("signed for another route, accepted as is", {
  route: A, key: "fixture-key-000000004", price: 20000, signedFor: honest(B, "fixture-key-000000004", 20000), expect: "payment_requirements_mismatch",
});
await capture("signed for another route, accepted swapped", {
  route: A, key: "fixture-key-000000005", price: 20000, signedFor: honest(B, "fixture-key-000000005", 20000),
  present: honest(A, "fixture-key-000000005", 20000).accepts[0], expect: "payment_invalid_memo",
});
await capture("signed for another key, accepted swapped", {
  route: A, key: "fixture-key-000000006", price: 20000, signedFor: honest(A, "fixture-key-999999999", 20000),
  present: honest(A, "fixture-key-000000006", 20000).accepts[0], expect: "payment_invalid_memo",
});
{
  const cheap = honest(A, "fixture-key-000000007", 1);
  await capture("underpaid, accepted swapped", {
    route: A, key: "fixture-key-000000007", price: 20000, signedFor: cheap, present: honest(A, "fixture-key-000000007", 20000).accepts[0],
    expect: "payment_invalid_amount",
  });
}
{
  const elsewhere = honest(A, "fixture-key-000000008", 20000);
  elsewhere.accepts[0].payTo = wallets.client2;
  await capture("paid to another wallet, accepted swapped", {
    route: A, key: "fixture-key-000000008", price: 20000, signedFor: elsewhere, present: honest(A, "fixture-key-000000008", 20000).accepts[0],
    expect: "payment_invalid_payee",
  });
}
{
  const selfPaid = honest(A, "fixture-key-000000009", 20000);
  selfPaid.accepts[0].extra.feePayer = wallets.client;
  await capture("client as its own fee payer, accepted swapped", {
    route: A, key: "fixture-key-000000009", price: 20000, signedFor: selfPaid, present: honest(A, "fixture-key-000000009", 20000).accepts[0],
    expect: "payment_fee_payer_mismatch",
  });
}

for (const [i, name, change, error] of [
  [10, "crafted: extra memo instruction", { extraInstruction: true }, "payment_instruction_layout"],
  [11, "crafted: fee payer as transfer authority", { authorityIsFeePayer: true }, "payment_fee_payer_in_instruction"],
  [12, "crafted: compute-unit price above the cap", { cuPrice: 1001 }, "payment_compute_price_too_high"],
  [13, "crafted: honest (same builder, nothing changed)", {}, null],
]) {
  const key = `fixture-key-0000000${i}`;
  const required = honest(A, key, 20000);
  const header = await craftPaymentHeader({ rpcUrl: svm.url, required, idempotencyKey: key, change });
  const expect = error
    ? { error }
    : { ok: true, claim_key: messageHash(header), payer: wallets.client, amount_units: 20000, fee_lamports: 10001, house: false };
  cases.push({ name, route: A, idempotency_key: key, price_units: 20000, header, expect });
}

await svm.stop();
console.log(JSON.stringify({
  generator: "tests/x402/gen-fixtures.mjs with @x402/fetch + @x402/svm 2.27.0",
  config: { network: NETWORK, asset: USDC_MINT, pay_to: wallets.merchant, fee_payer: wallets.feePayer, max_timeout_seconds: 60, cu_price_cap_microlamports: CU_PRICE_CAP, house_wallets: [wallets.house] },
  cases,
}, null, 1));
