-- Fleet-review views over the ledger and the free-use aggregates. Read them with
--   npx wrangler d1 execute context-meter --local  --command "SELECT * FROM review_tripwires"   (or --remote)
-- "Outside" = a payer that is not a house wallet (house = 0). Rolling windows end today (UTC).

CREATE VIEW ledger_all AS
  SELECT 'token-efficiency' AS family, payer, ts_ms, day, price_usdc_units, refund_usdc_units, house FROM ledger_token_efficiency
  UNION ALL
  SELECT 'context-composition', payer, ts_ms, day, price_usdc_units, refund_usdc_units, house FROM ledger_context_composition
  UNION ALL
  SELECT 'context-budget-pack', payer, ts_ms, day, price_usdc_units, refund_usdc_units, house FROM ledger_context_budget_pack
  UNION ALL
  SELECT 'token-opt', payer, ts_ms, day, price_usdc_units, refund_usdc_units, house FROM ledger_token_opt;

CREATE VIEW review_families AS
  SELECT 'token-efficiency' AS family UNION ALL SELECT 'context-composition'
  UNION ALL SELECT 'context-budget-pack' UNION ALL SELECT 'token-opt';

-- Paid calls per family, all time: total, outside, house, outside revenue (USDC base units).
CREATE VIEW review_paid_calls AS
  SELECT f.family,
         COUNT(l.family) AS paid_calls,
         COALESCE(SUM(l.house = 0), 0) AS outside_calls,
         COALESCE(SUM(l.house = 1), 0) AS house_calls,
         COALESCE(SUM(CASE WHEN l.house = 0 THEN l.price_usdc_units ELSE 0 END), 0) AS outside_usdc_units
  FROM review_families f LEFT JOIN ledger_all l ON l.family = f.family
  GROUP BY f.family;

-- Distinct outside payers and repeat payers (two or more paid calls), all time.
CREATE VIEW review_payers AS
  SELECT f.family,
         COUNT(p.payer) AS distinct_payers,
         COALESCE(SUM(p.calls >= 2), 0) AS repeat_payers
  FROM review_families f
  LEFT JOIN (SELECT family, payer, COUNT(*) AS calls FROM ledger_all WHERE house = 0 GROUP BY family, payer) p
         ON p.family = f.family
  GROUP BY f.family;

-- Rolling 30 days (today and the 29 days before): outside paid calls, refunds and their share,
-- free calls and the free:paid ratio.
CREATE VIEW review_window_30d AS
  SELECT f.family,
         COALESCE(p.paid, 0) AS paid_calls_30d,
         COALESCE(p.refunds, 0) AS refunds_30d,
         CASE WHEN COALESCE(p.paid, 0) = 0 THEN NULL ELSE ROUND(100.0 * p.refunds / p.paid, 2) END AS refunds_pct_30d,
         COALESCE(u.free, 0) AS free_calls_30d,
         CASE WHEN COALESCE(p.paid, 0) = 0 THEN NULL ELSE ROUND(1.0 * COALESCE(u.free, 0) / p.paid, 2) END AS free_to_paid_30d
  FROM review_families f
  LEFT JOIN (SELECT family, COUNT(*) AS paid, SUM(refund_usdc_units > 0) AS refunds
             FROM ledger_all WHERE house = 0 AND day > date('now', '-30 days') GROUP BY family) p
         ON p.family = f.family
  LEFT JOIN (SELECT family, SUM(count) AS free FROM free_use WHERE day > date('now', '-30 days') GROUP BY family) u
         ON u.family = f.family;

-- Day-0 = the first OUTSIDE paid settle (house proofs never start the clock); checkpoints at +60 days and +6 months.
CREATE VIEW review_day0 AS
  SELECT f.family,
         MIN(l.day) AS day0,
         date(MIN(l.day), '+60 days') AS checkpoint_60d,
         date(MIN(l.day), '+6 months') AS checkpoint_6m
  FROM review_families f LEFT JOIN ledger_all l ON l.family = f.family AND l.house = 0
  GROUP BY f.family;

-- The criteria's stop-and-review tripwires that the ledger can answer, each with its figure and whether it fires:
-- refunds > 5% of paid calls in the rolling 30 days; free use > 10x paid use in the rolling 30 days.
CREATE VIEW review_tripwires AS
  SELECT family, 'refunds_over_5pct_of_paid_30d' AS tripwire, refunds_pct_30d AS figure, 5 AS threshold,
         COALESCE(refunds_pct_30d > 5, 0) AS fires
  FROM review_window_30d
  UNION ALL
  SELECT family, 'free_over_10x_paid_30d', free_to_paid_30d, 10,
         free_calls_30d > 10 * paid_calls_30d
  FROM review_window_30d;
