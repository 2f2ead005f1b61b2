//! x402 `exact` on Solana, the I/O half (ARCHITECTURE §4): a `PAYMENT-SIGNATURE` that pays on
//! Solana, checked by the engine and bound to this call by its memo (the call's Idempotency-Key,
//! or the server nonce its challenge carried), and what the chain says of a payment in doubt
//! (`engine::payment::solana::reconcile`: blockhash validity, then this payment's memo in the
//! payer's token-account history).
//!
//! Env vars: `SOLANA_RPC_URL` (reconciliation; without it an uncertain payment is only ever
//! re-submitted, never released).

use super::binding::payment_bound;
use super::{now_ms, Checked, Claim, PaidCall};
use crate::edge::payment::facilitator::rpc_call;
use crate::engine::payment::idempotency::RECORD_TTL_MS;
use crate::engine::payment::reconcile::ChainVerdict;
use crate::engine::payment::solana::reconcile;
use crate::engine::payment::{
    check_bound_payment, decode_payment_header, PaymentConfig, PaymentError,
};
use worker::Env;

/// The Solana payment's local checks and its binding: the bound call and the checked payment
/// (nothing else is kept of it: its checked transaction is the whole payment).
pub(crate) fn check(
    env: &Env,
    config: &PaymentConfig,
    call: &PaidCall<'_>,
    header: &str,
) -> Result<Checked, PaymentError> {
    decode_payment_header(header).and_then(|payload| {
        let bound = payment_bound(
            env,
            call.binding,
            call.route_id,
            call.price_units,
            &payload.accepted,
        )?;
        let checked = check_bound_payment(config, call.price_units, &bound, &payload)?;
        Ok((bound, checked, None))
    })
}

/// What the Solana chain says of the claim's payment (Unknown without `SOLANA_RPC_URL`).
pub(crate) async fn chain_verdict(env: &Env, claim: &Claim) -> ChainVerdict {
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
