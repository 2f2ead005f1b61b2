// POST /mcp under real workerd, with MCP clients nobody here wrote: the TypeScript SDK's v1 client
// (a 2025-11-25 session over Streamable HTTP) and its v2 client pinned to the stateless 2026-07-28
// revision. Tools are the route table's ops with the OpenAPI document's request schemas; free tools
// answer as their HTTP routes do; an unpaid paid tool answers x402's payment-required tool result
// (with the MPP challenge where the op is sold over MPP too), whose bazaar declaration the x402
// SDK's own validators accept; refusals are closed and echo nothing. The paid runs with stock
// payment clients are tests/e2e/mcp/x402_python.test.mjs and mppx.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar';
import { startWorker, wallet } from '../lib/worker.mjs';
import { startFacilitator } from '../x402/facilitator.mjs';

const PORT = 18540;
const CANARY = 'zqxCANARYmcp7319';
let worker;
let facilitator; // the x402 suite's facilitator: challenges name its fee payer (nothing is paid here)
let openapi;

before(async () => {
  facilitator = await startFacilitator({ port: 18541, rpcUrl: 'http://127.0.0.1:18542', quiet: true });
  worker = await startWorker({ port: PORT, vars: { FREE_MIN_INTERVAL_MS: '0', FACILITATOR_URL: facilitator.url } });
  openapi = await (await fetch(worker.url + '/openapi.json')).json();
});
after(async () => { await worker?.stop(); await facilitator?.close(); });

async function session(headers = {}) {
  const client = new Client({ name: 'context-meter-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(worker.url + '/mcp'), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

const example = (path) => openapi.paths[path].post.requestBody.content['application/json'].example;
const schemaOf = (path) => openapi.paths[path].post.requestBody.content['application/json'].schema;

test('a 2025-11-25 session (TypeScript SDK v1): no session id, one tool per op, schemas are the OpenAPI ones', async () => {
  const { client, transport } = await session();
  assert.equal(transport.protocolVersion, '2025-11-25');
  assert.equal(transport.sessionId, undefined, 'stateless: no Mcp-Session-Id');
  assert.equal(client.getServerVersion().name, 'context-meter');
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ['token_efficiency_criteria', 'token_efficiency_precheck', 'token_efficiency_budget',
    'context_composition_criteria', 'context_composition_precheck', 'context_composition_audit',
    'context_budget_pack_contract', 'context_budget_pack_preflight', 'context_budget_pack',
    'token_opt_criteria', 'token_opt_levers', 'token_opt_toon']) {
    assert.ok(byName[name], name);
  }
  assert.equal(tools.length, 12, 'every op once, nothing else');
  for (const tool of tools) {
    const route = tool._meta['context-meter/route'];
    const access = tool._meta['context-meter/access'];
    if (openapi.paths[route].post) assert.deepEqual(tool.inputSchema, schemaOf(route), `${tool.name}: the OpenAPI schema`);
    else assert.equal(tool.inputSchema.type, 'object');
    if (access.kind === 'paid') {
      assert.equal(tool.outputSchema, undefined, `${tool.name}: no outputSchema on a paid tool`);
      assert.equal(access.usdc_units, openapi.paths[route].post['x-access'].usdc_units, tool.name);
      assert.ok(tool._meta['context-meter/rails'].includes('x402'), tool.name);
    }
  }
  assert.deepEqual(byName.context_budget_pack._meta['context-meter/rails'], ['x402', 'mpp']);
  await client.close();
});

test('free tools answer as their HTTP routes: the same signed report, the document, the free tier', async () => {
  const { client } = await session();
  const caller = wallet(40);
  const args = { payload: '{"a":[1,1,2]}', budget_tokens: 3, caller };
  const result = await client.callTool({ name: 'token_efficiency_precheck', arguments: args });
  assert.equal(result.isError, false);
  assert.equal(result._meta['context-meter/status'], 200);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, 'the text is the signed body');
  const http = await (await fetch(worker.url + '/token-efficiency/precheck', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...args, caller: wallet(41) }),
  })).json();
  assert.deepEqual(Object.keys(result.structuredContent).sort(), Object.keys(http).sort());
  assert.equal(result.structuredContent.signature.key_id, http.signature.key_id);

  const doc = await client.callTool({ name: 'token_opt_criteria', arguments: {} });
  assert.equal(doc.isError, false);
  assert.deepEqual(doc.structuredContent, await (await fetch(worker.url + '/token-opt/criteria')).json());

  // The pack's preflight signs in a header over HTTP; over MCP the signature rides in _meta.
  const preflight = await client.callTool({ name: 'context_budget_pack_preflight', arguments: example('/context-budget-pack/preflight') });
  assert.equal(preflight.isError, true, 'no caller: the free tier refuses');
  assert.equal(preflight.structuredContent.code, 'caller_missing');
  await client.close();
  const withCaller = await session({ 'X-Caller': wallet(42) });
  const signed = await withCaller.client.callTool({ name: 'context_budget_pack_preflight', arguments: example('/context-budget-pack/preflight') });
  assert.equal(signed.isError, false);
  assert.equal(signed._meta['context-meter/report-signature'].alg, 'Ed25519');
  await withCaller.client.close();
});

test('a paid tool called unpaid answers x402 payment required (MCP binding) with an MCP bazaar declaration', async () => {
  const { client } = await session();
  const result = await client.callTool({ name: 'token_efficiency_budget', arguments: example('/token-efficiency/budget') });
  assert.equal(result.isError, true);
  const required = result.structuredContent;
  assert.equal(required.x402Version, 2);
  assert.ok(required.accepts.length >= 1);
  assert.ok(required.resource.url.endsWith('/token-efficiency/budget'), 'the same resource as over HTTP');
  assert.deepEqual(JSON.parse(result.content[0].text), required, 'content[0] is the same PaymentRequired');
  const bazaar = required.extensions.bazaar;
  assert.equal(bazaar.info.input.type, 'mcp');
  assert.equal(bazaar.info.input.toolName, 'token_efficiency_budget');
  assert.deepEqual(bazaar.info.input.inputSchema.required, schemaOf('/token-efficiency/budget').required);
  assert.equal(validateDiscoveryExtension(bazaar).valid, true, JSON.stringify(validateDiscoveryExtension(bazaar)));
  assert.equal(validateDiscoveryExtensionSpec(bazaar).valid, true, JSON.stringify(validateDiscoveryExtensionSpec(bazaar)));

  // The pack, bound by its key (here in _meta), offers both rails where each client reads them.
  const key = 'mcp-e2e-pack-key-0001';
  const pack = await client.callTool({ name: 'context_budget_pack', arguments: example('/v1/x402/context-budget-pack'),
    _meta: { 'context-meter/idempotency-key': key } });
  assert.equal(pack.isError, true);
  assert.equal(pack.structuredContent.x402Version, 2);
  assert.equal(pack.structuredContent.extensions['payment-identifier'].info.required, true);
  const mpp = pack._meta['org.paymentauth/payment-required'];
  if (mpp) { // MPP is offered when the rail is configured (the paid run is mppx.test.mjs)
    assert.equal(mpp.challenges[0].method, 'tempo');
    assert.equal(typeof mpp.challenges[0].request, 'object');
  }
  // Without a key the pack is refused free, as over HTTP.
  const keyless = await client.callTool({ name: 'context_budget_pack', arguments: example('/v1/x402/context-budget-pack') });
  assert.equal(keyless.isError, true);
  assert.equal(keyless.structuredContent.x402Version, undefined, 'no challenge without the key');
  await client.close();
});

test('refusals are closed: a malformed argument is refused free, an unknown tool is -32602, nothing is echoed', async () => {
  const { client } = await session();
  const bad = await client.callTool({ name: 'token_efficiency_budget', arguments: { payload: CANARY, budget_tokens: -1 } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.x402Version, undefined, 'refused before any payment is asked for');
  assert.ok(!JSON.stringify(bad).includes(CANARY));
  await assert.rejects(client.callTool({ name: CANARY, arguments: {} }), (e) => e.code === -32602 && !String(e.message).includes(CANARY));
  await client.close();
  assert.ok(!worker.logs().includes(CANARY), 'the worker printed nothing of it');
});

test('a 2026-07-28 client (TypeScript SDK v2, pinned): server/discover, a cacheable tools/list, a free call', async () => {
  const client = new ModernClient({ name: 'context-meter-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(worker.url + '/mcp')));
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const { tools } = await client.listTools();
  assert.equal(tools.length, 12);
  const result = await client.callTool({ name: 'token_efficiency_precheck', arguments: { payload: 'a b c', budget_tokens: 9, caller: wallet(43) } });
  assert.equal(result.isError, false);
  assert.ok(result.structuredContent.signature);
  await client.close();
});

test('the transport: GET 405, foreign Origin 403, batch 400, notification 202, 2026 headers checked against the body', async () => {
  const post = (body, headers = {}) => fetch(worker.url + '/mcp', {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const get = await fetch(worker.url + '/mcp');
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  const foreign = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403);
  const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  assert.equal(batch.status, 400);
  assert.equal((await batch.json()).error.code, -32600);
  const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(note.status, 202);
  assert.equal(await note.text(), '');
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const call = { jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'token_opt_criteria', arguments: {}, _meta: meta } };
  const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
  const ok = await post(call, { ...modern, 'mcp-name': 'token_opt_criteria' });
  assert.equal(ok.status, 200);
  const answered = await ok.json();
  assert.equal(answered.id, 'c1');
  assert.equal(answered.result.resultType, 'complete');
  const mismatch = await post(call, { ...modern, 'mcp-name': 'token_opt_levers' });
  assert.equal(mismatch.status, 400);
  assert.equal((await mismatch.json()).error.code, -32020);
  const old = await post({ ...call, params: { ...call.params, _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '1999-01-01' } } },
    { ...modern, 'mcp-protocol-version': '1999-01-01', 'mcp-name': 'token_opt_criteria' });
  assert.equal(old.status, 400);
  assert.equal((await old.json()).error.code, -32022);
  const unknown = await post({ jsonrpc: '2.0', id: 2, method: 'resources/list', params: { _meta: meta } }, { ...modern, 'mcp-method': 'resources/list' });
  assert.equal(unknown.status, 404);
  // Discovery names the endpoint.
  const index = await (await fetch(worker.url + '/')).json();
  assert.equal(index.links.mcp, '/mcp');
  assert.ok((await (await fetch(worker.url + '/llms.txt')).text()).includes('/mcp'));
  assert.ok(openapi.paths['/mcp'].post);
  assert.ok((await (await fetch(worker.url + '/.well-known/x402')).json()).mcp.endsWith('/mcp'));
});
