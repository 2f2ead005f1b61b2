// Holds every response an e2e suite receives to the worker's own OpenAPI document: the status must
// be documented for the route (or be the 404 NOT COVERED of a path or method the table lacks), and
// a JSON body must validate (ajv, JSON Schema 2020-12) against that status's schema. The document
// is read once per worker from its GET /openapi.json.
//
//   import { checkedFetch } from './lib/schema.mjs';
//   const fetch = checkedFetch;   // every fetch of the suite is now checked; the response is unchanged
import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020.js';

const documents = new Map(); // origin -> Promise<{ doc, ajv }>
let checked = 0;

function documentFor(origin) {
  if (!documents.has(origin)) {
    documents.set(origin, (async () => {
      const doc = await (await globalThis.fetch(`${origin}/openapi.json`)).json();
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      ajv.addSchema(doc, 'openapi');
      return { doc, ajv };
    })());
  }
  return documents.get(origin);
}

const pointer = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Asserts that (method, url, status, body text) is an answer the document describes.
 * @returns {Promise<void>}
 */
export async function assertDocumented(method, url, status, contentType, text) {
  const { origin, pathname } = new URL(url);
  const { doc, ajv } = await documentFor(origin);
  const verb = method.toLowerCase();
  const operation = doc.paths[pathname]?.[verb];
  if (!operation || status === 404) {
    assert.equal(status, 404, `${method} ${pathname}: not in the document, yet answered ${status}`);
    assert.equal(text, 'NOT COVERED');
    return;
  }
  const response = operation.responses[String(status)];
  assert.ok(response, `${method} ${pathname}: status ${status} is not documented`);
  if (!/^application\/json/.test(contentType ?? '')) {
    assert.ok(!response.content?.['application/json'], `${method} ${pathname} ${status}: JSON documented, ${contentType} sent`);
    return;
  }
  const ref = `openapi#/paths/${pointer(pathname)}/${verb}/responses/${status}/content/${pointer('application/json')}/schema`;
  const validate = ajv.getSchema(ref);
  assert.ok(validate, `${method} ${pathname} ${status}: no JSON schema`);
  const body = JSON.parse(text);
  if (!validate(body)) {
    assert.fail(`${method} ${pathname} ${status} does not match its schema: ${ajv.errorsText(validate.errors)}`);
  }
  checked += 1;
}

/** A fetch that checks each answer against the document before handing it back unchanged. */
export async function checkedFetch(input, init = {}) {
  const url = typeof input === 'string' ? input : input.url;
  const method = init.method ?? (typeof input === 'string' ? 'GET' : input.method);
  // A GET (nothing counted) that fails on the connection — a pooled socket the server closed while
  // the suite sat in a synchronous wrangler call — is sent once more; nothing else is retried.
  const res = await globalThis.fetch(input, init).catch((e) => {
    if (method.toUpperCase() !== 'GET') throw e;
    return globalThis.fetch(input, init);
  });
  if (!new URL(url).pathname.endsWith('/openapi.json')) {
    const text = await res.clone().text();
    await assertDocumented(method, url, res.status, res.headers.get('content-type'), text);
  }
  return res;
}

/** How many JSON bodies were validated so far (suites assert it is not zero). */
export const validatedBodies = () => checked;
