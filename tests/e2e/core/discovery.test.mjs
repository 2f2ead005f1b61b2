// Discovery and the quickstart, against real workerd (wrangler dev) with the local x402 stack
// (Solana VM + official facilitator), ports 18400-18402:
// - GET /openapi.json is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator) whose
//   x-access equals what GET / states for every route;
// - every paid route's 402 declares the bazaar extension, valid under @x402/extensions' own
//   validators, and the facilitator receives it with the payment (its official extraction lists
//   the route);
// - every Solana example (examples/solana/*.mjs) runs green against this stack (the README's
//   quickstart; examples/evm/ runs in tests/e2e/x402/evm.test.mjs, against the EVM stack).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar';
import { startWorker, ROOT } from '../lib/worker.mjs';
import { checkedFetch, validatedBodies } from '../lib/schema.mjs';
import { startSvm } from '../x402/stack.mjs';
import { startFacilitator } from '../x402/facilitator.mjs';
import { seedOf } from '../x402/wallets.mjs';

const fetch = checkedFetch;
const PORTS = { worker: 18400, svm: 18401, facilitator: 18402 };
let w, svm, facilitator, scratch;

before(async () => {
  svm = await startSvm({ port: PORTS.svm });
  facilitator = await startFacilitator({ port: PORTS.facilitator, rpcUrl: svm.url, quiet: true });
  w = await startWorker({
    port: PORTS.worker,
    logLevel: 'warn',
    vars: { FACILITATOR_URL: facilitator.url, SOLANA_RPC_URL: svm.url },
  });
  scratch = mkdtempSync(join(tmpdir(), 'cm-examples-'));
});

after(async () => {
  await w?.stop();
  await facilitator?.close();
  await svm?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const paidRoutes = async () => {
  const index = await (await fetch(w.url + '/')).json();
  return index.families.flatMap((f) => f.routes).filter((r) => r.access.kind === 'paid');
};

test('GET /openapi.json is a valid OpenAPI 3.1 document, and x-access is what GET / states', async () => {
  const doc = await (await fetch(w.url + '/openapi.json')).json();
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 2000));
  assert.equal(validator.version, '3.1');
  const index = await (await fetch(w.url + '/')).json();
  let routes = 0;
  for (const route of index.families.flatMap((f) => f.routes)) {
    assert.deepEqual(doc.paths[route.path][route.method.toLowerCase()]['x-access'], route.access, route.path);
    routes += 1;
  }
  assert.ok(routes >= 8);
  const pack = doc.paths['/v1/x402/context-budget-pack'].post;
  assert.ok(pack.responses['200'].headers['Report-Signature']);
  assert.equal(pack.responses['200'].content['application/json'].schema.properties.signature, undefined);
  assert.equal(pack['x-payment-info'].price.currency, 'USD');
  assert.deepEqual(pack['x-payment-info'].protocols, [{ x402: {} }]);
});

test('every paid 402 declares the bazaar extension, valid under @x402/extensions', async () => {
  const routes = await paidRoutes();
  assert.ok(routes.length >= 5);
  for (const route of routes) {
    const r = await fetch(w.url + route.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Idempotency-Key': 'discovery-0123456789' },
      body: '{}',
    });
    // `{}` may be refused free first (400); ask with the declared example body then.
    let challenge = r;
    if (r.status !== 402) {
      const doc = await (await fetch(w.url + '/openapi.json')).json();
      const example = doc.paths[route.path].post.requestBody.content['application/json'].example;
      challenge = await fetch(w.url + route.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': 'discovery-0123456789' },
        body: JSON.stringify(example),
      });
    }
    assert.equal(challenge.status, 402, route.path);
    if (route.path.startsWith('/v1/mpp/')) {
      // The pack's MPP rail challenges in its own scheme (WWW-Authenticate: Payment), not x402.
      assert.match(challenge.headers.get('www-authenticate') ?? '', /^Payment /, route.path);
      assert.equal(challenge.headers.get('payment-required'), null, route.path);
      continue;
    }
    const body = await challenge.json();
    assert.equal(body.code, 'payment_required');
    assert.equal(body.price_units, route.access.usdc_units);
    const required = JSON.parse(Buffer.from(challenge.headers.get('payment-required'), 'base64').toString('utf8'));
    assert.equal(required.resource.url, w.url + route.path);
    const bazaar = required.extensions.bazaar;
    assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true }, route.path);
    assert.equal(validateDiscoveryExtensionSpec(bazaar).valid, true, route.path);
    assert.equal(bazaar.info.input.method, 'POST');
    assert.equal(bazaar.info.input.bodyType, 'json');
    // The pack's contract requires the payment identifier; the criteria routes take it when sent
    // (a stock client with no hook pays them; ARCHITECTURE §4).
    const pack = route.path === '/v1/x402/context-budget-pack';
    assert.equal(required.extensions['payment-identifier'].info.required, pack, route.path);
  }
  // The fan-out document indexers read lists exactly these routes, as absolute URLs, and names the
  // MCP endpoint selling the same ops as tools.
  const wellKnown = await (await fetch(w.url + '/.well-known/x402')).json();
  assert.deepEqual(wellKnown, { version: 1, resources: routes.map((r) => w.url + r.path), mcp: w.url + '/mcp' });
});

/** A Solana CLI keypair file (64 bytes: seed, public key) for the funded test wallet "client". */
function keypairFile() {
  const seed = Buffer.from(seedOf('client'));
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const publicKey = Buffer.from(createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }))
    .export({ format: 'jwk' }).x, 'base64url');
  const path = join(scratch, 'payer.json');
  writeFileSync(path, JSON.stringify([...seed, ...publicKey]));
  return path;
}

test('every Solana example runs green against the local stack, and the facilitator lists what was paid', async () => {
  // This stack is Solana only: the other rails' folders run against their own stacks (examples/README.md).
  const examples = readdirSync(join(ROOT, 'examples', 'solana'))
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => join('examples', 'solana', f));
  assert.ok(examples.includes(join('examples', 'solana', 'pay-and-verify.mjs')), examples.join(','));
  const env = { ...process.env, CM_URL: w.url, SOLANA_RPC_URL: svm.url, PAYER_KEYPAIR: keypairFile() };
  for (const example of examples) {
    // Asynchronously: the facilitator runs in this process and must keep answering meanwhile.
    const run = await promisify(execFile)(process.execPath, [example], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 })
      .catch((e) => assert.fail(`${example} failed (${e.code ?? e.signal}):\n${e.stdout}\n${e.stderr}`));
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.length >= 1, example);
    for (const line of lines) {
      assert.equal(line.status, 200, JSON.stringify(line));
      assert.equal(line.verified, true, JSON.stringify(line));
      assert.ok(typeof line.transaction === 'string' && line.transaction.length > 0, JSON.stringify(line));
      assert.match(line.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/, JSON.stringify(line));
    }
  }
  // The worker forwarded our resource and bazaar declaration with each payment: the official
  // extraction a cataloguing facilitator runs finds, validates and lists each paid route.
  const listed = facilitator.discovered.filter((d) => d.at === '/settle').map((d) => d.info);
  assert.ok(listed.length >= 2);
  for (const info of listed) {
    assert.ok(info, 'a /settle payload without a valid bazaar declaration');
    assert.equal(info.method, 'POST');
    assert.ok(info.resourceUrl.startsWith(w.url + '/'), info.resourceUrl);
    assert.equal(info.serviceName, 'context-meter');
  }
  assert.ok(listed.some((i) => i.resourceUrl === w.url + '/token-efficiency/budget'));
  assert.ok(listed.some((i) => i.resourceUrl === w.url + '/v1/x402/context-budget-pack'));
  assert.ok(validatedBodies() > 0);
});
