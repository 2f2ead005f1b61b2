// The scripts find the release wasm where scripts/build.sh writes it (build/index_bg.wasm, through
// scripts/env.sh's worker_wasm), and a missing wasm fails them instead of passing silently: run by
// `make test` before anything is built (issue 28: scripts/test.sh hid a missing wasm with `|| true`,
// and the size check also accepted a stale build/worker/*.wasm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The smallest valid wasm module: magic and version.
const EMPTY_MODULE = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);

// A scratch checkout holding only scripts/env.sh and scripts/bundle-size.sh, plus `files`.
const scratch = (files) => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-scripts-'));
  mkdirSync(join(dir, 'scripts'));
  for (const name of ['env.sh', 'bundle-size.sh']) copyFileSync(join(ROOT, 'scripts', name), join(dir, 'scripts', name));
  writeFileSync(join(dir, 'Cargo.lock'), '');
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
  return dir;
};
const run = (dir, script) => spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8' });

test('worker_wasm fails in a checkout without a wasm and names build/index_bg.wasm when there is one', () => {
  for (const files of [{}, { 'build/worker/index_bg.wasm': EMPTY_MODULE }, { 'build/other.wasm': EMPTY_MODULE }]) {
    const dir = scratch(files);
    const r = run(dir, 'source scripts/env.sh && worker_wasm');
    rmSync(dir, { recursive: true });
    assert.notEqual(r.status, 0, `found a wasm among ${Object.keys(files)}: ${r.stdout}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /run scripts\/build\.sh/);
  }
  const dir = scratch({ 'build/index_bg.wasm': EMPTY_MODULE });
  const r = run(dir, 'source scripts/env.sh && worker_wasm');
  rmSync(dir, { recursive: true });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), join(dir, 'build', 'index_bg.wasm'));
});

test('bundle-size.sh fails without the wasm build.sh writes, even beside a stale one, and measures it when present', () => {
  for (const files of [{}, { 'build/worker/index_bg.wasm': EMPTY_MODULE }]) {
    const dir = scratch(files);
    const r = run(dir, 'bash scripts/bundle-size.sh');
    rmSync(dir, { recursive: true });
    assert.notEqual(r.status, 0, `passed with ${Object.keys(files)}: ${r.stdout}`);
    assert.match(r.stdout + r.stderr, /no wasm/);
  }
  const dir = scratch({ 'build/index_bg.wasm': EMPTY_MODULE });
  const r = run(dir, 'bash scripts/bundle-size.sh');
  rmSync(dir, { recursive: true });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /build\/index_bg\.wasm 8 B, gzip -9 \d+ B/);
});

test('test.sh and bench.sh never forgive a failure to find or measure the wasm', () => {
  for (const name of ['test.sh', 'bench.sh', 'build.sh']) {
    const lines = readFileSync(join(ROOT, 'scripts', name), 'utf8').split('\n');
    const hidden = lines.filter((l) => /wasm|bundle-size|build\.sh/.test(l) && /\|\|\s*true/.test(l));
    assert.deepEqual(hidden, [], `${name} hides a wasm failure`);
    assert.ok(!lines.some((l) => /build\/worker\/\*?\.?wasm|build\/\*\.wasm/.test(l)), `${name} looks for the wasm elsewhere`);
  }
  // Both build the bundle through scripts/build.sh and measure it with scripts/bundle-size.sh.
  for (const name of ['test.sh', 'bench.sh']) {
    const text = readFileSync(join(ROOT, 'scripts', name), 'utf8');
    assert.match(text, /bash scripts\/build\.sh/);
    assert.match(text, /bash scripts\/bundle-size\.sh/);
  }
});
