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

/** The `use` tree `text` (`a::{b, c::{d, e as f}, self}`) as its leaf paths (`a::b`, `a::c::d`, `a::c::e`, `a`). */
function useLeaves(text) {
  const open = text.indexOf('{');
  if (open < 0) {
    const path = text.trim().replace(/\s+as\s+\w+$/, '').replace(/\s+/g, '');
    return path === '' ? [] : [path];
  }
  const prefix = text.slice(0, open).trim().replace(/::$/, '');
  const items = [];
  let depth = 0;
  let from = open + 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && depth-- === 0) {
      items.push(text.slice(from, i));
      break;
    } else if (text[i] === ',' && depth === 0) {
      items.push(text.slice(from, i));
      from = i + 1;
    }
  }
  return items.flatMap((item) =>
    useLeaves(item).map((leaf) => (leaf === 'self' || leaf === '*' ? prefix : `${prefix}::${leaf}`)),
  );
}

/**
 * The import graph between the files of one crate, given as {relative path: source}. An edge goes
 * from a file to the file that declares what a `crate::…`, `super::…` or `self::…` path names,
 * whether in a `use` (groups `{…}` read leaf by leaf) or inline in code (`super::evm::served_rules()`),
 * and through a module's `pub use` re-exports to the file that declares the item; tests
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
  const codeOf = (text) =>
    text.replace(/#\[cfg\(test\)\]\s*mod tests\s*\{[\s\S]*/, '').replace(/\/\/[^\n]*/g, '');
  // `super` names the parent of the module a file declares, whether it is a/b.rs or a/b/mod.rs.
  const absolute = (me, parts) => {
    if (parts[0] === 'crate') return parts.slice(1);
    let base = me;
    let i = 0;
    for (; parts[i] === 'super' || parts[i] === 'self'; i++) if (parts[i] === 'super') base = base.slice(0, -1);
    return [...base, ...parts.slice(i)];
  };
  // A module's `pub use` re-exports: item name -> the absolute path it stands for.
  const reexports = new Map();
  for (const [file, text] of Object.entries(sources)) {
    const me = modulePath(file);
    const names = new Map();
    for (const [, tree] of codeOf(text).matchAll(/\bpub(?:\([a-z]+\))?\s+use\s+([^;]+);/g)) {
      for (const leaf of useLeaves(tree)) {
        const parts = leaf.split('::');
        const relative = ['crate', 'super', 'self'].includes(parts[0]) ? parts : ['self', ...parts];
        if (parts.at(-1) !== '*') names.set(parts.at(-1), absolute(me, relative));
      }
    }
    reexports.set(me.join('::'), names);
  }
  const resolve = (path, depth = 0) => {
    const to = owner(path);
    if (to === null) return null;
    const length = to.split('::').length;
    const through = path.length > length ? reexports.get(to)?.get(path[length]) : undefined;
    return through && depth < 8 ? resolve([...through, ...path.slice(length + 1)], depth + 1) ?? to : to;
  };
  const edges = new Map();
  for (const [file, text] of Object.entries(sources)) {
    const me = modulePath(file);
    const self = me.join('::');
    const code = codeOf(text);
    const paths = [];
    const plain = code.replace(/\buse\s+([^;]+);/g, (_, tree) => {
      paths.push(...useLeaves(tree));
      return ' ';
    });
    for (const [path] of plain.matchAll(/\b(?:crate|super|self)(?:::[A-Za-z_0-9]+)+/g)) paths.push(path);
    const targets = new Set();
    for (const path of paths) {
      const parts = path.split('::');
      if (!['crate', 'super', 'self'].includes(parts[0])) continue;
      const to = resolve(absolute(me, parts));
      if (to !== null && to !== self && !(self + '::').startsWith(to + '::')) targets.add(to);
    }
    edges.set(self, targets);
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

test('the cycle finder reads use groups, inline paths from a mod.rs, and re-exports to the declaring file', () => {
  // x/mod.rs's `super::` is the crate root (not x): its inline call closes the ring a -> x -> a.
  const inline = cycles(importGraph({
    'lib.rs': 'pub mod a; pub mod x;',
    'a.rs': 'use crate::x::{self, y::{f, g as h}};',
    'x/mod.rs': 'pub mod y; fn z() { super::a::served() }',
    'x/y.rs': '',
  }));
  assert.deepEqual(inline, [['a', 'x']]);
  // p names the parent's re-export of q's item: the edge goes to q, and q's group import of p closes it.
  const reexported = cycles(importGraph({
    'lib.rs': '',
    'm/mod.rs': 'mod q; pub mod p; pub use q::{Thing, other};',
    'm/p.rs': 'use super::Thing;',
    'm/q.rs': 'use super::{p::helper, Thing as _};',
  }));
  assert.deepEqual(reexported, [['m::p', 'm::q']]);
  // A child naming its own parent's items is not a loop, through a group or not.
  const parent = cycles(importGraph({
    'lib.rs': '',
    'm/mod.rs': 'pub mod p; pub use p::f;',
    'm/p.rs': 'use super::{g, h}; use crate::m::k;',
  }));
  assert.deepEqual(parent, []);
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
