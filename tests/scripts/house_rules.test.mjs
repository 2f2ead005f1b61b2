// The layout rules of issue 28 that no compiler keeps (ARCHITECTURE §1): no two modules of the
// worker import each other (directly or round a longer loop), no source file passes 700 lines, and
// no crate compiles another's file by `#[path]`. Each rule is also run against a small made-up tree
// that breaks it, so the check itself is shown able to fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const LINE_LIMIT = 700;

function rustFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'target' || name === 'node_modules' ? [] : rustFiles(path);
    return name.endsWith('.rs') ? [path] : [];
  });
}

/** Module path of a file below a crate's source root: a/b.rs and a/b/mod.rs are both a::b. */
function modulePath(file) {
  const parts = file.replace(/\.rs$/, '').split('/');
  const last = parts.at(-1);
  if (last === 'mod' || last === 'lib') parts.pop();
  return parts;
}

/**
 * The import graph between the files of one crate, given as {relative path: source}. An edge goes
 * from a file to the file that declares what a `crate::…` or `super::…` path names; tests
 * (`#[cfg(test)] mod tests`) and comments are left out, and so is a child's use of its own
 * ancestors (a module and the `mod.rs` that declares it are one unit in Rust).
 */
export function importGraph(sources) {
  const modules = new Map(Object.keys(sources).map((file) => [modulePath(file).join('::'), file]));
  const owner = (path) => {
    for (let i = path.length; i > 0; i--) {
      const name = path.slice(0, i).join('::');
      if (modules.has(name)) return name;
    }
    return null;
  };
  const edges = new Map();
  for (const [file, text] of Object.entries(sources)) {
    const me = modulePath(file);
    const isDirModule = /(^|\/)(mod|lib)\.rs$/.test(file);
    const code = text.replace(/#\[cfg\(test\)\]\s*mod tests\s*\{[\s\S]*/, '').replace(/\/\/[^\n]*/g, '');
    const targets = new Set();
    for (const [path] of code.matchAll(/\b(?:crate|super)(?:::[a-z_0-9]+)+/g)) {
      const parts = path.split('::');
      let target;
      if (parts[0] === 'crate') target = parts.slice(1);
      else {
        let base = isDirModule ? [...me] : me.slice(0, -1);
        let i = 0;
        while (parts[i] === 'super') {
          if (i > 0) base = base.slice(0, -1);
          i++;
        }
        target = [...base, ...parts.slice(i)];
      }
      const to = owner(target);
      const self = me.join('::');
      if (to !== null && to !== self && !(self + '::').startsWith(to + '::')) targets.add(to);
    }
    edges.set(me.join('::'), targets);
  }
  return edges;
}

/** Every strongly connected set of more than one module (Tarjan), each sorted. */
export function cycles(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Directories below `dir` that hold a Cargo.toml: the crates nested in the worker's source tree. */
function nestedCrates(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (!statSync(path).isDirectory()) return [];
    const here = readdirSync(path).includes('Cargo.toml') ? [path] : [];
    return [...here, ...nestedCrates(path)];
  });
}

/** Each crate in src/ as {root, sources}: the worker's own files leave the nested crates out. */
function crates() {
  const src = join(ROOT, 'src');
  const nested = nestedCrates(src);
  const worker = rustFiles(src).filter((f) => !nested.some((d) => f.startsWith(d + sep)));
  return [[src, worker], ...nested.map((d) => [join(d, 'src'), rustFiles(join(d, 'src'))])].map(([root, files]) => ({
    root,
    sources: Object.fromEntries(files.map((f) => [relative(root, f).split(sep).join('/'), readFileSync(f, 'utf8')])),
  }));
}

test('the cycle finder sees a loop between two siblings and round three modules, and none in a tree', () => {
  const loop = cycles(importGraph({
    'lib.rs': 'pub mod a; pub mod b;',
    'a.rs': 'use crate::b::thing;',
    'b.rs': 'use super::a::other;',
  }));
  assert.deepEqual(loop, [['a', 'b']]);
  const ring = cycles(importGraph({
    'lib.rs': '',
    'x/mod.rs': 'pub mod p; pub mod q;',
    'x/p.rs': 'use super::q::f;',
    'x/q.rs': 'use crate::r::g;',
    'r.rs': 'use crate::x::p::h;',
  }));
  assert.deepEqual(ring, [['r', 'x::p', 'x::q']]);
  const tree = cycles(importGraph({
    'lib.rs': '',
    'x/mod.rs': 'pub mod p; use p::f;',
    'x/p.rs': 'use super::helper; use crate::r::g;',
    'r.rs': '// use crate::x::p::h; (a comment, not an import)\n#[cfg(test)]\nmod tests { use crate::x::p::h; }',
  }));
  assert.deepEqual(tree, []);
});

test('no module of any crate in src/ imports another that imports it back', () => {
  for (const { root, sources } of crates()) {
    assert.ok(Object.keys(sources).length > 0, root);
    assert.deepEqual(cycles(importGraph(sources)), [], `import cycle in ${relative(ROOT, root)}`);
  }
});

test(`no source file in src/ passes ${LINE_LIMIT} lines, and none compiles another's file by #[path]`, () => {
  const files = rustFiles(join(ROOT, 'src'));
  assert.ok(files.length > 100);
  const long = files
    .map((f) => [relative(ROOT, f), readFileSync(f, 'utf8').split('\n').length - 1])
    .filter(([, lines]) => lines > LINE_LIMIT);
  assert.deepEqual(long, []);
  const pathAttribute = /^\s*#\[path\s*=/m;
  assert.ok(pathAttribute.test('#[path = "../x.rs"]\nmod x;'));
  const withPath = [...files, ...rustFiles(join(ROOT, 'tests')), ...rustFiles(join(ROOT, 'fuzz'))]
    .filter((f) => pathAttribute.test(readFileSync(f, 'utf8')))
    .map((f) => relative(ROOT, f));
  assert.deepEqual(withPath, []);
});
