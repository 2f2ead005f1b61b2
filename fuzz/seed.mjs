// Builds the fuzz seed corpora (fuzz/corpus/<target>/) from the project's own corpora
// (corpus/*/), the payment fixtures (tests/e2e/x402/fixtures/) and the real records in
// ../shared/samples (when present). Deterministic; safe to re-run (files are named by their
// SHA-1, as libFuzzer names its own). The seeds are not committed: this script regenerates them.
//
// Each seed starts with the harness's mode byte (see tests/support/src/fuzz_harness/*.rs): 0x00 = raw body,
// odd = a body the harness builds around the rest.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");
const out = join(here, "corpus");
const CANARY = "\u{E000}";
const counts = {};

function seed(target, ...parts) {
  const bytes = Buffer.concat(
    parts.map((p) => (typeof p === "number" ? Buffer.from([p]) : Buffer.isBuffer(p) ? p : Buffer.from(p, "utf8"))),
  );
  const dir = join(out, target);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, createHash("sha1").update(bytes).digest("hex")), bytes);
  counts[target] = (counts[target] ?? 0) + 1;
}

const json = (path) => JSON.parse(readFileSync(join(root, path), "utf8"));
// The third-party samples: `shared/samples` beside the repository, or beside one of its ancestors
// (a worktree nested deeper). Without them the seeds come from the repository alone.
function besideAncestor(dir, rel) {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = resolve(at, "..", rel);
    if (existsSync(candidate)) return candidate;
    if (dirname(at) === at) return undefined;
  }
}
const samplesDir = besideAncestor(root, "shared/samples");
if (!samplesDir) console.log("fuzz/seed.mjs: no shared/samples beside the repository; seeding from the repository only");

// ── token_efficiency ──────────────────────────────────────────────────────────────────────────
const TE_MAX = 65536;
const teCorpus = json("corpus/token-efficiency/corpus.json");
for (const c of teCorpus.cases) {
  const body = c.body_base64 ? Buffer.from(c.body_base64, "base64") : Buffer.from(c.body, "utf8");
  if (body.length > TE_MAX) continue;
  seed("token_efficiency", 0x00, body);
  let parsed;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    continue;
  }
  if (typeof parsed?.payload !== "string" || !Number.isInteger(parsed.budget_tokens)) continue;
  const budget = Math.min(parsed.budget_tokens, 2047) - 1;
  // mode 0x01: budget (2 bytes), reserve, flags (bit0 reserve, bit1 caller), keep mask, payload.
  seed("token_efficiency", 0x01, Buffer.from([budget >> 8, budget & 0xff, 0, 0x02, 0x00]), parsed.payload);
  seed("token_efficiency", 0x01, Buffer.from([budget >> 8, budget & 0xff, 1, 0x03, 0xff]), parsed.payload);
}
for (const p of [
  `{"id":"${CANARY}","results":[{"title":"a","text":"${"w ".repeat(1500)}"},{"title":"a"}],"meta":null,"a":{"b":""}}`,
  `[1,1,1,{"a":[],"b":{}},{"a":[],"b":{}},"${"x".repeat(2100)}"]`,
  `{"2":1,"1":[null,null],"a.b":{"c":""},"a":{"b.c":""}}`,
  `not json ${CANARY} but text `.repeat(40),
]) {
  for (const budget of [3, 20, 200]) seed("token_efficiency", 0x01, Buffer.from([0, budget, 0, 0x02, 0x3f]), p);
}

// ── composition ───────────────────────────────────────────────────────────────────────────────
const CC_MAX = 131072;
const ccCorpus = json("corpus/context-composition/corpus.json");
for (const c of ccCorpus.cases) {
  let body = c.body;
  if (typeof body !== "string") continue;
  if (c.body_fill) {
    if (c.body_fill.count > CC_MAX) continue;
    body = body.replace("@@FILL@@", c.body_fill.char.repeat(c.body_fill.count));
  }
  if (Buffer.byteLength(body) > CC_MAX) continue;
  seed("composition", 0x00, body);
  try {
    const env = JSON.parse(body);
    const mode = { "letta-af": 1, "anthropic-messages": 2, "generic-message-list": 3 }[env.declared_format_id];
    if (mode && env.record !== undefined) seed("composition", mode, JSON.stringify(env.record));
  } catch {}
}
if (samplesDir) {
  for (const f of readdirSync(join(samplesDir, "letta-af"))) {
    const text = readFileSync(join(samplesDir, "letta-af", f));
    if (text.length <= CC_MAX) seed("composition", 0x01, text);
  }
  for (const f of readdirSync(join(samplesDir, "anthropic-messages"))) {
    const recording = JSON.parse(readFileSync(join(samplesDir, "anthropic-messages", f), "utf8"));
    for (const exchange of Array.isArray(recording) ? recording : []) {
      if (exchange?.request?.body) seed("composition", 0x02 | 0x20, JSON.stringify(exchange.request.body));
    }
  }
}
seed(
  "composition",
  0x03 | 0x10,
  JSON.stringify({
    messages: [
      { role: "system", text: `sys ${CANARY}` },
      { role: "user", text: `hello ${CANARY} hello ${CANARY}`, stated_tokens: 4 },
      { role: "assistant", text: "ok", tool_calls: [{ name: `t${CANARY}`, arguments: "{}" }] },
      { role: "tool", text: `${CANARY}`.repeat(50) },
    ],
    tool_schemas: [{ name: `t${CANARY}`, description: CANARY }],
  }),
);

// ── budget_pack ───────────────────────────────────────────────────────────────────────────────
const bpCorpus = json("corpus/context-budget-pack/corpus.json");
for (const c of bpCorpus.cases) {
  if (typeof c.body === "string" && Buffer.byteLength(c.body) <= 131072) seed("budget_pack", 0x00, c.body);
}
for (let i = 0; i < 32; i++) {
  const bytes = createHash("sha512").update(`budget-pack-${i}`).digest();
  seed("budget_pack", 0x01, bytes);
}

// ── token_opt_levers ──────────────────────────────────────────────────────────────────────────
const leversCorpus = json("corpus/token-opt/levers-corpus.json");
for (const c of leversCorpus.cases) {
  if (typeof c.body === "string" && Buffer.byteLength(c.body) <= 65536) seed("token_opt_levers", 0x00, c.body);
}
for (let i = 0; i < 32; i++) {
  const bytes = createHash("sha512").update(`levers-${i}`).digest();
  seed("token_opt_levers", 0x1f, bytes);
}

// ── token_opt_toon ────────────────────────────────────────────────────────────────────────────
const toonCross = json("corpus/token-opt/toon-crosscheck.json");
for (const [i, c] of toonCross.cases.entries()) {
  if (i % 3 !== 0) continue; // a third of the 1,500 is plenty of shapes
  const body = `{"payload":${c.json}${c.options?.delimiter ? `,"delimiter":${JSON.stringify(c.options.delimiter)}` : ""}}`;
  seed("token_opt_toon", 0x00, body);
}
if (samplesDir) {
  const dir = join(samplesDir, "toon-spec", "encode");
  for (const f of readdirSync(dir)) {
    for (const t of JSON.parse(readFileSync(join(dir, f), "utf8")).tests) {
      const body = { payload: t.input };
      if (t.options?.delimiter) body.delimiter = t.options.delimiter;
      if (t.options?.indent) body.indent_size = t.options.indent;
      seed("token_opt_toon", 0x00, JSON.stringify(body));
      seed("token_opt_toon", 0x01, 0x05, JSON.stringify(t.input));
    }
  }
}

// ── x402_header and solana_transaction ────────────────────────────────────────────────────────
const payments = json("tests/e2e/x402/fixtures/payments.json");
for (const [i, c] of payments.cases.entries()) {
  seed("x402_header", i, c.header);
  seed("x402_header", 0x80 | i, Buffer.from(c.header, "base64"));
  const header = JSON.parse(Buffer.from(c.header, "base64").toString("utf8"));
  seed("solana_transaction", i, Buffer.from(header.payload.transaction, "base64"));
}

// ── json_canonical ────────────────────────────────────────────────────────────────────────────
for (const text of [
  "[1e21,1E-7,0.1,-0,5e-324,9007199254740993,1E400,-1e400,1.50,100]",
  '{"b":1,"4294967295":2,"4294967294":3,"1":4,"01":5,"-1":6,"a":7,"b":8}',
  '{"\\u00e9":"\\ud83d\\ude00","a\\u0000b":"\\u2028\\u001f","\\ud800":1}',
  '[[[[[[[[[[[[[[[[[[[[{"deep":true}]]]]]]]]]]]]]]]]]]]]',
  '  {"x" : [ 1 , 2.5e+3 , -0.0 , "s" ] }  ',
  '{"\u{E000}":"\u{FEFF}","é":"😀","z":{"a":{},"b":[]}}',
]) {
  seed("json_canonical", 0x00, text);
}
for (const c of toonCross.cases.slice(0, 300)) seed("json_canonical", 0x00, c.json);
for (const c of teCorpus.cases.slice(0, 60)) {
  try {
    const p = JSON.parse(c.body ?? "").payload;
    if (typeof p === "string" && p.length < 16384) seed("json_canonical", 0x00, p);
  } catch {}
}
for (let i = 0; i < 32; i++) seed("json_canonical", 0x01, createHash("sha512").update(`json-${i}`).digest());

// ── tokenizer ─────────────────────────────────────────────────────────────────────────────────
const oracle = readFileSync(join(root, "corpus/tokenizer/oracle.jsonl"), "utf8").trim().split("\n");
for (const [i, line] of oracle.entries()) {
  const { t } = JSON.parse(line);
  if (Buffer.byteLength(t) > 4096) continue;
  if (i % 3 !== 0 && Buffer.byteLength(t) > 48) continue;
  // split, floor, max, budget, suffix form, text
  seed("tokenizer", Buffer.from([i & 0xff, 0, 0xff, (i * 7) & 0xff, i & 3]), t);
}
for (const p of teCorpus.tokenizer_probes ?? []) seed("tokenizer", Buffer.from([128, 0, 255, 2, 1]), p.text);

for (const [target, n] of Object.entries(counts)) console.log(`${target}: ${n} seeds`);

// ── smoke inputs (`node fuzz/seed.mjs --smoke`): a few inputs per harness that reach its deep path,
// written to tests/fuzz_regressions/inputs/<target>/smoke-* and replayed by tests/fuzz_regressions.
if (process.argv.includes("--smoke")) {
  const smoke = (target, name, ...parts) => {
    const bytes = Buffer.concat(parts.map((p) => (typeof p === "number" ? Buffer.from([p]) : Buffer.isBuffer(p) ? p : Buffer.from(p, "utf8"))));
    const dir = join(root, "tests", "fuzz_regressions", "inputs", target);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `smoke-${name}`), bytes);
  };
  const words = "w ".repeat(1500);
  smoke("token_efficiency", "all-ops", 0x01, Buffer.from([0, 20, 0, 0x02, 0x3f]),
    `{"id":"${CANARY}","results":[{"title":"a","text":"${words}"},{"title":"a"},{"title":"a"}],"meta":null,"a":{"b":""},"z":{"y":[]}}`);
  smoke("token_efficiency", "s3-root-array", 0x01, Buffer.from([0, 200, 0, 0x02, 0x3f]),
    `[1,1,1,{"a":[],"b":{}},{"a":[],"b":{}},"${"x".repeat(2100)}"]`);
  smoke("token_efficiency", "exhausted", 0x01, Buffer.from([0, 2, 0, 0x02, 0x01]), `{"id":"${"k ".repeat(30)}","x":[1,1]}`);
  smoke("token_efficiency", "text-only", 0x01, Buffer.from([0, 12, 0, 0x00, 0x00]), `plain ${CANARY} text `.repeat(20));
  smoke("token_efficiency", "raw-refused", 0x00, `{"payload":"${CANARY}","budget_tokens":0}`);
  smoke("composition", "generic", 0x03 | 0x30, JSON.stringify({
    messages: [
      { role: "system", text: `sys ${CANARY}` },
      { role: "user", text: `hello ${CANARY}`, stated_tokens: 4 },
      { role: "tool", text: CANARY.repeat(40) },
    ],
    tool_schemas: [{ name: `t${CANARY}`, description: CANARY }],
  }));
  smoke("composition", "letta", 0x01, JSON.stringify({ agents: [{ messages: [{ role: "user", content: [{ type: "text", text: `hi ${CANARY}` }] }] }] }));
  smoke("composition", "anthropic", 0x02, JSON.stringify({ system: `s${CANARY}`, messages: [{ role: "user", content: `q${CANARY}` }, { role: "assistant", content: [{ type: "text", text: "a" }] }] }));
  smoke("composition", "raw-refused", 0x00, `{"envelope_version":"${CANARY}"}`);
  smoke("budget_pack", "built", 0x01, createHash("sha512").update("budget-pack-smoke").digest());
  smoke("budget_pack", "raw", 0x00, JSON.stringify({
    sources: [{ id: "s", text: `abc ${CANARY} 😀 abc ${CANARY} 😀` }],
    candidates: [
      { id: "a", sourceId: "s", start: 0, end: 4, costUnits: 2, required: true },
      { id: "b", sourceId: "s", start: 9, end: 13, costUnits: 2 },
      { id: "c", sourceId: "s", start: 6, end: 7, costUnits: 1 },
      { id: "d", sourceId: "nowhere", start: 0, end: 1, costUnits: 1 },
    ],
    budgetUnits: 3,
  }));
  smoke("token_opt_levers", "built", 0x1f, createHash("sha512").update("levers-smoke").digest());
  smoke("token_opt_levers", "raw", 0x00, JSON.stringify({
    c9: { candidates: [{ id: "1", category: "a", score: 0.1, text: "alpha beta" }], query: "Alpha" },
    filter: { response: { "2": 1, b: CANARY, a: [1] }, allowed: ["a", "2"], required: ["b"] },
    truncate: { blocks: ["head", "middle", "more", "tail 😀"], max_chars: 20 },
    schema: { tools: [{ name: "t", full: "a long description", slim: "short", detail_fetches: 2 }] },
  }));
  smoke("token_opt_toon", "built", 0x01, 0x05, JSON.stringify({ a: [{ x: 1, y: "b" }, { x: 2, y: "c,d" }], n: [1, 2.5, -0], s: "" }));
  smoke("token_opt_toon", "raw", 0x00, JSON.stringify({ payload: { "1": [[1, 2], []], k: { "": null } }, delimiter: "|", indent_size: 3 }));
  const honest = payments.cases[0];
  smoke("x402_header", "honest", 0, honest.header);
  smoke("x402_header", "refused", 9, payments.cases[9].header);
  smoke("x402_header", "honest-json", 0x80, Buffer.from(honest.header, "base64"));
  const tx = (c) => Buffer.from(JSON.parse(Buffer.from(c.header, "base64").toString("utf8")).payload.transaction, "base64");
  smoke("solana_transaction", "honest", 0, tx(honest));
  smoke("solana_transaction", "other-call", 1, tx(honest));
  smoke("json_canonical", "numbers-keys", 0x00, String.raw`[1e21,1E-7,0.1,-0,5e-324,9007199254740993,1E400,{"b":1,"10":2,"2":3,"\u00e9":"\ud83d\ude00","a":{"b":1,"a":2,"b":3}}]`);
  smoke("json_canonical", "generated", 0x01, createHash("sha512").update("json-smoke").digest());
  smoke("tokenizer", "prefix", Buffer.from([128, 0, 255, 5, 1]), "The quick brown fox jumps");
  smoke("tokenizer", "bom", Buffer.from([7, 1, 40, 9, 3]), "\u{FEFF}hello world 123 \u{85}");
  console.log("smoke inputs written to tests/fuzz_regressions/inputs/");
}
