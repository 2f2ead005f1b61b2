-- Fleet-review series over the ledger and the free-use aggregates: the figures `make review` prints and draws, so
-- the terminal report and the HTML charts read one source. "Outside" = house = 0, as in 0006. Days are UTC.

-- Every UTC day from the first day any family was used (paid or free) to today.
CREATE VIEW review_calendar AS
  WITH RECURSIVE cal(day) AS (
    SELECT MIN(d) FROM (SELECT MIN(day) AS d FROM ledger_all UNION ALL SELECT MIN(day) FROM free_use
                        UNION ALL SELECT date('now'))
    UNION ALL
    SELECT date(day, '+1 day') FROM cal WHERE day < date('now'))
  SELECT day FROM cal;

-- Per family and calendar day: outside and house paid calls, outside revenue (USDC units), outside calls
-- refunded (by the day of the paid call) and the units refunded, free calls.
CREATE VIEW review_daily AS
  SELECT f.family, c.day,
         COALESCE(p.outside_paid, 0) AS outside_paid_calls,
         COALESCE(p.house_paid, 0) AS house_paid_calls,
         COALESCE(p.outside_usdc, 0) AS outside_usdc_units,
         COALESCE(p.refunds, 0) AS refunds,
         COALESCE(p.refund_usdc, 0) AS outside_refund_usdc_units,
         COALESCE(u.free, 0) AS free_calls
  FROM review_families f CROSS JOIN review_calendar c
  LEFT JOIN (SELECT family, day,
                    SUM(house = 0) AS outside_paid,
                    SUM(house = 1) AS house_paid,
                    SUM(CASE WHEN house = 0 THEN price_usdc_units ELSE 0 END) AS outside_usdc,
                    SUM(house = 0 AND refund_usdc_units > 0) AS refunds,
                    SUM(CASE WHEN house = 0 THEN refund_usdc_units ELSE 0 END) AS refund_usdc
             FROM ledger_all GROUP BY family, day) p
         ON p.family = f.family AND p.day = c.day
  LEFT JOIN (SELECT family, day, SUM(count) AS free FROM free_use GROUP BY family, day) u
         ON u.family = f.family AND u.day = c.day;

-- The 30-day window ending on each calendar day (that day and the 29 before), with the same figures and tripwire
-- tests as review_window_30d / review_tripwires (whose figures equal this view's row for today).
CREATE VIEW review_rolling_30d AS
  SELECT family, day, paid_calls_30d, refunds_30d,
         CASE WHEN paid_calls_30d = 0 THEN NULL ELSE ROUND(100.0 * refunds_30d / paid_calls_30d, 2) END AS refunds_pct_30d,
         free_calls_30d,
         CASE WHEN paid_calls_30d = 0 THEN NULL ELSE ROUND(1.0 * free_calls_30d / paid_calls_30d, 2) END AS free_to_paid_30d,
         COALESCE(paid_calls_30d > 0 AND 100.0 * refunds_30d / paid_calls_30d > 5, 0) AS refunds_fires,
         free_calls_30d > 10 * paid_calls_30d AS free_fires
  FROM (SELECT family, day,
               SUM(outside_paid_calls) OVER w AS paid_calls_30d,
               SUM(refunds) OVER w AS refunds_30d,
               SUM(free_calls) OVER w AS free_calls_30d
        FROM review_daily
        WINDOW w AS (PARTITION BY family ORDER BY day ROWS BETWEEN 29 PRECEDING AND CURRENT ROW));

-- Where today falls against Day-0 and the two checkpoints. Day counts are whole days; negative = passed.
CREATE VIEW review_timeline AS
  SELECT family, day0, checkpoint_60d, checkpoint_6m, date('now') AS today,
         CAST(julianday(date('now')) - julianday(day0) AS INTEGER) AS days_since_day0,
         CAST(julianday(checkpoint_60d) - julianday(date('now')) AS INTEGER) AS days_to_60d,
         CAST(julianday(checkpoint_6m) - julianday(date('now')) AS INTEGER) AS days_to_6m,
         CASE WHEN day0 IS NULL THEN 'no_day0'
              WHEN date('now') < checkpoint_60d THEN 'before_60d'
              WHEN date('now') < checkpoint_6m THEN 'after_60d_before_6m'
              ELSE 'after_6m' END AS phase
  FROM review_day0;

-- The CAD fair-market-value block of every ledger row, all families (the fill command reads the pending ones).
CREATE VIEW ledger_cad AS
  SELECT 'token-efficiency' AS family, tx_sig, day, price_usdc_units, refund_usdc_units, house,
         cad_rate, cad_rate_date, cad_basis, cad_pending FROM ledger_token_efficiency
  UNION ALL
  SELECT 'context-composition', tx_sig, day, price_usdc_units, refund_usdc_units, house,
         cad_rate, cad_rate_date, cad_basis, cad_pending FROM ledger_context_composition
  UNION ALL
  SELECT 'context-budget-pack', tx_sig, day, price_usdc_units, refund_usdc_units, house,
         cad_rate, cad_rate_date, cad_basis, cad_pending FROM ledger_context_budget_pack
  UNION ALL
  SELECT 'token-opt', tx_sig, day, price_usdc_units, refund_usdc_units, house,
         cad_rate, cad_rate_date, cad_basis, cad_pending FROM ledger_token_opt;

-- Outside rows whose CAD block is filled and those still pending, per family.
CREATE VIEW review_cad AS
  SELECT f.family,
         COALESCE(SUM(l.cad_pending = 0), 0) AS outside_cad_filled_rows,
         COALESCE(SUM(l.cad_pending = 1), 0) AS outside_cad_pending_rows
  FROM review_families f LEFT JOIN ledger_cad l ON l.family = f.family AND l.house = 0
  GROUP BY f.family;

-- The filled outside rows' CAD values (cad_basis = price in CAD, an exact decimal string). SQLite has no exact
-- decimal sum, so the report adds these strings exactly instead of SUM()ing them as floats.
CREATE VIEW review_cad_filled AS
  SELECT family, day, tx_sig, price_usdc_units, cad_rate, cad_rate_date, cad_basis
  FROM ledger_cad WHERE house = 0 AND cad_pending = 0;
