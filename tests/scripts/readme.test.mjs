// The README is what an agent or operator reads first, so what it names must be true (issue 45):
// every relative link and every repository path it quotes exists, every `make X` is a Makefile
// target, and its route table is the worker's route table, read from the source the router is built
// from (src/edge/routes.rs's service routes, src/edge/family.rs's family table) without starting
// anything. Each check is also run against a made-up case it must reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const LINE_LIMIT = 200;

/** Markdown link targets that point into the repository: [text](target), no scheme, no bare anchor. */
export function relativeLinks(markdown) {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
}

/** Repository paths quoted in code spans (`examples/solana/pay-and-verify.mjs`), placeholders left out. */
export function quotedPaths(markdown) {
  const top = 'bench|benches|corpus|docs|examples|fuzz|migrations|review|scripts|src|tests';
  return [...markdown.matchAll(new RegExp(`\`((?:${top})/[^\`\\s]*)\``, 'g'))].map((m) => m[1])
    .filter((p) => !/[<>*…]/.test(p));
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

function anchors(file) {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

/** Every problem with the link targets, resolved from ROOT. */
export function brokenLinks(targets, root = ROOT) {
  return targets.flatMap((target) => {
    const [path, anchor] = target.split('#');
    const file = join(root, decodeURIComponent(path));
    if (!existsSync(file)) return [`${target}: no such file`];
    if (anchor && statSync(file).isFile() && file.endsWith('.md') && !anchors(file).has(anchor)) {
      return [`${target}: no heading #${anchor} in ${relative(root, file)}`];
    }
    return [];
  });
}

/** The `make X` the text names (in code blocks and code spans). */
export const makeTargetsNamed = (markdown) => [...new Set([...markdown.matchAll(/\bmake ([a-z][a-z0-9-]*)/g)].map((m) => m[1]))];

/** The Makefile's targets. */
export const makefileTargets = (makefile) => new Set([...makefile.matchAll(/^([a-z][a-z0-9-]*):/gm)].map((m) => m[1]));

/** The (verb, path) pairs of the README's route table: the first cell's `GET /x` and `POST /y` spans. */
export function readmeRoutes(markdown) {
  const section = /^## Routes\n([\s\S]*?)(?=^## )/m.exec(markdown + '\n## end\n')?.[1] ?? '';
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1].matchAll(/`(GET|POST) (\/[^`\s]*)`/g)].map((m) => `${m[1]} ${m[2]}`));
}

const withoutTests = (rust) => rust.replace(/#\[cfg\(test\)\]\s*mod tests\s*\{[\s\S]*/, '');

/** `name: &str = "value"` constants of src/, keyed `module::NAME` (module: the file, or its folder for mod.rs). */
function stringConstants() {
  const constants = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.rs')) {
        const module = name === 'mod.rs' ? dirname(path).split('/').at(-1) : name.slice(0, -3);
        for (const m of readFileSync(path, 'utf8').matchAll(/const ([A-Z_][A-Z0-9_]*): &(?:'static )?str = "([^"]*)";/g)) {
          constants.set(`${module}::${m[1]}`, m[2]);
        }
      }
    }
  };
  walk(join(ROOT, 'src'));
  return constants;
}

/**
 * The worker's routes, read from its source: the service routes of src/edge/routes.rs (`get("/x", …)`
 * in SERVICE) and, per family in src/edge/family.rs, its document (`document_path`: GET) and its free
 * check and paid paths (`path`: POST, as routes.rs's family_routes builds them).
 */
export function sourceRoutes(routesRs, familyRs, constants) {
  const service = /const SERVICE[^=]*=\s*\[([\s\S]*?)\n\];/.exec(routesRs)?.[1] ?? '';
  const routes = [...service.matchAll(/\b(get|post)\(\s*"([^"]+)"/g)].map((m) => `${m[1].toUpperCase()} ${m[2]}`);
  for (const m of withoutTests(familyRs).matchAll(/\b(document_path|path): ("([^"]*)"|[A-Za-z_:]+),/g)) {
    let path = m[3];
    if (path === undefined) {
      const key = m[2].split('::').slice(-2).join('::');
      path = constants.get(key);
      if (path === undefined) throw new Error(`family.rs names ${m[2]}, which is no string constant in src/`);
    }
    routes.push(`${m[1] === 'document_path' ? 'GET' : 'POST'} ${path}`);
  }
  return routes;
}

test('README stays a short page: at most ~200 lines', () => {
  const lines = README.split('\n').length - 1;
  assert.ok(lines <= LINE_LIMIT, `README.md has ${lines} lines`);
});

test('every relative link and every quoted repository path in the README exists', () => {
  const links = relativeLinks(README);
  assert.ok(links.some((l) => l.startsWith('docs/')), 'the README links the docs');
  assert.deepEqual(brokenLinks(links), []);
  const paths = quotedPaths(README);
  assert.ok(paths.some((p) => p.startsWith('examples/')), 'the README quotes the examples');
  assert.deepEqual(paths.filter((p) => !existsSync(join(ROOT, p))), []);
  // The checks reject what they must.
  assert.deepEqual(relativeLinks('[a](docs/x.md) [b](https://x.org) [c](#here) [d](mailto:a@b)'), ['docs/x.md']);
  assert.equal(brokenLinks(['docs/no-such-file.md']).length, 1);
  assert.equal(brokenLinks(['docs/ARCHITECTURE.md#no-such-heading']).length, 1);
  assert.deepEqual(brokenLinks(['docs/ARCHITECTURE.md#4-payment']), []);
  assert.deepEqual(quotedPaths('`examples/a.mjs` `corpus/<family>/` `http://x/y`'), ['examples/a.mjs']);
});

test('every relative link in docs/*.md exists, anchors included (the pages the README sends readers to)', () => {
  const pages = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  assert.ok(pages.includes('payments.md') && pages.includes('benchmarks.md'), `docs: ${pages}`);
  for (const page of pages) {
    const text = readFileSync(join(ROOT, 'docs', page), 'utf8');
    const targets = relativeLinks(text);
    const local = [...text.matchAll(/\]\((#[^)\s]+)\)/g)].map((m) => `docs/${page}${m[1]}`);
    assert.deepEqual(brokenLinks([...targets.map((t) => join('docs', t)), ...local]), [], page);
  }
});

test('every `make X` in the README is a Makefile target, and the two commands are there', () => {
  const targets = makefileTargets(readFileSync(join(ROOT, 'Makefile'), 'utf8'));
  const named = makeTargetsNamed(README);
  assert.ok(named.includes('dev') && named.includes('test'), `make targets named: ${named}`);
  assert.deepEqual(named.filter((t) => !targets.has(t)), []);
  assert.ok(!targets.has('no-such-target') && makeTargetsNamed('run `make no-such-target`').length === 1);
  assert.match(README, /^## The two commands$/m);
});

test('the README route table is the route table the worker is built from', () => {
  const src = (p) => readFileSync(join(ROOT, p), 'utf8');
  const served = sourceRoutes(src('src/edge/routes.rs'), src('src/edge/family.rs'), stringConstants());
  // The parse found the table (known routes of each kind: service, document, free check, paid, a constant's).
  for (const known of ['GET /', 'GET /openapi.json', 'GET /token-efficiency/criteria', 'POST /token-efficiency/precheck',
    'POST /context-composition/audit', 'POST /v1/x402/context-budget-pack', 'POST /v1/mpp/context-budget-pack']) {
    assert.ok(served.includes(known), `${known} not found in the source route table: ${served}`);
  }
  assert.equal(new Set(served).size, served.length, 'a route twice');
  const documented = readmeRoutes(README);
  assert.ok(documented.length > 0, 'no route table under "## Routes"');
  assert.deepEqual(documented.filter((r) => !served.includes(r)), [], 'in the README but not served');
  assert.deepEqual(served.filter((r) => !documented.includes(r)), [], 'served but not in the README');
  // The parsers reject what they must.
  assert.deepEqual(readmeRoutes('## Routes\n| `GET /a` · `POST /b` | x |\n| other |\n## Next\n| `GET /c` |'), ['GET /a', 'POST /b']);
  assert.throws(() => sourceRoutes('', 'path: nowhere::MISSING,', new Map()), /no string constant/);
});
