-- Payments ledger of token-efficiency/v1: exactly the closed field list its served criteria publish (payment
-- columns, then the family's counts/sizes/op/verdict). One row per delivered paid call; never content.
CREATE TABLE ledger_token_efficiency (
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
  op TEXT,
  verdict TEXT,
  body_bytes INTEGER,
  payload_chars INTEGER,
  applications_s1 INTEGER,
  applications_s2 INTEGER,
  applications_s3 INTEGER,
  applications_s4 INTEGER,
  applications_total INTEGER,
  tokens_before INTEGER,
  tokens_after INTEGER,
  chars_before INTEGER,
  chars_after INTEGER
);
CREATE INDEX ledger_token_efficiency_day ON ledger_token_efficiency (day);
