// The Bank of Canada's daily USD/CAD series (FXUSDCAD, CAD per USD) read from a file the reviewer downloaded from
// the Bank's Valet service, in either format it publishes:
//   JSON  https://www.bankofcanada.ca/valet/observations/FXUSDCAD/json?start_date=…&end_date=…
//         { "terms": …, "seriesDetail": { "FXUSDCAD": … }, "observations": [ { "d": "2026-01-05", "FXUSDCAD": { "v": "1.3456" } }, … ] }
//   CSV   https://www.bankofcanada.ca/valet/observations/FXUSDCAD/csv?start_date=…&end_date=…
//         quoted sections ("TERMS AND CONDITIONS", "SERIES", …), then "OBSERVATIONS", the header "date","FXUSDCAD"
//         and one "YYYY-MM-DD","rate" line per business day.
// A group download (e.g. FX_RATES_DAILY) is read the same way through its FXUSDCAD column. Anything else — no
// FXUSDCAD series, a bad date or rate, a repeated date, trailing content, a week without a rate — is refused whole.

export const SERIES = 'FXUSDCAD';
/** The longest run of calendar days between two published rates a complete file can show (weekend + holidays). */
export const MAX_GAP_DAYS = 7;

export class RatesFileError extends Error {}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const RATE = /^\d+(\.\d+)?$/;

function validDay(text) {
  if (typeof text !== 'string' || !DAY.test(text)) return false;
  const t = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === text;
}

function dayNumber(day) {
  return Date.parse(`${day}T00:00:00Z`) / 86_400_000;
}

function checkedObservation(date, rate, where) {
  if (!validDay(date)) throw new RatesFileError(`${where}: the date ${JSON.stringify(date)} is not a YYYY-MM-DD calendar day`);
  if (typeof rate !== 'string' || !RATE.test(rate) || !/[1-9]/.test(rate)) {
    throw new RatesFileError(`${where} (${date}): the ${SERIES} rate ${JSON.stringify(rate)} is not a positive decimal`);
  }
  return { date, rate };
}

function fromJson(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new RatesFileError('the file starts like JSON but does not parse as JSON');
  }
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.observations)) {
    throw new RatesFileError('the JSON has no "observations" array (not a Valet observations file)');
  }
  if (doc.seriesDetail !== undefined && !(doc.seriesDetail && SERIES in doc.seriesDetail)) {
    throw new RatesFileError(`the JSON's seriesDetail does not list ${SERIES}: download the FXUSDCAD series`);
  }
  return doc.observations.map((o, i) => {
    const where = `observation ${i + 1}`;
    if (!o || typeof o !== 'object') throw new RatesFileError(`${where} is not an object`);
    if (!o[SERIES] || typeof o[SERIES] !== 'object') throw new RatesFileError(`${where} (${o.d}) has no ${SERIES} value`);
    return checkedObservation(o.d, o[SERIES].v, where);
  });
}

/** One CSV line's fields (RFC 4180 quoting, as the Bank writes it). */
function csvFields(line, lineNo) {
  const fields = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new RatesFileError(`line ${lineNo}: an unterminated quoted field`);
        if (line[i] === '"') {
          if (line[i + 1] === '"') { field += '"'; i += 2; continue; }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') throw new RatesFileError(`line ${lineNo}: text after a quoted field`);
    } else {
      while (i < line.length && line[i] !== ',') field += line[i++];
    }
    fields.push(field.trim());
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

function fromCsv(text) {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l) => l.trim() === '"OBSERVATIONS"' || l.trim() === 'OBSERVATIONS');
  if (start < 0) throw new RatesFileError('the CSV has no "OBSERVATIONS" section (not a Valet observations file)');
  const header = csvFields(lines[start + 1] ?? '', start + 2);
  const column = header.indexOf(SERIES);
  if (header[0] !== 'date' || column < 0) {
    throw new RatesFileError(`the CSV's observations header is not "date",…"${SERIES}": download the FXUSDCAD series`);
  }
  const out = [];
  let i = start + 2;
  for (; i < lines.length && lines[i].trim() !== ''; i++) {
    const fields = csvFields(lines[i], i + 1);
    if (fields.length !== header.length) {
      throw new RatesFileError(`line ${i + 1}: ${fields.length} fields where the header has ${header.length}`);
    }
    out.push(checkedObservation(fields[0], fields[column], `line ${i + 1}`));
  }
  for (; i < lines.length; i++) {
    if (lines[i].trim() !== '') throw new RatesFileError(`line ${i + 1}: unexpected content after the observations`);
  }
  return out;
}

/**
 * Parses a Valet FXUSDCAD file. Returns the observations in date order with the first and last dates; throws
 * RatesFileError naming what is wrong.
 */
export function parseRatesFile(raw) {
  const text = String(raw).replace(/^\uFEFF/, '');
  const observations = text.trimStart().startsWith('{') ? fromJson(text) : fromCsv(text);
  if (observations.length === 0) throw new RatesFileError(`the file holds no ${SERIES} observations`);
  observations.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  for (let i = 1; i < observations.length; i++) {
    const [prev, cur] = [observations[i - 1], observations[i]];
    if (prev.date === cur.date) throw new RatesFileError(`the date ${cur.date} appears twice`);
    const gap = dayNumber(cur.date) - dayNumber(prev.date);
    if (gap > MAX_GAP_DAYS) {
      throw new RatesFileError(
        `incomplete: no rate between ${prev.date} and ${cur.date} (${gap} days; a complete daily series never goes more than ${MAX_GAP_DAYS})`);
    }
  }
  return { observations, first: observations[0].date, last: observations.at(-1).date };
}

/** True when every day after `last` up to `day` is a Saturday or Sunday (the Bank publishes on business days). */
function onlyWeekendAfter(last, day) {
  for (let n = dayNumber(last) + 1; n <= dayNumber(day); n++) {
    const weekday = new Date(n * 86_400_000).getUTCDay();
    if (weekday !== 0 && weekday !== 6) return false;
  }
  return true;
}

/**
 * The rate for a UTC day: that day's own, else the prior business day's (the latest published before it). The
 * criteria name no rule for days without a rate, so this is the prior-business-day rule. Returns null when the
 * file cannot answer for the day: before its first date, or after its last unless only a weekend lies between.
 */
export function rateFor(rates, day) {
  if (day < rates.first || (day > rates.last && !onlyWeekendAfter(rates.last, day))) return null;
  let lo = 0;
  let hi = rates.observations.length - 1;
  while (lo < hi) { // the last observation dated on or before `day`
    const mid = (lo + hi + 1) >> 1;
    if (rates.observations[mid].date <= day) lo = mid; else hi = mid - 1;
  }
  const o = rates.observations[lo];
  return { rate: o.rate, rate_date: o.date, rule: o.date === day ? 'same_day' : 'prior_business_day' };
}
