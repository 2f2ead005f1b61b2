// docs/bench/latest.json (one whole `make bench` run, scripts/bench-data.mjs) drawn as the charts of
// docs/benchmarks.md, and written into its two generated tables. Same data, same bytes: numbers are
// formatted by hand (no locale), coordinates rounded, files listed in a fixed order, so
// tests/scripts/bench_charts.test.mjs can hold every committed chart and table to the committed data.
// Hand-written SVG (horizontal bars, a marker per row, reference lines): no chart library earns a
// dependency for five pictures.
//   node scripts/bench-charts.mjs            (after make bench; make bench runs it)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
export const DATA = 'docs/bench/latest.json';
export const DOC = 'docs/benchmarks.md';
const MIB = 2 ** 20;

// The targets that stand (issue 31, kept by issue 45): the others were retired for the floors below.
export const TARGETS = { bundleGzipBytes: 1_572_864, workerdVsGptTokenizer: 5, firstRequestVsFloor: 1.5 };

// ---------- numbers, by hand so the bytes never depend on a locale

const fixed = (x, digits) => x.toFixed(digits);
/** 1550048 → "1,550,048". */
export const grouped = (n) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
/** A ratio: "1.23×"; a figure under zero (an op net of its empty request, in the noise) keeps its sign, "−0.05×". */
const times = (x) => {
  const v = fixed(x, 2);
  return `${v === '-0.00' ? '0.00' : v.replace('-', '−')}×`;
};
const coordinate = (x) => String(Math.round(x * 10) / 10);
const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

// ---------- the figures the charts and tables read, derived from the sections in one place

/** A token-efficiency shape's ratios to one tokenization, and the floors the design requires. */
function shapeRatios(c) {
  const m = c.ms;
  const x = (op) => m[op] / m.count;
  return {
    id: c.id,
    tokens: c.tokens,
    countMs: m.count,
    budget: x('budget'),
    // One tokenization (the submitted count is exact), reading the body, SHA-512 of the bytes the
    // signature covers (the report carries the shaped payload), one signature's fixed cost.
    budgetFloor: 1 + x('parse') + x('digest') + x('sign'),
    fits: x('fits'),
    // The fits precheck: one tokenization, reading the body, one signature of its small report.
    fitsFloor: 1 + x('parse') + x('sign'),
    precheck: x('precheck'),
    engine: x('engine'),
    parse: x('parse'),
    digest: x('digest'),
    sign: x('sign'),
  };
}

export function figures(data) {
  const s = data.sections;
  const mibs = (bytes, ms) => bytes / MIB / (ms / 1000);
  const native = s['tokenizer-native'];
  const workerd = s['tokenizer-workerd'];
  const first = s['first-request'];
  const floorKind = first.kinds.find((k) => k.floor);
  const shapes = s['token-efficiency-workerd'].cases.map(shapeRatios);
  const nativeShapes = new Map(s['token-efficiency-native'].cases.map((c) => [c.id, c]));
  return {
    tokenizer: {
      oursCount: mibs(native.corpus_bytes, native.ours_count_ms),
      oursEncode: mibs(native.corpus_bytes, native.ours_encode_ms),
      tiktoken: mibs(native.corpus_bytes, native.tiktoken_rs_encode_ordinary_ms),
      workerd: mibs(workerd.corpus_bytes, workerd.pass_ms),
      workerdNet: mibs(workerd.corpus_bytes, workerd.pass_net_ms),
      gptWarm: mibs(workerd.corpus_bytes, workerd.gpt_tokenizer.warm_pass_ms),
      gptFirst: mibs(workerd.corpus_bytes, workerd.gpt_tokenizer.first_pass_ms),
      overheadShare: workerd.overhead_ms / workerd.request_ms,
    },
    first: { starts: first.starts, floorMs: floorKind.first_ms, kinds: first.kinds },
    bundle: s.bundle,
    composition: s['composition-workerd'],
    shapes,
    nativeShapes,
  };
}

// ---------- the chart

const WIDTH = 820;
const LABEL = 250; // the row labels' column
const VALUE = 170; // the value labels' column, right of the bars
const ROW = 24;

/**
 * A horizontal bar chart. subtitle: one line or several; rows: [{label, value, text, color?, marker?}]
 * (marker: a per-row value drawn as a tick, e.g. the shape's floor); lines: [{value, label}] drawn
 * across every row; max and ticks: the axis.
 */
export function barChart({ title, subtitle, footer, rows, lines = [], max, ticks, markerLabel }) {
  const plot = WIDTH - LABEL - VALUE;
  const subtitles = [subtitle].flat();
  const top = 40 + subtitles.length * 16 + lines.length * 14 + 8;
  const bottom = top + rows.length * ROW;
  const height = bottom + 40 + (markerLabel ? 16 : 0);
  // A figure under 0 (an op net of its empty request, within the noise) is drawn at 0; its label keeps the figure.
  const x = (v) => LABEL + (Math.min(Math.max(v, 0), max) / max) * plot;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ` +
    `font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`);
  out.push(`<title>${escape(title)}</title>`);
  out.push(`<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="12" y="22" font-size="15" font-weight="600" fill="#111111">${escape(title)}</text>`);
  subtitles.forEach((line, i) => out.push(`<text x="12" y="${40 + i * 16}" fill="#444444">${escape(line)}</text>`));
  for (const t of ticks) {
    out.push(`<line x1="${coordinate(x(t))}" y1="${top - 4}" x2="${coordinate(x(t))}" y2="${bottom}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${coordinate(x(t))}" y="${bottom + 14}" text-anchor="middle" fill="#666666">${escape(t)}</text>`);
  }
  rows.forEach((r, i) => {
    const y = top + i * ROW;
    out.push(`<text x="${LABEL - 8}" y="${coordinate(y + ROW / 2 + 4)}" text-anchor="end" fill="#111111">${escape(r.label)}</text>`);
    out.push(`<rect x="${LABEL}" y="${coordinate(y + 4)}" width="${coordinate(x(r.value) - LABEL)}" height="${ROW - 8}" ` +
      `fill="${r.color ?? '#4a78b5'}"><title>${escape(`${r.label}: ${r.text}`)}</title></rect>`);
    if (r.marker !== undefined) {
      out.push(`<line x1="${coordinate(x(r.marker))}" y1="${coordinate(y + 1)}" x2="${coordinate(x(r.marker))}" ` +
        `y2="${coordinate(y + ROW - 1)}" stroke="#111111" stroke-width="3"/>`);
    }
    out.push(`<text x="${WIDTH - VALUE + 8}" y="${coordinate(y + ROW / 2 + 4)}" fill="#111111">${escape(r.text)}</text>`);
  });
  lines.forEach((l, i) => {
    const at = x(l.value);
    // A label right of its line, or left of it in the right half, so it stays inside the plot.
    const right = at > LABEL + plot / 2;
    out.push(`<line x1="${coordinate(at)}" y1="${top - 8 - (lines.length - 1 - i) * 14}" x2="${coordinate(at)}" y2="${bottom}" ` +
      `stroke="#c0392b" stroke-width="1.5" stroke-dasharray="5 3"/>`);
    out.push(`<text x="${coordinate(right ? at - 4 : at + 4)}" y="${top - 10 - (lines.length - 1 - i) * 14}"` +
      `${right ? ' text-anchor="end"' : ''} fill="#c0392b">${escape(l.label)}</text>`);
  });
  let y = bottom + 34;
  if (markerLabel) {
    out.push(`<line x1="14" y1="${y - 10}" x2="14" y2="${y + 2}" stroke="#111111" stroke-width="3"/>`);
    out.push(`<text x="22" y="${y}" fill="#444444">${escape(markerLabel)}</text>`);
    y += 16;
  }
  out.push(`<text x="12" y="${y}" fill="#666666">${escape(footer)}</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** Evenly spaced ticks from 0 to at least `top`, `step` apart; the last is the axis end. */
function axis(top, step) {
  const end = Math.ceil(top / step) * step;
  const ticks = [];
  for (let t = 0; t <= end + 1e-9; t += step) ticks.push(Math.round(t * 100) / 100);
  return { max: end, ticks };
}

// ---------- the charts of docs/benchmarks.md

export function charts(data) {
  const f = figures(data);
  const footer = `make bench, ${data.run.started.slice(0, 10)} (${data.run.commit}); ${data.machine.cpu}, ` +
    `${data.machine.cores} cores; Node ${data.machine.node}`;
  const files = {};

  const t = f.tokenizer;
  const target = TARGETS.workerdVsGptTokenizer * t.gptWarm;
  files['tokenizer.svg'] = barChart({
    title: 'Tokenizer throughput, cl100k_base, 1 MiB mixed corpus',
    subtitle: 'MiB/s, higher is better: ours natively and in workerd (wasm), against stock tiktoken-rs and npm gpt-tokenizer.',
    footer,
    rows: [
      { label: 'ours, native, count', value: t.oursCount, text: `${fixed(t.oursCount, 1)} MiB/s` },
      { label: 'ours, native, encode', value: t.oursEncode, text: `${fixed(t.oursEncode, 1)} MiB/s` },
      { label: 'tiktoken-rs 0.12.1, native', value: t.tiktoken, text: `${fixed(t.tiktoken, 1)} MiB/s`, color: '#9a9a9a' },
      { label: 'ours in workerd (wasm)', value: t.workerd, text: `${fixed(t.workerd, 1)} MiB/s`, color: '#2e8b57' },
      { label: 'gpt-tokenizer 4.0.0, Node, warm', value: t.gptWarm, text: `${fixed(t.gptWarm, 1)} MiB/s`, color: '#9a9a9a' },
      { label: 'gpt-tokenizer 4.0.0, Node, first pass', value: t.gptFirst, text: `${fixed(t.gptFirst, 1)} MiB/s`, color: '#9a9a9a' },
    ],
    lines: [{ value: target, label: `target for workerd: ${TARGETS.workerdVsGptTokenizer}× gpt-tokenizer warm` }],
    ...axis(Math.max(t.oursCount, t.oursEncode, t.workerd, target) * 1.05, 20),
  });

  const fr = f.first;
  const firstMax = Math.max(...fr.kinds.map((k) => k.first_ms), fr.floorMs * TARGETS.firstRequestVsFloor);
  files['first-request.svg'] = barChart({
    title: 'First request to a fresh workerd isolate',
    subtitle: `ms, lower is better; median of ${fr.starts} fresh wrangler dev starts per kind, kinds alternating.`,
    footer,
    rows: fr.kinds.map((k) => ({
      label: k.floor ? 'hello-world workers-rs floor, GET /' : k.name,
      value: k.first_ms,
      text: `${fixed(k.first_ms, 1)} ms (${times(k.first_ms / fr.floorMs)})`,
      color: k.floor ? '#9a9a9a' : '#4a78b5',
    })),
    lines: [{ value: fr.floorMs * TARGETS.firstRequestVsFloor, label: `target: ${TARGETS.firstRequestVsFloor}× the floor` }],
    ...axis(firstMax * 1.1, 5),
  });

  const b = f.bundle;
  files['bundle.svg'] = barChart({
    title: 'Release bundle (wasm), gzip -9',
    subtitle: 'KiB: the whole module against its 1.5 MiB limit (make test fails above it), and its two large sections.',
    footer,
    rows: [
      { label: 'whole module', value: b.gzip_bytes / 1024, text: `${grouped(b.gzip_bytes)} B` },
      { label: 'data section (tables, statics)', value: b.sections.data.gzip / 1024, text: `${grouped(b.sections.data.gzip)} B`, color: '#7f9cc9' },
      { label: 'code section', value: b.sections.code.gzip / 1024, text: `${grouped(b.sections.code.gzip)} B`, color: '#7f9cc9' },
    ],
    lines: [{ value: TARGETS.bundleGzipBytes / 1024, label: 'limit: 1.5 MiB' }],
    ...axis(TARGETS.bundleGzipBytes / 1024 * 1.02, 256),
  });

  const shapes = f.shapes;
  const budgetAxis = axis(Math.max(...shapes.map((r) => Math.max(r.budget, r.budgetFloor))) * 1.02, 0.5);
  files['te-budget.svg'] = barChart({
    title: 'token-efficiency budget op in workerd, each shape against its floor',
    subtitle: ['× one tokenization of the payload, median of rounds; lower is better.',
      'Floor: one tokenization + reading the body + SHA-512 of the signed bytes + one signature.'],
    footer,
    markerLabel: 'the shape\'s floor, from the same run (the parse, digest and sign ops)',
    rows: shapes.map((r) => ({
      label: r.id,
      value: r.budget,
      marker: r.budgetFloor,
      text: `${times(r.budget)} (floor ${times(r.budgetFloor)})`,
    })),
    lines: [{ value: 1, label: 'one tokenization' }],
    ...budgetAxis,
  });

  const fitsAxis = axis(Math.max(...shapes.map((r) => Math.max(r.fits, r.fitsFloor))) * 1.02, 0.25);
  files['te-precheck.svg'] = barChart({
    title: 'token-efficiency precheck of a payload that fits, in workerd, against its floor',
    subtitle: ['× one tokenization, median of rounds, the budget set to the payload\'s own count; lower is better.',
      'Floor: one tokenization + reading the body + one signature of the small report.'],
    footer,
    markerLabel: 'the shape\'s floor, from the same run (the parse and sign ops)',
    rows: shapes.map((r) => ({
      label: r.id,
      value: r.fits,
      marker: r.fitsFloor,
      text: `${times(r.fits)} (floor ${times(r.fitsFloor)})`,
    })),
    lines: [{ value: 1, label: 'one tokenization' }],
    ...fitsAxis,
  });
  return files;
}

// ---------- the generated tables of docs/benchmarks.md

const range = (xs, format) => {
  const sorted = [...xs].sort((a, c) => a - c);
  return `${format(sorted[0])} to ${format(sorted.at(-1))}`;
};
/** A signed ratio: "+0.12×", "−0.03×" (a shape can measure under its floor by the run's noise). */
const signedTimes = (x) => `${Number(fixed(x, 2)) < 0 ? '−' : '+'}${fixed(Math.abs(x), 2)}×`;

export function tables(data) {
  const f = figures(data);
  const t = f.tokenizer;
  const b = f.bundle;
  const ours = f.first.kinds.find((k) => k.path === '/' && !k.floor);
  const vsGpt = t.workerd / t.gptWarm;
  const firstRatio = ours.first_ms / f.first.floorMs;
  const met = (ok) => (ok ? 'met' : '**not met**');
  const above = f.shapes.map((r) => r.budget - r.budgetFloor);
  const fitsAbove = f.shapes.map((r) => r.fits - r.fitsFloor);
  const headline = [
    `Run of ${data.run.started.replace('T', ' ').replace('Z', '')}–${data.run.finished.slice(11, 19)} UTC, commit ` +
      `${data.run.commit}${data.run.uncommitted_changes ? ' (with uncommitted changes)' : ''}; ${data.machine.cpu}, ` +
      `${data.machine.cores} cores, ${data.machine.memory_gib} GiB; Node ${data.machine.node}, ${data.machine.rustc}; ` +
      `load average ${data.run.load_average_start[0]} at the start, ${data.run.load_average_end[0]} at the end.`,
    '',
    '| figure | this run | target |',
    '|---|---|---|',
    `| bundle, gzip -9 of the release wasm | ${grouped(b.gzip_bytes)} B (${grouped(TARGETS.bundleGzipBytes - b.gzip_bytes)} B under 1.5 MiB) | ≤ 1.5 MiB: ${met(b.gzip_bytes <= TARGETS.bundleGzipBytes)} |`,
    `| tokenizer in workerd vs gpt-tokenizer warm in Node | ${times(vsGpt)} incl. request overhead (${times(t.workerdNet / t.gptWarm)} net) | ≥ ${TARGETS.workerdVsGptTokenizer}×: ${met(vsGpt >= TARGETS.workerdVsGptTokenizer)} |`,
    `| first request to a fresh isolate, \`GET /\`, vs hello-world floor | ${times(firstRatio)} (${fixed(ours.first_ms, 1)} ms vs ${fixed(f.first.floorMs, 1)} ms) | ≤ ${TARGETS.firstRequestVsFloor}×: ${met(firstRatio <= TARGETS.firstRequestVsFloor)} |`,
    `| tokenizer natively, 1 MiB mixed corpus | count ${fixed(t.oursCount, 1)} MiB/s, encode ${fixed(t.oursEncode, 1)} MiB/s: ${times(t.oursEncode / t.tiktoken)} stock tiktoken-rs | — (issue 31's 3a asked ≥ 60 MiB/s count) |`,
    `| budget op in workerd, above its floor | ${range(above, signedTimes)} over ${f.shapes.length} shapes | charted, no target |`,
    `| precheck that fits in workerd, above its floor | ${range(fitsAbove, signedTimes)} over ${f.shapes.length} shapes | charted, no target |`,
    `| context-composition precheck at the caps in workerd | ${fixed(f.composition.median_ms, 0)} ms median (${grouped(f.composition.body_bytes)} B, ${grouped(f.composition.entries)} entries) | — |`,
  ].join('\n');

  const shapeRows = f.shapes.map((r) => {
    const n = f.nativeShapes.get(r.id);
    const nx = (op) => (n ? times(n.ms[op] / n.ms.count) : '—');
    return `| ${r.id} | ${grouped(r.tokens)} | ${fixed(r.countMs, 2)} | ${times(r.budget)} | ${times(r.budgetFloor)} | ` +
      `${times(r.engine)} | ${times(r.parse)} | ${times(r.digest)} | ${times(r.sign)} | ${times(r.fits)} | ${times(r.fitsFloor)} | ` +
      `${times(r.precheck)} | ${nx('budget')} | ${nx('fits')} |`;
  });
  const shapesTable = [
    '| shape | tokens | one tokenization, ms | budget | its floor | engine alone | parse | SHA-512 of signed bytes | one signature | precheck, fits | its floor | precheck, as sent | native budget | native fits |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...shapeRows,
  ].join('\n');
  return { headline, shapes: shapesTable };
}

// ---------- docs/benchmarks.md's generated blocks

const begin = (name) => `<!-- generated by scripts/bench-charts.mjs from ${DATA}: ${name} -->`;
const end = (name) => `<!-- end of ${name} -->`;

/** `doc` with each generated block replaced by `blocks[name]`; throws if a block's markers are missing. */
export function fillBlocks(doc, blocks) {
  let out = doc;
  for (const [name, text] of Object.entries(blocks)) {
    const a = out.indexOf(begin(name));
    const b = out.indexOf(end(name));
    if (a < 0 || b < a) throw new Error(`${DOC} has no block ${name} (${begin(name)} … ${end(name)})`);
    out = out.slice(0, a) + `${begin(name)}\n${text}\n` + out.slice(b);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const data = JSON.parse(readFileSync(join(ROOT, DATA), 'utf8'));
  for (const [name, svg] of Object.entries(charts(data))) writeFileSync(join(ROOT, 'docs/bench', name), svg);
  const doc = join(ROOT, DOC);
  writeFileSync(doc, fillBlocks(readFileSync(doc, 'utf8'), tables(data)));
  console.log(`wrote docs/bench/*.svg and the tables of ${DOC} from ${DATA}`);
}
