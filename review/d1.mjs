// The one way the review commands reach D1: wrangler's own `d1 execute --json`, on the local database (optionally
// a --persist-to directory) or, with `remote`, the deployed one. Wrangler holds whatever credentials that needs;
// nothing here reads or passes any.
import { execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WRANGLER = process.env.WRANGLER_BIN || join(ROOT, 'node_modules', '.bin', 'wrangler');
const DATABASE = 'context-meter';
// Linux refuses a single argument over 128 KiB; statements are batched well under it.
export const MAX_COMMAND_BYTES = 100_000;

/** Where the commands read and write: `{ remote: true }`, or local with an optional persistence directory. */
export function target({ remote = false, persistTo = null } = {}) {
  return { remote, persistTo, label: remote ? 'remote D1 (deployed)' : `local D1${persistTo ? ` (${persistTo})` : ''}` };
}

/** Runs `sql` (one or more statements) and returns one array of result rows per statement. */
export function execute(where, sql) {
  const args = ['d1', 'execute', DATABASE, where.remote ? '--remote' : '--local'];
  if (!where.remote && where.persistTo) args.push('--persist-to', where.persistTo);
  args.push('--json', '--command', sql);
  let out;
  // Wrangler's local D1 has died on an internal assertion ("false == true") on a loaded machine, on a
  // statement that runs everywhere else. Every statement sent here is a read or an UPDATE that is a
  // compare-and-set or sets the same values again, so a local command that died so runs again, at
  // most three times in all; anything else is refused at once.
  for (let attempt = 1; out === undefined; attempt++) {
    try {
      out = execFileSync(WRANGLER, args, {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_UPDATE_NOTIFIER: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 512 * 1024 * 1024,
      });
    } catch (e) {
      const said = `${e.stdout ?? ''}`.trim() || `${e.stderr ?? ''}`.trim() || e.message;
      if (!where.remote && attempt < 3 && said.includes('false == true')) continue;
      const hint = /no such table: (review_|ledger_cad)/.test(said)
        ? `\nThe review views are missing: apply the migrations (npx wrangler d1 migrations apply context-meter ${where.remote ? '--remote' : '--local'}).`
        : '';
      throw new Error(`wrangler d1 execute failed on ${where.label}:\n${said}${hint}`);
    }
  }
  const parsed = JSON.parse(out.toString());
  return parsed.map((r) => r.results);
}

/** SQL string literal. */
export function quote(value) {
  return `'${String(value).replaceAll("'", "''")}'`;
}
