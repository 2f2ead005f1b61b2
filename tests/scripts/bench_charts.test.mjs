// docs/benchmarks.md shows `make bench`'s figures as charts and two tables generated from the run's
// data (docs/bench/latest.json) by scripts/bench-charts.mjs (issue 45). Here every committed chart and
// both tables are generated again, in memory, from the committed data and must equal the committed
// bytes: a figure edited by hand, a chart left from another run or a table out of step fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { charts, DATA, DOC, fillBlocks, ROOT, tables } from '../../scripts/bench-charts.mjs';
import { SECTIONS } from '../../scripts/bench-data.mjs';

const data = JSON.parse(readFileSync(join(ROOT, DATA), 'utf8'));
const doc = readFileSync(join(ROOT, DOC), 'utf8');

test('the committed data is one whole make bench run, dated, with its machine', () => {
  assert.equal(data.source, 'make bench');
  assert.match(data.run.started, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.match(data.run.finished, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(data.run.started <= data.run.finished);
  for (const key of ['cpu', 'cores', 'node', 'rustc']) assert.ok(data.machine[key], `machine.${key}`);
  for (const name of [...SECTIONS.json, ...SECTIONS.text]) assert.ok(data.sections[name], `section ${name}`);
  assert.ok(data.sections['token-efficiency-workerd'].cases.length >= 10);
});

test('every chart in docs/bench/ is generated, byte for byte, from the committed data', () => {
  const generated = charts(data);
  const committed = readdirSync(join(ROOT, 'docs/bench')).filter((f) => f.endsWith('.svg')).sort();
  assert.deepEqual(committed, Object.keys(generated).sort(), 'a chart the generator does not draw, or one not committed');
  for (const [name, svg] of Object.entries(generated)) {
    assert.equal(readFileSync(join(ROOT, 'docs/bench', name), 'utf8'), svg, `docs/bench/${name}: run node scripts/bench-charts.mjs`);
  }
  // Same data, same bytes; other data, other bytes (so the comparison above can fail).
  assert.deepEqual(charts(structuredClone(data)), generated);
  const changed = structuredClone(data);
  changed.sections['first-request'].kinds[0].first_ms += 1;
  assert.notEqual(charts(changed)['first-request.svg'], generated['first-request.svg']);
});

test('the tables of docs/benchmarks.md are the ones the committed data gives', () => {
  assert.equal(doc, fillBlocks(doc, tables(data)), `${DOC}: run node scripts/bench-charts.mjs`);
  const changed = structuredClone(data);
  changed.sections.bundle.gzip_bytes += 1;
  assert.notEqual(fillBlocks(doc, tables(changed)), doc);
  assert.throws(() => fillBlocks('no blocks here', tables(data)), /has no block/);
});

test('every chart docs/benchmarks.md shows exists, and it shows every chart', () => {
  const shown = [...doc.matchAll(/\]\((bench\/[^)\s]+\.svg)\)/g)].map((m) => m[1]);
  assert.ok(shown.length >= 5, `charts shown: ${shown}`);
  for (const path of shown) assert.ok(existsSync(join(ROOT, 'docs', path)), `docs/${path}`);
  assert.deepEqual([...new Set(shown)].sort(), Object.keys(charts(data)).map((f) => `bench/${f}`).sort());
});
