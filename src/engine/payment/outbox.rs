//! The ledger row a payment owes, held in the payment's own record until D1 confirms it (an
//! outbox; the record's alarm step is `idempotency::alarm_step`, `edge::guard` runs it and
//! `edge::ledger` writes the row). A leaf: it knows rows and references, not records.
//!
//! Invariants (ARCHITECTURE §6):
//! - every settled payment has exactly one row: the row's closed fields enter the record at
//!   `settling` (the engine has run by then), the worker writes the row on delivery, and the
//!   record's alarm writes it whenever the worker could not (D1 unavailable, worker gone);
//! - the row's transaction reference names its chain (`<CAIP-2>:<transaction>`), and a row written
//!   for a payment that settled but was never delivered says so (`#undelivered` after the
//!   reference); a later delivery replaces it, so one payment never has two rows;
//! - nothing here is derived from a submission beyond the closed ledger fields themselves, which
//!   the ledger keeps anyway.

use crate::engine::LedgerValue;
use serde::{Deserialize, Serialize};

/// How long after an outbox write failed the alarm tries again (doubling up to [`RETRY_MAX_MS`]).
pub const RETRY_MIN_MS: u64 = 2_000;
/// The longest wait between two outbox attempts.
pub const RETRY_MAX_MS: u64 = 60_000;
/// Marks the transaction reference of a row whose payment settled but was never delivered.
pub const UNDELIVERED_MARK: &str = "#undelivered";

/// The closed fields of one delivered call's ledger row, less the settlement's own facts (payer,
/// transaction, fee, house), which the record holds beside it once the payment settled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRow {
    /// The family's ledger table (a static name from code).
    pub table: String,
    /// The payment's chain, CAIP-2 (`solana:<genesis>`, `eip155:<id>`).
    pub network: String,
    pub price_units: u64,
    /// When the engine ran (the row's `ts_ms` and `day`).
    pub ts_ms: u64,
    /// The family's own closed columns (counts, sizes, op, verdict), in the published order.
    pub columns: Vec<(String, LedgerValue)>,
}

impl PendingRow {
    /// True when a re-run's figures are the paid call's: the criteria families keep no body
    /// fingerprint, so an identical retry is recognised by the closed figures its row holds.
    pub fn same_figures(&self, columns: &[(&'static str, LedgerValue)]) -> bool {
        self.columns.len() == columns.len()
            && self
                .columns
                .iter()
                .zip(columns)
                .all(|((name, value), (other, again))| name == other && value == again)
    }
}

/// The transaction reference a row carries: the chain and the transaction, and the undelivered
/// mark when the payment settled without a delivery.
pub fn transaction_reference(network: &str, tx_sig: &str, delivered: bool) -> String {
    let mark = if delivered { "" } else { UNDELIVERED_MARK };
    format!("{network}:{tx_sig}{mark}")
}

/// The wait before the next outbox attempt after `failures` failed ones.
pub fn retry_delay_ms(failures: u32) -> u64 {
    RETRY_MIN_MS
        .saturating_mul(1u64 << failures.min(16))
        .min(RETRY_MAX_MS)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A token-efficiency row (the record tests use it too).
    pub(crate) fn row() -> PendingRow {
        PendingRow {
            table: "ledger_token_efficiency".into(),
            network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp".into(),
            price_units: 20_000,
            ts_ms: 1_000,
            columns: vec![
                ("op".into(), LedgerValue::Text("budget".into())),
                ("body_bytes".into(), LedgerValue::Int(42)),
            ],
        }
    }

    #[test]
    fn figures_are_compared_name_by_name_and_value_by_value() {
        let row = row();
        let same = [
            ("op", LedgerValue::Text("budget".into())),
            ("body_bytes", LedgerValue::Int(42)),
        ];
        assert!(row.same_figures(&same));
        let other_value = [
            ("op", LedgerValue::Text("budget".into())),
            ("body_bytes", LedgerValue::Int(43)),
        ];
        assert!(!row.same_figures(&other_value));
        let other_name = [
            ("op", LedgerValue::Text("budget".into())),
            ("payload_chars", LedgerValue::Int(42)),
        ];
        assert!(!row.same_figures(&other_name));
        assert!(!row.same_figures(&same[..1]));
    }

    #[test]
    fn the_reference_names_the_chain_and_an_undelivered_payment() {
        assert_eq!(
            transaction_reference("eip155:8453", "0xab", true),
            "eip155:8453:0xab"
        );
        assert_eq!(
            transaction_reference("solana:5eyk", "3x", false),
            "solana:5eyk:3x#undelivered"
        );
    }

    #[test]
    fn outbox_retries_back_off_and_stay_bounded() {
        assert_eq!(retry_delay_ms(0), RETRY_MIN_MS);
        assert_eq!(retry_delay_ms(1), 2 * RETRY_MIN_MS);
        assert_eq!(retry_delay_ms(40), RETRY_MAX_MS);
    }
}
