// The EVM scheme of the test facilitator: @x402/evm's ExactEvmScheme (facilitator side) over a viem
// wallet client extended with public actions, as @x402/evm's README builds it. Registered beside
// the Solana scheme by tests/e2e/x402/facilitator.mjs when it is started with `evm`.
import { createWalletClient, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { chainOf } from "./chain.mjs";

/** @param {{ rpcUrl: string, privateKey: `0x${string}` }} o */
export function evmFacilitatorScheme({ rpcUrl, privateKey }) {
  const account = privateKeyToAccount(privateKey);
  const client = createWalletClient({
    account,
    chain: chainOf(rpcUrl),
    transport: http(rpcUrl),
  }).extend(publicActions);
  // The signer needs the client's actions plus its own address (a wallet client keeps it on `account`).
  return new ExactEvmScheme(toFacilitatorEvmSigner({ ...client, address: account.address }, { confirmationTimeoutMs: 30_000 }));
}
