// `make bench` keeps its figures as data as well as printing them: scripts/bench.sh sets BENCH_OUT
// (target/bench), each driver writes its own section there as <name>.json, and scripts/bench-data.mjs
// merges the sections of one run into docs/bench/latest.json, from which scripts/bench-charts.mjs
// draws docs/bench/*.svg. Run alone (BENCH_OUT unset), a driver only prints, as before.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `data` as $BENCH_OUT/<name>.json when BENCH_OUT is set; otherwise does nothing. */
export function writeSection(name, data) {
  const dir = process.env.BENCH_OUT;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(data, null, 2) + '\n');
}

/** `x` to `digits` decimals, as a number (the data keeps what the printed line shows, and a bit more). */
export const round = (x, digits = 3) => Number(x.toFixed(digits));
