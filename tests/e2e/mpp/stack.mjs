// The local Tempo chain of the MPP tests: anvil 1.7.1 (npm @foundry-rs/anvil-linux-amd64) with
// `--network tempo`, whose pathUSD TIP-20 precompile (0x20c0…0000) and the default accounts' balances
// are the real Tempo ones. Helpers: JSON-RPC, balances, the stock mppx client, and crafted TIP-20
// payments (viem's Tempo actions) for the attack table.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createClient, http, keccak256, stringToBytes } from "viem";
import { sendTransactionSync } from "viem/actions";
import { Actions } from "viem/tempo";
import { tempo as tempoChain } from "viem/tempo/chains";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { Mppx, tempo } from "mppx/client";
import { ROOT } from "../lib/worker.mjs";

const ANVIL = join(ROOT, "node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil");

export const PATH_USD = "0x20c0000000000000000000000000000000000000";
export const ALPHA_USD = "0x20c0000000000000000000000000000000000001";
// anvil's default accounts: #0 pays, #1 is the worker's recipient, #2 is a stranger.
export const PAYER = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
export const RECIPIENT = "0x70997970c51812dc3a010c7d01b50e20d4dc79c8";
export const STRANGER = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";

export async function rpc(url, method, params = []) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = await r.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Starts `anvil --network tempo` on `port` (chain id `chainId`); resolves with { url, chainId, pid, stop() } when it answers. */
export async function startAnvil({ port, chainId }) {
  const args = ["--network", "tempo", "--port", String(port), "--host", "127.0.0.1", "--silent"];
  if (chainId) args.push("--chain-id", String(chainId));
  const child = spawn(ANVIL, args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`anvil exited: ${err}`);
    try {
      const id = await rpc(url, "eth_chainId");
      return { url, chainId: Number(id), pid: child.pid, stop: () => { try { process.kill(-child.pid, "SIGKILL"); } catch {} } };
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  process.kill(-child.pid, "SIGKILL");
  throw new Error(`anvil did not answer on ${port}: ${err}`);
}

export function tempoClient(rpcUrl, chainId) {
  return createClient({ chain: { ...tempoChain, id: chainId }, transport: http(rpcUrl) });
}

/** TIP-20 balance (base units) of `owner` in `token`. */
export async function balance(rpcUrl, owner, token = PATH_USD) {
  const data = "0x70a08231" + owner.slice(2).padStart(64, "0");
  return BigInt(await rpc(rpcUrl, "eth_call", [{ to: token, data }, "latest"]));
}

/**
 * A fresh payer for one stock-client payment, funded from account #0 with pathUSD (the payment) and
 * AlphaUSD (the fee token anvil charges). The one stand-in of this suite: anvil 1.7.1 mines only the
 * first Tempo transaction with an expiring nonce (nonceKey 2^256-1, nonce 0, validBefore) per account;
 * later ones are accepted by eth_sendRawTransaction(Sync) and silently dropped (never mined, txpool
 * empty), and the stock client's push payment always uses an expiring nonce. `privateKey` (default: a
 * new one) is for a payer that runs in another process (the example).
 */
export async function freshPayer(rpcUrl, chainId, privateKey = generatePrivateKey()) {
  const account = privateKeyToAccount(privateKey);
  const client = tempoClient(rpcUrl, chainId);
  const calls = [PATH_USD, ALPHA_USD].map((token) => Actions.token.transfer.call(client, { amount: 10_000_000n, to: account.address, token }));
  const funded = await sendTransactionSync(client, { account: PAYER, calls, gas: 300000n });
  if (funded.status !== "success") throw new Error("funding the payer failed");
  return account;
}

/** The stock mppx client (tempo charge) paying from `account` on `rpcUrl`. */
export function mppxClient(rpcUrl, chainId, account) {
  return Mppx.create({
    polyfill: false,
    methods: [tempo.charge({ account, getClient: () => tempoClient(rpcUrl, chainId) })],
  });
}

/** The stock client's charge method alone (to build a credential for a given challenge). */
export function chargeMethod(rpcUrl, chainId, account) {
  return tempo.charge({ account, getClient: () => tempoClient(rpcUrl, chainId) });
}

/**
 * The attribution memo as mppx 0.11 writes it (tag keccak("mpp")[0..4], version 1, keccak(realm)[0..10],
 * 10 zero bytes for an anonymous client, keccak(challenge id)[0..7]), written independently here.
 */
export function memoFor(realm, challengeId) {
  const k = (s) => keccak256(stringToBytes(s)).slice(2);
  return `0x${k("mpp").slice(0, 8)}01${k(realm).slice(0, 20)}${"00".repeat(10)}${k(challengeId).slice(0, 14)}`;
}

/**
 * A crafted push payment: one TIP-20 transfer(WithMemo) from account #0 (plus an optional reverting
 * call that makes the whole transaction fail). Gas is given explicitly: anvil's estimate for a
 * transferWithMemo here equals exactly the gas it then runs out of.
 */
export async function pushTransfer(rpcUrl, chainId, { amount, to = RECIPIENT, token = PATH_USD, memo, fail = false }) {
  const client = tempoClient(rpcUrl, chainId);
  const calls = [Actions.token.transfer.call(client, { amount: BigInt(amount), to, token, ...(memo ? { memo } : {}) })];
  if (fail) calls.push(Actions.token.transfer.call(client, { amount: 1n << 70n, to, token }));
  const receipt = await sendTransactionSync(client, { account: PAYER, calls, gas: 300000n });
  return receipt;
}
