-- Free use is counted as daily aggregates only: no wallet, no submission, one row per (family, UTC day).
CREATE TABLE free_use (
  family TEXT NOT NULL,
  day    TEXT NOT NULL,
  count  INTEGER NOT NULL,
  PRIMARY KEY (family, day)
);
