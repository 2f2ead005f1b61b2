// Fleet-review views over real local D1 (the shipped migrations): seeded with known ledger rows and
// free-use aggregates, every view's figures are asserted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshD1, d1 } from '../lib/worker.mjs';

let db;
const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

before(() => {
  db = freshD1();
  const cols = 'payer, ts_ms, day, price_usdc_units, cad_pending, refund_usdc_units, tx_sig, fee_lamports, house';
  const row = (payer, offset, price, refund, tx, house) =>
    `('${payer}', ${Date.now() + offset * 86_400_000}, '${day(offset)}', ${price}, 1, ${refund}, '${tx}', 5000, ${house})`;
  const sql = [
    // token-efficiency: outside payer A twice (one refunded), outside B once, a house proof; one old call (40 days ago).
    `INSERT INTO ledger_token_efficiency (${cols}) VALUES ${[
      row('A', -40, 20000, 0, 't0', 0), row('A', -2, 20000, 20000, 't1', 0), row('A', -1, 20000, 0, 't2', 0),
      row('B', 0, 20000, 0, 't3', 0), row('H', -50, 20000, 0, 't4', 1)].join(', ')}`,
    // context-composition: only a house proof — Day-0 must not start.
    `INSERT INTO ledger_context_composition (${cols}) VALUES ${row('H', -3, 50000, 0, 'c1', 1)}`,
    // free use: 31 free token-efficiency calls in the window (> 10x of 3 paid), 500 outside it; 7 for the pack.
    `INSERT INTO free_use (family, day, count) VALUES ('token-efficiency', '${day(0)}', 20), ('token-efficiency', '${day(-5)}', 11),
       ('token-efficiency', '${day(-45)}', 500), ('context-budget-pack', '${day(-1)}', 7)`,
  ].join('; ');
  d1(db.persist, sql);
});
after(() => db?.drop());

const byFamily = (rows) => Object.fromEntries(rows.map((r) => [r.family, r]));

test('paid calls: total, outside, house, outside revenue', () => {
  const v = byFamily(d1(db.persist, 'SELECT * FROM review_paid_calls'));
  assert.deepEqual(v['token-efficiency'], { family: 'token-efficiency', paid_calls: 5, outside_calls: 4, house_calls: 1, outside_usdc_units: 80000 });
  assert.deepEqual(v['context-composition'], { family: 'context-composition', paid_calls: 1, outside_calls: 0, house_calls: 1, outside_usdc_units: 0 });
  assert.equal(v['token-opt'].paid_calls, 0);
});

test('distinct and repeat outside payers', () => {
  const v = byFamily(d1(db.persist, 'SELECT * FROM review_payers'));
  assert.equal(v['token-efficiency'].distinct_payers, 2);
  assert.equal(v['token-efficiency'].repeat_payers, 1);
  assert.equal(v['context-composition'].distinct_payers, 0);
});

test('rolling 30 days: refunds % and free:paid', () => {
  const v = byFamily(d1(db.persist, 'SELECT * FROM review_window_30d'));
  assert.deepEqual(v['token-efficiency'], { family: 'token-efficiency', paid_calls_30d: 3, refunds_30d: 1, refunds_pct_30d: 33.33, free_calls_30d: 31, free_to_paid_30d: 10.33 });
  assert.deepEqual(v['context-budget-pack'], { family: 'context-budget-pack', paid_calls_30d: 0, refunds_30d: 0, refunds_pct_30d: null, free_calls_30d: 7, free_to_paid_30d: null });
});

test('Day-0 is the first outside paid settle; checkpoints at +60 days and +6 months', () => {
  const v = byFamily(d1(db.persist, 'SELECT * FROM review_day0'));
  const d0 = day(-40);
  assert.equal(v['token-efficiency'].day0, d0);
  const plus = (iso, days) => new Date(Date.parse(iso) + days * 86_400_000).toISOString().slice(0, 10);
  assert.equal(v['token-efficiency'].checkpoint_60d, plus(d0, 60));
  const m = new Date(d0 + 'T00:00:00Z'); m.setUTCMonth(m.getUTCMonth() + 6);
  assert.equal(v['token-efficiency'].checkpoint_6m, m.toISOString().slice(0, 10));
  assert.equal(v['context-composition'].day0, null, 'a house proof never starts the clock');
});

test('tripwires: each with its figure and whether it fires', () => {
  const rows = d1(db.persist, 'SELECT * FROM review_tripwires');
  const get = (family, tripwire) => rows.find((r) => r.family === family && r.tripwire === tripwire);
  assert.equal(rows.length, 8);
  assert.deepEqual(get('token-efficiency', 'refunds_over_5pct_of_paid_30d'), { family: 'token-efficiency', tripwire: 'refunds_over_5pct_of_paid_30d', figure: 33.33, threshold: 5, fires: 1 });
  assert.equal(get('token-efficiency', 'free_over_10x_paid_30d').fires, 1);
  assert.equal(get('token-efficiency', 'free_over_10x_paid_30d').figure, 10.33);
  assert.equal(get('context-budget-pack', 'free_over_10x_paid_30d').fires, 1, '7 free calls, 0 paid');
  assert.equal(get('token-opt', 'free_over_10x_paid_30d').fires, 0);
  assert.equal(get('token-opt', 'refunds_over_5pct_of_paid_30d').fires, 0);
});

test('review_settled_undelivered lists the payments whose outbox row says they settled undelivered, and no other', () => {
  const own = freshD1();
  try {
    const cols = 'payer, ts_ms, day, price_usdc_units, cad_pending, refund_usdc_units, tx_sig, fee_lamports, house';
    const row = (tx) => `('P', ${Date.now()}, '${day(0)}', 5000, 1, 0, '${tx}', 0, 0)`;
    d1(own.persist, `INSERT INTO ledger_context_budget_pack (${cols}) VALUES ${[
      row('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:delivered1'),
      row('eip155:8453:0xabc#undelivered')].join(', ')}`);
    const rows = d1(own.persist, 'SELECT family, tx_sig, price_usdc_units FROM review_settled_undelivered');
    assert.deepEqual(rows, [{ family: 'context-budget-pack', tx_sig: 'eip155:8453:0xabc#undelivered', price_usdc_units: 5000 }]);
  } finally {
    own.drop();
  }
});
