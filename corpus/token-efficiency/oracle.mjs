// An independent JavaScript implementation of token-efficiency/v1, written from the criteria text
// (spec/token-efficiency-v1.criteria.json) and the readings in docs/ARCHITECTURE.md §8 — never from the Rust engine.
// It uses the real JSON.parse / JSON.stringify and npm gpt-tokenizer for every count, and recounts
// the WHOLE payload after every application (no shortcuts), and finds S-4's boundary by brute force.

import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { createHash } from 'node:crypto';

export const BODY_CAP = 262144;
export const MAX_DEPTH = 1000;
const TWO_53 = 2 ** 53;
const S3_CAP = 2000;

export const count = (text) => encode(text, { disallowedSpecial: new Set() }).length;
export const chars = (text) => [...text].length;
export const marker = (n, op) => `[…truncated: ${n} chars removed under token-efficiency/v1 ${op}]`;

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// RFC 8785 (JCS): keys sorted by UTF-16 code units (JavaScript's default sort), JS number and
// string rendering.
export function jcs(v) {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export function corpusPin(corpus) {
  const { sha256, ...rest } = corpus;
  return createHash('sha256').update(jcs(rest), 'utf8').digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Request validation (the family's free refusals, as the criteria and the build's readings list)

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58Decode(s) {
  let n = 0n;
  for (const c of s) {
    const d = BASE58.indexOf(c);
    if (d < 0) return null;
    n = n * 58n + BigInt(d);
  }
  const bytes = [];
  while (n > 0n) {
    bytes.unshift(Number(n % 256n));
    n /= 256n;
  }
  let zeros = 0;
  while (zeros < s.length && s[zeros] === '1') zeros++;
  return [...new Array(zeros).fill(0), ...bytes];
}
export function base58Encode(bytes) {
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let s = '';
  while (n > 0n) {
    s = BASE58[Number(n % 58n)] + s;
    n /= 58n;
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return '1'.repeat(zeros) + s;
}
const isSolanaAddress = (s) => s.length <= 44 && base58Decode(s)?.length === 32;

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
function hasLoneSurrogate(v) {
  if (typeof v === 'string') return LONE.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (isObject(v)) return Object.keys(v).some((k) => LONE.test(k) || hasLoneSurrogate(v[k]));
  return false;
}

function depth(v) {
  if (Array.isArray(v)) return 1 + v.reduce((m, e) => Math.max(m, depth(e)), 0);
  if (isObject(v)) return 1 + Object.values(v).reduce((m, e) => Math.max(m, depth(e)), 0);
  return 0;
}

const refuse = (code, status = 400) => ({ refusal: { code, status } });

// Returns { refusal } or the validated request.
export function validate(bodyBytes) {
  if (bodyBytes.length > BODY_CAP) return refuse('CAP-EXCEEDED:body_bytes', 413);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bodyBytes);
  } catch {
    return refuse('body_not_utf8');
  }
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return refuse('body_not_json');
  }
  if (!isObject(body)) return refuse('body_not_object');
  if (hasLoneSurrogate(body)) return refuse('body_lone_surrogate');
  const known = ['payload', 'budget_tokens', 'keep_fields', 'reserve_tokens', 'caller'];
  if (Object.keys(body).some((k) => !known.includes(k))) return refuse('body_unknown_field');
  if (!('payload' in body)) return refuse('payload_missing');
  if (typeof body.payload !== 'string') return refuse('payload_not_string');
  if (!('budget_tokens' in body)) return refuse('budget_tokens_missing');
  const b = body.budget_tokens;
  if (typeof b !== 'number') return refuse('budget_tokens_not_number');
  if (b <= 0) return refuse('budget_tokens_not_positive');
  if (b > TWO_53) return refuse('budget_tokens_too_large');
  if (!Number.isInteger(b)) return refuse('budget_tokens_fractional');
  let reserve = 0;
  if ('reserve_tokens' in body) {
    const r = body.reserve_tokens;
    if (typeof r !== 'number' || r < 0 || r > TWO_53 || !Number.isInteger(r)) {
      return refuse('reserve_tokens_invalid');
    }
    reserve = r === 0 ? 0 : r;
  }
  if (reserve >= b) return refuse('reserve_tokens_not_below_budget');
  let keep = [];
  if ('keep_fields' in body) {
    const k = body.keep_fields;
    if (!Array.isArray(k) || k.some((p) => typeof p !== 'string' || p === '')) {
      return refuse('keep_fields_invalid');
    }
    keep = k;
  }
  let caller = null;
  if ('caller' in body) {
    if (typeof body.caller !== 'string' || !isSolanaAddress(body.caller)) return refuse('caller_invalid');
    caller = body.caller;
  }
  let value;
  let json = true;
  try {
    value = JSON.parse(body.payload);
  } catch {
    json = false;
  }
  if (json && depth(value) > MAX_DEPTH) return refuse('payload_too_deep');
  return {
    payload: body.payload,
    budget: b - reserve,
    keep: new Set(keep),
    caller,
    json,
    value,
  };
}

// ---------------------------------------------------------------------------------------------
// The budget op

const escapeLone = (s) =>
  s.replace(new RegExp(LONE.source, 'g'), (m) => `\\u${m.charCodeAt(0).toString(16).padStart(4, '0')}`);
const renderPath = (segs) =>
  segs.map((s, i) => ('key' in s ? (i ? '.' : '') + escapeLone(s.key) : `[${s.index}]`)).join('');
const childKeep = (keepPath, key) => (keepPath === null ? key : `${keepPath}.${key}`);

function isEmpty(v) {
  return v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

function containsProtected(v, keepPath, keep) {
  if (Array.isArray(v)) return v.some((e) => containsProtected(e, keepPath, keep));
  if (!isObject(v)) return false;
  return Object.keys(v).some((k) => {
    const kp = childKeep(keepPath, k);
    return keep.has(kp) || containsProtected(v[k], kp, keep);
  });
}

// Serialises like JSON.stringify (checked) and records every member's span, with its protection.
function serialiseWithSpans(root, keep) {
  const spans = [];
  let out = '';
  const walk = (v, keepPath, prot) => {
    if (Array.isArray(v)) {
      out += '[';
      v.forEach((e, i) => {
        if (i) out += ',';
        walk(e, keepPath, prot);
      });
      out += ']';
    } else if (isObject(v)) {
      out += '{';
      Object.keys(v).forEach((k, i) => {
        if (i) out += ',';
        const kp = childKeep(keepPath, k);
        const p = prot || keep.has(kp);
        const start = out.length;
        out += `${JSON.stringify(k)}:`;
        walk(v[k], kp, p);
        spans.push({ start, end: out.length, protected: p });
      });
      out += '}';
    } else {
      out += JSON.stringify(v);
    }
  };
  walk(root, null, false);
  if (out !== JSON.stringify(root)) throw new Error('span serialiser disagrees with JSON.stringify');
  spans.sort((a, b) => a.start - b.start);
  return { text: out, spans };
}

export function budgetOp(req, { stopBeforeS4 = false } = {}) {
  const { budget: B, keep } = req;
  let root = req.json ? req.value : null;
  const canonical = req.json ? JSON.stringify(root) : req.payload;
  const P = count(canonical);
  const C = chars(canonical);
  const receipt = [];
  let state = { tokens: P, chars: C };
  const record = (op, segs, index) => {
    const text = JSON.stringify(root);
    const after = { tokens: count(text), chars: chars(text) };
    const entry = { op, path: renderPath(segs) };
    if (index !== undefined) entry.index = index;
    Object.assign(entry, {
      chars_before: state.chars,
      chars_after: after.chars,
      tokens_before: state.tokens,
      tokens_after: after.tokens,
      delta_tokens: state.tokens - after.tokens,
      delta_chars: state.chars - after.chars,
    });
    receipt.push(entry);
    state = after;
  };
  const result = (shaped, exhaustion = null) => ({
    P,
    C,
    B,
    shaped_payload: shaped,
    shaped_tokens: exhaustion ? P : count(shaped),
    shaped_chars: exhaustion ? C : chars(shaped),
    receipt: exhaustion ? [] : receipt,
    exhaustion,
  });
  if (P <= B) return result(canonical);

  if (req.json) {
    // S-1: pre-order; an array is deduplicated before its surviving entries are visited.
    const s1 = (v, segs) => {
      if (Array.isArray(v)) {
        const seen = new Set();
        let i = 0;
        while (i < v.length) {
          const ser = JSON.stringify(v[i]);
          if (seen.has(ser)) {
            v.splice(i, 1);
            record('S-1', segs, i);
          } else {
            seen.add(ser);
            i++;
          }
        }
        v.forEach((e, j) => s1(e, [...segs, { index: j }]));
      } else if (isObject(v)) {
        for (const k of Object.keys(v)) s1(v[k], [...segs, { key: k }]);
      }
    };
    s1(root, []);
    // S-2: post-order in key order; fields only; cascades.
    const s2 = (v, segs, keepPath, prot) => {
      if (Array.isArray(v)) {
        v.forEach((e, i) => s2(e, [...segs, { index: i }], keepPath, prot));
      } else if (isObject(v)) {
        for (const k of Object.keys(v)) {
          const kp = childKeep(keepPath, k);
          const p = prot || keep.has(kp);
          s2(v[k], [...segs, { key: k }], kp, p);
          if (!p && !containsProtected(v[k], kp, keep) && isEmpty(v[k])) {
            delete v[k];
            record('S-2', [...segs, { key: k }]);
          }
        }
      }
    };
    if (state.tokens > B) s2(root, [], null, false);
    // S-3: document order; string fields and array elements over 2,000 characters.
    const truncate = (holder, slot, segs, p) => {
      const cps = [...holder[slot]];
      if (p || cps.length <= S3_CAP) return;
      holder[slot] = cps.slice(0, S3_CAP).join('') + marker(cps.length - S3_CAP, 'S-3');
      record('S-3', segs);
    };
    const s3 = (v, segs, keepPath, prot) => {
      if (Array.isArray(v)) {
        v.forEach((e, i) => {
          const s = [...segs, { index: i }];
          if (typeof e === 'string') truncate(v, i, s, prot);
          else s3(e, s, keepPath, prot);
        });
      } else if (isObject(v)) {
        for (const k of Object.keys(v)) {
          const kp = childKeep(keepPath, k);
          const p = prot || keep.has(kp);
          const s = [...segs, { key: k }];
          if (typeof v[k] === 'string') truncate(v, k, s, p);
          else s3(v[k], s, kp, p);
        }
      }
    };
    if (state.tokens > B) s3(root, [], null, false);
  }
  if (state.tokens <= B || stopBeforeS4) return result(req.json ? JSON.stringify(root) : canonical);

  // S-4: the true largest L in [floor, total - 1] with count(prefix + marker) <= B.
  let text = canonical;
  let spans = [];
  if (req.json) ({ text, spans } = serialiseWithSpans(root, keep));
  const unitOffsets = [0];
  for (const c of text) unitOffsets.push(unitOffsets[unitOffsets.length - 1] + c.length);
  const total = unitOffsets.length - 1;
  const cpOfUnit = (u) => unitOffsets.indexOf(u);
  const outer = [];
  for (const s of spans.filter((x) => x.protected)) {
    if (!outer.length || s.start >= outer[outer.length - 1].end) outer.push(s);
  }
  const floor = outer.reduce((m, s) => Math.max(m, cpOfUnit(s.end)), 0);
  for (let L = total - 1; L >= floor; L--) {
    const candidate = text.slice(0, unitOffsets[L]) + marker(total - L, 'S-4');
    if (count(candidate) <= B) {
      const shaped = candidate;
      const after = { tokens: count(shaped), chars: chars(shaped) };
      receipt.push({
        op: 'S-4',
        path: 'payload',
        chars_before: state.chars,
        chars_after: after.chars,
        tokens_before: state.tokens,
        tokens_after: after.tokens,
        delta_tokens: state.tokens - after.tokens,
        delta_chars: state.chars - after.chars,
      });
      return result(shaped);
    }
  }
  const floorText = text.slice(0, unitOffsets[floor]);
  return result(canonical, {
    protected_fields: outer.length,
    protected_tokens: outer.reduce((n, s) => n + count(text.slice(s.start, s.end)), 0),
    protected_chars: outer.reduce((n, s) => n + chars(text.slice(s.start, s.end)), 0),
    floor_chars: floor,
    floor_tokens: count(floorText),
    effective_budget: B,
    submitted_tokens: P,
    submitted_chars: C,
  });
}

export function verdictLine(P, B, grade, nowMs) {
  const middle = grade === 'FITS' ? 'FITS' : grade === 'NOT_SHAPABLE' ? 'OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS' : `OVER by ${P - B}`;
  return `PAYLOAD BUDGET — payload tokens: ${P} — effective budget: ${B} — ${middle} — ${new Date(nowMs).toISOString()}`;
}

// The budget op's grade of its result: FITS (P <= B), NOT_SHAPABLE (the op exhausted and returned
// the payload unchanged), else OVER by P - B.
export function gradeOf(r) {
  return r.exhaustion ? 'NOT_SHAPABLE' : r.P <= r.B ? 'FITS' : 'OVER';
}

// Expected precheck headline and budget result for one body.
export function expect(bodyBytes, nowMs) {
  const req = validate(bodyBytes);
  if (req.refusal) return { refusal: req.refusal };
  const canonical = req.json ? JSON.stringify(req.value) : req.payload;
  const P = count(canonical);
  const C = chars(canonical);
  const B = req.budget;
  const r = budgetOp(req);
  const grade = gradeOf(r);
  // The free pre-check's verdict is the verdict line the paid budget op returns for the same body
  // (same check-end time here): it says NOT SHAPABLE where the op would exhaust. It returns no
  // shaped payload and no receipt.
  const precheck = req.caller === null
    ? { refusal: { code: 'caller_missing', status: 400 } }
    : {
        verdict: verdictLine(P, B, grade, nowMs),
        fits: P <= B,
        operation_set: req.json ? 'json' : 'text-only',
        payload_tokens: P,
        payload_chars: C,
        effective_budget: B,
        excess_tokens: Math.max(0, P - B),
      };
  const apps = { 'S-1': 0, 'S-2': 0, 'S-3': 0, 'S-4': 0 };
  for (const e of r.receipt) apps[e.op]++;
  apps.total = r.receipt.length;
  return {
    precheck,
    budget: {
      verdict: verdictLine(P, B, grade, nowMs),
      operation_set: req.json ? 'json' : 'text-only',
      submitted: { tokens: P, chars: C },
      shaped: { tokens: r.shaped_tokens, chars: r.shaped_chars, within_budget: r.shaped_tokens <= B },
      shaped_payload: r.shaped_payload,
      receipt: r.receipt,
      applications: apps,
      exhaustion: r.exhaustion,
    },
  };
}
