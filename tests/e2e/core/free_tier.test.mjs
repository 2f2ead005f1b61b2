// Free tier end to end (Allowance Durable Object under real workerd): exactly FREE_PER_DAY calls pass,
// then 402 with the paid route's challenge; calls inside the interval are 402; 50 concurrent calls
// from one wallet let exactly one through; wallets are independent; the daily aggregate is counted in
// D1 without any wallet. (The new-UTC-day reset is proven on the injected clock in engine::allowance.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorker, awake, wallet, d1 } from '../lib/worker.mjs';

const PER_DAY = 100;
let fast; // no minimum interval: proves the daily count
let spaced; // 5,000 ms interval: proves spacing and concurrency

before(async () => {
  fast = await startWorker({ port: 8821, vars: { FREE_MIN_INTERVAL_MS: '0' } });
  spaced = await startWorker({ port: 8822 });
});
after(async () => { await fast?.stop(); await spaced?.stop(); });

function precheck(url, caller) {
  return fetch(url + '/token-efficiency/precheck', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payload: '{"a":[1,1,2]}', budget_tokens: 3, caller }),
  });
}

test('exactly 100 free calls per day, then 402 with the paid challenge', async () => {
  const caller = wallet(1);
  await awake(fast); // idle while `spaced` started
  for (let i = 0; i < PER_DAY; i++) {
    const r = await precheck(fast.url, caller);
    assert.equal(r.status, 200, `call ${i + 1}`);
    await r.arrayBuffer();
  }
  const r = await precheck(fast.url, caller);
  assert.equal(r.status, 402);
  assert.equal((await r.json()).code, 'free_tier_exhausted');
  const other = await precheck(fast.url, wallet(2));
  assert.equal(other.status, 200, 'another wallet is independent');
  await other.arrayBuffer();
  // Daily aggregate only: (family, day, count), written after the response.
  await new Promise((r) => setTimeout(r, 500));
  const rows = d1(fast.persist, 'SELECT family, day, count FROM free_use');
  assert.equal(rows.length, 1);
  assert.equal(rows[0].family, 'token-efficiency');
  assert.equal(rows[0].count, PER_DAY + 1);
});

test('a call inside the interval is 402; 50 concurrent calls let exactly one through', async () => {
  const caller = wallet(3);
  // `spaced` sat idle through the previous test; its first counted call must be sent exactly once.
  await awake(spaced);
  const first = await precheck(spaced.url, caller);
  assert.equal(first.status, 200);
  await first.arrayBuffer();
  const early = await precheck(spaced.url, caller);
  assert.equal(early.status, 402);
  const body = await early.json();
  assert.equal(body.code, 'free_tier_too_early');
  assert.ok(body.retry_after_ms > 0 && body.retry_after_ms <= 5000);

  // 50 at once. On this small machine the dev proxy may drop a connection under the burst; a dropped
  // request is re-sent afterwards (it must then be refused too), so the count of passes stays exact.
  const burst = await Promise.allSettled(Array.from({ length: 50 }, () => precheck(spaced.url, wallet(4))));
  const statuses = [];
  for (const r of burst) {
    const res = r.status === 'fulfilled' ? r.value : await precheck(spaced.url, wallet(4));
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
  assert.equal(statuses.filter((s) => s === 402).length, 49);
});

test('an invalid or missing caller is refused free, before the allowance', async () => {
  for (const [caller, code] of [[undefined, 'caller_missing'], ['not-a-wallet', 'caller_invalid'], ['0OIl' + wallet(5).slice(4), 'caller_invalid']]) {
    const r = await precheck(spaced.url, caller);
    assert.equal(r.status, 400);
    assert.equal((await r.json()).code, code);
  }
});
