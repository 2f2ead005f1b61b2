// Retention canary and closed-form errors, end to end under real workerd (wrangler dev, debug logs).
//
// A unique canary (and its base64, hex and sha256-hex forms, each a canary of its own) is sent in
// every field of every route: free checks (valid, invalid, over the cap, could-not-measure), paid
// routes (unpaid → 402, malformed with a payment header, one real payment by the official x402 client
// per paid route with the canary inside the payload, its replay → 409), request headers (a
// canary-derived Idempotency-Key, an invalid X-Caller, unknown headers) and URL query strings. Then
// every canary form (ASCII and UTF-16LE) is searched for in every file of the worker's persistence
// directory (local D1 sqlite files with their -wal/-shm, Durable Object state), in everything
// wrangler dev printed at debug level, in GET /metrics, and in every response body and header
// received — except the fenced paid output returned to the payer (token-efficiency shaped payload
// and receipt, the budget-pack result, token-opt outputs). The errors test drives every refusal
// code reachable per family with bodies carrying the canary and holds each error body to
// {code, message, <numbers>, payment?}.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startWorker, wallet } from '../lib/worker.mjs';
import { startSvm, rpc } from '../x402/stack.mjs';
import { startFacilitator } from '../x402/facilitator.mjs';
import { createPaymentHeader } from '../x402/client.mjs';
import { craftPaymentHeader } from '../x402/craft.mjs';
import { SVM_PORT, FACILITATOR_PORT } from '../x402/wallets.mjs';

const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const CANARY = 'cnry' + randomBytes(8).toString('hex');
const FORMS = {
  ascii: CANARY,
  base64: Buffer.from(CANARY).toString('base64').replace(/=+$/, ''),
  hex: Buffer.from(CANARY).toString('hex'),
  sha256: sha256(CANARY),
};
// Each form is also submitted alone somewhere, so a hash of a submitted value would show as well.
for (const [name, v] of Object.entries({ ...FORMS })) if (name !== 'sha256') FORMS[`sha256(${name})`] = sha256(v);
const K = FORMS.ascii;
const KB = FORMS.base64;
const KH = FORMS.hex;
const KS = FORMS.sha256;
const ALL = `${K} ${KB} ${KH} ${KS}`;

let keyCounter = 0;
/** A valid Idempotency-Key derived from the canary (the canary itself is not in it). */
const keyOf = () => 'ck' + sha256(`${CANARY}:key:${keyCounter++}`).slice(0, 30);
let walletCounter = 100;
const freshWallet = () => wallet(walletCounter++);

let w;
let svm;
let facilitator;
/** Every response received: { what, status, headers, body, fenced }. */
const seen = [];

before(async () => {
  svm = await startSvm({ port: SVM_PORT });
  facilitator = await startFacilitator({ port: FACILITATOR_PORT, rpcUrl: svm.url, quiet: true });
  // One free call per wallet per day, no spacing: every free check uses a fresh wallet, and the
  // second call from one wallet reaches free_tier_exhausted.
  w = await startWorker({ port: 8871, vars: { FREE_PER_DAY: '1', FREE_MIN_INTERVAL_MS: '0' } });
});
after(async () => { await w?.stop(); await facilitator?.close(); await svm?.stop(); });

// Unknown headers carrying every form ride on every request.
const CANARY_HEADERS = {
  'x-cnry': ALL,
  'user-agent': `cm-retention ${K}`,
  'x-forwarded-for-note': KB,
  cookie: `s=${KH}; t=${KS}`,
  referer: `http://example.invalid/${K}`,
};

async function call(what, path, { method = 'POST', body, headers = {}, fenced = false, contentType = 'application/json' } = {}) {
  const init = { method, headers: { ...CANARY_HEADERS, ...(contentType ? { 'content-type': contentType } : {}), ...headers } };
  if (body !== undefined) init.body = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  let res;
  for (let attempt = 0; ; attempt++) {
    try {
      res = await fetch(w.url + path, init);
      break;
    } catch (e) {
      // An over-cap body refused before it was read can reset the connection mid-upload.
      if (attempt >= 2) {
        const entry = { what, status: 0, headers: '', body: '', fenced, error: String(e) };
        seen.push(entry);
        return entry;
      }
    }
  }
  const text = await res.text();
  const headerLines = [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
  const entry = { what, status: res.status, headers: headerLines, body: text, fenced, raw: res.headers };
  seen.push(entry);
  return entry;
}

const json = (e) => { try { return JSON.parse(e.body); } catch { return undefined; } };

/** Where each canary form occurs in `text` (a string) — [] when clean. */
function hitsIn(text) {
  return Object.entries(FORMS).filter(([, v]) => text.includes(v)).map(([name]) => name);
}

/** Canary forms in a byte buffer, ASCII and UTF-16LE. */
function hitsInBytes(buf) {
  const hits = [];
  for (const [name, v] of Object.entries(FORMS)) {
    if (buf.indexOf(Buffer.from(v, 'latin1')) >= 0) hits.push(`${name} (ascii)`);
    if (buf.indexOf(Buffer.from(v, 'utf16le')) >= 0) hits.push(`${name} (utf-16le)`);
    if (buf.indexOf(Buffer.from(v, 'utf16le').swap16()) >= 0) hits.push(`${name} (utf-16be)`);
  }
  return hits;
}

function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push(p);
  }
  return out;
}

// ---------------------------------------------------------------- request bodies with the canary

const TE_PAYLOAD = JSON.stringify({ [K]: ALL, items: [K, K, KB, KB, KH], note: KS, nested: { [KB]: [KH, KS] } });
const teValid = (extra = {}) => ({ payload: TE_PAYLOAD, budget_tokens: 12, keep_fields: [K, `nested.${KB}`], reserve_tokens: 1, ...extra });

const ENVELOPE = 'context-composition-envelope/1';
const ccValid = (extra = {}) => ({
  envelope_version: ENVELOPE,
  declared_format_id: 'generic-message-list',
  declared_format_version: K,
  criteria_ack: KB,
  record: {
    messages: [
      { role: 'system', text: `system ${ALL}` },
      { role: 'user', text: `${K} question ${KH}`, kind: K },
      { role: K, text: KS },
      { role: 'assistant', text: `answer ${KB}`, kind: 'tool_call', has_args: true },
      { role: 'tool', text: JSON.stringify({ [K]: KB }), kind: 'tool_result' },
    ],
    [KH]: K,
  },
  harness_stated_counts: { total: 50 },
  [K]: ALL,
  ...extra,
});
// Could-not-measure: zero entries, still with the canary in every other member.
const ccNothing = (extra = {}) => ({
  envelope_version: ENVELOPE,
  declared_format_id: 'generic-message-list',
  declared_format_version: K,
  criteria_ack: KB,
  record: { messages: [], [KH]: KS },
  [K]: ALL,
  ...extra,
});

const PACK_TEXT = `Approval ${K} is required. ${KB} timing ${KH} ${KS}`;
const packValid = () => ({
  sources: [{ id: K.slice(0, 40), text: PACK_TEXT }],
  candidates: [
    { id: KH.slice(0, 40), sourceId: K.slice(0, 40), start: 0, end: PACK_TEXT.length, costUnits: 6, required: true },
    { id: KB.slice(0, 40), sourceId: K.slice(0, 40), start: 9, end: 9 + K.length, costUnits: 3, priority: 50 },
  ],
  budgetUnits: 10,
  reservedUnits: 1,
});

const leversValid = () => ({
  c9: { query: ALL, candidates: [{ id: K, category: KB, score: 0.9, text: ALL }, { id: KH, category: KB, score: 0.1, text: KS }] },
  filter: { response: { [K]: KB, keep: KH, drop: KS }, allowed: [K, 'keep'], required: [K] },
  truncate: { blocks: [ALL, `${K}\n${KB}`], max_chars: 12 },
  schema: { tools: [{ name: K, full: ALL, slim: KB, detail_fetches: 1 }] },
});
const toonValid = () => ({ payload: { rows: [{ k: K, v: 1 }, { k: KB, v: 2 }, { k: KH, v: 3 }], [KS]: ALL }, delimiter: '|', indent_size: 2 });

// ---------------------------------------------------------------- error shape

const PAYMENT_UNTOUCHED = 'not verified, not consumed';
// The free-tier 402 also names the paid route (a static path) and, when the caller sent no key,
// a key the server drew; neither comes from the request.
const EXTRA_STRING_MEMBERS = { free_tier_exhausted: ['paid_route', 'idempotency_key'], free_tier_too_early: ['paid_route', 'idempotency_key'] };

/** Problems with an error body, [] when it is {code, message, <numbers>, payment?} with no canary. */
function errorShapeProblems(entry, code) {
  const problems = [];
  const hits = hitsIn(entry.body);
  if (hits.length) problems.push(`body carries canary forms ${hits.join(', ')}`);
  const headerHits = hitsIn(entry.headers);
  if (headerHits.length) problems.push(`headers carry canary forms ${headerHits.join(', ')}`);
  const body = json(entry);
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [...problems, 'body is not a JSON object'];
  if (body.code !== code) problems.push(`code ${JSON.stringify(body.code)} (status ${entry.status}), expected ${code}`);
  if (typeof body.message !== 'string' || !body.message) problems.push('message is not a non-empty string');
  if ('payment' in body && body.payment !== PAYMENT_UNTOUCHED) problems.push('payment is not the static sentence');
  for (const [k, v] of Object.entries(body)) {
    if (k === 'code' || k === 'message' || k === 'payment') continue;
    if ((EXTRA_STRING_MEMBERS[code] ?? []).includes(k) && typeof v === 'string') continue;
    if (typeof v !== 'number') problems.push(`member ${k} is ${typeof v}, not a number`);
  }
  return problems;
}

// ---------------------------------------------------------------- the errors test

const big = (n, ch = 'a') => ch.repeat(n);
/** A JSON object body with the canary at the front, padded past `cap` bytes. */
const overCap = (cap, member = 'payload') => `{"${member}":"${K} ${ALL} ${big(cap)}"}`;

// Codes a family's served document lists that the service answers under another (static) code;
// collected and reported by the todo test below rather than failing the shape check.
const KNOWN_DEVIATIONS = { EDGE_LIMIT: 'CAP-EXCEEDED:body_bytes' };
const deviations = [];

// Listed codes no request from outside can produce.
const UNREACHABLE = {
  'token-efficiency receipt_unreconciled': 'the engine\'s own reconciliation self-check failing (fail-closed)',
  'context-budget-pack OUTPUT_LIMIT:outputBytes': 'the packed-text limit (200,000 bytes) trips first for any result this large',
};

const familyOf = (path) => path.startsWith('/token-efficiency/') ? 'token-efficiency'
  : path.startsWith('/context-composition/') ? 'context-composition'
    : path.startsWith('/token-opt/') ? 'token-opt'
      : /budget-pack/.test(path) ? 'context-budget-pack' : 'edge';

/** Each family's served refusal list: family → code → [{message, figures: [names], limitName}]. */
async function publishedRefusals() {
  const get = async (p) => (await fetch(w.url + p)).json();
  const out = {};
  const add = (family, code, message, figures, limitName) => {
    out[family] ??= new Map();
    if (!out[family].has(code)) out[family].set(code, []);
    out[family].get(code).push({ message, figures: Array.isArray(figures) ? figures : Object.keys(figures ?? {}), limitName });
  };
  for (const r of (await get('/token-efficiency/criteria')).refusals) add('token-efficiency', r.code, r.message, r.figures);
  for (const r of (await get('/token-opt/criteria')).refusals) add('token-opt', r.code, r.message, r.figures);
  for (const r of (await get('/context-budget-pack/contract')).refusals) add('context-budget-pack', r.code, r.message, r.figures, r.limit ?? undefined);
  // context-composition lists its refusals in prose (malformed_rule: R-1 … R-6, stated counts).
  const rule = (await get('/context-composition/criteria')).malformed_rule;
  for (const code of ['CAP-EXCEEDED:body_bytes', 'malformed_body', 'envelope_version_not_supported', 'format_not_accepted',
    'record_required', 'record_does_not_parse_as_declared_format', 'caller_invalid']) {
    assert.ok(rule.includes(code), `context-composition criteria name ${code}`);
  }
  return out;
}

test('errors: every reachable refusal code of every family is static text plus numbers, no canary', async () => {
  const W = () => freshWallet();
  const cases = [
    // ---- edge
    ['not_covered', 'GET', `/${K}?q=${KB}`, undefined, {}, 404],
    ['not_covered', 'PUT', `/token-efficiency/precheck?${K}=${KH}`, JSON.stringify({ payload: K }), {}, 404],
    ['unsupported_media_type', 'POST', '/token-efficiency/precheck', `{"payload":"${K}"}`, { 'content-type': `text/plain; ${K}` }],
    ['caller_missing', 'POST', '/context-budget-pack/preflight', packValid()],
    ['caller_invalid', 'POST', '/context-budget-pack/preflight', packValid(), { 'x-caller': K }],
    ['idempotency_key_invalid', 'POST', '/token-efficiency/budget', teValid(), { 'idempotency-key': `${K}!` }],
    ['idempotency_key_invalid', 'POST', '/token-opt/toon', toonValid(), { 'idempotency-key': 'too-short' }],
    // ---- token-efficiency/v1 (free check and paid route share the parser)
    ['CAP-EXCEEDED:body_bytes', 'POST', '/token-efficiency/precheck', overCap(262_144)],
    ['body_not_utf8', 'POST', '/token-efficiency/precheck', Buffer.concat([Buffer.from(`{"payload":"${K}`), Buffer.from([0xff, 0xfe]), Buffer.from(`${KB}","budget_tokens":5}`)])],
    ['body_not_json', 'POST', '/token-efficiency/precheck', `{"payload": ${K}}`],
    ['body_not_object', 'POST', '/token-efficiency/precheck', JSON.stringify([K, KB])],
    ['body_lone_surrogate', 'POST', '/token-efficiency/precheck', `{"payload":"${K}\\ud800${KH}","budget_tokens":5}`],
    ['body_unknown_field', 'POST', '/token-efficiency/precheck', { ...teValid({ caller: W() }), [K]: KB }],
    ['payload_missing', 'POST', '/token-efficiency/precheck', { budget_tokens: 5, keep_fields: [K], caller: W() }],
    ['payload_not_string', 'POST', '/token-efficiency/precheck', { payload: { [K]: KB }, budget_tokens: 5 }],
    ['payload_too_deep', 'POST', '/token-efficiency/precheck', { payload: '['.repeat(1100) + JSON.stringify(K) + ']'.repeat(1100), budget_tokens: 5 }],
    ['budget_tokens_missing', 'POST', '/token-efficiency/precheck', { payload: ALL }],
    ['budget_tokens_not_number', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: K }],
    ['budget_tokens_not_positive', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 0 }],
    ['budget_tokens_fractional', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 2.5 }],
    ['budget_tokens_too_large', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 2 ** 60 }],
    ['reserve_tokens_invalid', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 5, reserve_tokens: KB }],
    ['reserve_tokens_not_below_budget', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 5, reserve_tokens: 5 }],
    ['keep_fields_invalid', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 5, keep_fields: K }],
    ['caller_invalid', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 5, caller: K }],
    ['caller_missing', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 5 }],
    ['caller_invalid', 'POST', '/token-efficiency/precheck', { payload: ALL, budget_tokens: 5 }, { 'x-caller': K }],
    ['CAP-EXCEEDED:body_bytes', 'POST', '/token-efficiency/budget', overCap(262_144), { 'idempotency-key': keyOf(), 'payment-signature': Buffer.from(ALL).toString('base64') }],
    ['body_unknown_field', 'POST', '/token-efficiency/budget', { ...teValid(), [KS]: K }, { 'idempotency-key': keyOf() }],
    // ---- context-composition/v1
    ['CAP-EXCEEDED:body_bytes', 'POST', '/context-composition/precheck', overCap(5 * 1024 * 1024, 'envelope_version')],
    ['malformed_body', 'POST', '/context-composition/precheck', `{"envelope_version":"${K}"`],
    ['malformed_body', 'POST', '/context-composition/precheck', `{"envelope_version":"${ENVELOPE}","envelope_version":"${KB}"}`],
    ['envelope_version_not_supported', 'POST', '/context-composition/precheck', ccValid({ envelope_version: K })],
    ['format_not_accepted', 'POST', '/context-composition/precheck', ccValid({ declared_format_id: K })],
    ['record_required', 'POST', '/context-composition/precheck', { ...ccValid(), record: null }],
    ['record_does_not_parse_as_declared_format', 'POST', '/context-composition/precheck', ccValid({ declared_format_id: 'letta-af', record: `{${K}` })],
    ['record_does_not_parse_as_declared_format', 'POST', '/context-composition/precheck', ccValid({ record: { messages: [{ role: 'user', text: 5, kind: K }] } })],
    ['stated_counts_invalid', 'POST', '/context-composition/precheck', ccValid({ harness_stated_counts: { [K]: KB } })],
    ['caller_invalid', 'POST', '/context-composition/precheck', ccValid({ caller: K })],
    ['CAP-EXCEEDED:body_bytes', 'POST', '/context-composition/audit', overCap(5 * 1024 * 1024, 'envelope_version'), { 'idempotency-key': keyOf(), 'payment-signature': Buffer.from(ALL).toString('base64') }],
    ['record_required', 'POST', '/context-composition/audit', { ...ccValid(), record: undefined }, { 'idempotency-key': keyOf() }],
    // ---- context-budget-pack
    ['EDGE_LIMIT', 'POST', '/context-budget-pack/preflight', overCap(131_072, 'sources'), { 'x-caller': W() }],
    ['MALFORMED_JSON', 'POST', '/context-budget-pack/preflight', `{"sources": [${K}]`, { 'x-caller': W() }],
    ['INVALID_UNICODE', 'POST', '/context-budget-pack/preflight', `{"sources":[{"id":"${K}","text":"${KB}\\udc00${KH}"}]}`, { 'x-caller': W() }],
    ['UNSAFE_KEY', 'POST', '/context-budget-pack/preflight', `{"__proto__":{"${K}":"${KB}"}}`, { 'x-caller': W() }],
    ['COMPLEXITY_LIMIT', 'POST', '/context-budget-pack/preflight', '['.repeat(21) + JSON.stringify(K) + ']'.repeat(21), { 'x-caller': W() }],
    ['COMPLEXITY_LIMIT', 'POST', '/context-budget-pack/preflight', JSON.stringify({ sources: [K, ...Array.from({ length: 8001 }, () => 1)] }), { 'x-caller': W() }],
    ['INPUT_LIMIT', 'POST', '/context-budget-pack/preflight', { ...packValid(), budgetUnits: 1_000_001 }, { 'x-caller': W() }],
    ['INPUT_LIMIT', 'POST', '/context-budget-pack/preflight', { ...packValid(), sources: [{ id: K, text: ALL + big(100_500) }] }, { 'x-caller': W() }],
    ['INPUT_LIMIT', 'POST', '/context-budget-pack/preflight', { ...packValid(), sources: Array.from({ length: 101 }, (_, i) => ({ id: `${K.slice(0, 20)}${i}`, text: KB })) }, { 'x-caller': W() }],
    ['INPUT_LIMIT', 'POST', '/context-budget-pack/preflight', { ...packValid(), candidates: Array.from({ length: 201 }, (_, i) => ({ id: `${KB.slice(0, 20)}${i}`, sourceId: K.slice(0, 40), start: 0, end: 1, costUnits: 1 })) }, { 'x-caller': W() }],
    ['EVALUATION_LIMIT', 'POST', '/context-budget-pack/preflight', (() => {
      const text = ALL + big(20_000 - ALL.length);
      return { sources: [{ id: K, text }], candidates: Array.from({ length: 101 }, (_, i) => ({ id: `${KH.slice(0, 20)}${i}`, sourceId: K, start: 0, end: 20_000, costUnits: 1 })), budgetUnits: 1000 };
    })(), { 'x-caller': W() }],
    ['OUTPUT_LIMIT', 'POST', '/context-budget-pack/preflight', (() => {
      const text = ALL + big(10_000 - ALL.length);
      return { sources: [{ id: K, text }], candidates: Array.from({ length: 25 }, (_, i) => ({ id: `${KH.slice(0, 20)}${i}`, sourceId: K, start: i, end: 10_000, costUnits: 1 })), budgetUnits: 1000 };
    })(), { 'x-caller': W() }],
    ['SCHEMA_VIOLATION', 'POST', '/context-budget-pack/preflight', { ...packValid(), [K]: KB }, { 'x-caller': W() }],
    ['DUPLICATE_ID', 'POST', '/context-budget-pack/preflight', { ...packValid(), sources: [{ id: K, text: KB }, { id: K, text: KH }] }, { 'x-caller': W() }],
    ['EDGE_LIMIT', 'POST', '/v1/x402/context-budget-pack', overCap(131_072, 'sources'), { 'idempotency-key': keyOf() }],
    ['IDEMPOTENCY_KEY_REQUIRED', 'POST', '/v1/x402/context-budget-pack', packValid()],
    ['INVALID_IDEMPOTENCY_KEY', 'POST', '/v1/x402/context-budget-pack', packValid(), { 'idempotency-key': `${K}.${KB}` }],
    // ---- token-opt/v1 (paid only; free validation first)
    ['CAP-EXCEEDED:body_bytes', 'POST', '/token-opt/levers', overCap(262_144, 'c9'), { 'idempotency-key': keyOf() }],
    ['CAP-EXCEEDED:body_bytes', 'POST', '/token-opt/toon', overCap(270_336), { 'idempotency-key': keyOf() }],
    ['body_not_utf8', 'POST', '/token-opt/levers', Buffer.concat([Buffer.from(`{"c9":"${K}`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]), { 'idempotency-key': keyOf() }],
    ['malformed_body', 'POST', '/token-opt/levers', `{"c9": ${K}`, { 'idempotency-key': keyOf() }],
    ['body_not_object', 'POST', '/token-opt/toon', JSON.stringify(K), { 'idempotency-key': keyOf() }],
    ['unknown_field', 'POST', '/token-opt/levers', { ...leversValid(), [K]: KB }, { 'idempotency-key': keyOf() }],
    ['unknown_field', 'POST', '/token-opt/levers', { c9: { ...leversValid().c9, [KB]: K } }, { 'idempotency-key': keyOf() }],
    ['no_lever_requested', 'POST', '/token-opt/levers', {}, { 'idempotency-key': keyOf() }],
    ['c9_query_invalid', 'POST', '/token-opt/levers', { c9: { query: [K], candidates: [] } }, { 'idempotency-key': keyOf() }],
    ['c9_candidate_invalid', 'POST', '/token-opt/levers', { c9: { candidates: [{ id: K, category: KB, score: KH, text: KS }] } }, { 'idempotency-key': keyOf() }],
    ['c9_per_category_invalid', 'POST', '/token-opt/levers', { c9: { candidates: [], per_category: { [K]: KB } } }, { 'idempotency-key': keyOf() }],
    ['filter_invalid', 'POST', '/token-opt/levers', { filter: { response: K, allowed: [KB] } }, { 'idempotency-key': keyOf() }],
    ['filter_required_missing', 'POST', '/token-opt/levers', { filter: { response: { a: K }, allowed: [KB], required: [KH, KS] } }, { 'idempotency-key': keyOf() }],
    ['truncate_invalid', 'POST', '/token-opt/levers', { truncate: { blocks: [K], max_chars: KB } }, { 'idempotency-key': keyOf() }],
    ['schema_tool_invalid', 'POST', '/token-opt/levers', { schema: { tools: [{ name: 5, full: K, slim: KB }] } }, { 'idempotency-key': keyOf() }],
    ['payload_missing', 'POST', '/token-opt/toon', { delimiter: ',' }, { 'idempotency-key': keyOf() }],
    ['toon_options_invalid', 'POST', '/token-opt/toon', { payload: { [K]: KB }, delimiter: K }, { 'idempotency-key': keyOf() }],
  ];
  const problems = [];
  const codes = new Set();
  const published = await publishedRefusals();
  const driven = new Set();
  /** The answered body against the family's served refusal list: same message, listed figures. */
  const checkPublished = (path, e) => {
    const body = json(e);
    const family = familyOf(path);
    const listed = published[family]?.get(body?.code);
    if (!listed) return;
    driven.add(`${family} ${body.code}`);
    if (family === 'context-budget-pack') {
      const entry = listed.find((r) => r.message === body.message);
      if (entry?.limitName) driven.add(`${family} ${body.code}:${entry.limitName}`);
    }
    if (!listed.some((r) => r.message === body.message)) deviations.push(`${path}: ${body.code} answered with ${JSON.stringify(body.message)}, the served document lists ${JSON.stringify(listed.map((r) => r.message))}`);
    const names = Object.keys(body).filter((k) => !['code', 'message', 'payment'].includes(k));
    if (!listed.some((r) => names.every((n) => r.figures.includes(n)))) deviations.push(`${path}: ${body.code} figures ${names} not those the served document lists`);
  };
  for (const [code, method, path, body, headers = {}, status] of cases) {
    const e = await call(`error ${code} ${path}`, path, { method, body, headers: { ...headers }, contentType: headers['content-type'] ?? 'application/json' });
    codes.add(code);
    if (status === 404) {
      if (e.status !== 404 || e.body !== 'NOT COVERED') problems.push(`${path}: 404 body ${JSON.stringify(e.body.slice(0, 80))}`);
      if (hitsIn(e.body + e.headers).length) problems.push(`${path}: 404 carries the canary`);
      continue;
    }
    if (e.status === 0) { problems.push(`${code} ${path}: no response (${e.error})`); continue; }
    const answered = json(e)?.code;
    if (KNOWN_DEVIATIONS[code] === answered) {
      deviations.push(`${path}: the contract's ${code} is answered as ${answered} (${e.status})`);
      driven.add(`${familyOf(path)} ${code}`);
      for (const p of errorShapeProblems(e, answered)) problems.push(`${code} ${path}: ${p}`);
      continue;
    }
    for (const p of errorShapeProblems(e, code)) problems.push(`${code} ${path}: ${p}`);
    checkPublished(path, e);
  }

  // Free tier exhausted: the second call from one wallet (FREE_PER_DAY = 1).
  const spent = W();
  const first = await call('free call 1 of 1', '/token-efficiency/precheck', { body: teValid({ caller: spent }) });
  assert.equal(first.status, 200, 'first free call');
  const second = await call('free call 2 of 1', '/token-efficiency/precheck', { body: teValid({ caller: spent }) });
  codes.add('free_tier_exhausted');
  for (const p of errorShapeProblems(second, 'free_tier_exhausted')) problems.push(`free_tier_exhausted: ${p}`);

  // Payment refusals, each with the canary in the body and a payment header.
  const TE_PATH = '/token-efficiency/budget';
  const challenge = async (key) => {
    const e = await call('challenge for a payment refusal', TE_PATH, { body: teValid(), headers: { 'idempotency-key': key } });
    assert.equal(e.status, 402);
    return e.raw.get('payment-required');
  };
  const decode = (b64) => JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
  const encode = (v) => Buffer.from(JSON.stringify(v)).toString('base64');
  const payCases = [];
  payCases.push(['payment_header_oversized', keyOf(), 'A'.repeat(12300)]);
  payCases.push(['payment_header_malformed', keyOf(), `%%${K}%%`]);
  payCases.push(['payment_header_malformed', keyOf(), Buffer.from(`{"${K}":`).toString('base64')]);
  payCases.push(['payment_version_unsupported', keyOf(), null, { 'x-payment': encode({ x402Version: 1, [K]: KB }) }]);
  {
    const key = keyOf();
    const { header } = await createPaymentHeader(await challenge(key), { rpcUrl: svm.url, idempotencyKey: key });
    const p = decode(header);
    p.extensions['payment-identifier'].info.id = `ck${KH}`.slice(0, 40);
    payCases.push(['payment_identifier_mismatch', key, encode(p)]);
    const q = decode(header);
    q.accepted.extra.memo = `cm:${KH.slice(0, 32)}`;
    q.accepted[K] = KB;
    payCases.push(['payment_requirements_mismatch', key, encode(q)]);
    const r = decode(header);
    r.payload.transaction = Buffer.from(`${K}${KB}`).toString('base64');
    payCases.push(['payment_transaction_malformed', key, encode(r)]);
    const s = decode(header);
    const tx = Buffer.from(s.payload.transaction, 'base64');
    tx[1 + 64 + 5] ^= 0xff;
    s.payload.transaction = tx.toString('base64');
    payCases.push(['payment_signature_invalid', key, encode(s)]);
  }
  for (const [code, change] of [
    ['payment_invalid_amount', { amount: 1 }],
    ['payment_invalid_memo', { memo: `cm:${K}` }],
    ['payment_compute_price_too_high', { cuPrice: 10_000_000 }],
    ['payment_fee_payer_in_instruction', { authorityIsFeePayer: true }],
    ['payment_instruction_layout', { extraInstruction: true }],
  ]) {
    const key = keyOf();
    const required = decode(await challenge(key));
    payCases.push([code, key, await craftPaymentHeader({ rpcUrl: svm.url, required, idempotencyKey: key, change })]);
  }
  for (const [code, key, header, extra = {}] of payCases) {
    const headers = { 'idempotency-key': key, ...extra };
    if (header) headers['payment-signature'] = header;
    const e = await call(`payment refusal ${code}`, TE_PATH, { body: teValid(), headers });
    codes.add(code);
    for (const p of errorShapeProblems(e, code)) problems.push(`${code}: ${p}`);
    const body = json(e);
    if (body && e.status !== 409 && body.payment !== PAYMENT_UNTOUCHED) problems.push(`${code}: no "${PAYMENT_UNTOUCHED}"`);
  }

  // Coverage: every code the served documents list was driven, except the ones no request can reach.
  const listedKeys = [];
  for (const [family, map] of Object.entries(published)) {
    for (const [code, entries] of map) {
      if (family === 'context-budget-pack' && entries.some((r) => r.limitName)) for (const r of entries) listedKeys.push(`${family} ${code}:${r.limitName}`);
      else listedKeys.push(`${family} ${code}`);
    }
  }
  const notDriven = listedKeys.filter((k) => !driven.has(k) && !UNREACHABLE[k]);
  if (notDriven.length) problems.push(`listed refusal codes not driven: ${notDriven.join(', ')}`);

  // The facilitator down: a well-formed payment cannot be verified (503), nothing is consumed.
  {
    const key = keyOf();
    const { header } = await createPaymentHeader(await challenge(key), { rpcUrl: svm.url, idempotencyKey: key });
    await facilitator.close();
    try {
      const e = await call('payment refusal facilitator down', TE_PATH, { body: teValid(), headers: { 'idempotency-key': key, 'payment-signature': header } });
      codes.add('payment_facilitator_unavailable');
      for (const p of errorShapeProblems(e, 'payment_facilitator_unavailable')) problems.push(`payment_facilitator_unavailable: ${p}`);
    } finally {
      facilitator = await startFacilitator({ port: FACILITATOR_PORT, rpcUrl: svm.url, quiet: true });
    }
    // An expired blockhash passes the local checks and is rejected by the facilitator's verify.
    await rpc(svm.url, 'testExpireBlockhash');
    const e = await call('payment refusal verify rejected', TE_PATH, { body: teValid(), headers: { 'idempotency-key': key, 'payment-signature': header } });
    codes.add('payment_verify_rejected');
    for (const p of errorShapeProblems(e, 'payment_verify_rejected')) problems.push(`payment_verify_rejected: ${p}`);
  }

  console.log(`errors: ${cases.length + 3 + payCases.length} refusals checked, ${codes.size} distinct codes; `
    + `${listedKeys.length - notDriven.length - Object.keys(UNREACHABLE).filter((k) => listedKeys.includes(k)).length}/${listedKeys.length} `
    + `codes of the served documents driven and matched, unreachable: ${Object.keys(UNREACHABLE).join(', ')}`);
  assert.deepEqual(problems, [], problems.join('\n'));
});

test('errors: each code a served document lists is the code answered', () => {
  assert.deepEqual(deviations, [], deviations.join('\n'));
});

// ---------------------------------------------------------------- the retention canary

/** Unpaid → 402; official-client payment; delivered; the identical retry → delivered again. Returns the delivered entry. */
async function payAndReplay(path, body, { fenced, expect = 200 } = {}) {
  const key = keyOf();
  const unpaid = await call(`${path} unpaid`, path, { body, headers: { 'idempotency-key': key, 'x-caller': K } });
  assert.equal(unpaid.status, 402, `${path} unpaid`);
  const { header } = await createPaymentHeader(unpaid.raw.get('payment-required'), { rpcUrl: svm.url, idempotencyKey: key });
  const headers = { 'idempotency-key': key, 'payment-signature': header, 'x-caller': K };
  const paid = await call(`${path} paid`, path, { body, headers, fenced });
  assert.equal(paid.status, expect, `${path} paid: ${paid.body.slice(0, 300)}`);
  if (expect === 200) {
    assert.ok(paid.raw.get('payment-response'), `${path} PAYMENT-RESPONSE`);
    // The identical retry after a lost answer is delivered again: fenced like the first answer, with
    // the original receipt.
    const replay = await call(`${path} replay`, path, { body, headers, fenced });
    assert.equal(replay.status, 200, `${path} replay`);
    assert.equal(replay.raw.get('payment-response'), paid.raw.get('payment-response'), `${path} replay: the original receipt`);
  }
  return paid;
}

const accessLogHits = [];

test('retention canary: no form of the canary anywhere the service keeps or says anything', async () => {
  // Served documents, index, OpenAPI, metrics, 404 — with the canary in query strings.
  for (const path of ['/', '/openapi.json', '/token-efficiency/criteria', '/context-composition/criteria', '/context-budget-pack/contract', '/token-opt/criteria']) {
    const e = await call(`GET ${path}`, `${path}?${K}=${KB}&q=${KH}`, { method: 'GET', contentType: null });
    assert.equal(e.status, 200, path);
  }

  // Free checks: valid, could-not-measure, with X-Caller invalid but the body's caller valid.
  const q = `?cnry=${K}&b=${KB}&h=${KH}&s=${KS}`;
  let e = await call('TE precheck valid', `/token-efficiency/precheck${q}`, { body: teValid({ caller: freshWallet() }), headers: { 'x-caller': K } });
  assert.equal(e.status, 200, e.body);
  e = await call('TE precheck text payload', '/token-efficiency/precheck', { body: { payload: ALL, budget_tokens: 3, caller: freshWallet() } });
  assert.equal(e.status, 200, e.body);
  e = await call('CC precheck valid', `/context-composition/precheck${q}`, { body: ccValid({ caller: freshWallet() }), headers: { 'x-caller': K } });
  assert.equal(e.status, 200, e.body);
  e = await call('CC precheck could-not-measure', '/context-composition/precheck', { body: ccNothing({ caller: freshWallet() }) });
  assert.equal(e.status, 200, e.body);
  assert.match(e.body, /could_not_measure|NOT-ASSESSABLE/);
  e = await call('CC precheck letta', '/context-composition/precheck', {
    body: { ...ccValid({ caller: freshWallet() }), declared_format_id: 'letta-af', record: { agents: [{ name: K, system: ALL, messages: [{ role: 'user', content: [{ type: 'text', text: KB }] }] }] } },
  });
  e = await call('pack preflight valid', `/context-budget-pack/preflight${q}`, { body: packValid(), headers: { 'x-caller': freshWallet() } });
  assert.equal(e.status, 200, e.body);
  // Free validation on a free route with a payment header (ignored, still free).
  await call('TE precheck invalid + payment header', '/token-efficiency/precheck', { body: `{"payload":${K}}`, headers: { 'payment-signature': Buffer.from(ALL).toString('base64') } });

  // Paid routes: malformed with a payment header, valid unpaid with the canary in the query string.
  const fakePayment = Buffer.from(JSON.stringify({ x402Version: 2, payload: { transaction: KB }, [K]: KH })).toString('base64');
  for (const [path, bad] of [
    ['/token-efficiency/budget', `{"payload":"${K}","budget_tokens":0}`],
    ['/context-composition/audit', `{"envelope_version":"${K}"}`],
    ['/v1/x402/context-budget-pack', `{"${K}":"${KB}"}`],
    ['/token-opt/levers', `not json ${K}`],
    ['/token-opt/toon', `{"${K}": `],
  ]) {
    e = await call(`${path} malformed + payment`, path, { body: bad, headers: { 'payment-signature': fakePayment, 'idempotency-key': keyOf() } });
    assert.ok(e.status >= 400 && e.status < 500 && e.status !== 402, `${path} ${e.status}`);
  }
  for (const [path, body] of [
    ['/token-efficiency/budget', teValid()],
    ['/context-composition/audit', ccValid()],
    ['/v1/x402/context-budget-pack', packValid()],
    ['/token-opt/levers', leversValid()],
    ['/token-opt/toon', toonValid()],
  ]) {
    e = await call(`${path} unpaid + query`, `${path}${q}`, { body, headers: { 'idempotency-key': keyOf() } });
    assert.equal(e.status, 402, `${path}: ${e.body.slice(0, 200)}`);
    // The canary itself is a valid key ([A-Za-z0-9], 20 characters): the challenge binds it by hash only.
    e = await call(`${path} unpaid, canary as Idempotency-Key`, path, { body, headers: { 'idempotency-key': K } });
    assert.equal(e.status, 402, `${path}: ${e.body.slice(0, 200)}`);
    // A valid body with a canary-bearing (not decodable as a payment) header.
    e = await call(`${path} valid + canary payment header`, path, { body, headers: { 'payment-signature': fakePayment, 'idempotency-key': keyOf() } });
    assert.ok(e.status >= 400 && e.status < 500, `${path} ${e.status}`);
  }

  // One real payment per paid route by the official client, the canary inside the payload; replay → 409.
  const fencedOutputs = [
    await payAndReplay('/token-efficiency/budget', teValid(), { fenced: 'shaped_payload+receipt' }),
    await payAndReplay('/v1/x402/context-budget-pack', packValid(), { fenced: true }),
    await payAndReplay('/token-opt/levers', leversValid(), { fenced: true }),
    await payAndReplay('/token-opt/toon', toonValid(), { fenced: true }),
  ];
  const audit = await payAndReplay('/context-composition/audit', ccValid(), { fenced: false }); // counts only: scanned
  await payAndReplay('/context-composition/audit', ccNothing(), { fenced: false, expect: 422 }); // could-not-measure, unpaid
  // Controls: the canary really reached the engines (the fenced outputs carry it back to the payer),
  // so a clean scan below means it was not kept, not that it never arrived.
  for (const out of fencedOutputs) assert.ok(hitsIn(out.body).length > 0, `${out.what}: the paid output carries the canary back`);
  const payer = JSON.parse(Buffer.from(audit.raw.get('payment-response'), 'base64').toString('utf8')).payer;
  assert.match(payer ?? '', /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'PAYMENT-RESPONSE names the payer');

  // Deferred D1 writes (free-use aggregates, ledger) land after the response.
  await new Promise((r) => setTimeout(r, 1500));
  await call('GET /metrics', '/metrics', { method: 'GET', contentType: null });

  const hits = [];
  // Every response body and header (fenced paid outputs: headers only).
  for (const r of seen) {
    const inHeaders = hitsIn(r.headers);
    if (inHeaders.length) hits.push(`response headers of "${r.what}" (${r.status}): ${inHeaders.join(', ')}`);
    // token-efficiency: only the shaped payload and its receipt (field paths) are the payer's output;
    // the verdict and every figure around them are scanned like any report.
    const scanned = r.fenced === 'shaped_payload+receipt' ? (() => {
      const { shaped_payload: shapedPayload, receipt, ...rest } = JSON.parse(r.body);
      assert.equal(typeof shapedPayload, 'string', 'the paid budget call returns a shaped payload');
      assert.ok(Array.isArray(receipt), 'and its receipt');
      return JSON.stringify(rest);
    })() : r.fenced ? '' : r.body;
    {
      const inBody = hitsIn(scanned);
      if (inBody.length) hits.push(`response body of "${r.what}" (${r.status}): ${inBody.join(', ')}`);
    }
  }
  // Every file the worker keeps (local D1 sqlite + wal/shm, Durable Object state).
  const files = filesUnder(w.persist);
  assert.ok(files.some((f) => /\.sqlite$/.test(f)), 'the persistence directory holds sqlite files');
  let payerSeen = false;
  for (const f of files) {
    const bytes = readFileSync(f);
    if (bytes.indexOf(Buffer.from(payer)) >= 0) payerSeen = true;
    const found = hitsInBytes(bytes);
    if (found.length) hits.push(`persisted file ${f.slice(w.persist.length)}: ${found.join(', ')}`);
  }
  // Control: the ledger rows the paid calls wrote are readable in these files (the payer column).
  assert.ok(payerSeen, 'the scan reads the live D1 files (the ledger\'s payer wallet is found in them)');
  // Everything wrangler dev printed at debug level. The dev proxy's own access-log lines
  // ("[wrangler-ProxyWorker:info] GET /path 404 …", printed by wrangler, not by the worker) are
  // held apart: they print the request path (not the query string), so the canary sent as a path
  // to the 404 route shows there; the todo test below reports it.
  const logs = w.logs();
  const plain = (l) => l.replace(/\x1b\[[0-9;]*m/g, '');
  const isAccessLine = (l) => /^\[wrangler-ProxyWorker:info\] [A-Z]+ \S+ \d{3} /.test(plain(l).trim());
  const lines = logs.split('\n');
  // Control: the debug output was captured (wrangler's request lines for the paid calls are in it).
  assert.ok(lines.some((l) => plain(l).includes('POST /token-opt/toon')), 'wrangler dev output was captured');
  const logLines = lines.filter((l) => !isAccessLine(l) && hitsIn(l).length);
  if (logLines.length) hits.push(`wrangler dev output: ${JSON.stringify(logLines.slice(0, 5))}`);
  accessLogHits.push(...lines.filter((l) => isAccessLine(l) && hitsIn(l).length).map(plain));
  const routedAccessHits = accessLogHits.filter((l) => !/ 404 /.test(l));
  if (routedAccessHits.length) hits.push(`wrangler dev access log on a routed path: ${JSON.stringify(routedAccessHits)}`);

  const groups = {};
  for (const f of files) {
    const g = f.slice(w.persist.length + 1).split('/').slice(0, 3).join('/');
    groups[g] = (groups[g] ?? 0) + 1;
  }
  console.log(`retention: persisted files by directory ${JSON.stringify(groups)}`);
  console.log(`retention: ${seen.length} responses, ${files.length} persisted files (${files.reduce((n, f) => n + statSync(f).size, 0)} bytes), ${logs.length} log bytes scanned for ${Object.keys(FORMS).length} canary forms`);
  assert.deepEqual(hits, [], hits.join('\n'));
});

test('retention canary: wrangler dev\'s access log never prints a canary', {
  todo: 'wrangler dev\'s ProxyWorker prints every request path at info level ("GET /<path> 404 Not Found"), so a '
    + 'canary sent as the path of an unrouted request is printed by the dev server (not by the worker; query strings are not printed)',
}, () => {
  assert.deepEqual(accessLogHits, [], accessLogHits.join('\n'));
});
