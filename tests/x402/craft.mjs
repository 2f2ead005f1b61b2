// Hand-built payment transactions for attack tests, assembled with @solana/kit the way the official
// client assembles them (limit, price, TransferChecked, Memo; fee payer = the facilitator's, signed
// by the client only) but with one thing changed: an extra instruction, the fee payer as the
// transfer authority, a higher compute-unit price, … Returns a PAYMENT-SIGNATURE header value.
import {
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

const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";

/**
 * @param {object} o
 * @param {string} o.rpcUrl  the VM
 * @param {object} o.required  the decoded PAYMENT-REQUIRED (accepts[0] is used)
 * @param {string} o.idempotencyKey
 * @param {object} [o.change]  { extraInstruction, authorityIsFeePayer, cuPrice, amount, memo }
 */
export async function craftPaymentHeader({ rpcUrl, required, idempotencyKey, wallet = "client", change = {} }) {
  const accepted = required.accepts[0];
  const client = await createKeyPairSignerFromPrivateKeyBytes(seedOf(wallet));
  const feePayer = accepted.extra.feePayer;
  const authority = change.authorityIsFeePayer ? { address: feePayer } : client;
  const [source] = await findAssociatedTokenPda({ mint: accepted.asset, owner: authority.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ mint: accepted.asset, owner: accepted.payTo, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const transfer = getTransferCheckedInstruction({
    source,
    mint: accepted.asset,
    destination,
    authority: change.authorityIsFeePayer ? feePayer : client,
    amount: BigInt(change.amount ?? accepted.amount),
    decimals: 6,
  });
  const memo = { programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode(change.memo ?? accepted.extra.memo) };
  const instructions = [
    getSetComputeUnitLimitInstruction({ units: 20000 }),
    getSetComputeUnitPriceInstruction({ microLamports: change.cuPrice ?? 1 }),
    transfer,
    memo,
  ];
  if (change.extraInstruction) {
    instructions.push({ programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode("extra") });
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
