// Writes the known-key CDP JWT vector the Rust unit test (engine::payment::cdp_jwt) must equal,
// built independently with node:crypto: seed 0x01..0x20 (a test key, never a credential),
// key id "test-key", POST 127.0.0.1:18103/verify, now 1700000000, header nonce 16 × 0xab.
//   node tests/e2e/x402/cdp-jwt-vector.mjs > src/engine/payment/cdp_jwt.vector.txt
import { createPrivateKey, sign } from "node:crypto";

export function cdpJwt({ seed, keyId, method, host, path, now, nonceHex }) {
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const key = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
  const header = { alg: "EdDSA", kid: keyId, typ: "JWT", nonce: nonceHex };
  const claims = { sub: keyId, iss: "cdp", aud: ["cdp_service"], uris: [`${method} ${host}${path}`], iat: now, nbf: now, exp: now + 120 };
  const input = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString("base64url")}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seed = Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1));
  process.stdout.write(cdpJwt({ seed, keyId: "test-key", method: "POST", host: "127.0.0.1:18103", path: "/verify", now: 1700000000, nonceHex: "ab".repeat(16) }) + "\n");
}
