// A free tool over MCP against the same free check over HTTP, in real workerd (issue 44's target: a
// tools/call costs at most 1.1x the HTTP precheck). The token-efficiency precheck, the same body as
// the tool's arguments, alternating HTTP and MCP call by call so both see the same machine; medians of
// each over 200 rounds, for a small body and one of 64 KiB.
//   node bench/mcp-workerd.mjs     (the bundle must be built: scripts/build.sh)
import { startWorker, wallet } from '../tests/e2e/lib/worker.mjs';
import { round, writeSection } from './section.mjs';

const ROUNDS = 200;
const w = await startWorker({ port: 8853, vars: { FREE_MIN_INTERVAL_MS: '0', FREE_PER_DAY: '1000000' }, logLevel: 'warn' });

function bodies(payload) {
  const args = { payload, budget_tokens: 50, caller: wallet(993) };
  return {
    http: JSON.stringify(args),
    mcp: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'token_efficiency_precheck', arguments: args } }),
  };
}

async function timed(url, body) {
  const t = performance.now();
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
  const text = await r.text();
  const ms = performance.now() - t;
  if (r.status !== 200 || text.includes('"isError":true')) throw new Error(`status ${r.status}: ${text.slice(0, 200)}`);
  return ms;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const cases = {
  small: JSON.stringify({ items: [{ id: 1, note: 'a' }, { id: 2, note: 'b' }] }),
  '64KiB': JSON.stringify({ rows: Array.from({ length: 900 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['alpha', 'beta', String(i % 7)] })) }).slice(0, 65536),
};
const results = {};
try {
  for (const [name, payload] of Object.entries(cases)) {
    const { http, mcp } = bodies(payload);
    for (let i = 0; i < 20; i++) { await timed(w.url + '/token-efficiency/precheck', http); await timed(w.url + '/mcp', mcp); }
    const h = [], m = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2) { h.push(await timed(w.url + '/token-efficiency/precheck', http)); m.push(await timed(w.url + '/mcp', mcp)); }
      else { m.push(await timed(w.url + '/mcp', mcp)); h.push(await timed(w.url + '/token-efficiency/precheck', http)); }
    }
    const ratio = median(m) / median(h);
    results[name] = { body_bytes: Buffer.byteLength(http), http_median_ms: round(median(h)), mcp_median_ms: round(median(m)), ratio: round(ratio) };
    console.log(`free tool over MCP vs HTTP precheck (${name}, ${Buffer.byteLength(http)} B): median ${median(m).toFixed(2)} ms vs ${median(h).toFixed(2)} ms = ${ratio.toFixed(3)}x (target <= 1.1x)`);
  }
  writeSection('mcp-workerd', { rounds: ROUNDS, target_ratio: 1.1, cases: results });
} finally {
  await w.stop();
}
