-- Payments ledger of token-opt/v1: exactly the closed field list its served criteria publish (payment
-- columns, then the family's counts/sizes/op/verdict). One row per delivered paid call; never content.
CREATE TABLE ledger_token_opt (
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
  levers_measured INTEGER,
  levers_enabled INTEGER,
  tokens_before INTEGER,
  tokens_after INTEGER,
  tokens_overhead INTEGER,
  tokens_net INTEGER,
  json_tokens INTEGER,
  toon_tokens INTEGER,
  returned_format TEXT
);
CREATE INDEX ledger_token_opt_day ON ledger_token_opt (day);
