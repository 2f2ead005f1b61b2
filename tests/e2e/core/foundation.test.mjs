// Foundation end to end against real workerd: the index, OpenAPI agreement with the router, the
// static 404, Content-Type and byte-cap refusals, migrations applied.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, d1 } from '../lib/worker.mjs';
import { keyId } from '../../../corpus/verify.mjs';

let w;
before(async () => { w = await startWorker({ port: 8811 }); });
after(async () => { await w?.stop(); });

const CAP = 262144;

test('index lists the families, ops, prices and the signing key', async () => {
  const r = await fetch(w.url + '/');
  assert.equal(r.status, 200);
  const index = await r.json();
  assert.equal(index.service, 'context-meter');
  assert.deepEqual(index.families.map((f) => f.family),
    ['token-efficiency', 'context-composition', 'context-budget-pack', 'token-opt']);
  const budget = index.families[0].routes.find((x) => x.path === '/token-efficiency/budget');
  assert.deepEqual([budget.access.usdc_units, budget.access.label], [20000, '$0.02']);
  assert.equal(Buffer.from(index.signing.public_key, 'base64').length, 32);
  assert.equal(index.signing.key_id, keyId(index.signing.public_key));
  assert.equal(index.links.openapi, '/openapi.json');
});

test('/llms.txt is Markdown for agents with every route of the index at the price the index states', async () => {
  const index = await (await fetch(w.url + '/')).json();
  const r = await fetch(w.url + index.links.llms_txt);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/markdown/);
  const text = await r.text();
  assert.match(text, /^# context-meter\n\n> /);
  for (const family of index.families) {
    for (const route of family.routes) {
      const line = text.split('\n').find((l) => l.includes(`](${route.path}):`));
      assert.ok(line, route.path);
      if (route.access.kind === 'paid') assert.ok(line.includes(`${route.access.label} (${route.access.usdc_units} USDC base units)`), line);
      if (route.access.kind === 'free-tier') assert.ok(line.includes(`${route.access.per_day} a UTC day`), line);
    }
  }
  assert.ok(text.includes(index.signing.key_id));
});

test('every OpenAPI operation is routed; nothing else is', async () => {
  const doc = await (await fetch(w.url + '/openapi.json')).json();
  assert.equal(doc.openapi, '3.1.0');
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of Object.keys(ops)) {
      // POST with the wrong Content-Type must be refused by the route (415), never 404.
      const r = await fetch(w.url + path, { method: method.toUpperCase(), headers: { 'content-type': 'text/plain' }, body: method === 'post' ? 'x' : undefined });
      assert.notEqual(r.status, 404, `${method} ${path}`);
      await r.arrayBuffer();
    }
  }
});

test('unknown paths and methods answer the static NOT COVERED', async () => {
  for (const [method, path] of [['GET', '/nope'], ['PUT', '/'], ['DELETE', '/token-efficiency/budget'],
    ['POST', '/token-efficiency/catalogue'], ['POST', '/token-efficiency/audit'], ['GET', '/token-efficiency/budget'],
    ['GET', '/v1/mpp/context-budget-pack'], ['GET', '/token-efficiency/criteria/']]) {
    const r = await fetch(w.url + path, { method });
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.equal(await r.text(), 'NOT COVERED');
  }
});

test('a POST body must be application/json', async () => {
  const r = await fetch(w.url + '/token-efficiency/precheck', { method: 'POST', body: '{}' , headers: { 'content-type': 'text/plain' } });
  assert.equal(r.status, 415);
  const body = await r.json();
  assert.equal(body.code, 'unsupported_media_type');
});

test('body cap: cap + 1 byte is 413 naming the cap, exactly the cap is read', async () => {
  const over = await fetch(w.url + '/token-efficiency/precheck', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(CAP + 1),
  });
  assert.equal(over.status, 413);
  const refusal = await over.json();
  assert.equal(refusal.code, 'CAP-EXCEEDED:body_bytes');
  assert.equal(refusal.cap_bytes, CAP);
  assert.equal(typeof refusal.message, 'string');
  const at = await fetch(w.url + '/token-efficiency/precheck', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: ' '.repeat(CAP),
  });
  assert.notEqual(at.status, 413);
  await at.arrayBuffer();
});

test('metrics are Prometheus text with counts only', async () => {
  const text = await (await fetch(w.url + '/metrics')).text();
  assert.match(text, /# TYPE cm_requests_total counter/);
  assert.match(text, /cm_requests_total\{family="service",route="\/",outcome="ok"\} \d+/);
});

test('D1 migrations are applied', () => {
  const tables = d1(w.persist, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").map((r) => r.name);
  assert.ok(tables.includes('free_use'), tables.join(','));
});
