#!/usr/bin/env node
// The local payment stacks of `make dev`, so that the worker it serves can be paid on every rail:
// the test suite's own pieces, started on the loopback addresses the worker's local config names
// (wrangler.toml [vars], with .dev.vars over it as wrangler dev reads them):
//   SOLANA_RPC_URL      the Solana VM (litesvm, tests/e2e/x402/svm/server.mjs)
//   FACILITATOR_URL     the facilitator on the official packages (tests/e2e/x402/facilitator.mjs): the
//                       Solana `exact` scheme, and the EVM one for eip155:84532 when EVM_NETWORKS offers it
//   EVM_84532_RPC_URL   anvil as Base Sepolia with the EIP-3009 USDC-like token (tests/e2e/x402/evm/chain.mjs)
//   TEMPO_RPC_URL       `anvil --network tempo` (tests/e2e/mpp/stack.mjs), chain TEMPO_CHAIN_ID
// and a funded payer on each rail: the test wallet "client" on Solana (1,000 USDC), anvil's account #3
// on Base (1,000 USDC), a fresh account on Tempo (10 pathUSD and 10 AlphaUSD for fees). The payer's keys
// and the RPC URLs go to .dev-payer.json (gitignored; written once everything answers, removed on exit),
// which the examples read when CM_URL is not set. Test-only keys on local chains: they hold nothing real.
//
// anvil 1.7.1 mines one push payment per Tempo account (see freshPayer in tests/e2e/mpp/stack.mjs), so
// once the Tempo payer's payment lands a fresh one is funded and the file rewritten: run the MPP example
// again after it has printed, not twice at once.
//
// scripts/dev.sh runs this in its own process group and stops it with the worker (SIGTERM); it also
// stops by itself when DEV_STACKS_PARENT (a pid) is gone. Env: CM_URL, the worker's URL written to the
// file (default http://127.0.0.1:8787).
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createKeyPairSignerFromPrivateKeyBytes, getAddressEncoder } from "@solana/kit";
import { generatePrivateKey } from "viem/accounts";
import { startSvm } from "../tests/e2e/x402/stack.mjs";
import { startFacilitator } from "../tests/e2e/x402/facilitator.mjs";
import { seedOf, NETWORK, USDC_MINT } from "../tests/e2e/x402/wallets.mjs";
import { startChain, KEYS, WALLETS, EVM_NETWORK, CHAIN_ID, USDC } from "../tests/e2e/x402/evm/chain.mjs";
import { startAnvil, freshPayer, balance, PATH_USD } from "../tests/e2e/mpp/stack.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DEV_PAYER_FILE = join(ROOT, ".dev-payer.json");
const TEMPO_FUNDED = 10_000_000n; // what freshPayer gives in pathUSD

/** The worker's local vars: wrangler.toml's [vars], then .dev.vars over them (as `wrangler dev` reads them). */
export function localVars(root = ROOT) {
  const vars = {};
  let inVars = false;
  for (const line of readFileSync(join(root, "wrangler.toml"), "utf8").split("\n")) {
    const section = /^\s*\[+\s*([^\]\s]+)\s*\]+/.exec(line);
    if (section) inVars = section[1] === "vars";
    const kv = inVars && /^\s*([A-Za-z0-9_]+)\s*=\s*"([^"]*)"/.exec(line);
    if (kv) vars[kv[1]] = kv[2];
  }
  const devVars = join(root, ".dev.vars");
  if (existsSync(devVars)) {
    for (const line of readFileSync(devVars, "utf8").split("\n")) {
      const kv = /^\s*([A-Za-z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (kv) vars[kv[1]] = kv[2].replace(/^"(.*)"$/, "$1");
    }
  }
  return vars;
}

/** The port of a loopback URL the worker is configured with; throws, naming the var, for anything else. */
function loopbackPort(vars, name) {
  const value = vars[name];
  let url;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is ${JSON.stringify(value)}, not a URL`);
  }
  if (!["127.0.0.1", "localhost"].includes(url.hostname) || !url.port) {
    throw new Error(`${name} is ${value}: the local stacks serve loopback URLs with a port only (DEV_STACKS=0 serves the worker alone)`);
  }
  return Number(url.port);
}

function portFree(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

const say = (line) => console.error(`[dev-stacks] ${line}`);

async function main() {
  const vars = localVars();
  const cmUrl = process.env.CM_URL ?? "http://127.0.0.1:8787";
  // What the worker's config names, checked against what the stacks serve: a payment to another
  // network, asset or payee would be refused, so say so now rather than at the first paid call.
  const mismatch = [
    ["NETWORK", NETWORK], ["USDC_MINT", USDC_MINT], ["TEMPO_CURRENCY", PATH_USD],
  ].filter(([k, v]) => vars[k] !== v).map(([k, v]) => `${k} is ${vars[k]}, the local stack serves ${v}`);
  const base = (vars.EVM_NETWORKS ?? "").split(",").map((s) => s.trim()).includes(EVM_NETWORK);
  if (base && vars[`EVM_${CHAIN_ID}_ASSET`]?.toLowerCase() !== USDC.toLowerCase()) {
    mismatch.push(`EVM_${CHAIN_ID}_ASSET is ${vars[`EVM_${CHAIN_ID}_ASSET`]}, the local Base serves ${USDC}`);
  }
  for (const m of mismatch) say(`warning: ${m}`);

  const ports = {
    SOLANA_RPC_URL: loopbackPort(vars, "SOLANA_RPC_URL"),
    FACILITATOR_URL: loopbackPort(vars, "FACILITATOR_URL"),
    ...(base ? { [`EVM_${CHAIN_ID}_RPC_URL`]: loopbackPort(vars, `EVM_${CHAIN_ID}_RPC_URL`) } : {}),
    TEMPO_RPC_URL: loopbackPort(vars, "TEMPO_RPC_URL"),
  };
  const byPort = new Map();
  for (const [name, port] of Object.entries(ports)) {
    if (byPort.has(port)) throw new Error(`${name} and ${byPort.get(port)} both name port ${port}: one chain per port`);
    byPort.set(port, name);
    if (!(await portFree(port))) throw new Error(`port ${port} (${name}) is in use: stop what holds it, or DEV_STACKS=0 to serve the worker alone`);
  }

  const stops = [];
  let starting = Promise.resolve();
  let stopping = null;
  const stop = (code) => {
    stopping ??= (async () => {
      rmSync(DEV_PAYER_FILE, { force: true });
      // A chain still starting is stopped once it is up (Tempo's anvil has its own process group).
      await starting;
      for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => {});
      process.exit(code);
    })();
    return stopping;
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => stop(0));
  const parent = Number(process.env.DEV_STACKS_PARENT);
  if (parent) {
    setInterval(() => {
      try {
        process.kill(parent, 0);
      } catch {
        say(`parent ${parent} is gone: stopping`);
        stop(0);
      }
    }, 1000).unref();
  }

  try {
    const t0 = Date.now();
    // The three chains at once; then the facilitator, which needs the Solana VM's and Base's RPC.
    const up = (piece) => piece.then((p) => (p && stops.push(() => p.stop()), p));
    starting = Promise.allSettled([
      up(startSvm({ port: ports.SOLANA_RPC_URL })),
      up(base ? startChain({ port: ports[`EVM_${CHAIN_ID}_RPC_URL`], mint: 1_000_000_000n }) : Promise.resolve(null)),
      up(startAnvil({ port: ports.TEMPO_RPC_URL, chainId: Number(vars.TEMPO_CHAIN_ID) || undefined })),
    ]);
    const started = await starting;
    if (stopping) return;
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    const [svm, chain, tempo] = started.map((s) => s.value);
    const facilitator = await startFacilitator({
      port: ports.FACILITATOR_URL,
      rpcUrl: svm.url,
      ...(chain ? { evm: { rpcUrl: chain.rpcUrl, privateKey: KEYS.facilitator, network: EVM_NETWORK } } : {}),
    });
    stops.push(() => facilitator.close());

    const seed = seedOf("client");
    const solanaPayer = await createKeyPairSignerFromPrivateKeyBytes(seed);
    const keypair = [...seed, ...getAddressEncoder().encode(solanaPayer.address)];
    const tempoPayer = async () => {
      const privateKey = generatePrivateKey();
      const account = await freshPayer(tempo.url, tempo.chainId, privateKey);
      return { address: account.address, private_key: privateKey };
    };
    let mpp = await tempoPayer();
    const write = () => {
      const payer = {
        cm_url: cmUrl,
        solana: { rpc_url: svm.url, address: solanaPayer.address, keypair },
        ...(chain ? { evm: { rpc_url: chain.rpcUrl, address: WALLETS.client, private_key: KEYS.client } } : {}),
        mpp: { rpc_url: tempo.url, ...mpp },
        pids: { stacks: process.pid, svm: svm.pid, ...(chain ? { base: chain.pid } : {}), tempo: tempo.pid },
      };
      const tmp = `${DEV_PAYER_FILE}.tmp`;
      // Indented, with the 64 keypair bytes on one line.
      const text = JSON.stringify(payer, null, 2).replace(/\[[\d,\s]+\]/g, (bytes) => JSON.stringify(JSON.parse(bytes)));
      writeFileSync(tmp, text + "\n", { mode: 0o600 });
      renameSync(tmp, DEV_PAYER_FILE);
    };
    write();
    say(`ready in ${Date.now() - t0} ms: Solana VM ${svm.url}, facilitator ${facilitator.url} (Solana${chain ? ", Base Sepolia" : ""}), ` +
      `${chain ? `Base Sepolia anvil ${chain.rpcUrl}, ` : ""}Tempo anvil ${tempo.url}; payer in .dev-payer.json`);

    // The Tempo payer's one payment (see the header): a fresh one as soon as it has landed.
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      if (stopping) return;
      const left = await balance(tempo.url, mpp.address).catch(() => TEMPO_FUNDED);
      if (left < TEMPO_FUNDED && !stopping) {
        mpp = await tempoPayer();
        if (!stopping) write();
      }
    }
  } catch (error) {
    say(`failed: ${error?.message ?? error}`);
    await stop(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    say(`failed: ${error?.message ?? error}`);
    rmSync(DEV_PAYER_FILE, { force: true });
    process.exit(1);
  });
}
