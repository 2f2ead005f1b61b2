//! Reconciling a payment whose settlement is in doubt (ARCHITECTURE §4, the I/O half of
//! `engine::payment::reconcile`): ask the chain (blockhash validity, then this payment's memo in
//! the payer's token-account history), else re-submit the same signed payment through `/settle`;
//! record the outcome in the call's guard record.

use crate::edge::facilitator::{post_json, Facilitator};
use crate::edge::guard::Command;
use crate::edge::payment::{release, transition, tunables, Claim};
use crate::engine::payment::facilitator_request;
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::UNCERTAIN_RETRY_AFTER_MS;
use crate::engine::payment::reconcile::{self, ChainVerdict, SettleVerdict};
use crate::engine::payment::PaymentError;
use serde_json::Value;
use worker::{Date, Env};

fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// What reconciling an uncertain payment decided.
pub enum Reconciled {
    /// It landed: deliver without a second charge.
    Landed(SettledFacts),
    /// It did not land and can no longer land: the claim is released.
    Released,
    /// Still unknown: PAYMENT_UNCERTAIN again (the claim is kept).
    Unknown(PaymentError),
}

async fn rpc_call(rpc_url: &str, body: &Value) -> Option<Vec<u8>> {
    post_json(rpc_url, body).await.ok()
}

/// Asks the chain about an uncertain payment (blockhash validity first, then the memo in the
/// payer's token-account history); when it is still unknown and can still land, re-submits the
/// same signed payment through `/settle` (idempotent: the same message has one signature, which
/// the chain executes at most once). Records the outcome.
pub async fn reconcile_claim(env: &Env, claim: &Claim, facilitator: &Facilitator) -> Reconciled {
    let facts = |tx_sig: String| SettledFacts {
        tx_sig,
        payer: claim.checked.payer.clone(),
        fee_lamports: claim.checked.fee_lamports,
        house: claim.checked.house,
        settled_ms: now_ms(),
    };
    let mut chain = ChainVerdict::Unknown;
    let rpc_url = crate::edge::config::var(env, "SOLANA_RPC_URL");
    if let (Some(rpc_url), Some(query)) = (
        rpc_url.as_deref(),
        reconcile::chain_query(&claim.checked.transaction_base64),
    ) {
        let valid = rpc_call(rpc_url, &reconcile::blockhash_valid_request(&query))
            .await
            .and_then(|b| reconcile::read_blockhash_valid(&b));
        let found = match rpc_call(rpc_url, &reconcile::signatures_request(&query)).await {
            Some(body) => reconcile::find_memo(&body, &claim.bound.memo),
            None => reconcile::MemoScan::Unreadable,
        };
        chain = reconcile::chain_verdict(valid, found);
    }
    if chain == ChainVerdict::Unknown {
        // It can still land (or the chain did not answer): submit the same signed payment again.
        let body = facilitator_request(
            &claim.checked,
            &claim.bound.identifier_id,
            &crate::edge::payment::challenge_of(claim),
        );
        let timeout = tunables(env).settle_timeout_ms;
        if let Ok(answer) = facilitator.settle_within(&body, timeout).await {
            if let SettleVerdict::Landed { tx_sig } = reconcile::settle_verdict(&answer) {
                chain = ChainVerdict::Landed { tx_sig };
            }
        }
    }
    match chain {
        ChainVerdict::Landed { tx_sig } => {
            let facts = facts(tx_sig);
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
            let _ = release(env, claim.clone()).await;
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
