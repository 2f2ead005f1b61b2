// Starting and stopping the local payment stack from node:test (or a shell):
// the VM's JSON-RPC server (child process, its own npm folder) and the facilitator (in process),
// plus an independent JavaScript construction of the worker's PAYMENT-REQUIRED (used by the stub
// resource server and the fixture generator to cross-check the Rust engine).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { startFacilitator } from "./facilitator.mjs";
import { NETWORK, USDC_MINT } from "./wallets.mjs";
import { startWorker } from "../lib/worker.mjs";

const SVM_SERVER = fileURLToPath(new URL("./svm/server.mjs", import.meta.url));

/** Spawns the VM server; resolves with { url, pid, wallets, atas, mint, stop() } once it is ready. */
export function startSvm({ port = 0 } = {}) {
  const chosen = port || 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, [SVM_SERVER, "--port", String(chosen)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      const info = JSON.parse(line);
      resolve({
        url: info.ready,
        pid: child.pid,
        wallets: info.wallets,
        atas: info.atas,
        mint: info.mint,
        stop: () => new Promise((done) => { child.once("exit", done); child.kill("SIGTERM"); }),
      });
    });
    child.once("exit", (code) => reject(new Error(`svm server exited with ${code}`)));
  });
}

/** JSON-RPC call to the VM. */
export async function rpc(url, method, params = []) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(body.error.message);
  return body.result;
}

/** Token balance (USDC base units, BigInt) of a test wallet's associated token account. */
export async function tokenBalance(svmUrl, owner) {
  return BigInt(await rpc(svmUrl, "testTokenBalance", [owner]));
}

/** VM + facilitator on free loopback ports. */
export async function startStack() {
  const svm = await startSvm();
  const facilitator = await startFacilitator({ port: 0, rpcUrl: svm.url, quiet: true });
  return {
    svm,
    facilitator,
    stop: async () => {
      await facilitator.close();
      await svm.stop();
    },
  };
}

/** The worker's memo: "cm:" + first 32 hex of sha256(route "\n" key). */
export function memoFor(route, key) {
  return "cm:" + createHash("sha256").update(`${route}\n${key}`).digest("hex").slice(0, 32);
}

/** The worker's PaymentRequired object, built independently in JavaScript. */
export function paymentRequired({ route, key, price, payTo, feePayer, url, maxTimeoutSeconds = 60, network = NETWORK, asset = USDC_MINT }) {
  return {
    x402Version: 2,
    resource: { url, description: `context-meter ${route}`, mimeType: "application/json" },
    accepts: [
      {
        scheme: "exact",
        network,
        amount: String(price),
        asset,
        payTo,
        maxTimeoutSeconds,
        extra: { feePayer, memo: memoFor(route, key) },
      },
    ],
    extensions: {
      "payment-identifier": {
        info: { required: true },
        schema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: {
            required: { type: "boolean" },
            id: { type: "string", minLength: 16, maxLength: 128, pattern: "^[a-zA-Z0-9_-]+$" },
          },
          required: ["required"],
        },
      },
    },
  };
}

export const toBase64Json = (value) => Buffer.from(JSON.stringify(value), "utf8").toString("base64");

/**
 * The local VM and facilitator on fixed ports, then the worker under workerd: the stack a test file
 * needs when its challenges must name a real fee payer. Whatever started is stopped if a later step
 * fails. Returns the VM, the worker, its signing public key and one `stop`.
 */
export async function startPaidWorker({ svmPort, facilitatorPort, workerPort, vars }) {
  const started = [];
  const stop = async () => { for (const s of started.reverse()) await s(); };
  try {
    const svm = await startSvm({ port: svmPort });
    started.push(() => svm.stop());
    const facilitator = await startFacilitator({ port: facilitatorPort, rpcUrl: svm.url, quiet: true });
    started.push(() => facilitator.close());
    const worker = await startWorker({ port: workerPort, vars });
    started.push(() => worker.stop());
    const key = (await (await fetch(worker.url + '/')).json()).signing.public_key;
    return { svm, worker, key, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
