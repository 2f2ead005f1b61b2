// The write commands of a fleet review: fill the CAD fair-market-value block of every pending ledger row from a
// Bank of Canada rates file, and record a refund against a transaction signature. Both check everything before
// writing anything, and both are idempotent.
import { execute, quote, MAX_COMMAND_BYTES } from './d1.mjs';
import { cadValue } from './decimal.mjs';
import { parseRatesFile, rateFor, RatesFileError } from './valet.mjs';

export const FAMILIES = ['token-efficiency', 'context-composition', 'context-budget-pack', 'token-opt'];
const tableOf = (family) => {
  if (!FAMILIES.includes(family)) throw new Error(`unknown family ${family}`);
  return `ledger_${family.replaceAll('-', '_')}`;
};

/** A refusal: the command wrote nothing, and says why. */
export class Refused extends Error {}

/**
 * Fills cad_rate (CAD per USD, as the Bank published it), cad_rate_date (the date of the rate used), cad_basis
 * (the price in CAD: price_usdc_units × rate / 10^6, exact) and clears cad_pending, for every pending row. A row's
 * rate is its UTC day's, else the prior business day's. Refused whole — nothing written — when the file is
 * malformed or does not cover every pending row's day.
 */
export function fillCad(where, fileText) {
  let rates;
  try {
    rates = parseRatesFile(fileText);
  } catch (e) {
    if (e instanceof RatesFileError) throw new Refused(`rates file refused, nothing written: ${e.message}`);
    throw e;
  }
  const [pending] = execute(where, 'SELECT family, tx_sig, day, price_usdc_units FROM ledger_cad WHERE cad_pending = 1 ORDER BY day');
  const uncovered = pending.filter((r) => rateFor(rates, r.day) === null);
  if (uncovered.length > 0) {
    const days = [...new Set(uncovered.map((r) => r.day))];
    throw new Refused(
      `rates file refused, nothing written: it covers ${rates.first} to ${rates.last}, but ${uncovered.length} pending ` +
      `row(s) fall outside it (days ${days.slice(0, 5).join(', ')}${days.length > 5 ? ', …' : ''}). Pending rows run ` +
      `from ${pending[0].day} to ${pending.at(-1).day}: download FXUSDCAD with start_date a week before the first ` +
      `(a weekend or holiday takes the business day before it) and end_date on or after the last.`);
  }
  // One (day, price) → block per family; every pending row of that day and price gets the same block.
  const blocks = new Map();
  const summary = { filled: 0, same_day: 0, prior_business_day: 0, first: rates.first, last: rates.last, by_family: {} };
  for (const r of pending) {
    const at = rateFor(rates, r.day);
    const key = `${r.family}\u0000${r.day}\u0000${r.price_usdc_units}`;
    if (!blocks.has(key)) {
      blocks.set(key, { family: r.family, day: r.day, price: r.price_usdc_units, ...at, basis: cadValue(r.price_usdc_units, at.rate) });
    }
    summary.filled++;
    summary[at.rule]++;
    summary.by_family[r.family] = (summary.by_family[r.family] ?? 0) + 1;
  }
  const statements = [];
  for (const family of FAMILIES) {
    const mine = [...blocks.values()].filter((b) => b.family === family);
    const table = tableOf(family);
    let values = [];
    let size = 0;
    const flush = () => {
      if (values.length === 0) return;
      statements.push(
        `WITH v(day, price, rate, rate_date, basis) AS (VALUES ${values.join(', ')}) ` +
        `UPDATE ${table} SET cad_rate = v.rate, cad_rate_date = v.rate_date, cad_basis = v.basis, cad_pending = 0 ` +
        `FROM v WHERE v.day = ${table}.day AND v.price = ${table}.price_usdc_units AND ${table}.cad_pending = 1`);
      values = [];
      size = 0;
    };
    for (const b of mine) {
      const tuple = `(${quote(b.day)}, ${Number(b.price)}, ${quote(b.rate)}, ${quote(b.rate_date)}, ${quote(b.basis)})`;
      if (size + tuple.length > MAX_COMMAND_BYTES / 2) flush();
      values.push(tuple);
      size += tuple.length + 2;
    }
    flush();
  }
  // Batched under the argument limit; a batch that fails leaves the rest pending, and a rerun fills them.
  let batch = [];
  let batchSize = 0;
  for (const s of statements) {
    if (batchSize + s.length > MAX_COMMAND_BYTES && batch.length) {
      execute(where, batch.join(';\n'));
      batch = [];
      batchSize = 0;
    }
    batch.push(s);
    batchSize += s.length + 2;
  }
  if (batch.length) execute(where, batch.join(';\n'));
  return summary;
}

const UNITS = /^(0|[1-9]\d{0,17})$/;

/**
 * Records `units` USDC base units as the refund of the call paid by transaction `txSig` (the refunded total for
 * that call, so a repeat is a no-op). Refuses an unknown signature, an amount above the price paid, and — unless
 * `replace` — a different refund already recorded for it.
 */
export function recordRefund(where, txSig, unitsText, { replace = false } = {}) {
  if (typeof txSig !== 'string' || txSig.length === 0 || txSig.length > 128) throw new Refused('give the transaction signature of the paid call');
  if (!UNITS.test(String(unitsText))) throw new Refused('the refund is a whole number of USDC base units (1 USDC = 1000000)');
  const units = BigInt(unitsText);
  if (units === 0n && !replace) throw new Refused('a refund of 0 records nothing (use --replace 0 to clear a refund recorded by mistake)');
  const [rows] = execute(where, `SELECT family, price_usdc_units, refund_usdc_units FROM ledger_cad WHERE tx_sig = ${quote(txSig)}`);
  if (rows.length === 0) throw new Refused('no paid call in the ledger has that transaction signature; nothing written');
  if (rows.length > 1) throw new Refused('that transaction signature is in more than one family ledger; nothing written');
  const row = rows[0];
  const price = BigInt(row.price_usdc_units);
  const before = BigInt(row.refund_usdc_units);
  if (units > price) throw new Refused(`a refund of ${units} units is above the ${price} units paid; nothing written`);
  if (units === before) return { family: row.family, refund_usdc_units: Number(units), price_usdc_units: Number(price), changed: false };
  if (before !== 0n && !replace) {
    throw new Refused(`a refund of ${before} units is already recorded for that call; pass --replace to set it to ${units}; nothing written`);
  }
  const table = tableOf(row.family);
  execute(where, `UPDATE ${table} SET refund_usdc_units = ${units} WHERE tx_sig = ${quote(txSig)} AND refund_usdc_units = ${before}`);
  const [[after]] = execute(where, `SELECT refund_usdc_units FROM ${table} WHERE tx_sig = ${quote(txSig)}`);
  if (BigInt(after.refund_usdc_units) !== units) throw new Error('the refund changed underneath this command; run it again');
  return { family: row.family, refund_usdc_units: Number(units), price_usdc_units: Number(price), changed: true };
}
