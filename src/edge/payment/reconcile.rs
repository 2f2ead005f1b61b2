//! Reconciling a payment whose settlement is in doubt (ARCHITECTURE §4), one path for both rails:
//! ask the chain through the payment's rail (`rail`: Solana's blockhash validity, then this
//! payment's memo in the payer's token-account history; EVM's authorization state), else
//! re-submit the same signed payment through `/settle` while it can still land; record the outcome
//! in the call's guard record.

use super::{now_ms, release, transition, Claim};
use crate::edge::guard::Command;
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::UNCERTAIN_RETRY_AFTER_MS;
use crate::engine::payment::reconcile::{ChainVerdict, SettleVerdict};
use crate::engine::payment::PaymentError;
use worker::Env;

/// What reconciling an uncertain payment decided.
pub enum Reconciled {
    /// It landed: deliver without a second charge.
    Landed(SettledFacts),
    /// It did not land and can no longer land: the claim is released.
    Released,
    /// Still unknown: PAYMENT_UNCERTAIN again (the claim is kept).
    Unknown(PaymentError),
}

/// Asks the chain about an uncertain payment; when it is still unknown and can still land,
/// re-submits the same signed payment through `/settle` (idempotent: the chain executes the same
/// signed message, or the same EVM authorization nonce, at most once). Records the outcome.
pub async fn reconcile(env: &Env, claim: &Claim) -> Reconciled {
    let facilitator = &claim.settings.facilitator;
    let rail = claim.rail();
    let can_land = rail.can_land();
    let mut chain = rail.chain_verdict(env, claim).await;
    if chain == ChainVerdict::Unknown && can_land {
        // It can still land (or the chain did not answer): submit the same signed payment again.
        let timeout = claim.settings.tunables.settle_timeout_ms;
        let body = claim.facilitator_body();
        if let Ok(answer) = facilitator.settle_within(&body, timeout).await {
            if let SettleVerdict::Landed { tx_sig } = claim.settle_verdict(&answer) {
                chain = ChainVerdict::Landed { tx_sig };
            }
        }
    }
    match chain {
        ChainVerdict::Landed { tx_sig } => {
            let facts = claim.landed(tx_sig);
            let command = Command::Settled {
                claim_key: claim.claim_key().to_owned(),
                facts: facts.clone(),
            };
            if !transition(env, claim, command).await {
                worker::console_error!("payment guard: reconciled settlement not recorded");
            }
            Reconciled::Landed(facts)
        }
        ChainVerdict::Failed => {
            release(env, claim).await;
            Reconciled::Released
        }
        ChainVerdict::Unknown => Reconciled::Unknown(mark_uncertain(env, claim).await),
    }
}

/// Records the claim as uncertain and returns the refusal to answer.
pub(crate) async fn mark_uncertain(env: &Env, claim: &Claim) -> PaymentError {
    let command = Command::Uncertain {
        claim_key: claim.claim_key().to_owned(),
        now_ms: now_ms(),
        retry_after_ms: UNCERTAIN_RETRY_AFTER_MS,
    };
    if !transition(env, claim, command).await {
        // The record stays `settling`; after its lease the next retry reconciles all the same.
        worker::console_error!("payment guard: uncertain state not recorded");
    }
    PaymentError::Uncertain {
        retry_after_s: PaymentError::seconds(UNCERTAIN_RETRY_AFTER_MS),
    }
}
