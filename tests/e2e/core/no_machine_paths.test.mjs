// The repository stands alone: no tracked file names a path on one machine (a quoted string
// starting at a home or work root). Needs no worker; it reads the files git tracks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../lib/worker.mjs';

// Built from parts so that this file does not match itself.
const MACHINE_PATH = new RegExp('[\'"`]/' + '(work|home|Users|root)/');
const TEXT = /\.(rs|mjs|js|ts|json|toml|sh|md|sql|txt|yml|yaml)$|^Makefile$/;

test('no tracked source names a machine path', () => {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT }).toString().split('\n')
    .filter((f) => TEXT.test(f.split('/').pop()));
  assert.ok(files.length > 50, `only ${files.length} tracked text files`);
  const found = [];
  for (const file of files) {
    let text;
    try { text = readFileSync(join(ROOT, file), 'utf8'); } catch { continue; }
    text.split('\n').forEach((line, i) => {
      if (MACHINE_PATH.test(line)) found.push(`${file}:${i + 1}`);
    });
  }
  assert.deepEqual(found, []);
});
