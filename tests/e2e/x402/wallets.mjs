// Deterministic test wallets shared by the VM, the facilitator and the client (each derives the
// keypair with its own @solana/kit), so every address — and the worker's PAY_TO — is known in
// advance. Test-only keys: never fund them anywhere real.

/** 32-byte Ed25519 seed of a named test wallet. */
export function seedOf(name) {
  const index = { feePayer: 1, client: 2, merchant: 3, house: 4, client2: 5 }[name];
  if (!index) throw new Error("unknown test wallet");
  return new Uint8Array(32).fill(index);
}

/** Devnet CAIP-2 id and devnet USDC mint (the values @x402/svm 2.27.0 knows). */
export const NETWORK = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const USDC_MINT = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";

/** Default loopback ports of the stack (override with SVM_PORT / FACILITATOR_PORT). */
export const SVM_PORT = Number(process.env.SVM_PORT ?? 8899);
export const FACILITATOR_PORT = Number(process.env.FACILITATOR_PORT ?? 8790);
