// Hand-built payment transactions for attack and wallet-layout tests, assembled with @solana/kit the
// way the official client assembles them (limit, price, TransferChecked, Memo; fee payer = the
// facilitator's, signed by the client only) but with one thing changed: an instruction of a program
// the scheme does not name, the fee payer as the transfer authority, a higher compute-unit price, a
// wallet's Lighthouse assertions around the memo, a Token-2022 transfer, … Returns a
// PAYMENT-SIGNATURE header value.
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { seedOf } from "./wallets.mjs";
import { toBase64Json } from "./stack.mjs";

export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
export const LIGHTHOUSE_PROGRAM = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const SYSTEM_PROGRAM = "11111111111111111111111111111111";

/**
 * A Lighthouse instruction as Phantom and Solflare inject them (one, or two), placed by `tail`. Its
 * only account is the client (a signer) and its data UTF-8, so that the local VM's stand-in for the
 * Lighthouse program (tests/e2e/x402/svm/server.mjs) accepts it; the worker checks the program only.
 */
function lighthouseInstruction(client, n) {
  return {
    programAddress: LIGHTHOUSE_PROGRAM,
    accounts: [{ address: client.address, role: AccountRole.READONLY_SIGNER, signer: client }],
    data: new TextEncoder().encode(`lighthouse assertion ${n}`),
  };
}

const memoInstruction = (text) => ({ programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode(text) });

/**
 * @param {object} o
 * @param {string} o.rpcUrl  the VM
 * @param {object} o.required  the decoded PAYMENT-REQUIRED (accepts[0] is used)
 * @param {string} o.idempotencyKey
 * @param {object} [o.change]  { extraInstruction, authorityIsFeePayer, cuPrice, amount, memo, tail,
 *   lighthouseBeforeTransfer, token2022 }
 *   extraInstruction: appends an instruction of the System Program (a program the scheme does not name);
 *   tail: what follows the transfer, each "memo" (ours, or change.memo), "lighthouse" or
 *   { memo: "text" } (default ["memo"]: the official client's layout);
 *   lighthouseBeforeTransfer: one Lighthouse instruction between the compute budget and the transfer;
 *   token2022: the TransferChecked under Token-2022, between the Token-2022 associated accounts.
 */
export async function craftPaymentHeader({ rpcUrl, required, idempotencyKey, wallet = "client", change = {} }) {
  const accepted = required.accepts[0];
  const client = await createKeyPairSignerFromPrivateKeyBytes(seedOf(wallet));
  const feePayer = accepted.extra.feePayer;
  const authority = change.authorityIsFeePayer ? { address: feePayer } : client;
  const tokenProgram = change.token2022 ? TOKEN_2022_PROGRAM : TOKEN_PROGRAM_ADDRESS;
  const [source] = await findAssociatedTokenPda({ mint: accepted.asset, owner: authority.address, tokenProgram });
  const [destination] = await findAssociatedTokenPda({ mint: accepted.asset, owner: accepted.payTo, tokenProgram });
  const transfer = getTransferCheckedInstruction(
    {
      source,
      mint: accepted.asset,
      destination,
      authority: change.authorityIsFeePayer ? feePayer : client,
      amount: BigInt(change.amount ?? accepted.amount),
      decimals: 6,
    },
    { programAddress: tokenProgram },
  );
  let lighthouses = 0;
  const tail = (change.tail ?? ["memo"]).map((item) => {
    if (item === "memo") return memoInstruction(change.memo ?? accepted.extra.memo);
    if (item === "lighthouse") return lighthouseInstruction(client, ++lighthouses);
    return memoInstruction(item.memo);
  });
  const instructions = [
    getSetComputeUnitLimitInstruction({ units: 20000 }),
    getSetComputeUnitPriceInstruction({ microLamports: change.cuPrice ?? 1 }),
    ...(change.lighthouseBeforeTransfer ? [lighthouseInstruction(client, ++lighthouses)] : []),
    transfer,
    ...tail,
  ];
  if (change.extraInstruction) {
    instructions.push({ programAddress: SYSTEM_PROGRAM, accounts: [], data: new TextEncoder().encode("extra") });
  }
  const { value: blockhash } = await createSolanaRpc(rpcUrl).getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
  );
  const signed = await partiallySignTransactionMessageWithSigners(message);
  const payload = {
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: { transaction: getBase64EncodedWireTransaction(signed) },
    extensions: { "payment-identifier": { ...required.extensions["payment-identifier"], info: { required: true, id: idempotencyKey } } },
  };
  return toBase64Json(payload);
}
