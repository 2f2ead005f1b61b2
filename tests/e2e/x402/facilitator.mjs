// A facilitator built from the official packages (@x402/core x402Facilitator + @x402/svm
// ExactSvmScheme) behind a small HTTP server on loopback: POST /verify, POST /settle,
// GET /supported (bodies as @x402/core's HTTPFacilitatorClient sends and expects them).
// Its fee payer is the deterministic test wallet "feePayer"; its RPC is the local VM.
//
// Usage: node tests/e2e/x402/facilitator.mjs [--port N] [--rpc URL] [--keep-alive-ms N]
//        (prints one JSON line when ready)
// Library: startFacilitator({ port, rpcUrl, keepAliveMs, faults, evm }) → { url, feePayer, close(), fault(),
// settled, discovered } (discovered: @x402/extensions' bazaar extraction of each payload received).
// evm (optional): { rpcUrl, privateKey, network } also registers @x402/evm's ExactEvmScheme (facilitator
// side, a viem wallet client as its signer) for that network, beside the Solana scheme.
// keepAliveMs: how long an idle keep-alive connection stays open (Node's default, 5 s, when unset).
// faults (test only, off unless asked for): fault({ settle, verify, stallMs, times }) arms the next
// `times` (default 1) /settle or /verify calls:
//   settle: "drop-after-submit"  settles for real (the payment lands), then destroys the connection
//           "stall-after-submit" settles for real, then holds the answer stallMs before sending it
//           "pending-after-submit" settles for real, then answers errorReason "settlement_pending"
//           "drop-before-submit" destroys the connection without settling (nothing lands)
//   verify: "stall" holds /verify stallMs before answering it
// fault(null) disarms. The same switch is served at POST /test/fault when faults is true.
// auth (off unless asked for): demand({ keyId, publicKey, paths }) makes the facilitator demand a
// Coinbase CDP-style Bearer JWT on every call to `paths` (default all three), verified for real:
// Ed25519 signature (node:crypto) under `publicKey` (a KeyObject), header alg EdDSA / typ JWT /
// kid = keyId / 32-hex nonce never seen before, claims iss "cdp", sub = keyId, aud ["cdp_service"],
// nbf <= now < exp, exp - nbf <= 120, uris = ["<METHOD> <Host header><path>"]. A failure answers
// 401. demand(null) stops demanding. `auth` counts { verified, rejected } calls.
// Env (CLI): FACILITATOR_AUTH_KEY_ID + FACILITATOR_AUTH_PUBLIC_KEY (base64 raw 32 bytes).
import http from "node:http";
import { createPublicKey, verify as verifySignature } from "node:crypto";
import { pathToFileURL } from "node:url";
import { x402Facilitator } from "@x402/core/facilitator";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { extractDiscoveryInfo } from "@x402/extensions/bazaar";
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import { seedOf, NETWORK, FACILITATOR_PORT, SVM_PORT } from "./wallets.mjs";
import { evmFacilitatorScheme } from "./evm/facilitator-evm.mjs";

const MAX_BODY_BYTES = 64 * 1024;

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new Error("body too large"));
      else chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

function send(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)));
}

/** An Ed25519 public KeyObject from 32 raw bytes. */
export function ed25519PublicKey(raw) {
  return createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(raw)]), format: "der", type: "spki" });
}

/** Why a CDP-style Bearer JWT is refused for `method` `host``path`, or null when it is valid. */
export function jwtRefusal(authorization, { keyId, publicKey }, method, host, path, seenNonces, nowS = Math.floor(Date.now() / 1000)) {
  const token = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(authorization ?? "");
  if (!token) return "no bearer token";
  let header, claims;
  try {
    header = JSON.parse(Buffer.from(token[1], "base64url").toString("utf8"));
    claims = JSON.parse(Buffer.from(token[2], "base64url").toString("utf8"));
  } catch {
    return "undecodable";
  }
  const signed = verifySignature(null, Buffer.from(`${token[1]}.${token[2]}`), publicKey, Buffer.from(token[3], "base64url"));
  if (!signed) return "bad signature";
  if (header.alg !== "EdDSA" || header.typ !== "JWT" || header.kid !== keyId) return "bad header";
  if (!/^[0-9a-f]{32}$/.test(header.nonce ?? "") || seenNonces.has(header.nonce)) return "bad or reused nonce";
  if (claims.iss !== "cdp" || claims.sub !== keyId || JSON.stringify(claims.aud) !== JSON.stringify(["cdp_service"])) return "bad claims";
  if (!(claims.nbf <= nowS + 5 && nowS < claims.exp && claims.exp - claims.nbf <= 120)) return "outside its window";
  if (JSON.stringify(claims.uris) !== JSON.stringify([`${method} ${host}${path}`])) return "bad uris";
  seenNonces.add(header.nonce);
  return null;
}

export async function startFacilitator({ port = FACILITATOR_PORT, rpcUrl = `http://127.0.0.1:${SVM_PORT}`, quiet = false, keepAliveMs, faults = false, auth: demanded = null, evm } = {}) {
  let demanding = demanded; // { keyId, publicKey, paths? } or null
  const auth = { verified: 0, rejected: 0 };
  const seenNonces = new Set();
  const demand = (spec) => {
    demanding = spec;
  };
  let armed = null; // { settle?, verify?, stallMs, times }
  const fault = (spec) => {
    if (!faults) throw new Error("faults are off for this facilitator");
    armed = spec ? { stallMs: 10_000, times: 1, ...spec } : null;
  };
  const take = (kind) => {
    if (!armed?.[kind]) return null;
    const mode = armed[kind];
    const stallMs = armed.stallMs;
    armed.times -= 1;
    if (armed.times <= 0) armed = null;
    return { mode, stallMs };
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const settled = []; // every settle outcome of this facilitator: { success, transaction, fault }
  // What a cataloguing facilitator would list: the official bazaar extraction (it validates the
  // declaration's info against its schema) of every /verify and /settle payload, or null.
  const discovered = [];
  const keypair = await createKeyPairSignerFromPrivateKeyBytes(seedOf("feePayer"));
  const facilitator = new x402Facilitator().register(
    NETWORK,
    new ExactSvmScheme(toFacilitatorSvmSigner(keypair, { defaultRpcUrl: rpcUrl })),
  );
  if (evm) facilitator.register(evm.network, evmFacilitatorScheme(evm));
  const log = (...args) => quiet || console.error("[facilitator]", ...args);

  const server = http.createServer(async (req, res) => {
    try {
      const path = req.url;
      if (demanding && ["/supported", "/verify", "/settle"].includes(path) && (demanding.paths ?? ["/supported", "/verify", "/settle"]).includes(path)) {
        const why = jwtRefusal(req.headers.authorization, demanding, req.method, req.headers.host, path, seenNonces);
        if (why) {
          auth.rejected += 1;
          log("auth refused", path, why);
          req.resume();
          return send(res, 401, { error: "unauthorized" });
        }
        auth.verified += 1;
      }
      if (req.method === "GET" && req.url === "/supported") {
        return send(res, 200, facilitator.getSupported());
      }
      if (faults && req.method === "POST" && req.url === "/test/fault") {
        fault(await readJson(req));
        return send(res, 200, { armed });
      }
      if (req.method === "POST" && (req.url === "/verify" || req.url === "/settle")) {
        const body = await readJson(req);
        const { paymentPayload, paymentRequirements } = body ?? {};
        if (!paymentPayload || !paymentRequirements) return send(res, 400, { error: "paymentPayload and paymentRequirements are required" });
        discovered.push({ at: req.url, info: extractDiscoveryInfo(paymentPayload, paymentRequirements) });
        if (req.url === "/verify") {
          const injected = take("verify");
          if (injected?.mode === "stall") await sleep(injected.stallMs);
          const result = await facilitator.verify(paymentPayload, paymentRequirements);
          log("verify", result.isValid, result.invalidReason ?? "");
          return send(res, 200, result);
        }
        const injected = take("settle");
        if (injected?.mode === "drop-before-submit") {
          settled.push({ success: false, transaction: "", fault: injected.mode });
          return req.socket.destroy();
        }
        const result = await facilitator.settle(paymentPayload, paymentRequirements);
        settled.push({ success: result.success, transaction: result.transaction, errorReason: result.errorReason, fault: injected?.mode ?? null });
        log("settle", result.success, result.errorReason ?? result.transaction, injected?.mode ?? "");
        if (injected?.mode === "drop-after-submit") return req.socket.destroy();
        if (injected?.mode === "stall-after-submit") await sleep(injected.stallMs);
        if (injected?.mode === "pending-after-submit") {
          return send(res, 200, { success: false, errorReason: "settlement_pending", transaction: "", network: result.network, payer: result.payer });
        }
        return send(res, 200, result);
      }
      send(res, 404, { error: "not found" });
    } catch (error) {
      log("error", error?.message ?? error);
      send(res, 500, { error: "facilitator error" });
    }
  });
  if (keepAliveMs) server.keepAliveTimeout = keepAliveMs;
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    feePayer: keypair.address,
    fault,
    demand,
    auth,
    settled,
    discovered,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections?.();
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const port = Number(arg("--port") ?? FACILITATOR_PORT);
  const rpcUrl = arg("--rpc") ?? `http://127.0.0.1:${SVM_PORT}`;
  const keepAliveMs = arg("--keep-alive-ms") ? Number(arg("--keep-alive-ms")) : undefined;
  const authKeyId = process.env.FACILITATOR_AUTH_KEY_ID;
  const authPublic = process.env.FACILITATOR_AUTH_PUBLIC_KEY;
  const auth = authKeyId && authPublic ? { keyId: authKeyId, publicKey: ed25519PublicKey(Buffer.from(authPublic, "base64")) } : null;
  const started = await startFacilitator({ port, rpcUrl, keepAliveMs, auth });
  console.log(JSON.stringify({ ready: started.url, feePayer: started.feePayer, network: NETWORK, rpc: rpcUrl }));
}
