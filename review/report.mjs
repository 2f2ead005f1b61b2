// The checkpoint report of a fleet review, read from the review_* views (migrations 0006-0008) in one wrangler
// call: printed per family for the terminal, and drawn as one self-contained HTML file (inline SVG, no script, no
// network). Every figure the HTML shows carries data-* attributes holding the view's value, so a test can read
// the page back and hold it equal to the views.
import { execute } from './d1.mjs';
import { parseDecimal, sumDecimals, usdcText } from './decimal.mjs';
import { FAMILIES } from './ledger.mjs';

export const TRIPWIRES = {
  refunds_over_5pct_of_paid_30d: { label: 'refunds > 5% of outside paid calls, rolling 30 days', unit: '%' },
  free_over_10x_paid_30d: { label: 'free use > 10× outside paid use, rolling 30 days', unit: '×' },
};

const QUERIES = [
  'SELECT * FROM review_timeline',
  'SELECT * FROM review_paid_calls',
  'SELECT * FROM review_payers',
  'SELECT * FROM review_window_30d',
  'SELECT * FROM review_tripwires',
  'SELECT * FROM review_cad',
  'SELECT family, day, tx_sig, cad_basis FROM review_cad_filled ORDER BY family, day, tx_sig',
  'SELECT * FROM review_daily ORDER BY family, day',
  'SELECT * FROM review_rolling_30d ORDER BY family, day',
  'SELECT family, COUNT(*) AS rows_undelivered, COALESCE(SUM(price_usdc_units), 0) AS usdc_units_undelivered FROM review_settled_undelivered GROUP BY family',
];

/** Reads every view once and groups the figures per family. */
export function gather(where) {
  const [timeline, paid, payers, window30, tripwires, cad, cadFilled, daily, rolling, undelivered] = execute(where, QUERIES.join(';\n'));
  const one = (rows, family) => rows.find((r) => r.family === family);
  const broken = cadFilled.find((r) => parseDecimal(r.cad_basis ?? '') === null);
  if (broken) {
    throw new Error(`a ${broken.family} row of ${broken.day} has cad_pending = 0 but cad_basis ${JSON.stringify(broken.cad_basis)} is not a decimal: fix it (or set cad_pending = 1 and refill)`);
  }
  const today = timeline[0].today;
  const families = FAMILIES.map((family) => {
    const days = daily.filter((r) => r.family === family);
    const filled = cadFilled.filter((r) => r.family === family);
    // Outside revenue to date, per calendar day: USDC (all outside rows) and CAD (rows whose CAD block is filled).
    let usdc = 0n;
    const revenue = days.map((d) => {
      usdc += BigInt(d.outside_usdc_units);
      return { day: d.day, usdc_units: usdc.toString(), cad: sumDecimals(filled.filter((f) => f.day <= d.day).map((f) => f.cad_basis)) };
    });
    return {
      family,
      timeline: one(timeline, family),
      paid: one(paid, family),
      payers: one(payers, family),
      window: one(window30, family),
      tripwires: tripwires.filter((t) => t.family === family),
      cad: { ...one(cad, family), outside_cad: sumDecimals(filled.map((f) => f.cad_basis)) },
      daily: days,
      rolling: rolling.filter((r) => r.family === family),
      undelivered: one(undelivered, family) ?? { rows_undelivered: 0, usdc_units_undelivered: 0 },
      revenue,
    };
  });
  return { today, where: where.label, families };
}

function whereToday(t) {
  if (t.phase === 'no_day0') return 'no Day-0 yet (no outside paid settle); the review clock has not started';
  const since = `Day-0 + ${t.days_since_day0} d`;
  if (t.phase === 'before_60d') return `${since}: ${t.days_to_60d} d before the +60 d checkpoint`;
  if (t.phase === 'after_60d_before_6m') {
    return `${since}: ${t.days_to_60d === 0 ? '+60 d checkpoint is today' : `${-t.days_to_60d} d after the +60 d checkpoint`}; ${t.days_to_6m} d before the +6 months decision`;
  }
  return `${since}: ${t.days_to_6m === 0 ? 'the +6 months keep/park decision is today' : `${-t.days_to_6m} d after the +6 months keep/park decision`}`;
}

const pct = (v) => (v === null ? 'n/a: no outside paid calls' : `${v}%`);
const ratio = (v, w) => (v === null ? (w.free_calls_30d > 0 ? `n/a: ${w.free_calls_30d} free, 0 paid` : 'n/a: no calls') : `${v}`);

function tripwireFigure(t, w) {
  if (t.tripwire === 'refunds_over_5pct_of_paid_30d') return t.figure === null ? 'n/a (0 paid)' : `${t.figure}%`;
  return t.figure === null ? (w.free_calls_30d > 0 ? `${w.free_calls_30d} free / 0 paid` : 'n/a (no calls)') : `${t.figure}×`;
}
const tripwireThreshold = (t) => `> ${t.threshold}${TRIPWIRES[t.tripwire]?.unit ?? ''}`;

/** The terminal report. */
export function renderText(model) {
  const out = [`context-meter fleet review: ${model.where}, today ${model.today} (UTC)`, ''];
  const line = (label, value) => out.push(`  ${label.padEnd(40)} ${value}`);
  for (const f of model.families) {
    const { timeline: t, paid: p, payers, window: w, cad } = f;
    out.push(`== ${f.family}`);
    line('Day-0 (first outside paid settle)', t.day0 ?? 'none yet');
    line('+60 d checkpoint (report only)', t.checkpoint_60d ?? '-');
    line('+6 months (keep/park decision)', t.checkpoint_6m ?? '-');
    line('today', whereToday(t));
    line('paid calls', `${p.paid_calls} (outside ${p.outside_calls}, house ${p.house_calls})`);
    line('outside revenue USDC', `${usdcText(p.outside_usdc_units)} USDC (${p.outside_usdc_units} units)`);
    line('outside revenue CAD', `${cad.outside_cad} CAD from ${cad.outside_cad_filled_rows} filled row(s); ${cad.outside_cad_pending_rows} row(s) pending`);
    line('outside payers', `${payers.distinct_payers} distinct, ${payers.repeat_payers} repeat`);
    line('settled, not delivered', `${f.undelivered.rows_undelivered} row(s), ${f.undelivered.usdc_units_undelivered} units (review_settled_undelivered)`);
    line('30-day window: outside paid calls', `${w.paid_calls_30d}`);
    line('30-day window: refunds', `${w.refunds_30d} (${pct(w.refunds_pct_30d)})`);
    line('30-day window: free calls', `${w.free_calls_30d}`);
    line('30-day window: free:paid', ratio(w.free_to_paid_30d, w));
    for (const tw of f.tripwires) {
      line(`tripwire ${tw.tripwire}`, `${tripwireFigure(tw, w)} against ${tripwireThreshold(tw)}: ${tw.fires ? 'FIRES' : 'ok'}`);
    }
    out.push('');
  }
  return out.join('\n');
}

// ---- HTML -------------------------------------------------------------------------------------------------

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const attr = (v) => (v === null || v === undefined ? '' : esc(v));
const dayNumber = (day) => Date.parse(`${day}T00:00:00Z`) / 86_400_000;
const COLORS = {
  outside_paid_calls: '#1f6feb', house_paid_calls: '#8c959f', free_calls: '#fb8c00',
  usdc: '#2da44e', cad: '#8250df', refunds_pct_30d: '#cf222e', free_to_paid_30d: '#fb8c00', tripwire: '#cf222e',
};

/**
 * One SVG chart over calendar days [first, last]: bar series side by side per day, line series with a point per
 * non-null day, horizontal tripwire lines and vertical checkpoint markers. Every drawn datum carries data-day and
 * data-value.
 */
function svgChart({ id, family, title, first, last, bars = [], lines = [], thresholds = [], markers = [], flags = [], yUnit = '' }) {
  const W = 960, H = 260, L = 56, R = 16, T = 28, B = 40;
  const pw = W - L - R, ph = H - T - B;
  const span = Math.max(1, dayNumber(last) - dayNumber(first) + 1);
  const slot = pw / span;
  const xOf = (day) => L + (dayNumber(day) - dayNumber(first) + 0.5) * slot;
  const values = [...bars, ...lines].flatMap((s) => s.points.map((p) => p.value)).filter((v) => v !== null).map(Number);
  const yMax = (Math.max(0, ...values, ...thresholds.map((t) => t.value * 1.25)) || 1) * 1.08; // 1 when all is zero
  const yOf = (v) => T + ph - (Number(v) / yMax) * ph;
  const o = [`<svg data-chart="${id}" data-family="${esc(family)}" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}">`];
  o.push(`<text x="${L}" y="18" class="t">${esc(title)}</text>`);
  o.push(`<rect x="${L}" y="${T}" width="${pw}" height="${ph}" fill="#fafbfc" stroke="#d0d7de"/>`);
  for (const frac of [0, 0.5, 1]) {
    const v = yMax * frac;
    const label = v >= 10 ? Math.round(v) : Number(v.toPrecision(2));
    o.push(`<line x1="${L}" x2="${L + pw}" y1="${yOf(v).toFixed(1)}" y2="${yOf(v).toFixed(1)}" stroke="#eaeef2"/>`);
    o.push(`<text x="${L - 6}" y="${(yOf(v) + 4).toFixed(1)}" class="a" text-anchor="end">${label}${yUnit}</text>`);
  }
  o.push(`<text x="${L}" y="${H - 8}" class="a">${first}</text><text x="${L + pw}" y="${H - 8}" class="a" text-anchor="end">${last}</text>`);
  const bw = Math.max(0.6, (slot * 0.9) / Math.max(1, bars.length));
  bars.forEach((s, k) => {
    o.push(`<g data-series="${s.name}" fill="${s.color}">`);
    for (const p of s.points) {
      const x = xOf(p.day) - (slot * 0.45) + k * bw;
      const y = yOf(p.value);
      o.push(`<rect data-day="${p.day}" data-value="${attr(p.value)}" x="${x.toFixed(2)}" y="${y.toFixed(2)}" width="${bw.toFixed(2)}" height="${(T + ph - y).toFixed(2)}"/>`);
    }
    o.push('</g>');
  });
  for (const s of lines) {
    const runs = [[]];
    for (const p of s.points) {
      if (p.value === null) { if (runs.at(-1).length) runs.push([]); continue; }
      runs.at(-1).push(`${xOf(p.day).toFixed(2)},${yOf(p.value).toFixed(2)}`);
    }
    o.push(`<g data-series="${s.name}" fill="${s.color}">`);
    for (const run of runs.filter((r) => r.length)) {
      o.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${run.join(' ')}"/>`);
    }
    for (const p of s.points.filter((q) => q.value !== null)) {
      o.push(`<circle data-day="${p.day}" data-value="${attr(p.value)}" cx="${xOf(p.day).toFixed(2)}" cy="${yOf(p.value).toFixed(2)}" r="2"/>`);
    }
    o.push('</g>');
  }
  for (const f of flags) { // a tripwire that fires with no ratio to draw (free use against zero paid calls)
    o.push(`<g data-series="${f.name}" fill="${COLORS.tripwire}">`);
    for (const day of f.days) {
      const x = xOf(day);
      o.push(`<path data-day="${day}" d="M${(x - 4).toFixed(2)} ${T + 2} L${(x + 4).toFixed(2)} ${T + 2} L${x.toFixed(2)} ${T + 10} Z"/>`);
    }
    o.push('</g>');
  }
  for (const t of thresholds) {
    const y = yOf(t.value).toFixed(1);
    o.push(`<line data-tripwire="${t.name}" data-threshold="${t.value}" x1="${L}" x2="${L + pw}" y1="${y}" y2="${y}" stroke="${COLORS.tripwire}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    o.push(`<text x="${L + 4}" y="${(Number(y) - 4).toFixed(1)}" class="a" fill="${COLORS.tripwire}">tripwire ${esc(t.label)}</text>`);
  }
  markers.forEach((m, k) => {
    if (!m.day || m.day < first || m.day > last) return;
    const x = xOf(m.day).toFixed(2);
    o.push(`<line data-marker="${m.name}" data-day="${m.day}" x1="${x}" x2="${x}" y1="${T}" y2="${T + ph}" stroke="${m.color}" stroke-width="1.5" stroke-dasharray="3 3"/>`);
    const right = Number(x) > L + pw - 130; // labels near the right edge sit to the left of their line
    o.push(`<text x="${(Number(x) + (right ? -4 : 4)).toFixed(2)}" y="${T + 13 + k * 13}" class="a" text-anchor="${right ? 'end' : 'start'}" fill="${m.color}">${esc(m.label)} ${m.day}</text>`);
  });
  const legend = [...bars, ...lines].map((s) => `<span class="k"><i style="background:${s.color}"></i>${esc(s.label)}</span>`).join(' ');
  o.push('</svg>');
  return `<figure>${o.join('\n')}<figcaption>${legend}</figcaption></figure>`;
}

function figureRow(label, name, value, text) {
  return `<tr><th>${esc(label)}</th><td data-figure="${name}" data-value="${attr(value)}">${esc(text)}</td></tr>`;
}

function familySection(f, model) {
  const { timeline: t, paid: p, payers, window: w, cad } = f;
  const first = f.daily[0]?.day ?? model.today;
  const last = [model.today, t.checkpoint_60d, t.checkpoint_6m].filter(Boolean).sort().at(-1);
  const markers = [
    { name: 'day0', label: 'Day-0', day: t.day0, color: '#1a7f37' },
    { name: 'checkpoint_60d', label: '+60 d', day: t.checkpoint_60d, color: '#9a6700' },
    { name: 'checkpoint_6m', label: '+6 mo', day: t.checkpoint_6m, color: '#bc4c00' },
    { name: 'today', label: 'today', day: model.today, color: '#24292f' },
  ];
  const series = (rows, key) => rows.map((r) => ({ day: r.day, value: r[key] }));
  const rows = [
    figureRow('Day-0 (first outside paid settle)', 'day0', t.day0, t.day0 ?? 'none yet'),
    figureRow('+60 d checkpoint (report only)', 'checkpoint_60d', t.checkpoint_60d, t.checkpoint_60d ?? '-'),
    figureRow('+6 months (keep/park decision)', 'checkpoint_6m', t.checkpoint_6m, t.checkpoint_6m ?? '-'),
    figureRow('Today', 'phase', t.phase, whereToday(t)),
    figureRow('Paid calls', 'paid_calls', p.paid_calls, p.paid_calls),
    figureRow('Paid calls, outside', 'outside_calls', p.outside_calls, p.outside_calls),
    figureRow('Paid calls, house', 'house_calls', p.house_calls, p.house_calls),
    figureRow('Outside revenue (USDC)', 'outside_usdc_units', p.outside_usdc_units, `${usdcText(p.outside_usdc_units)} USDC`),
    figureRow('Outside revenue (CAD, filled rows)', 'outside_cad', cad.outside_cad, `${cad.outside_cad} CAD`),
    figureRow('Outside rows with CAD filled', 'outside_cad_filled_rows', cad.outside_cad_filled_rows, cad.outside_cad_filled_rows),
    figureRow('Outside rows with CAD pending', 'outside_cad_pending_rows', cad.outside_cad_pending_rows, cad.outside_cad_pending_rows),
    figureRow('Distinct outside payers', 'distinct_payers', payers.distinct_payers, payers.distinct_payers),
    figureRow('Repeat payers (≥ 2 paid calls)', 'repeat_payers', payers.repeat_payers, payers.repeat_payers),
    figureRow('30 days: outside paid calls', 'paid_calls_30d', w.paid_calls_30d, w.paid_calls_30d),
    figureRow('30 days: refunds', 'refunds_30d', w.refunds_30d, w.refunds_30d),
    figureRow('30 days: refunds %', 'refunds_pct_30d', w.refunds_pct_30d, pct(w.refunds_pct_30d)),
    figureRow('30 days: free calls', 'free_calls_30d', w.free_calls_30d, w.free_calls_30d),
    figureRow('30 days: free:paid', 'free_to_paid_30d', w.free_to_paid_30d, ratio(w.free_to_paid_30d, w)),
  ];
  const trips = f.tripwires.map((tw) =>
    `<tr data-tripwire="${tw.tripwire}" data-figure="${attr(tw.figure)}" data-threshold="${tw.threshold}" data-fires="${tw.fires}" class="${tw.fires ? 'fires' : 'ok'}">` +
    `<th>${esc(TRIPWIRES[tw.tripwire]?.label ?? tw.tripwire)}</th><td>${esc(tripwireFigure(tw, w))}</td><td>${esc(tripwireThreshold(tw))}</td>` +
    `<td><b>${tw.fires ? 'FIRES' : 'ok'}</b></td></tr>`).join('\n');
  const charts = [
    svgChart({
      id: 'daily-calls', family: f.family, title: 'Calls per UTC day: outside paid, house paid, free', first, last, markers,
      bars: [
        { name: 'outside_paid_calls', label: 'outside paid', color: COLORS.outside_paid_calls, points: series(f.daily, 'outside_paid_calls') },
        { name: 'house_paid_calls', label: 'house paid', color: COLORS.house_paid_calls, points: series(f.daily, 'house_paid_calls') },
        { name: 'free_calls', label: 'free', color: COLORS.free_calls, points: series(f.daily, 'free_calls') },
      ],
    }),
    svgChart({
      id: 'revenue', family: f.family, title: 'Outside revenue to date: USDC (all outside rows), CAD (rows with the CAD block filled)', first, last, markers,
      lines: [
        { name: 'outside_usdc_to_date', label: 'USDC', color: COLORS.usdc, points: f.revenue.map((r) => ({ day: r.day, value: usdcText(r.usdc_units) })) },
        { name: 'outside_cad_to_date', label: 'CAD (filled)', color: COLORS.cad, points: f.revenue.map((r) => ({ day: r.day, value: r.cad })) },
      ],
    }),
    svgChart({
      id: 'refunds-30d', family: f.family, title: 'Refunds as % of outside paid calls, rolling 30 days', first, last, markers, yUnit: '%',
      lines: [{ name: 'refunds_pct_30d', label: 'refunds %', color: COLORS.refunds_pct_30d, points: series(f.rolling, 'refunds_pct_30d') }],
      thresholds: [{ name: 'refunds_over_5pct_of_paid_30d', value: 5, label: '5%' }],
    }),
    svgChart({
      id: 'free-paid-30d', family: f.family, title: 'Free:paid ratio, rolling 30 days (▼ = free use with no paid calls: fires)', first, last, markers, yUnit: '×',
      lines: [{ name: 'free_to_paid_30d', label: 'free:paid', color: COLORS.free_to_paid_30d, points: series(f.rolling, 'free_to_paid_30d') }],
      thresholds: [{ name: 'free_over_10x_paid_30d', value: 10, label: '10×' }],
      flags: [{ name: 'free_without_paid', days: f.rolling.filter((r) => r.paid_calls_30d === 0 && r.free_calls_30d > 0).map((r) => r.day) }],
    }),
  ];
  return `<section data-family="${esc(f.family)}">
<h2>${esc(f.family)}</h2>
<table class="fig">${rows.join('\n')}</table>
<table class="trip"><tr><th>Tripwire</th><th>Figure</th><th>Threshold</th><th></th></tr>
${trips}</table>
${charts.join('\n')}
</section>`;
}

/** The HTML report: one file, inline CSS and SVG, no script, and a policy that forbids every fetch. */
export function renderHtml(model) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>context-meter fleet review ${esc(model.today)}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#24292f;background:#fff;margin:24px auto;max-width:1000px;padding:0 12px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:17px;margin:32px 0 8px;border-bottom:2px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0} th,td{padding:3px 10px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
table.fig th{font-weight:normal;color:#57606a} td{font-variant-numeric:tabular-nums}
tr.fires td,tr.fires th{background:#ffebe9;color:#a40e26} tr.ok td b{color:#1a7f37}
figure{margin:12px 0} figcaption{font-size:12px;color:#57606a} .k{margin-right:14px} .k i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
svg .t{font-size:13px;font-weight:600;fill:#24292f} svg .a{font-size:11px;fill:#57606a}
</style></head>
<body>
<h1>context-meter fleet review</h1>
<p>Read from <span data-figure="source">${esc(model.where)}</span> on <span data-figure="today" data-value="${esc(model.today)}">${esc(model.today)}</span> (UTC),
through the <code>review_*</code> views. Outside = a payer that is not a house wallet. Day-0 = the first outside paid settle;
+60 days is the report-only checkpoint, +6 months the keep/park decision. Tripwires: refunds &gt; 5% of paid calls in any
rolling 30 days; free use &gt; 10× paid use.</p>
${model.families.map((f) => familySection(f, model)).join('\n')}
</body></html>
`;
}
