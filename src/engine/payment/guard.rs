//! What a settlement established, as the payment guard stores it. The guard's state machine is
//! the per-key idempotency record in [`super::idempotency`]: one record per Idempotency-Key, which
//! also stands for the payment itself, since a payment's memo binds it to exactly one route and
//! key (a transaction presented under another key or route fails the local checks before any
//! state is touched).

use serde::{Deserialize, Serialize};

/// What settlement established (payment facts only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettledFacts {
    pub tx_sig: String,
    pub payer: String,
    pub fee_lamports: u64,
    pub house: bool,
    pub settled_ms: u64,
}
