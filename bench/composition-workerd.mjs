// context-composition at its caps in real workerd: a 5 MB, 10,000-entry generic-message-list record
// (the same shape as the native caps test) through the free precheck, which runs the adapters, the
// classification and the M09 near-duplicate join to disclose assessability. Median of 5.
//   node bench/composition-workerd.mjs     (the bundle must be built: scripts/build.sh)
import { startWorker, wallet } from '../tests/e2e/lib/worker.mjs';
import { round, writeSection } from './section.mjs';

const vocabulary = Array.from({ length: 300 }, (_, i) => `word${i}`);
const messages = [];
for (let i = 0; i < 10_000; i++) {
  let text;
  switch (i % 10) {
    case 0: text = JSON.stringify({ order: i, status: 'shipped', items: [i % 7, i % 11, i % 13], note: vocabulary[i % 300] }); break;
    case 1: text = `2026-01-01 10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')} event ${i}\n${'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNk'.repeat(8)}`; break;
    case 2: text = 'The same repeated system reminder appears in many messages of this record.'.repeat(4); break;
    default: text = [...Array.from({ length: 70 }, (_, k) => vocabulary[(i * 7 + k * 13 + (k * k) % 5) % 300]), `tail${i}`].join(' ');
  }
  messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', text, stated_tokens: i % 200 });
}
const body = JSON.stringify({
  envelope_version: 'context-composition-envelope/1', declared_format_id: 'generic-message-list',
  record: { messages, tool_schemas: [{ name: 'lookup' }] }, caller: wallet(990),
});
const w = await startWorker({ port: 8852, vars: { FREE_MIN_INTERVAL_MS: '0', FREE_PER_DAY: '100000' } });
try {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const r = await fetch(w.url + '/context-composition/precheck', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await r.json();
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`context-composition precheck at the caps in workerd: ${Buffer.byteLength(body)} bytes, 10000 entries, median ${times[2].toFixed(0)} ms (min ${times[0].toFixed(0)}, max ${times[4].toFixed(0)})`);
  writeSection('composition-workerd', {
    body_bytes: Buffer.byteLength(body), entries: 10_000, runs: times.length,
    median_ms: round(times[2], 1), min_ms: round(times[0], 1), max_ms: round(times[4], 1),
  });
} finally {
  await w.stop();
}
