// Exact non-negative decimals as (BigInt digits, scale) pairs: the CAD rates are kept as the Bank published them,
// the CAD values are products of integer USDC units and those rates, and every sum is exact. No float touches an
// amount that is stored or printed.

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Parses "1.3456" into { digits: 13456n, scale: 4 }; null when `text` is not a plain non-negative decimal. */
export function parseDecimal(text) {
  const m = DECIMAL.exec(String(text));
  if (!m) return null;
  const fraction = m[2] ?? '';
  return { digits: BigInt(m[1] + fraction), scale: fraction.length };
}

/** Writes digits / 10^scale with its trailing zeros trimmed down to `minDecimals`. */
export function formatDecimal({ digits, scale }, minDecimals = 2) {
  let text = digits.toString().padStart(scale + 1, '0');
  let whole = text.slice(0, text.length - scale);
  let fraction = text.slice(text.length - scale);
  while (fraction.length > minDecimals && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  fraction = fraction.padEnd(minDecimals, '0');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** USDC base units (6 decimals) as USDC. */
export function usdcText(units) {
  return formatDecimal({ digits: BigInt(units), scale: 6 });
}

/** The CAD value of `units` USDC base units at `rate` CAD per USD: exact, as a decimal string. */
export function cadValue(units, rate) {
  const r = parseDecimal(rate);
  if (!r) throw new Error(`not a decimal rate: ${rate}`);
  return formatDecimal({ digits: BigInt(units) * r.digits, scale: 6 + r.scale });
}

/** The exact sum of decimal strings. */
export function sumDecimals(texts, minDecimals = 2) {
  const parts = texts.map((t) => {
    const p = parseDecimal(t);
    if (!p) throw new Error(`not a decimal: ${t}`);
    return p;
  });
  const scale = Math.max(0, ...parts.map((p) => p.scale));
  const digits = parts.reduce((acc, p) => acc + p.digits * 10n ** BigInt(scale - p.scale), 0n);
  return formatDecimal({ digits, scale }, minDecimals);
}
