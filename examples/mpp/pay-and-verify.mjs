#!/usr/bin/env node
// A minimal agent on the stock MPP client: pay context-meter's budget pack with `mppx` (method
// `tempo`, intent `charge`: pathUSD on Tempo), then verify the signed report offline. Nothing here
// is specific to context-meter but the last step.
//
//   CM_URL=https://<worker>  TEMPO_RPC_URL=https://<rpc>  PAYER_PRIVATE_KEY=0x<64 hex> \
//     node examples/mpp/pay-and-verify.mjs
//
// With no variables, against `make dev` (its local Tempo chain and funded payer):
//   node examples/mpp/pay-and-verify.mjs
//
// PAYER_PRIVATE_KEY is an EVM private key whose account holds the challenge's TIP-20 currency
// (pathUSD) and a fee token on the worker's Tempo chain. The client broadcasts the transfer itself
// (push mode) and presents its hash. Prints one JSON line per call; exits 1 if any call is not
// delivered or any signature does not verify.
import { createHash, createPublicKey, randomUUID, verify } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { Receipt } from "mppx";
import { Mppx, tempo } from "mppx/client";
import { createClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { tempo as tempoChain } from "viem/tempo/chains";

// With no CM_URL: the worker `make dev` serves and the payer its local stacks funded, from
// .dev-payer.json (written by `make dev`, there while it runs); each variable still overrides its part.
const DEV_PAYER = new URL("../../.dev-payer.json", import.meta.url);
const dev = process.env.CM_URL || !existsSync(DEV_PAYER) ? undefined : JSON.parse(readFileSync(DEV_PAYER, "utf8"));
const CM_URL = process.env.CM_URL ?? dev?.cm_url ?? "http://127.0.0.1:8787";
const RPC_URL = process.env.TEMPO_RPC_URL ?? dev?.mpp.rpc_url ?? tempoChain.rpcUrls.default.http[0];
const PRIVATE_KEY = process.env.PAYER_PRIVATE_KEY ?? dev?.mpp.private_key;
if (!PRIVATE_KEY) throw new Error("set PAYER_PRIVATE_KEY (0x + 64 hex), or run `make dev` and leave CM_URL unset");

// 1. The payer: the stock mppx client with the Tempo charge method, on the chain the challenge
//    names (its methodDetails.chainId), through TEMPO_RPC_URL.
const mppx = Mppx.create({
  polyfill: false,
  methods: [tempo.charge({
    account: privateKeyToAccount(PRIVATE_KEY),
    getClient: ({ chainId }) => createClient({ chain: { ...tempoChain, id: chainId ?? tempoChain.id }, transport: http(RPC_URL) }),
  })],
});

// 2. Offline verification: Ed25519 over the RFC 8785 (JCS) bytes of the report without its
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

// The signing key and the request example come from the worker's own documents (fetch them once;
// verification itself needs no network).
const index = await (await fetch(`${CM_URL}/`)).json();
const openapi = await (await fetch(`${CM_URL}/openapi.json`)).json();
const exampleBody = (path) => openapi.paths[path].post.requestBody.content["application/json"].example;

let failed = false;
for (const path of ["/v1/mpp/context-budget-pack"]) {
  // 3. Idempotency: one key per operation (the worker binds it into the challenge; a retry with the
  //    same key, body and credential is never charged twice). mppx.fetch answers the 402's
  //    WWW-Authenticate: Payment challenge and repeats the request with the credential.
  const res = await mppx.fetch(`${CM_URL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "Idempotency-Key": randomUUID() },
    body: JSON.stringify(exampleBody(path)),
  });
  const report = await res.json();
  const verified = res.ok && verifies(report, index.signing.public_key, res.headers.get("Report-Signature") ?? undefined);
  failed ||= !verified;
  console.log(JSON.stringify({
    path,
    status: res.status,
    paid_units: openapi.paths[path].post["x-access"].usdc_units,
    transaction: res.ok ? Receipt.fromResponse(res).reference : null,
    verified,
    ...(res.ok ? {} : { code: report.code }),
  }));
}
process.exit(failed ? 1 : 0);
