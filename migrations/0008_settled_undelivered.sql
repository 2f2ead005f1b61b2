-- Payments that settled but were never delivered (the worker went away after /settle, or delivery failed):
-- the payment's record wrote their ledger row from its outbox with the transaction reference marked
-- '#undelivered' (ARCHITECTURE §4, the ledger outbox). A later identical retry delivers the result and
-- replaces the row, so a row here is money taken for which no answer is known to have arrived.
--   npx wrangler d1 execute context-meter --local --command "SELECT * FROM review_settled_undelivered"
CREATE VIEW review_settled_undelivered AS
  SELECT 'token-efficiency' AS family, payer, ts_ms, day, price_usdc_units, tx_sig, house FROM ledger_token_efficiency WHERE tx_sig LIKE '%#undelivered'
  UNION ALL
  SELECT 'context-composition', payer, ts_ms, day, price_usdc_units, tx_sig, house FROM ledger_context_composition WHERE tx_sig LIKE '%#undelivered'
  UNION ALL
  SELECT 'context-budget-pack', payer, ts_ms, day, price_usdc_units, tx_sig, house FROM ledger_context_budget_pack WHERE tx_sig LIKE '%#undelivered'
  UNION ALL
  SELECT 'token-opt', payer, ts_ms, day, price_usdc_units, tx_sig, house FROM ledger_token_opt WHERE tx_sig LIKE '%#undelivered';
