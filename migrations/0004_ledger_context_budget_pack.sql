-- Payments ledger of context-budget-pack: exactly the closed field list its served criteria publish (payment
-- columns, then the family's counts/sizes/op/verdict). One row per delivered paid call; never content.
CREATE TABLE ledger_context_budget_pack (
  payer TEXT NOT NULL,
  ts_ms INTEGER NOT NULL,
  day TEXT NOT NULL,
  price_usdc_units INTEGER NOT NULL,
  cad_rate TEXT,
  cad_rate_date TEXT,
  cad_basis TEXT,
  cad_pending INTEGER NOT NULL,
  refund_usdc_units INTEGER NOT NULL,
  tx_sig TEXT NOT NULL UNIQUE,
  fee_lamports INTEGER NOT NULL,
  house INTEGER NOT NULL,
  op TEXT,
  budget_units INTEGER,
  used_units INTEGER,
  selected_count INTEGER,
  excluded_count INTEGER,
  input_bytes INTEGER,
  outcome TEXT
);
CREATE INDEX ledger_context_budget_pack_day ON ledger_context_budget_pack (day);
