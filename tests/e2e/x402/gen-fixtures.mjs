// Captures PAYMENT-SIGNATURE headers produced by the official client (@x402/fetch + @x402/svm
// 2.27.0) against the local VM, with the expected outcome of the worker's local checks derived
// here independently (message hash with Node's crypto and @solana/kit's decoder, payer = the
// signer's address). Attack cases are real client transactions whose `accepted` was then swapped
// for the honest requirements, so only the transaction itself gives them away.
// Run: node tests/e2e/x402/gen-fixtures.mjs > tests/e2e/x402/fixtures/payments.json
import { createHash } from "node:crypto";
import { getTransactionDecoder, getBase64Encoder, getCompiledTransactionMessageDecoder } from "@solana/kit";
import { startSvm, paymentRequired, toBase64Json } from "./stack.mjs";
import { createPaymentHeader } from "./client.mjs";
import { craftPaymentHeader, LIGHTHOUSE_PROGRAM, MEMO_PROGRAM, TOKEN_2022_PROGRAM } from "./craft.mjs";
import { NETWORK, USDC_MINT } from "./wallets.mjs";

const svm = await startSvm();
const { wallets } = svm;
const URL_BASE = "http://127.0.0.1:8787";
// The scheme's bound (5 lamports per compute unit), as wrangler.toml configures it.
const CU_PRICE_CAP = 5_000_000;

const honest = (route, key, price) =>
  paymentRequired({ route, key, price, payTo: wallets.merchant, feePayer: wallets.feePayer, url: `${URL_BASE}/${route}` });

function messageHash(header) {
  const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.payload.transaction));
  return createHash("sha256").update(tx.messageBytes).digest("hex");
}

/**
 * The x402 `exact` SVM layout rule, written here from the scheme text (not from the worker's code),
 * applied to a header's transaction: null when the layout is allowed, else the worker's closed code.
 * "3 to 6 instructions in this order: limit, price, SPL Token or Token-2022 TransferChecked,
 * (optional) Lighthouse or Memo, (optional) Lighthouse or Memo, (optional) Memo"; with extra.memo,
 * "exactly one Memo instruction exists and its data matches extra.memo".
 */
function schemeLayoutVerdict(header) {
  const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.payload.transaction));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const programs = message.instructions.map((ix) => message.staticAccounts[ix.programAddressIndex]);
  const allowedAt = [
    ["ComputeBudget111111111111111111111111111111"],
    ["ComputeBudget111111111111111111111111111111"],
    ["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", TOKEN_2022_PROGRAM],
    [LIGHTHOUSE_PROGRAM, MEMO_PROGRAM],
    [LIGHTHOUSE_PROGRAM, MEMO_PROGRAM],
    [MEMO_PROGRAM],
  ];
  if (programs.length < 3 || programs.length > 6) return "payment_instruction_layout";
  if (!programs.every((p, i) => allowedAt[i].includes(p))) return "payment_instruction_layout";
  const memos = message.instructions.filter((ix) => message.staticAccounts[ix.programAddressIndex] === MEMO_PROGRAM);
  if (memos.length !== 1) return "payment_memo_count";
  const text = Buffer.from(memos[0].data ?? []).toString("utf8");
  if (text !== payload.accepted.extra.memo || (memos[0].accountIndices ?? []).length) return "payment_invalid_memo";
  return null;
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

// Crafted transactions. `error` is the expected refusal; "layout" takes it from schemeLayoutVerdict
// above (null there: the payment passes).
const LAYOUT = "layout";
for (const [i, name, change, error] of [
  [10, "crafted: extra instruction of a program the scheme does not name", { extraInstruction: true }, LAYOUT],
  [11, "crafted: fee payer as transfer authority", { authorityIsFeePayer: true }, "payment_fee_payer_in_instruction"],
  [12, "crafted: compute-unit price above the cap", { cuPrice: CU_PRICE_CAP + 1 }, "payment_compute_price_too_high"],
  [13, "crafted: honest (same builder, nothing changed)", {}, null],
  // Real wallets' layouts (the wallet adds Lighthouse assertions to what the client built).
  [14, "wallet layout: Phantom (Lighthouse, memo)", { tail: ["lighthouse", "memo"] }, LAYOUT],
  [15, "wallet layout: Solflare (Lighthouse, Lighthouse, memo)", { tail: ["lighthouse", "lighthouse", "memo"] }, LAYOUT],
  [16, "wallet layout: memo, then Lighthouse", { tail: ["memo", "lighthouse"] }, LAYOUT],
  [17, "wallet layout: Token-2022 TransferChecked", { token2022: true }, LAYOUT],
  [18, "wallet layout: Phantom under Token-2022", { token2022: true, tail: ["lighthouse", "memo"] }, LAYOUT],
  // Layouts the scheme does not allow.
  [19, "layout refused: Lighthouse before the transfer", { lighthouseBeforeTransfer: true }, LAYOUT],
  [20, "layout refused: Lighthouse sixth", { tail: ["lighthouse", "memo", "lighthouse"] }, LAYOUT],
  [21, "layout refused: memo first of three", { tail: ["memo", "lighthouse", "lighthouse"] }, LAYOUT],
  [22, "layout refused: 7 instructions", { tail: ["lighthouse", "lighthouse", "lighthouse", "memo"] }, LAYOUT],
  [23, "layout refused: two memos", { tail: ["memo", "memo"] }, LAYOUT],
  [24, "layout refused: Lighthouse then two memos", { tail: ["lighthouse", "memo", { memo: "cm:another" }] }, LAYOUT],
  [25, "layout refused: no memo", { tail: ["lighthouse"] }, LAYOUT],
  [26, "layout refused: a memo not ours after Lighthouse", { tail: ["lighthouse", { memo: "cm:00000000000000000000000000000000" }] }, LAYOUT],
  [27, "layout refused: Lighthouse, memo, then an unknown program", { tail: ["lighthouse", "memo"], extraInstruction: true }, LAYOUT],
]) {
  const key = `fixture-key-0000000${i}`;
  const required = honest(A, key, 20000);
  const header = await craftPaymentHeader({ rpcUrl: svm.url, required, idempotencyKey: key, change });
  const refusal = error === LAYOUT ? schemeLayoutVerdict(header) : error;
  const expect = refusal
    ? { error: refusal }
    : { ok: true, claim_key: messageHash(header), payer: wallets.client, amount_units: 20000, fee_lamports: 10001, house: false };
  cases.push({ name, route: A, idempotency_key: key, price_units: 20000, header, expect });
}

await svm.stop();
console.log(JSON.stringify({
  generator: "tests/e2e/x402/gen-fixtures.mjs with @x402/fetch + @x402/svm 2.27.0",
  config: { network: NETWORK, asset: USDC_MINT, pay_to: wallets.merchant, fee_payer: wallets.feePayer, max_timeout_seconds: 60, cu_price_cap_microlamports: CU_PRICE_CAP, house_wallets: [wallets.house] },
  cases,
}, null, 1));
