// A facilitator built from the official packages (@x402/core x402Facilitator + @x402/svm
// ExactSvmScheme) behind a small HTTP server on loopback: POST /verify, POST /settle,
// GET /supported (bodies as @x402/core's HTTPFacilitatorClient sends and expects them).
// Its fee payer is the deterministic test wallet "feePayer"; its RPC is the local VM.
//
// Usage: node tests/x402/facilitator.mjs [--port N] [--rpc URL] [--keep-alive-ms N]
//        (prints one JSON line when ready)
// Library: startFacilitator({ port, rpcUrl, keepAliveMs }) → { url, feePayer, close() }.
// keepAliveMs: how long an idle keep-alive connection stays open (Node's default, 5 s, when unset).
import http from "node:http";
import { pathToFileURL } from "node:url";
import { x402Facilitator } from "@x402/core/facilitator";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import { seedOf, NETWORK, FACILITATOR_PORT, SVM_PORT } from "./wallets.mjs";

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

export async function startFacilitator({ port = FACILITATOR_PORT, rpcUrl = `http://127.0.0.1:${SVM_PORT}`, quiet = false, keepAliveMs } = {}) {
  const keypair = await createKeyPairSignerFromPrivateKeyBytes(seedOf("feePayer"));
  const facilitator = new x402Facilitator().register(
    NETWORK,
    new ExactSvmScheme(toFacilitatorSvmSigner(keypair, { defaultRpcUrl: rpcUrl })),
  );
  const log = (...args) => quiet || console.error("[facilitator]", ...args);

  const server = http.createServer(async (req, res) => {
    try {
      if (req.method === "GET" && req.url === "/supported") {
        return send(res, 200, facilitator.getSupported());
      }
      if (req.method === "POST" && (req.url === "/verify" || req.url === "/settle")) {
        const body = await readJson(req);
        const { paymentPayload, paymentRequirements } = body ?? {};
        if (!paymentPayload || !paymentRequirements) return send(res, 400, { error: "paymentPayload and paymentRequirements are required" });
        if (req.url === "/verify") {
          const result = await facilitator.verify(paymentPayload, paymentRequirements);
          log("verify", result.isValid, result.invalidReason ?? "");
          return send(res, 200, result);
        }
        const result = await facilitator.settle(paymentPayload, paymentRequirements);
        log("settle", result.success, result.errorReason ?? result.transaction);
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
    close: () => new Promise((resolve) => server.close(resolve)),
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
  const started = await startFacilitator({ port, rpcUrl, keepAliveMs });
  console.log(JSON.stringify({ ready: started.url, feePayer: started.feePayer, network: NETWORK, rpc: rpcUrl }));
}
