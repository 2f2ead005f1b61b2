// The last step of `make bench` (scripts/bench.sh): merges the sections its steps wrote to
// target/bench/ (bench/section.mjs) into one file, docs/bench/latest.json, with when the run was and
// on what machine, so a figure is never read without them. A run missing a section writes nothing:
// the committed data is always one whole run.
//   node scripts/bench-data.mjs target/bench docs/bench/latest.json
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Each step's section: written as data (.json) or, for the steps whose lines are only printed, as
// those lines (.txt).
export const SECTIONS = {
  json: ['tokenizer-native', 'tokenizer-node', 'bundle', 'first-request', 'composition-workerd', 'mcp-workerd',
    'tokenizer-workerd', 'token-efficiency-native', 'token-efficiency-workerd'],
  text: ['tokenizer-ab', 'composition-native', 'toon-native'],
};

const read = (dir, name) => readFileSync(join(dir, name), 'utf8');
const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8' }).trim();

function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1].trim() ?? 'unknown';
  return {
    cpu: model,
    cores: availableParallelism(),
    memory_gib: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    rustc: run('rustc', ['--version']),
  };
}

export function merge(dir) {
  const missing = [...SECTIONS.json.map((n) => `${n}.json`), ...SECTIONS.text.map((n) => `${n}.txt`),
    'started.txt', 'finished.txt', 'commit.txt', 'changes.txt', 'loadavg-start.txt', 'loadavg-end.txt'].filter((f) => !existsSync(join(dir, f)));
  if (missing.length) throw new Error(`${dir}: not a whole run of make bench, missing ${missing.join(', ')}`);
  const sections = {};
  for (const name of SECTIONS.json) sections[name] = JSON.parse(read(dir, `${name}.json`));
  for (const name of SECTIONS.text) {
    sections[name] = { lines: read(dir, `${name}.txt`).split('\n').filter((l) => l.trim() !== '') };
  }
  const load = (f) => read(dir, f).trim().split(/\s+/).map(Number);
  return {
    source: 'make bench',
    run: {
      started: read(dir, 'started.txt').trim(),
      finished: read(dir, 'finished.txt').trim(),
      // As the run began (scripts/bench.sh): the commit measured, and whether tracked files other than the docs differed from it.
      commit: read(dir, 'commit.txt').trim(),
      uncommitted_changes: read(dir, 'changes.txt').trim() !== '',
      load_average_start: load('loadavg-start.txt'),
      load_average_end: load('loadavg-end.txt'),
    },
    machine: machine(),
    sections,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, out] = process.argv.slice(2);
  if (!dir || !out) throw new Error('usage: node scripts/bench-data.mjs target/bench docs/bench/latest.json');
  const data = merge(dir);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(data, null, 2) + '\n');
  console.log(`wrote ${out}`);
}
