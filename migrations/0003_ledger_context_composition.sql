-- Payments ledger of context-composition/v1: exactly the closed field list its served criteria publish (payment
-- columns, then the family's counts/sizes/op/verdict). One row per delivered paid call; never content.
CREATE TABLE ledger_context_composition (
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
  criteria_version TEXT,
  measurement_line TEXT,
  op TEXT,
  declared_format TEXT,
  entry_count INTEGER,
  record_bytes INTEGER,
  outcome TEXT,
  could_not_measure_kind TEXT
);
CREATE INDEX ledger_context_composition_day ON ledger_context_composition (day);
