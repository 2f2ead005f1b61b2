#!/usr/bin/env node
// Fleet review of the D1 ledger, through wrangler's D1 commands (local by default, --remote for the deployed
// database; wrangler holds the credentials).
//
//   node review/review.mjs report  [--remote] [--persist-to DIR] [--html FILE]
//       prints the checkpoint report per family and writes the HTML report (default review/out/report.html)
//   node review/review.mjs fill-cad FILE [--remote] [--persist-to DIR]
//       fills the CAD block of every pending row from a Bank of Canada Valet FXUSDCAD file (JSON or CSV)
//   node review/review.mjs refund TX_SIG UNITS [--replace] [--remote] [--persist-to DIR]
//       records UNITS USDC base units as the refund of the call paid by TX_SIG
//
// Exit status: 0 done, 1 refused (nothing written; the reason is printed), 2 usage.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { target, ROOT } from './d1.mjs';
import { fillCad, recordRefund, Refused } from './ledger.mjs';
import { gather, renderText, renderHtml } from './report.mjs';

function parseArgs(argv) {
  const opts = { remote: false, persistTo: null, html: null, replace: false, positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--remote') opts.remote = true;
    else if (a === '--replace') opts.replace = true;
    else if (a === '--persist-to') opts.persistTo = argv[++i];
    else if (a === '--html') opts.html = argv[++i];
    else if (a.startsWith('--')) throw new Refused(`unknown option ${a}`);
    else opts.positional.push(a);
  }
  if (opts.remote && opts.persistTo) throw new Refused('--persist-to is for the local database only');
  return opts;
}

function main(argv) {
  const [command, ...rest] = argv;
  const opts = parseArgs(rest);
  const where = target(opts);
  if (command === 'report') {
    const model = gather(where);
    process.stdout.write(renderText(model) + '\n');
    const file = resolve(opts.html ?? join(ROOT, 'review', 'out', opts.remote ? 'report-remote.html' : 'report.html'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, renderHtml(model));
    process.stdout.write(`HTML report: ${file}\n`);
    return 0;
  }
  if (command === 'fill-cad') {
    if (opts.positional.length !== 1) return usage();
    let text;
    try {
      text = readFileSync(opts.positional[0], 'utf8');
    } catch (e) {
      throw new Refused(`cannot read the rates file: ${e.code ?? e.message}`);
    }
    const s = fillCad(where, text);
    process.stdout.write(
      `${where.label}: rates file covers ${s.first} to ${s.last}; ` +
      (s.filled === 0 ? 'no pending rows, nothing written\n'
        : `filled ${s.filled} pending row(s) (${Object.entries(s.by_family).map(([f, n]) => `${f} ${n}`).join(', ')}): ` +
          `${s.same_day} at their own day's rate, ${s.prior_business_day} at the prior business day's\n`));
    return 0;
  }
  if (command === 'refund') {
    if (opts.positional.length !== 2) return usage();
    const r = recordRefund(where, opts.positional[0], opts.positional[1], { replace: opts.replace });
    process.stdout.write(`${where.label}: ${r.family} call refunded ${r.refund_usdc_units} of ${r.price_usdc_units} units` +
      `${r.changed ? '' : ' (already recorded; nothing changed)'}\n`);
    return 0;
  }
  return usage();
}

function usage() {
  process.stderr.write(readFileSync(new URL(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//   ')).map((l) => l.slice(3)).join('\n') + '\n');
  return 2;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof Refused)) throw e;
  process.stderr.write(`refused: ${e.message}\n`);
  process.exitCode = 1;
}
