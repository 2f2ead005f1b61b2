// token-efficiency's request numbers in real workerd, where usize and u32 are 32 bits: budget_tokens
// and reserve_tokens at 2^32 − 1, 2^32 and 2^53 − 1 (and reserves that cross 2^32) must be read and
// compared exactly — never wrapped — so each precheck answers what the independent Node oracle
// (corpus/token-efficiency/oracle.mjs: JavaScript numbers, gpt-tokenizer) says the criteria require:
// the effective budget printed exactly, FITS / OVER by E / NOT SHAPABLE as the budget op would grade
// it, and a free refusal where the reserve reaches the budget or a figure passes the 2^53 cap.
// Ports 8910-8919.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, wallet } from '../lib/worker.mjs';
import { expect as oracle } from '../../../corpus/token-efficiency/oracle.mjs';
import { checkedFetch } from '../lib/schema.mjs';

// Every answer is held to the worker's OpenAPI document (status documented, JSON body valid).
const fetch = checkedFetch;

let w;
before(async () => {
  w = await startWorker({ port: 8910 });
});
after(async () => { await w?.stop(); });

const EDGES = [2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];
const PAYLOAD = JSON.stringify({ a: 'alpha beta gamma '.repeat(30) });
let nextWallet = 9100;

/** Posts a precheck body (a JSON text: numbers are written exactly as given) from a fresh wallet. */
async function precheck(members) {
  const body = `{"payload":${JSON.stringify(PAYLOAD)},${members},"caller":"${wallet(nextWallet++)}"}`;
  const r = await fetch(`${w.url}/token-efficiency/precheck`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, answer: await r.json(), want: oracle(new TextEncoder().encode(body), 0) };
}

const withoutTime = (verdict) => verdict.replace(/ — [^—]+Z$/, '');

async function graded(members, grade) {
  const { status, answer, want } = await precheck(members);
  assert.equal(status, 200, `${members}: ${JSON.stringify(answer)}`);
  assert.ok(!want.refusal && want.precheck.verdict, members);
  assert.equal(withoutTime(answer.verdict), withoutTime(want.precheck.verdict), members);
  for (const field of ['payload_tokens', 'payload_chars', 'effective_budget', 'excess_tokens', 'fits']) {
    assert.equal(answer[field], want.precheck[field], `${members}: ${field}`);
  }
  assert.match(answer.verdict, grade, members);
  return answer;
}

test('budget_tokens at 2^32 - 1, 2^32 and 2^53 - 1 is the effective budget, exactly, and the payload fits', async () => {
  for (const edge of EDGES) {
    const answer = await graded(`"budget_tokens":${edge}`, / — FITS — /);
    assert.equal(answer.budget_tokens, edge);
    assert.equal(answer.effective_budget, edge);
    assert.ok(answer.verdict.includes(`effective budget: ${edge} — FITS`), answer.verdict);
  }
});

test('reserves at the edges subtract exactly: a few tokens left is graded as the budget op grades it', async () => {
  for (const edge of EDGES) {
    // budget one above the edge, reserve one below: 2 tokens left (a wrap at 2^32 would refuse
    // the reserve or leave billions).
    let answer = await graded(`"budget_tokens":${edge + 1},"reserve_tokens":${edge - 1}`, / — OVER — NOT SHAPABLE WITHIN STATED CONSTRAINTS — /);
    assert.equal(answer.effective_budget, 2);
    assert.equal(answer.reserve_tokens, edge - 1);
    answer = await graded(`"budget_tokens":${edge},"reserve_tokens":${edge - 40}`, / — OVER by \d+ — /);
    assert.equal(answer.effective_budget, 40);
  }
});

test('a reserve equal to a budget at the edge, or a figure past 2^53, is a free refusal', async () => {
  for (const edge of EDGES) {
    const { status, answer, want } = await precheck(`"budget_tokens":${edge},"reserve_tokens":${edge}`);
    assert.equal(status, 400);
    assert.equal(answer.code, 'reserve_tokens_not_below_budget');
    assert.equal(want.refusal.code, answer.code);
  }
  // 2^53 is the largest figure accepted; 9007199254740994 (2^53 + 2) is the next JavaScript number.
  await graded(`"budget_tokens":${2 ** 53}`, / — FITS — /);
  for (const [members, code] of [
    ['"budget_tokens":9007199254740994', 'budget_tokens_too_large'],
    ['"budget_tokens":5,"reserve_tokens":9007199254740994', 'reserve_tokens_invalid'],
  ]) {
    const { status, answer, want } = await precheck(members);
    assert.equal(status, 400, members);
    assert.equal(answer.code, code, members);
    assert.equal(want.refusal.code, code, members);
  }
});
