//! Settlement in doubt, the verdicts every rail reaches (pure): what one `/settle` answer says
//! ([`SettleVerdict`]) and what the chain says about an uncertain payment ([`ChainVerdict`]). Each
//! rail reads them its own way: Solana in [`super::solana::reconcile`], EVM in
//! [`super::evm::reconcile`].

/// What one `/settle` answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettleVerdict {
    /// On chain: the transaction signature.
    Landed { tx_sig: String },
    /// The facilitator refused the payment before signing it (an `invalid_*` or
    /// `insufficient_funds` reason): nothing was sent by this call.
    NotSent,
    /// Pending, sent but not confirmed, a duplicate of one in flight, or unreadable: unknown.
    Unknown,
}

/// What the chain says about an uncertain payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainVerdict {
    /// Landed without error: deliver, no second charge.
    Landed { tx_sig: String },
    /// Landed with an error, or can no longer land: release and say so.
    Failed,
    /// Not found and the blockhash is still valid (or the chain did not answer).
    Unknown,
}
