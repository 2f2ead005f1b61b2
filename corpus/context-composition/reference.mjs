// context-composition/v1 — an independent JavaScript reading of the criteria text
// (context-composition-v1.criteria.json + its interpretation notes), used only to derive the
// expected outputs of the corpus. It shares no code with the Rust engine: NFC is
// String.prototype.normalize('NFC'), whitespace is the \p{White_Space} regex class, base64 is
// checked by Node's Buffer round trip, near duplicates are found by brute force over all pairs.

export const BODY_CAP = 5242880;
export const ENTRY_CAP = 10000;
export const ENTRY_BYTES_CAP = 1048576;
export const STATED_CAP = 65536;
export const ENVELOPE_VERSION = 'context-composition-envelope/1';
const FORMATS = ['letta-af', 'anthropic-messages', 'generic-message-list'];
const KNOWN = ['envelope_version', 'declared_format_id', 'declared_format_version', 'record',
  'harness_stated_counts', 'criteria_ack', 'caller'];

export const P = ['P-TDEF', 'P-CMPT', 'P-TCALL', 'P-TRES', 'P-RETR', 'P-SYS', 'P-USER', 'P-ASST', 'P-OTHER', 'P-UNK'];
export const C = ['C-EMPTY', 'C-UNK', 'C-BLOB', 'C-RAW', 'C-STRUCT', 'C-CODE', 'C-TEXT'];
const STRUCTURAL = new Set(['P-TDEF', 'P-CMPT', 'P-TCALL', 'P-TRES', 'P-RETR']);
const KIND_LIST = {
  'P-TDEF': ['tool_definition', 'tool_schema'],
  'P-CMPT': ['compaction', 'summary', 'summary_message'],
  'P-TCALL': ['tool_use', 'server_tool_use', 'mcp_tool_use', 'tool_call', 'tool_call_message', 'function_call'],
  'P-TRES': ['tool_result', 'mcp_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result',
    'text_editor_code_execution_tool_result', 'tool_search_tool_result', 'tool_return', 'tool_return_message',
    'function_result'],
  'P-RETR': ['search_result', 'document', 'web_search_tool_result', 'web_fetch_tool_result', 'retrieval'],
  'P-SYS': ['system_message'],
  'P-USER': ['user_message'],
  'P-ASST': ['assistant_message', 'reasoning', 'reasoning_message', 'hidden_reasoning_message', 'omitted_reasoning',
    'redacted_reasoning', 'thinking', 'redacted_thinking'],
};
const CONTENT_ONLY = ['text', 'message', 'image', 'container_upload'];
const ROLE_LIST = {
  'P-TRES': ['tool', 'function'],
  'P-SYS': ['system', 'developer'],
  'P-USER': ['user', 'human'],
  'P-ASST': ['assistant', 'model'],
};

// ---------------------------------------------------------------- refusals
const REFUSALS = {
  body: ['CAP-EXCEEDED:body_bytes', 413],
  malformed: ['malformed_body', 400],
  version: ['envelope_version_not_supported', 400],
  format: ['format_not_accepted', 400],
  record: ['record_required', 400],
  parse: ['record_does_not_parse_as_declared_format', 400],
  caller: ['caller_invalid', 400],
  stated: ['stated_counts_invalid', 400],
};
class Refused extends Error {
  constructor(which) { super(which); this.code = REFUSALS[which][0]; this.status = REFUSALS[which][1]; }
}
const refuse = (which) => { throw new Refused(which); };

// ---------------------------------------------------------------- helpers
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSafeCount = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58Bytes(s) {
  let n = 0n;
  for (const ch of s) {
    const d = B58.indexOf(ch);
    if (d < 0) return null;
    n = n * 58n + BigInt(d);
  }
  const out = [];
  while (n > 0n) { out.unshift(Number(n % 256n)); n /= 256n; }
  for (const ch of s) { if (ch === '1') out.unshift(0); else break; }
  return out;
}
const isSolanaAddress = (s) => typeof s === 'string' && s.length > 0 && base58Bytes(s)?.length === 32;

// Top-level member names of a JSON object text, duplicates kept (JSON.parse keeps only the last).
function topLevelNames(text) {
  const names = [];
  let depth = 0;
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) { names.push(JSON.parse(text.slice(i, j + 1))); expectKey = false; }
      i = j + 1;
      continue;
    }
    if (ch === '{' || ch === '[') { depth++; if (depth === 1) expectKey = true; }
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === ',' && depth === 1) expectKey = true;
    i++;
  }
  return names;
}

// ---------------------------------------------------------------- adapters
class NoParse extends Error {}
const fail = () => { throw new NoParse(); };
const optStr = (o, k) => {
  const v = o[k];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') fail();
  return v;
};
const block = (o) => ({ role: null, kind: null, text: null, schema: false, compaction: false, hasArgs: false, media: false, ...o });
const schemaBlocks = (list) => list.map((t) => block({ text: typeof t === 'string' ? t : JSON.stringify(t), schema: true }));

function lettaCompaction(text) {
  if (!text.includes('system_alert')) return false;
  try {
    const v = JSON.parse(text);
    return isObj(v) && v.type === 'system_alert' && typeof v.message === 'string'
      && v.message.includes('prior messages have been hidden');
  } catch { return false; }
}

function adaptLetta(record) {
  let doc = record;
  if (typeof doc === 'string') { try { doc = JSON.parse(doc); } catch { fail(); } }
  if (!isObj(doc)) fail();
  let lists;
  let agents;
  if ('agents' in doc) {
    if (!Array.isArray(doc.agents)) fail();
    agents = doc.agents.length;
    lists = doc.agents.map((a) => {
      if (!isObj(a)) fail();
      if (a.messages === undefined || a.messages === null) return [];
      if (!Array.isArray(a.messages)) fail();
      return a.messages;
    });
  } else {
    if (!Array.isArray(doc.messages)) fail();
    agents = 1;
    lists = [doc.messages];
  }
  let schema = null;
  if (doc.tools !== undefined && doc.tools !== null) {
    if (!Array.isArray(doc.tools)) fail();
    schema = schemaBlocks(doc.tools);
  }
  const messages = [];
  for (const list of lists) {
    for (const m of list) {
      if (!isObj(m)) fail();
      const role = optStr(m, 'role');
      const mtype = optStr(m, 'message_type');
      const blocks = [];
      const c = m.content;
      if (typeof c === 'string') {
        blocks.push(block({ role, kind: mtype ?? 'text', text: c, compaction: lettaCompaction(c) }));
      } else if (Array.isArray(c)) {
        for (const part of c) {
          if (!isObj(part)) fail();
          const ptype = optStr(part, 'type');
          let text = null;
          let media = false;
          if (typeof part.text === 'string') text = part.text;
          else if (typeof part.reasoning === 'string') text = part.reasoning;
          else if (part.type === 'image' && typeof part.source?.data === 'string') { text = part.source.data; media = true; }
          blocks.push(block({ role, kind: mtype ?? ptype, text, media, compaction: text !== null && lettaCompaction(text) }));
        }
      } else if (c !== undefined && c !== null) fail();
      for (const key of ['tool_calls', 'tool_returns']) {
        const v = m[key];
        if (v === undefined || v === null) continue;
        if (!Array.isArray(v)) fail();
        for (const e of v) {
          if (!isObj(e)) fail();
          if (key === 'tool_calls') {
            const args = e.function?.arguments;
            blocks.push(block({ role, kind: 'tool_call', text: typeof args === 'string' ? args : JSON.stringify(e) }));
          } else {
            blocks.push(block({ role, kind: 'tool_return', text: typeof e.func_response === 'string' ? e.func_response : null }));
          }
        }
      }
      messages.push({ blocks, stated: null });
    }
  }
  return { format: 'letta-af', schema, messages, agents, level: 'L2', statedTotal: null };
}

function sourceText(b) {
  const s = b.source;
  const base64 = s?.type === 'base64';
  for (const k of ['data', 'url', 'file_id']) if (typeof s?.[k] === 'string') return [s[k], base64];
  if (typeof s?.content === 'string') return [s.content, false];
  if (Array.isArray(s?.content)) return [joinTexts(s.content), false];
  return [null, false];
}
const joinTexts = (items) => items.filter((i) => typeof i?.text === 'string').map((i) => i.text).join('\n');

function anthropicBlocks(role, b) {
  if (!isObj(b)) fail();
  const kind = optStr(b, 'type');
  const mk = (text, media = false) => block({ role, kind, text, media });
  const str = (k) => (typeof b[k] === 'string' ? b[k] : null);
  switch (kind) {
    case 'text': return [mk(str('text'))];
    case 'thinking': return [mk(str('thinking'))];
    case 'redacted_thinking': return [mk(str('data'))];
    case 'compaction': return [mk(str('content'))];
    case 'image': return [mk(sourceText(b)[0], true)];
    case 'document': { const [t, m] = sourceText(b); return [mk(t, m)]; }
    case 'search_result':
      return [mk(Array.isArray(b.content) ? joinTexts(b.content) : typeof b.content === 'string' ? b.content : null)];
    case 'tool_use': case 'server_tool_use': case 'mcp_tool_use':
      return [mk('input' in b ? JSON.stringify(b.input) : null)];
    case 'tool_result': case 'mcp_tool_result': {
      const c = b.content;
      if (typeof c === 'string') return [mk(c)];
      if (Array.isArray(c) && c.length > 0) {
        return c.map((item) => {
          if (!isObj(item)) fail();
          if (item.type === 'text') return mk(typeof item.text === 'string' ? item.text : null);
          if (item.type === 'image') return mk(sourceText(item)[0], true);
          if (item.type === 'document') { const [t, m] = sourceText(item); return mk(t, m); }
          if (item.type === 'search_result') return mk(Array.isArray(item.content) ? joinTexts(item.content) : null);
          return mk(null);
        });
      }
      if (c === undefined || c === null || Array.isArray(c)) return [mk('')];
      return [mk(null)];
    }
    default:
      if (kind !== null && kind.endsWith('_tool_result')) return [mk('content' in b ? JSON.stringify(b.content) : null)];
      return [mk(null)];
  }
}

function adaptAnthropic(record) {
  let list;
  let system;
  let tools;
  if (Array.isArray(record)) list = record;
  else if (isObj(record) && Array.isArray(record.messages)) ({ messages: list, system, tools } = record);
  else fail();
  let schema = null;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) fail();
    schema = tools.map((t) => block({ text: JSON.stringify(t), schema: true }));
  }
  const messages = [];
  if (typeof system === 'string') messages.push({ blocks: [block({ role: 'system', kind: 'text', text: system })], stated: null });
  else if (Array.isArray(system)) messages.push({ blocks: system.flatMap((b) => anthropicBlocks('system', b)), stated: null });
  else if (system !== undefined && system !== null) fail();
  for (const m of list) {
    if (!isObj(m) || typeof m.role !== 'string') fail();
    if (typeof m.content === 'string') messages.push({ blocks: [block({ role: m.role, kind: 'text', text: m.content })], stated: null });
    else if (Array.isArray(m.content)) messages.push({ blocks: m.content.flatMap((b) => anthropicBlocks(m.role, b)), stated: null });
    else fail();
  }
  return { format: 'anthropic-messages', schema, messages, agents: null, level: 'L0', statedTotal: null };
}

function adaptGeneric(record) {
  if (!isObj(record) || !Array.isArray(record.messages)) fail();
  let schema = null;
  if (record.tool_schemas !== undefined && record.tool_schemas !== null) {
    if (!Array.isArray(record.tool_schemas)) fail();
    schema = schemaBlocks(record.tool_schemas);
  }
  const optCount = (v) => {
    if (v === undefined || v === null) return null;
    if (!isSafeCount(v)) fail();
    return v;
  };
  const statedTotal = optCount(record.stated_total);
  let level = schema ? 2 : 0;
  const messages = record.messages.map((m) => {
    if (!isObj(m)) fail();
    const role = optStr(m, 'role');
    const kind = optStr(m, 'kind');
    const text = optStr(m, 'text');
    optStr(m, 'name');
    optStr(m, 'source');
    if (m.has_args !== undefined && m.has_args !== null && typeof m.has_args !== 'boolean') fail();
    const hasArgs = m.has_args === true;
    const stated = optCount(m.stated_tokens);
    if (kind) level = 2;
    else if (hasArgs || role === 'tool') level = Math.max(level, 1);
    return { blocks: [block({ role, kind, text, hasArgs })], stated };
  });
  return { format: 'generic-message-list', schema, messages, agents: null, level: `L${level}`, statedTotal };
}

// ---------------------------------------------------------------- envelope
export function parse(bytes) {
  if (bytes.length > BODY_CAP) refuse('body');
  let text;
  try { text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes); } catch { refuse('malformed'); }
  let env;
  try { env = JSON.parse(text); } catch { refuse('malformed'); }
  if (!isObj(env)) refuse('malformed');
  const names = topLevelNames(text);
  const count = (n) => names.filter((x) => x === n).length;
  if (KNOWN.some((k) => k !== 'record' && count(k) > 1)) refuse('malformed');
  if (env.envelope_version !== ENVELOPE_VERSION) refuse('version');
  if (!FORMATS.includes(env.declared_format_id)) refuse('format');
  if (env.record === undefined || env.record === null || count('record') > 1) refuse('record');
  let record;
  try {
    record = { 'letta-af': adaptLetta, 'anthropic-messages': adaptAnthropic, 'generic-message-list': adaptGeneric }[env.declared_format_id](env.record);
  } catch (e) {
    if (e instanceof NoParse || e instanceof TypeError) refuse('parse');
    throw e;
  }
  let stated = null;
  const h = env.harness_stated_counts;
  if (h !== undefined && h !== null) {
    if (!isObj(h) || Buffer.byteLength(JSON.stringify(h)) > STATED_CAP) refuse('stated');
    stated = { perMessage: null, total: null };
    for (const [k, v] of Object.entries(h)) {
      if (k === 'per_message' && Array.isArray(v)) {
        if (!v.every((x) => x === null || isSafeCount(x))) refuse('stated');
        stated.perMessage = v;
      } else if (k === 'total') {
        if (!isSafeCount(v)) refuse('stated');
        stated.total = v;
      } else refuse('stated');
    }
  }
  if (env.caller !== undefined && env.caller !== null && !isSolanaAddress(env.caller)) refuse('caller');
  return {
    format: env.declared_format_id,
    record,
    stated,
    unknown: names.filter((n) => !KNOWN.includes(n)).length,
    bodyBytes: bytes.length,
  };
}

// ---------------------------------------------------------------- classification
const WS_ONLY = /^\p{White_Space}*$/u;
const norm = (t) => t.split(/\p{White_Space}+/u).filter((w) => w !== '').join(' ');

// M10 census. The two alphabets are read separately: a standard run is a maximal run of
// [A-Za-z0-9+/], a URL-safe run a maximal run of [A-Za-z0-9_-], each with at most two '=' directly
// after it. A run of one alphabet counts for it when it holds one of that alphabet's own characters
// ('+' '/' or '-' '_'); a run of letters and digits alone is one alphabet's piece of the other's run
// when it touches the other's own character, and otherwise (it is then a maximal run of both) it
// counts once, as standard. Characters covered by qualifying segments of either alphabet are marked
// position by position, so a character inside a standard and a URL-safe segment covers once.
function census(t) {
  const zero = () => ({ segments: 0, chars: 0, bytes: 0 });
  const out = { standard: zero(), url: zero(), covered: 0 };
  const covered = new Uint8Array(t.length);
  const tryRun = (which, start, data, pads) => {
    const len = data.length + pads;
    if (len < 40 || len % 4 !== 0) return;
    const enc = which === 'url' ? 'base64url' : 'base64';
    const decoded = Buffer.from(data, enc);
    const again = decoded.toString(enc).replace(/=+$/, '');
    if (again !== data || decoded.length < 30) return;
    out[which].segments++;
    out[which].chars += len;
    out[which].bytes += decoded.length;
    covered.fill(1, start, start + len);
  };
  for (const m of t.matchAll(/[A-Za-z0-9+/_-]+/g)) {
    const whole = m[0];
    let pads = 0;
    while (pads < 2 && t[m.index + whole.length + pads] === '=') pads++;
    const hasStd = /[+/]/.test(whole);
    const hasUrl = /[-_]/.test(whole);
    if (!hasUrl) { tryRun('standard', m.index, whole, pads); continue; }
    if (!hasStd) { tryRun('url', m.index, whole, pads); continue; }
    for (const [which, re, own] of [['standard', /[A-Za-z0-9+/]+/g, /[+/]/], ['url', /[A-Za-z0-9_-]+/g, /[-_]/]]) {
      for (const piece of whole.matchAll(re)) {
        if (!own.test(piece[0])) continue;
        const atEnd = piece.index + piece[0].length === whole.length;
        tryRun(which, m.index + piece.index, piece[0], atEnd ? pads : 0);
      }
    }
  }
  out.covered = covered.reduce((a, b) => a + b, 0);
  return out;
}

function jsonShape(t) {
  let v;
  try { v = JSON.parse(t); } catch { return undefined; }
  if (Array.isArray(v)) return v.length;
  if (isObj(v)) return Object.keys(v).length;
  return null;
}

function pFired(b) {
  const fired = new Set();
  const kind = b.kind === '' ? null : b.kind;
  const role = b.role === '' ? null : b.role;
  const kindClass = kind === null || CONTENT_ONLY.includes(kind) ? null
    : Object.keys(KIND_LIST).find((c) => KIND_LIST[c].includes(kind)) ?? 'unlisted';
  const roleClass = role === null ? null : Object.keys(ROLE_LIST).find((c) => ROLE_LIST[c].includes(role)) ?? 'unlisted';
  // Every test runs; precedence alone picks the winner (a role test fires whatever the kind says).
  if (b.schema) fired.add('P-TDEF');
  if (b.compaction) fired.add('P-CMPT');
  if (b.hasArgs) fired.add('P-TCALL');
  if (kindClass && kindClass !== 'unlisted') fired.add(kindClass);
  if (roleClass && roleClass !== 'unlisted') fired.add(roleClass);
  if (kindClass === 'unlisted' || roleClass === 'unlisted') fired.add('P-OTHER');
  if (fired.size === 0) fired.add('P-UNK');
  return P.filter((c) => fired.has(c));
}

function measure(b, message) {
  const f = { message, pFired: pFired(b), cFired: ['C-UNK'], chars: 0, bytes: 0, est: 0,
    census: { standard: { segments: 0, chars: 0, bytes: 0 }, url: { segments: 0, chars: 0, bytes: 0 }, covered: 0 },
    raw: false, norm: null };
  if (b.text === null) return f;
  const t = b.text.normalize('NFC');
  f.chars = [...t].length;
  f.bytes = Buffer.byteLength(b.text);
  f.est = Math.floor((f.chars + 3) / 4);
  f.census = census(t);
  const fired = new Set();
  if (WS_ONLY.test(t)) fired.add('C-EMPTY');
  if (b.media || (f.chars > 0 && f.census.covered * 10 >= f.chars * 9)) fired.add('C-BLOB');
  const lines = t.split(/\r\n|\r|\n/);
  // A line of White_Space only is empty, as a block of White_Space only is C-EMPTY.
  const nonEmpty = lines.filter((l) => !WS_ONLY.test(l));
  const logs = nonEmpty.filter((l) => /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}/.test(l)).length;
  const shape = jsonShape(t);
  if (lines.some((l) => ['BEGIN EXPORT', 'BEGIN RAW', 'BEGIN LOG'].includes(l))
    || (nonEmpty.length > 0 && logs * 5 >= nonEmpty.length * 4)
    || (typeof shape === 'number' && shape >= 10 && f.chars >= 200)) {
    fired.add('C-RAW');
    f.raw = true;
  }
  if (typeof shape === 'number') fired.add('C-STRUCT');
  if (lines.some((l) => l.replace(/^ +/, '').startsWith('```'))) fired.add('C-CODE');
  if (fired.size === 0) fired.add('C-TEXT');
  f.cFired = C.filter((c) => fired.has(c));
  const n = norm(t);
  f.norm = n === '' ? null : n;
  return f;
}

// ---------------------------------------------------------------- figures
const est = (n) => `est:~${n}`;
const ZERO = 'NOT-ASSESSABLE (zero denominator)';
function pct(num, den) {
  const d = BigInt(den);
  if (d === 0n) return ZERO;
  let a = BigInt(num);
  const neg = a < 0n;
  if (neg) a = -a;
  const h = (2n * 10000n * a + d) / (2n * d);
  const frac = (h % 100n).toString().padStart(2, '0');
  return `est:~${neg && h > 0n ? '-' : ''}${h / 100n}.${frac}%`;
}
const roundMean = (sum, n) => Number((2n * BigInt(sum) + BigInt(n)) / (2n * BigInt(n)));

// ---------------------------------------------------------------- report
export function analyse(req) {
  const rec = req.record;
  const facts = [];
  for (const b of rec.schema ?? []) facts.push(measure(b, null));
  rec.messages.forEach((m, i) => m.blocks.forEach((b) => facts.push(measure(b, i))));
  for (const f of facts) { f.p = f.pFired[0]; f.c = f.cFired[0]; }
  const n = rec.messages.length;
  const msgEst = new Array(n).fill(0);
  const msgBytes = new Array(n).fill(0);
  const firstP = new Array(n).fill(null);
  let schemaBytes = 0;
  for (const f of facts) {
    if (f.message === null) { schemaBytes += f.bytes; continue; }
    msgEst[f.message] += f.est;
    msgBytes[f.message] += f.bytes;
    if (firstP[f.message] === null) firstP[f.message] = f.p;
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  return {
    facts, msgEst, firstP,
    T: sum(facts.map((f) => f.est)),
    chars: sum(facts.map((f) => f.chars)),
    textBytes: sum(facts.map((f) => f.bytes)),
    largestEntry: Math.max(schemaBytes, ...msgBytes),
    anyText: [...(rec.schema ?? []), ...rec.messages.flatMap((m) => m.blocks)].some((b) => b.text !== null),
    schemaBlocks: (rec.schema ?? []).length,
  };
}

function statedOf(req) {
  const s = { perMessage: null, perSource: null, total: null, totalSource: null };
  const h = req.stated ?? { perMessage: null, total: null };
  if (h.perMessage !== null) { s.perMessage = h.perMessage; s.perSource = 'harness_stated_counts'; }
  else if (req.record.messages.some((m) => m.stated !== null)) {
    s.perMessage = req.record.messages.map((m) => m.stated);
    s.perSource = 'record';
  }
  if (h.total !== null) { s.total = h.total; s.totalSource = 'harness_stated_counts'; }
  else if (req.record.statedTotal !== null) { s.total = req.record.statedTotal; s.totalSource = 'record'; }
  s.any = s.total !== null || (s.perMessage ?? []).some((x) => x !== null);
  return s;
}

const FACTORS = [
  ['F-1', 'M03', 'axis-P composition shares'],
  ['F-2', 'M04', 'axis-C composition shares'],
  ['F-2b', 'M05', 'P x C cross-tabulation'],
  ['F-3', 'M06', 'per-message size distribution'],
  ['F-4', 'M08', 'exact duplication'],
  ['F-5', 'M07', 'growth across turns'],
  ['F-6', 'M09', 'near duplication'],
  ['F-7', 'M10', 'embedded-blob census'],
  ['F-8', 'M11', 'tool-definition share'],
  ['F-9', 'M14', 'position/depth facts'],
  ['F-10', 'M12', 'stated-vs-measured agreement'],
  ['F-11', null, 'not assessable by design in v1'],
  ['F-12', 'M15', 'largest single block'],
];

function statuses(req, a) {
  const rec = req.record;
  const below = rec.format === 'generic-message-list' && rec.level !== 'L2';
  const roles = rec.format === 'anthropic-messages'
    ? "anthropic-messages is L0: role-list classes only; structural zero rows print 'not identifiable at this level'"
    : below ? "generic-message-list below L2 (no kind fields and no schema section): structural zero rows print 'not identifiable at this level'" : null;
  const f8 = rec.format === 'anthropic-messages' && rec.schema === null
    ? 'definitions submitted as prose in a system message are P-SYS, not P-TDEF; the absence note is mandatory'
    : below ? 'generic-message-list below L2: tool definitions are identifiable only from a schema section or kind fields; the absence note is mandatory' : null;
  const part = (r) => (r ? ['PARTIAL', r] : ['ASSESSABLE', null]);
  const A = ['ASSESSABLE', null];
  return [
    part(roles), A, part(roles), A, A,
    a.firstP.includes('P-USER') ? A : ['NOT-ASSESSABLE', 'NOT-ASSESSABLE (single turn): no P-USER message in the record'],
    A, A, part(f8),
    part(roles ? "P at this level: a P-CMPT absence prints 'no P-CMPT block identified at this level'" : null),
    statedOf(req).any ? A : ['NOT-ASSESSABLE', 'NOT-ASSESSABLE (no stated counts): NO-STATED-COUNT'],
    ['NOT-ASSESSABLE-BY-DESIGN', 'NOT-ASSESSABLE-BY-DESIGN in v1 for every format (no master-table flag rules exist); excluded from the LIMITED trigger'],
    A,
  ];
}

function cnm(req, a) {
  const n = req.record.messages.length;
  if (n > ENTRY_CAP) return ['R-7', 'too_many_entries'];
  if (a.largestEntry > ENTRY_BYTES_CAP) return ['R-7', 'entry_too_large'];
  if (n === 0) return ['R-8', 'zero_entries'];
  if (!a.anyText) return ['R-9', 'nothing_assessable'];
  return null;
}

function cnmBlock(req, [rule, kind]) {
  const o = { rule, kind };
  if (kind === 'too_many_entries') { o.entries = req.record.messages.length; o.cap_entries = ENTRY_CAP; }
  if (kind === 'entry_too_large') o.cap_entry_bytes = ENTRY_BYTES_CAP;
  return o;
}

function isoMillis(ms) { return new Date(ms).toISOString(); }

function header(kind, req, a, now, criteria) {
  const record = { entries: req.record.messages.length };
  if (req.record.agents !== null) record.agents = req.record.agents;
  record.body_bytes = req.bodyBytes;
  record.text_bytes = a.textBytes;
  return {
    report: kind,
    criteria_id: 'context-composition/v1',
    criteria_revision: '1.0.0',
    estimation_method: 'EM-1',
    issued_at: isoMillis(now),
    declared_format: { id: req.format, accepted: true, level: req.record.level },
    envelope: { version: ENVELOPE_VERSION, unknown_fields_ignored: req.unknown },
    record,
    labelling: criteria.estimation_method.labelling,
  };
}

function factorHead(i, [status, reason]) {
  const f = { factor: FACTORS[i][0], metric: FACTORS[i][1], name: FACTORS[i][2], status };
  if (reason) f.reason = reason;
  return f;
}

function line(st) {
  const lim = st.map(([s], i) => [s, i]).filter(([s]) => s === 'PARTIAL' || s === 'NOT-ASSESSABLE')
    .map(([s, i]) => `${FACTORS[i][0]} ${s}`);
  return lim.length === 0 ? ['MEASURED context-composition/v1 EM-1', 'measured_full']
    : [`MEASURED LIMITED context-composition/v1 EM-1 (${lim.join(', ')})`, 'measured_limited'];
}

export function precheck(req, now, criteria) {
  const a = analyse(req);
  const r = header('context-composition/v1 precheck', req, a, now, criteria);
  const st = statuses(req, a);
  r.total_size = { body_bytes: req.bodyBytes, text_bytes: a.textBytes, tokens: est(a.T) };
  const tres = a.facts.filter((f) => f.p === 'P-TRES').reduce((s, f) => s + f.est, 0);
  r.headline_share = { name: 'tool-output share (P-TRES estimate / T)', share: pct(tres, a.T) };
  const c = cnm(req, a);
  r.could_not_measure = c ? cnmBlock(req, c) : null;
  r.audit_outcome = c ? 'could_not_measure' : line(st)[1];
  r.assessability = st.map((s, i) => factorHead(i, s));
  r.never_assessable = criteria.never_assessable;
  r.price = criteria.price;
  r.scope = criteria.scope_block;
  return r;
}

function row(a, fs) {
  const e = fs.reduce((s, f) => s + f.est, 0);
  return { blocks: fs.length, tokens: est(e), share: pct(e, a.T) };
}

function nearDup(a) {
  const items = [];
  a.facts.forEach((f, i) => {
    if (f.norm === null) return;
    const toks = f.norm.toLowerCase().split(' ')
      .map((t) => t.replace(/^[.,;:!?()[\]{}"'`]+/, '').replace(/[.,;:!?()[\]{}"'`]+$/, ''))
      .filter((t) => t !== '');
    if (toks.length < 3) return;
    const sh = new Set();
    for (let k = 0; k + 2 < toks.length; k++) sh.add(`${toks[k]} ${toks[k + 1]} ${toks[k + 2]}`);
    items.push({ i, norm: f.norm, sh });
  });
  const pairs = [];
  for (let x = 0; x < items.length; x++) {
    for (let y = x + 1; y < items.length; y++) {
      if (items[x].norm === items[y].norm) continue;
      let shared = 0;
      for (const s of items[x].sh) if (items[y].sh.has(s)) shared++;
      const union = items[x].sh.size + items[y].sh.size - shared;
      if (shared * 5 >= union * 4) pairs.push({ a: items[x].i, b: items[y].i, shared, union });
    }
  }
  const inPairs = new Set(pairs.flatMap((p) => [p.a, p.b]));
  const out = {
    label: 'LABELLED CONVENTION (fleet convention)',
    threshold: 'Jaccard >= 0.80 over word 3-gram shingles',
    pairable_blocks: items.length,
    pairs: pairs.length,
    blocks_in_pairs: inPairs.size,
  };
  if (pairs.length <= 1000) {
    out.pair_list = pairs.map((p) => ({ block_a: p.a, block_b: p.b, shared_shingles: p.shared, union_shingles: p.union }));
  } else out.pair_list_note = 'pair list not printed: more than 1000 pairs; counts are complete';
  return out;
}

// An exact count too large for a JSON number that every reader holds exactly (a sum of stated
// figures can pass 2^53 - 1) prints as a string of its decimal digits.
const exactCount = (n) => (n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString());

function unit(stated, e) {
  const s = BigInt(stated);
  const m = BigInt(e);
  const diff = s - m;
  const abs = diff < 0n ? -diff : diff;
  const verdict = m === 0n && s === 0n ? 'EXACT' : m === 0n ? 'DISAGREE (zero-measured)'
    : abs * 100n <= m * 5n ? 'WITHIN' : 'DISAGREE';
  return { stated_tokens: exactCount(s), tokens: est(m), diff: est(diff), pct: pct(diff, m), verdict };
}

function m12(req, a) {
  const s = statedOf(req);
  const n = a.msgEst.length;
  const per = s.perMessage ?? [];
  const rows = [];
  const agg = { units: 0, within: 0, exact: 0, disagree: 0 };
  let ss = 0n;
  let se = 0n;
  per.slice(0, n).forEach((v, i) => {
    if (v === null) return;
    const u = unit(v, a.msgEst[i]);
    agg.units++;
    if (u.verdict === 'WITHIN') agg.within++; else if (u.verdict === 'EXACT') agg.exact++; else agg.disagree++;
    ss += BigInt(v);
    se += BigInt(a.msgEst[i]);
    rows.push({ message_index: i, ...u });
  });
  if (agg.units > 0) { const u = unit(ss, se); delete u.verdict; Object.assign(agg, u); }
  let whole;
  if (s.total !== null) whole = { basis: 'stated total against T', ...unit(s.total, a.T) };
  else if (agg.units === n && n > 0) whole = { basis: 'per-message stated sum against the message total', ...unit(ss, se) };
  else whole = 'NOT-ASSESSABLE (partial coverage)';
  return {
    label: "stated figures are the submitting harness's own, reproduced as stated; tolerance 5% (fleet convention)",
    note: "a disagreement measures the gap between the harness's count and EM-1, not an error by either side",
    per_message_source: s.perSource,
    total_source: s.totalSource,
    messages: n,
    covered_messages: agg.units,
    per_message_entries_beyond_record: Math.max(0, per.length - n),
    per_message: rows,
    aggregate_over_covered: agg,
    whole_record: whole,
  };
}

function metric(i, req, a, st) {
  const rec = req.record;
  const F = a.facts;
  const msgTotal = a.msgEst.reduce((x, y) => x + y, 0);
  switch (i) {
    case 0: return {
      rows: P.map((cl) => {
        const fs = F.filter((f) => f.p === cl);
        const hidden = rec.format === 'letta-af' || rec.level === 'L2' ? []
          : rec.format === 'generic-message-list' && rec.level === 'L1' ? ['P-TDEF', 'P-CMPT', 'P-RETR'] : [...STRUCTURAL];
        if (fs.length === 0 && hidden.includes(cl)) return { class: cl, note: 'not identifiable at this level' };
        return { class: cl, ...row(a, fs) };
      }),
    };
    case 1: return { rows: C.map((cl) => ({ class: cl, ...row(a, F.filter((f) => f.c === cl)) })) };
    case 2: {
      const cells = [];
      for (const p of P) for (const c of C) {
        const fs = F.filter((f) => f.p === p && f.c === c);
        if (fs.length) cells.push({ p, c, ...row(a, fs) });
      }
      return { cells };
    }
    case 3: {
      const es = a.msgEst;
      const n = es.length;
      const sorted = [...es].sort((x, y) => x - y);
      const order = es.map((e, k) => k).sort((x, y) => es[y] - es[x] || x - y);
      const top = order.slice(0, 3);
      const big = (k) => msgTotal > 0 && es[k] * 10 >= msgTotal;
      return {
        schema_pseudo_message: rec.schema ? 'excluded' : 'absent',
        messages: n,
        message_total: est(msgTotal),
        min: est(sorted[0]),
        max: est(sorted[n - 1]),
        mean: est(roundMean(msgTotal, n)),
        median_lower: est(sorted[Math.ceil(n / 2) - 1]),
        p90: est(sorted[Math.ceil((9 * n) / 10) - 1]),
        rank_rule: 'nearest rank (fleet convention)',
        largest_contributors: order.filter((k) => top.includes(k) || big(k)).map((k) => ({
          message_index: k, tokens: est(es[k]), share: pct(es[k], a.T),
          top_3: top.includes(k), at_least_10_percent: big(k),
        })),
      };
    }
    case 4: {
      const groups = new Map();
      F.forEach((f, k) => { if (f.norm !== null) { if (!groups.has(f.norm)) groups.set(f.norm, []); groups.get(f.norm).push(k); } });
      const list = [...groups.values()].filter((g) => g.length > 1).sort((x, y) => x[0] - y[0]);
      let excess = 0;
      const rows = list.map((g) => {
        const e = g.slice(1).reduce((s, k) => s + F[k].est, 0);
        excess += e;
        return { block_indices: g, excess_blocks: g.length - 1, excess_tokens: est(e) };
      });
      return {
        label: 'MECHANICAL FACT', groups: list.length,
        duplicate_blocks: list.reduce((s, g) => s + g.length, 0),
        excess_blocks: list.reduce((s, g) => s + g.length - 1, 0),
        excess_tokens: est(excess), excess_share: pct(excess, a.T), group_list: rows,
      };
    }
    case 5: {
      // The schema pseudo-message precedes every message, so it is before the first P-USER message:
      // its estimate is part of turn 0 (the turn's message count stays a count of messages).
      const schemaEst = a.facts.filter((f) => f.message === null).reduce((s, f) => s + f.est, 0);
      const turns = [{ first: null, count: 0, inc: schemaEst }];
      a.msgEst.forEach((e, k) => {
        if (a.firstP[k] === 'P-USER') turns.push({ first: k, count: 0, inc: 0 });
        const t = turns[turns.length - 1];
        if (t.first === null) t.first = k;
        t.count++;
        t.inc += e;
      });
      let cum = 0;
      return {
        turn_rule: 'turn 0 = messages before the first P-USER message; each P-USER message starts a new turn (fleet convention)',
        schema_pseudo_message: rec.schema ? 'included in turn 0' : 'absent',
        turns: turns.map((t, k) => {
          cum += t.inc;
          return { turn: k, first_message_index: t.first, messages: t.count, increment: est(t.inc), cumulative: est(cum), cumulative_share: pct(cum, a.T) };
        }),
      };
    }
    case 6: return nearDup(a);
    case 7: {
      const withSeg = [];
      const figures = ({ standard: s, url: u, covered }) => ({
        standard_segments: s.segments, standard_characters: s.chars, standard_decoded_bytes: s.bytes,
        url_safe_segments: u.segments, url_safe_characters: u.chars, url_safe_decoded_bytes: u.bytes,
        segments: s.segments + u.segments, segment_characters: s.chars + u.chars, decoded_bytes: s.bytes + u.bytes,
        covered_characters: covered,
      });
      F.forEach((f, k) => {
        if (f.census.standard.segments + f.census.url.segments > 0) withSeg.push({ block_index: k, ...figures(f.census) });
      });
      const raw = F.map((f, k) => (f.raw ? k : -1)).filter((k) => k >= 0);
      const tot = (key) => withSeg.reduce((s, w) => s + w[key], 0);
      const totals = Object.fromEntries(Object.keys(figures(F[0].census)).map((key) => [key, tot(key)]));
      return {
        label: 'counts are mechanical facts given the tests; the thresholds are fleet conventions',
        ...totals,
        blocks_with_segments: withSeg, raw_export_blocks: raw.length, raw_export_block_indices: raw,
      };
    }
    case 8: {
      const r = row(a, F.filter((f) => f.p === 'P-TDEF'));
      if (r.blocks === 0) r.note = 'no tool definitions present in the submitted record';
      return r;
    }
    case 9: {
      let off = 0;
      const blocks = [];
      F.forEach((f, k) => {
        if (f.p === 'P-SYS' || f.p === 'P-CMPT') blocks.push({ block_index: k, class: f.p, start_offset: est(off), depth: pct(off, a.T) });
        off += f.est;
      });
      const out = { blocks };
      if (st[9][0] === 'PARTIAL' && !F.some((f) => f.p === 'P-CMPT')) out.note = 'no P-CMPT block identified at this level';
      return out;
    }
    case 10: return m12(req, a);
    default: {
      let best = 0;
      F.forEach((f, k) => { if (f.est > F[best].est) best = k; });
      const f = F[best];
      return { block_index: best, message_index: f.message, p: f.p, c: f.c, tokens: est(f.est), share: pct(f.est, a.T) };
    }
  }
}

export function audit(req, now, criteria) {
  const a = analyse(req);
  const r = header('context-composition/v1 audit', req, a, now, criteria);
  const c = cnm(req, a);
  const ledger = {
    criteria_version: 'context-composition/v1@1.0.0', measurement_line: null, op: 'audit',
    declared_format: req.format, entry_count: req.record.messages.length, record_bytes: req.bodyBytes,
    outcome: null, could_not_measure_kind: null,
  };
  if (c) {
    const l = `COULD-NOT-MEASURE context-composition/v1 (${c[0]} ${c[1]})`;
    Object.assign(r, { measurement_line: l, outcome: 'could_not_measure', could_not_measure: cnmBlock(req, c),
      never_assessable: criteria.never_assessable, scope: criteria.scope_block });
    Object.assign(ledger, { measurement_line: l, outcome: 'could_not_measure', could_not_measure_kind: c[1] });
    return { status: 422, chargeable: false, report: r, ledger };
  }
  const st = statuses(req, a);
  const [l, outcome] = line(st);
  r.measurement_line = l;
  r.outcome = outcome;
  const F = a.facts;
  const conflicts = [];
  F.forEach((f, k) => {
    if (f.pFired.length > 1) conflicts.push({ block_index: k, axis: 'P', winner: f.pFired[0], losers: f.pFired.slice(1) });
    if (f.cFired.length > 1) conflicts.push({ block_index: k, axis: 'C', winner: f.cFired[0], losers: f.cFired.slice(1) });
  });
  r.M01 = {
    label: 'MECHANICAL FACT', messages: req.record.messages.length, blocks: F.length, schema_blocks: a.schemaBlocks,
    empty_blocks: F.filter((f) => f.c === 'C-EMPTY').length,
    conflicts: { axis_p: conflicts.filter((x) => x.axis === 'P').length, axis_c: conflicts.filter((x) => x.axis === 'C').length },
    conflict_list: conflicts,
  };
  r.M02 = { characters: a.chars, text_bytes: a.textBytes, tokens: est(a.T) };
  const unkRow = (pred) => row(a, F.filter(pred));
  r.M13 = { label: 'MECHANICAL FACT', p_unk: unkRow((f) => f.p === 'P-UNK'), c_unk: unkRow((f) => f.c === 'C-UNK'),
    either_axis: unkRow((f) => f.p === 'P-UNK' || f.c === 'C-UNK') };
  r.factors = st.map((s, i) => {
    const f = factorHead(i, s);
    if (s[0] === 'ASSESSABLE' || s[0] === 'PARTIAL') f.result = metric(i, req, a, st);
    return f;
  });
  r.never_assessable = criteria.never_assessable;
  r.f9_line = criteria.f9_line;
  r.scope = criteria.scope_block;
  Object.assign(ledger, { measurement_line: l, outcome });
  return { status: 200, chargeable: true, report: r, ledger };
}

// ---------------------------------------------------------------- JCS
export function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
}
