// A local Solana VM (litesvm, native) behind a minimal JSON-RPC 2.0 server on loopback: just the
// methods the x402 flow calls (getAccountInfo, getLatestBlockhash, simulateTransaction,
// sendTransaction, getSignatureStatuses) plus a few harmless ones, and test-only methods
// (testTokenBalance, testExpireBlockhash, testAddresses). State: a 6-decimal mint at the devnet USDC
// address, associated token accounts for every test wallet, SOL for the fee payer and the clients.
// Lighthouse (the assertion program Phantom and Solflare inject) has no binary here, so its address
// runs a stand-in: the SPL Memo program's own code (litesvm ships it), which accepts an instruction
// whose data is UTF-8 and whose accounts all sign, as tests/e2e/x402/craft.mjs builds them. What the
// wallet-layout tests need is that the instruction executes, not what Lighthouse would assert.
//
// Usage: node tests/e2e/x402/svm/server.mjs [--port N]   (prints one JSON line {"ready":..., addresses})
import http from "node:http";
import { LiteSVM } from "litesvm";
import {
  address,
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  getBase64Encoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  getCompiledTransactionMessageDecoder,
  lamports,
} from "@solana/kit";
import { seedOf, USDC_MINT, SVM_PORT } from "../wallets.mjs";

const TOKEN_PROGRAM = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const LIGHTHOUSE_PROGRAM = address("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95");
const ATA_PROGRAM = address("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
const CLIENT_START_UNITS = 1_000_000_000n; // 1,000 USDC

const port = Number(process.argv[process.argv.indexOf("--port") + 1] || SVM_PORT);
const encoder = getAddressEncoder();
const mint = address(USDC_MINT);

const wallets = {};
for (const name of ["feePayer", "client", "merchant", "house", "client2"]) {
  wallets[name] = (await createKeyPairSignerFromPrivateKeyBytes(seedOf(name))).address;
}

async function ataOf(owner) {
  const [found] = await getProgramDerivedAddress({
    programAddress: ATA_PROGRAM,
    seeds: [encoder.encode(owner), encoder.encode(TOKEN_PROGRAM), encoder.encode(mint)],
  });
  return found;
}

const svm = new LiteSVM();
svm.addProgram(LIGHTHOUSE_PROGRAM, svm.getAccount(MEMO_PROGRAM).data);

function mintData() {
  const data = new Uint8Array(82);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true); // mint authority: Some(fee payer) — irrelevant to the tests
  data.set(encoder.encode(wallets.feePayer), 4);
  view.setBigUint64(36, 10n ** 15n, true); // supply
  data[44] = 6; // decimals
  data[45] = 1; // initialized
  return data; // freeze authority: None
}

function tokenAccountData(owner, amount) {
  const data = new Uint8Array(165);
  const view = new DataView(data.buffer);
  data.set(encoder.encode(mint), 0);
  data.set(encoder.encode(owner), 32);
  view.setBigUint64(64, amount, true);
  data[108] = 1; // AccountState::Initialized
  return data;
}

function setAccount(addr, owner, data) {
  svm.setAccount({
    address: addr,
    programAddress: owner,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
    data,
    executable: false,
    space: BigInt(data.length),
  });
}

setAccount(mint, TOKEN_PROGRAM, mintData());
const atas = {};
for (const [name, owner] of Object.entries(wallets)) {
  atas[name] = await ataOf(owner);
  const start = name === "client" || name === "client2" || name === "house" ? CLIENT_START_UNITS : 0n;
  setAccount(atas[name], TOKEN_PROGRAM, tokenAccountData(owner, start));
}
for (const name of ["feePayer", "client", "client2", "house"]) {
  svm.airdrop(wallets[name], lamports(10_000_000_000n));
}

const statuses = new Map(); // signature → { slot, err }
let slot = 1n;

function tokenBalance(ata) {
  const account = svm.getAccount(ata);
  if (!account.exists) return null;
  return new DataView(account.data.buffer, account.data.byteOffset).getBigUint64(64, true);
}

function decodeWire(b64) {
  return getTransactionDecoder().decode(getBase64Encoder().encode(b64));
}

function failureOf(result) {
  return typeof result.err === "function" ? result : null;
}

function describeErr(failed) {
  try {
    return failed.toString();
  } catch {
    return "transaction failed";
  }
}

/** The static accounts and memo texts of a landed transaction (for getSignaturesForAddress). */
function historyOf(tx) {
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const accounts = message.staticAccounts.map(String);
  const memos = message.instructions
    .filter((ix) => accounts[ix.programAddressIndex] === MEMO_PROGRAM)
    .map((ix) => Buffer.from(ix.data ?? []).toString("utf8"));
  return { accounts, memos };
}

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const methods = {
  getHealth: () => "ok",
  getVersion: () => ({ "solana-core": "litesvm-1.5.0", "feature-set": 0 }),
  getSlot: () => Number(slot),
  getBlockHeight: () => Number(slot),
  getBalance: ([addr]) => ({ context: { slot: Number(slot) }, value: Number(svm.getBalance(address(addr)) ?? 0n) }),
  getLatestBlockhash: () => ({
    context: { slot: Number(slot) },
    value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: Number(slot) + 150 },
  }),
  getAccountInfo: ([addr]) => {
    const account = svm.getAccount(address(addr));
    if (!account.exists) return { context: { slot: Number(slot) }, value: null };
    return {
      context: { slot: Number(slot) },
      value: {
        data: [Buffer.from(account.data).toString("base64"), "base64"],
        executable: account.executable,
        lamports: Number(account.lamports),
        owner: account.programAddress,
        rentEpoch: 0,
        space: account.data.length,
      },
    };
  },
  simulateTransaction: ([b64, config = {}]) => {
    const tx = decodeWire(b64);
    const sigVerify = config.sigVerify === true;
    svm.withSigverify(sigVerify);
    let result;
    try {
      result = svm.simulateTransaction(tx);
    } finally {
      svm.withSigverify(true);
    }
    const failed = failureOf(result);
    const meta = failed ? failed.meta() : result.meta();
    return {
      context: { slot: Number(slot) },
      value: {
        err: failed ? describeErr(failed) : null,
        logs: meta.logs(),
        accounts: null,
        unitsConsumed: Number(meta.computeUnitsConsumed()),
        returnData: null,
      },
    };
  },
  sendTransaction: ([b64]) => {
    const tx = decodeWire(b64);
    const result = svm.sendTransaction(tx);
    const failed = failureOf(result);
    if (failed) throw new RpcError(-32002, `Transaction simulation failed: ${describeErr(failed)}`);
    const signature = getBase58Decoder().decode(result.signature());
    slot += 1n;
    statuses.set(signature, { slot: Number(slot), err: null, ...historyOf(tx) });
    return signature;
  },
  // The chain questions the worker's reconciliation asks (standard Solana JSON-RPC shapes).
  isBlockhashValid: ([hash]) => ({ context: { slot: Number(slot) }, value: hash === svm.latestBlockhash() }),
  getSignaturesForAddress: ([addr, config = {}]) =>
    [...statuses.entries()]
      .filter(([, s]) => s.accounts?.includes(addr))
      .reverse()
      .slice(0, config.limit ?? 1000)
      .map(([signature, s]) => ({
        signature,
        slot: s.slot,
        err: s.err,
        memo: s.memos.length ? s.memos.map((m) => `[${Buffer.byteLength(m)}] ${m}`).join("; ") : null,
        blockTime: null,
        confirmationStatus: "finalized",
      })),
  getSignatureStatuses: ([signatures]) => ({
    context: { slot: Number(slot) },
    value: signatures.map((sig) => {
      const status = statuses.get(sig);
      return status
        ? { slot: status.slot, confirmations: null, err: status.err, confirmationStatus: "finalized", status: { Ok: null } }
        : null;
    }),
  }),
  // Test-only methods.
  testAddresses: () => ({ wallets, atas, mint }),
  testTokenBalance: ([owner]) => {
    const name = Object.keys(wallets).find((n) => wallets[n] === owner);
    const ata = name ? atas[name] : null;
    const amount = ata ? tokenBalance(ata) : null;
    return amount === null ? null : amount.toString();
  },
  testExpireBlockhash: () => {
    svm.expireBlockhash();
    return svm.latestBlockhash();
  },
  testSettledCount: () => statuses.size,
};

function answer(id, result, error) {
  return error
    ? { jsonrpc: "2.0", id, error: { code: error.code ?? -32603, message: error.message } }
    : { jsonrpc: "2.0", id, result };
}

function handle(call) {
  const method = methods[call?.method];
  if (!method) return answer(call?.id ?? null, null, new RpcError(-32601, "Method not found"));
  try {
    return answer(call.id, method(call.params ?? []));
  } catch (error) {
    return answer(call.id, null, error instanceof RpcError ? error : new RpcError(-32603, String(error?.message ?? error)));
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let body;
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      body = Array.isArray(parsed) ? parsed.map(handle) : handle(parsed);
    } catch {
      body = answer(null, null, new RpcError(-32700, "Parse error"));
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
});

server.listen(port, "127.0.0.1", () => {
  console.log(JSON.stringify({ ready: `http://127.0.0.1:${port}`, wallets, atas, mint }));
});
