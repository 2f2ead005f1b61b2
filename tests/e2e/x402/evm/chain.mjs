// The offline EVM side of the payment stack: anvil (npm @foundry-rs/anvil-linux-amd64) as a local
// Base Sepolia (chain id 84532), and the EIP-3009 USDC-like token of UsdcLike.sol, compiled with npm
// solc at test time and placed at the Base Sepolia USDC address (anvil_setCode; its EIP-712 domain
// is computed from block.chainid and address(this), so it is exactly the domain the official
// client signs: {name "USDC", version "2", 84532, 0x036C…CF7e}).
//
// Wallets are anvil's deterministic accounts: minter (0), facilitator (1), merchant (2),
// client (3), client2 (4), house (5).
//   const chain = await startChain({ port });   // → { rpcUrl, pid, chain, publicClient, balance(addr), stop() }
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { createPublicClient, createWalletClient, http, defineChain, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";

const require = createRequire(import.meta.url);
export const EVM_NETWORK = "eip155:84532";
export const CHAIN_ID = 84532;
export const USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
export const TOKEN_NAME = "USDC";
export const TOKEN_VERSION = "2";
const ANVIL = fileURLToPath(new URL("../../../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil", import.meta.url));
const SOURCE = fileURLToPath(new URL("./UsdcLike.sol", import.meta.url));

// anvil's default mnemonic accounts 0–5 ("test test … junk"), public test keys.
export const KEYS = {
  minter: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  facilitator: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  merchant: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  client: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  client2: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c6ac79e9f3",
  house: "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
};
export const WALLETS = Object.fromEntries(Object.entries(KEYS).map(([k, v]) => [k, privateKeyToAccount(v).address]));

export const tokenAbi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 value)",
  "function authorizationState(address, bytes32) view returns (bool)",
]);

/** The token's runtime bytecode, compiled now from UsdcLike.sol with npm solc. */
export function compileToken() {
  const solc = require("solc");
  const input = {
    language: "Solidity",
    sources: { "UsdcLike.sol": { content: readFileSync(SOURCE, "utf8") } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { UsdcLike: ["evm.deployedBytecode.object"] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  return "0x" + output.contracts["UsdcLike.sol"].UsdcLike.evm.deployedBytecode.object;
}

export function chainOf(rpcUrl) {
  return defineChain({
    id: CHAIN_ID,
    name: "local base sepolia",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

async function rpc(url, method, params = []) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Starts anvil on `port`, places the token, mints 10 USDC to each client; resolves when ready. */
export async function startChain({ port, mint = 10_000_000n } = {}) {
  const child = spawn(ANVIL, ["--port", String(port), "--host", "127.0.0.1", "--chain-id", String(CHAIN_ID), "--accounts", "6"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const ready = new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      if (out.includes("Listening on")) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (d) => (out += d));
    child.once("exit", (code) => reject(new Error(`anvil exited with ${code}: ${out.slice(-2000)}`)));
  });
  await ready;
  const rpcUrl = `http://127.0.0.1:${port}`;
  await rpc(rpcUrl, "anvil_setCode", [USDC, compileToken()]);
  const chain = chainOf(rpcUrl);
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl) });
  const minter = createWalletClient({ account: privateKeyToAccount(KEYS.minter), chain, transport: http(rpcUrl) });
  for (const who of ["client", "client2", "house"]) {
    const hash = await minter.writeContract({ address: USDC, abi: tokenAbi, functionName: "mint", args: [WALLETS[who], mint] });
    await publicClient.waitForTransactionReceipt({ hash });
  }
  const balance = (address) => publicClient.readContract({ address: USDC, abi: tokenAbi, functionName: "balanceOf", args: [address] });
  return {
    rpcUrl,
    pid: child.pid,
    chain,
    publicClient,
    balance,
    stop: () => new Promise((done) => {
      if (child.exitCode !== null) return done();
      child.once("exit", done);
      child.kill("SIGTERM");
    }),
  };
}
