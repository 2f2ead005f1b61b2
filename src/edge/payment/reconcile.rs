//! Reconciling a payment whose settlement is in doubt (ARCHITECTURE §4, the I/O half of
//! `engine::payment::solana::reconcile` and `engine::payment::evm::reconcile`), one path for both rails: ask the chain (Solana: blockhash
//! validity, then this payment's memo in the payer's token-account history; EVM: `payment::evm`),
//! else re-submit the same signed payment through `/settle` while it can still land; record the
//! outcome in the call's guard record.

use super::{evm, now_ms, release, transition, tunables, Claim};
use crate::edge::guard::Command;
use crate::edge::payment::facilitator::{rpc_call, Facilitator};
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::{RECORD_TTL_MS, UNCERTAIN_RETRY_AFTER_MS};
use crate::engine::payment::reconcile::{ChainVerdict, SettleVerdict};
use crate::engine::payment::solana::reconcile;
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

/// What the Solana chain says of the claim's payment (Unknown without `SOLANA_RPC_URL`).
async fn solana_verdict(env: &Env, claim: &Claim) -> ChainVerdict {
    let rpc_url = crate::edge::config::var(env, "SOLANA_RPC_URL");
    let (Some(rpc_url), Some(query)) = (
        rpc_url.as_deref(),
        reconcile::chain_query(&claim.checked.transaction_base64),
    ) else {
        return ChainVerdict::Unknown;
    };
    let valid = rpc_call(rpc_url, &reconcile::blockhash_valid_request(&query))
        .await
        .and_then(|b| reconcile::read_blockhash_valid(&b));
    // The payer's history, page by page, back to the oldest time this payment could have landed
    // (its record lives 24 hours, and nothing lands before the record exists).
    let not_before_s = (now_ms().saturating_sub(RECORD_TTL_MS) / 1000).saturating_sub(60);
    let mut before: Option<String> = None;
    // Unreadable until a page decides: running out of pages before the history's end decides
    // nothing ("not found" there is not "not landed").
    let mut found = reconcile::MemoScan::Unreadable;
    for _ in 0..reconcile::MAX_SIGNATURE_PAGES {
        let request = reconcile::signatures_request(&query, before.as_deref());
        let Some(body) = rpc_call(rpc_url, &request).await else {
            found = reconcile::MemoScan::Unreadable;
            break;
        };
        let scan = reconcile::find_memo(&body, &claim.bound.memo);
        if scan != reconcile::MemoScan::NotFound {
            found = scan;
            break;
        }
        match reconcile::next_page(&body, not_before_s) {
            Some(last) => before = Some(last),
            None => {
                found = reconcile::MemoScan::NotFound;
                break;
            }
        }
    }
    reconcile::chain_verdict(valid, found)
}

/// Asks the chain about an uncertain payment; when it is still unknown and can still land,
/// re-submits the same signed payment through `/settle` (idempotent: the chain executes the same
/// signed message, or the same EVM authorization nonce, at most once). Records the outcome.
pub async fn reconcile(env: &Env, claim: &Claim, facilitator: &Facilitator) -> Reconciled {
    let (mut chain, can_land) = match claim.evm.as_deref() {
        Some(payment) => {
            let can_land = now_ms() / 1000 < payment.valid_before_s;
            (evm::chain_verdict(env, payment).await, can_land)
        }
        None => (solana_verdict(env, claim).await, true),
    };
    if chain == ChainVerdict::Unknown && can_land {
        // It can still land (or the chain did not answer): submit the same signed payment again.
        let timeout = tunables(env).settle_timeout_ms;
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
