//! After the engine: settle a claimed payment (both rails), or record its delivery. A guard that
//! cannot record a delivery is counted in the metrics, never dropped.

use super::{json_response, now_ms, reconcile, refusal_body, release, transition, Claim, Settled};
use crate::edge::guard::{self, Command, TransitionAnswer};
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::outbox::PendingRow;
use crate::engine::payment::reconcile::SettleVerdict;
use crate::engine::payment::{self, PaymentError};
use crate::engine::ClosedError;
use worker::{Env, Response, ResponseBuilder};

/// Settles a claimed payment after the engine produced a chargeable result. A resumed claim
/// returns its earlier settlement (no second charge). `settling` is recorded before `/settle` is
/// called. Landed → Ok. Refused by the facilitator before signing, or definitely failed on chain →
/// 402 (released, nothing charged). Pending, a failed connection, a timeout, or any other answer →
/// the chain is asked at once; still unknown → 409 PAYMENT_UNCERTAIN with Retry-After, claim kept.
/// `row` (the ledger row the payment will owe) enters the record with `settling`, so a payment
/// that settles has its row in the record's outbox whatever happens next.
pub async fn settle(
    env: &Env,
    claim: &Claim,
    row: &PendingRow,
) -> std::result::Result<Settled, Response> {
    let network = claim.network().to_owned();
    let settled = |facts: &SettledFacts, resumed: bool| Settled {
        facts: facts.clone(),
        resumed,
        payment_response_header: payment::payment_response_header(
            &network,
            &facts.payer,
            Some(&facts.tx_sig),
        ),
    };
    if let Some(facts) = &claim.resumed {
        return Ok(settled(facts, true));
    }
    let failure = |error: PaymentError| -> Response {
        let mut headers = Vec::new();
        if error.status() == 402 {
            let header = payment::payment_response_header(&network, &claim.checked.payer, None);
            headers.push(("PAYMENT-RESPONSE", header));
        }
        if let Some(seconds) = error.retry_after_s() {
            headers.push(("Retry-After", seconds.to_string()));
        }
        json_response(error.status(), &refusal_body(&error, false), &headers)
            .unwrap_or_else(|_| ResponseBuilder::new().with_status(error.status()).empty())
    };
    let facilitator = &claim.settings.facilitator;
    let tunables = &claim.settings.tunables;
    // Nothing moves before this is written; if it cannot be written, nothing is submitted.
    let settling = Command::Settling {
        claim_key: claim.claim_key().to_owned(),
        now_ms: now_ms(),
        lease_ms: tunables.lease_ms,
        row: Some(row.clone()),
    };
    let marked = guard::call::<TransitionAnswer>(env, &claim.bound.record, &settling).await;
    if !matches!(marked, Ok(TransitionAnswer { ok: true, .. })) {
        release(env, claim).await;
        return Err(failure(PaymentError::StateUnavailable));
    }
    let verdict = match facilitator
        .settle_within(&claim.facilitator_body(), tunables.settle_timeout_ms)
        .await
    {
        Ok(answer) => claim.settle_verdict(&answer),
        // Our credentials were refused: nothing was submitted; released, 503, nothing charged.
        Err(Some(error)) => {
            release(env, claim).await;
            return Err(failure(error));
        }
        Err(None) => SettleVerdict::Unknown,
    };
    let landed = match verdict {
        SettleVerdict::Landed { tx_sig } => {
            let facts = claim.landed(tx_sig);
            // The money moved: record it; a guard failure here must not hide the settlement.
            let command = Command::Settled {
                claim_key: claim.claim_key().to_owned(),
                facts: facts.clone(),
            };
            if !transition(env, claim, command).await {
                worker::console_error!("payment guard: settled state not recorded");
            }
            facts
        }
        SettleVerdict::NotSent => {
            release(env, claim).await;
            return Err(failure(PaymentError::SettlementFailed));
        }
        SettleVerdict::Unknown => match reconcile::reconcile(env, claim).await {
            reconcile::Reconciled::Landed(facts) => facts,
            reconcile::Reconciled::Released => {
                return Err(failure(PaymentError::SettlementReleased))
            }
            reconcile::Reconciled::Unknown(error) => return Err(failure(error)),
        },
    };
    Ok(settled(&landed, false))
}

/// Records delivery: from now on the same payment's identical retry is delivered again with its
/// PAYMENT-RESPONSE. `row_written` says whether the worker's ledger write succeeded (if not, the
/// record's alarm writes the row).
pub async fn delivered(env: &Env, claim: &Claim, row_written: bool) {
    let (object, key) = (&claim.bound.record, claim.claim_key());
    crate::edge::deliver::mark_delivered(env, object, key, claim.family_id, row_written).await;
}
