#!/usr/bin/env node
// Offline verifier for context-meter's signed reports, and the JCS (RFC 8785) canonicaliser it needs.
//
//   node corpus/verify.mjs report.json --key <base64 public key>
//   node corpus/verify.mjs report.json --url http://127.0.0.1:8787     (fetches the key from GET /)
//   ... --detached <Report-Signature header value>   (context-budget-pack: the body is byte-exact to its
//                                                      contract, so the signature travels in a header)
//
// A report verifies when `signature.sig` is an Ed25519 signature, by the key whose id is
// `signature.key_id` (first 16 hex of sha256(public key)), over the JCS bytes of the report
// without its `signature` member. Exit code 0 = valid, 1 = invalid, 2 = usage.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** RFC 8785 canonical JSON of a parsed value (JS semantics: UTF-16 key order, ES number format). */
export function jcs(value) {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return '[' + value.map(jcs).join(',') + ']';
  const keys = Object.keys(value).sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + jcs(value[k])).join(',') + '}';
}

export function keyId(publicKeyB64) {
  return createHash('sha256').update(Buffer.from(publicKeyB64, 'base64')).digest('hex').slice(0, 16);
}

/** Returns null when `report` verifies under `publicKeyB64`, else a short reason. A detached
 * signature (the `Report-Signature` header value) may be given instead of a `signature` member. */
export function verifyReport(report, publicKeyB64, detached) {
  if (!report || typeof report !== 'object' || Array.isArray(report)) return 'not an object';
  if (detached) report = { ...report, signature: JSON.parse(Buffer.from(detached, 'base64').toString('utf8')) };
  const sig = report.signature;
  if (!sig || sig.alg !== 'Ed25519') return 'no Ed25519 signature';
  if (sig.key_id !== keyId(publicKeyB64)) return 'key_id does not match the key';
  const { signature, ...unsigned } = report;
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyB64, 'base64').toString('base64url') },
    format: 'jwk',
  });
  const ok = verify(null, Buffer.from(jcs(unsigned), 'utf8'), key, Buffer.from(sig.sig, 'base64'));
  return ok ? null : 'signature mismatch';
}

async function main(argv) {
  const file = argv[0];
  const flag = argv[1];
  const arg = argv[2];
  const detached = argv[3] === '--detached' ? argv[4] : undefined;
  if (!file || !['--key', '--url'].includes(flag) || !arg) {
    console.error('usage: node corpus/verify.mjs REPORT.json (--key BASE64 | --url URL) [--detached SIGNATURE]');
    return 2;
  }
  let key = arg;
  if (flag === '--url') key = (await (await fetch(new URL('/', arg))).json()).signing.public_key;
  const reason = verifyReport(JSON.parse(readFileSync(file, 'utf8')), key, detached);
  console.log(reason === null ? `valid (key_id ${keyId(key)})` : `INVALID: ${reason}`);
  return reason === null ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
