#!/usr/bin/env node
// A minimal agent on the stock x402 clients: pay two context-meter routes in USDC on EVM (x402 v2
// `exact`, an EIP-3009 transferWithAuthorization the facilitator submits), then verify each signed
// report offline. Nothing here is specific to context-meter but the last step.
//
//   CM_URL=https://<worker>  EVM_RPC_URL=https://<rpc>  PAYER_PRIVATE_KEY=0x<64 hex> \
//     node examples/evm/pay-and-verify.mjs
//
// With no variables, against `make dev` (its local Base Sepolia, facilitator and funded payer):
//   node examples/evm/pay-and-verify.mjs
//
// PAYER_PRIVATE_KEY is the hex private key of an EVM account holding USDC on the worker's EVM
// network (Base Sepolia, eip155:84532, when the worker offers it); it signs only, it pays no gas.
// EVM_RPC_URL is that network's JSON-RPC endpoint (the scheme reads the chain through it only for
// the gas-sponsoring extensions, which this worker does not declare). Prints one JSON line per
// call; exits 1 if any call is not delivered or any signature does not verify.
import { createHash, createPublicKey, verify } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { privateKeyToAccount } from "viem/accounts";

// With no CM_URL: the worker `make dev` serves and the payer its local stacks funded, from
// .dev-payer.json (written by `make dev`, there while it runs); each variable still overrides its part.
const DEV_PAYER = new URL("../../.dev-payer.json", import.meta.url);
const dev = process.env.CM_URL || !existsSync(DEV_PAYER) ? undefined : JSON.parse(readFileSync(DEV_PAYER, "utf8"));
const CM_URL = process.env.CM_URL ?? dev?.cm_url ?? "http://127.0.0.1:8787";
const RPC_URL = process.env.EVM_RPC_URL ?? dev?.evm?.rpc_url ?? "http://127.0.0.1:8546";
const PRIVATE_KEY = process.env.PAYER_PRIVATE_KEY ?? dev?.evm?.private_key;
if (!/^0x[0-9a-fA-F]{64}$/.test(PRIVATE_KEY ?? "")) {
  console.error("PAYER_PRIVATE_KEY must be set to a 0x-prefixed 32-byte hex private key (or, with no CM_URL, `make dev` running)");
  process.exit(2);
}

// 1. The payer: a stock x402 client with the EVM `exact` scheme for every EVM network, signing
//    with a viem account (the 402 also offers Solana; only eip155 is registered, so EVM is chosen).
const account = privateKeyToAccount(PRIVATE_KEY);
const client = new x402Client().register("eip155:*", new ExactEvmScheme(account, { rpcUrl: RPC_URL }));

// 2. Idempotency: one payment id per operation, sent as the Idempotency-Key header and set in the
//    challenge's payment-identifier extension by the extension's own helper (the worker requires
//    the two equal; a retry with the same id and body is never charged twice).
let paymentId;
client.onBeforePaymentCreation(async ({ paymentRequired }) => {
  paymentRequired.extensions ??= {};
  appendPaymentIdentifierToExtensions(paymentRequired.extensions, paymentId);
});
const pay = wrapFetchWithPayment(fetch, client);

// 3. Offline verification: Ed25519 over the RFC 8785 (JCS) bytes of the report without its
//    `signature` member (the pack's report is signed as sent, its signature in Report-Signature).
const jcs = (v) =>
  v === null || typeof v !== "object" ? JSON.stringify(v)
  : Array.isArray(v) ? `[${v.map(jcs).join(",")}]`
  : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(",")}}`;
function verifies(report, publicKeyB64, detachedHeader) {
  const { signature: member, ...unsigned } = report;
  const signature = detachedHeader ? JSON.parse(Buffer.from(detachedHeader, "base64").toString("utf8")) : member;
  const keyId = createHash("sha256").update(Buffer.from(publicKeyB64, "base64")).digest("hex").slice(0, 16);
  if (signature?.alg !== "Ed25519" || signature.key_id !== keyId) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKeyB64, "base64").toString("base64url") }, format: "jwk" });
  return verify(null, Buffer.from(jcs(detachedHeader ? report : unsigned), "utf8"), key, Buffer.from(signature.sig, "base64"));
}

// The signing key and the request examples come from the worker's own documents (fetch them once;
// verification itself needs no network).
const index = await (await fetch(`${CM_URL}/`)).json();
const openapi = await (await fetch(`${CM_URL}/openapi.json`)).json();
const exampleBody = (path) => openapi.paths[path].post.requestBody.content["application/json"].example;

let failed = false;
for (const path of ["/token-efficiency/budget", "/v1/x402/context-budget-pack"]) {
  paymentId = generatePaymentId();
  const res = await pay(`${CM_URL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "Idempotency-Key": paymentId },
    body: JSON.stringify(exampleBody(path)),
  });
  const report = await res.json();
  const settled = res.headers.get("PAYMENT-RESPONSE");
  const verified = res.ok && verifies(report, index.signing.public_key, res.headers.get("Report-Signature") ?? undefined);
  failed ||= !verified;
  console.log(JSON.stringify({
    path,
    status: res.status,
    paid_units: openapi.paths[path].post["x-access"].usdc_units,
    transaction: settled ? decodePaymentResponseHeader(settled).transaction : null,
    verified,
    ...(res.ok ? {} : { code: report.code }),
  }));
}
process.exit(failed ? 1 : 0);
