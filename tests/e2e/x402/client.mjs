// The official x402 client (@x402/fetch wrapFetchWithPayment + @x402/svm ExactSvmScheme with an
// explicit rpcUrl), usable as a library from node:test. The payment-identifier extension id is set
// to the request's Idempotency-Key (the worker requires them equal) with @x402/extensions'
// appendPaymentIdentifierToExtensions.
//
//   const pay = await payingFetch({ rpcUrl, wallet: "client" });
//   const res = await pay(url, { method: "POST", headers: { "Idempotency-Key": key }, body });
//
// createPaymentHeader() builds a PAYMENT-SIGNATURE value from a PAYMENT-REQUIRED value without
// sending anything (attack tests tamper with it; fixtures are captured with it).
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { encodePaymentSignatureHeader, decodePaymentRequiredHeader } from "@x402/core/http";
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import { appendPaymentIdentifierToExtensions, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { seedOf, NETWORK, SVM_PORT } from "./wallets.mjs";

async function clientFor({ rpcUrl = `http://127.0.0.1:${SVM_PORT}`, wallet = "client", idempotencyKey }) {
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seedOf(wallet));
  const client = new x402Client().register(NETWORK, new ExactSvmScheme(signer, { rpcUrl }));
  // The payment-identifier id is set by the extension's own client helper, as its docs show: in a
  // before-payment-creation hook, on the challenge's extensions the payload is built from.
  if (idempotencyKey) {
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      if (paymentRequired.extensions?.[PAYMENT_IDENTIFIER]) appendPaymentIdentifierToExtensions(paymentRequired.extensions, idempotencyKey);
    });
  }
  return { client, address: signer.address };
}

function headerValue(headers, name) {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return found ? headers[found] : undefined;
}

/** A fetch that pays 402s with the named test wallet. */
export async function payingFetch({ rpcUrl, wallet = "client", fetchImpl = fetch } = {}) {
  return async (input, init = {}) => {
    const idempotencyKey = headerValue(init.headers, "Idempotency-Key");
    const { client } = await clientFor({ rpcUrl, wallet, idempotencyKey });
    return wrapFetchWithPayment(fetchImpl, client)(input, init);
  };
}

/** PAYMENT-SIGNATURE header value for a PAYMENT-REQUIRED header value. */
export async function createPaymentHeader(paymentRequiredHeader, { rpcUrl, wallet = "client", idempotencyKey } = {}) {
  const { client } = await clientFor({ rpcUrl, wallet, idempotencyKey });
  const payload = await client.createPaymentPayload(decodePaymentRequiredHeader(paymentRequiredHeader));
  return { header: encodePaymentSignatureHeader(payload), payload };
}

export { NETWORK };
