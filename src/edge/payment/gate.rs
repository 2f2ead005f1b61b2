//! The x402 payment gate, up to the engine: challenge, the rail's local checks, the wallet's attempt
//! count, the call's record `begin` ([`claim_or_resume`], one for both rails) and `/verify`.

use super::{
    load_settings, now_ms, reconcile, refuse, release, resource_url, wallet_check, wallet_failure,
    Claim, Gate, PaidCall, RailPayment, Redelivery, Settings,
};
use crate::edge::guard::{self, Command};
use crate::edge::payment::binding::challenge_bound;
use crate::edge::payment::rail::{self, Rail};
use crate::engine::payment::binding::{Bound, CallBinding};
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::Decision;
use crate::engine::payment::{self, read_verify_response, PaymentConfig, PaymentError};
use worker::{Env, Result};

/// The payment gate of a paid route: the 402 challenge without a payment; else the payment's
/// local checks (Solana, or EVM on an `eip155:` network), the wallet's attempt count, the call's
/// record and the facilitator's `/verify`.
pub async fn gate(env: &Env, call: &PaidCall<'_>) -> Result<Gate> {
    let refused = |error: PaymentError,
                   config: Option<&PaymentConfig>,
                   fresh: Option<&Bound>|
     -> Result<Gate> {
        refuse(error, config, call.asked(fresh), None, None).map(Gate::Refused)
    };
    let settings = match load_settings(env).await {
        Ok(settings) => settings,
        Err(error) => return refused(error, None, None),
    };
    let config = &settings.config;
    // The binding a fresh challenge carries (a new nonce on a keyless call).
    let fresh = match challenge_bound(env, call.binding, call.route_id, call.price_units) {
        Ok(bound) => bound,
        Err(error) => return refused(error, None, None),
    };
    let Some(header) = call.req.headers().get("PAYMENT-SIGNATURE")? else {
        if call.req.headers().get("X-PAYMENT")?.is_some() {
            return refused(PaymentError::VersionUnsupported, None, None);
        }
        // The pack's key is required and its body fingerprinted: a key that already holds a
        // payment is answered from its record (delivered again, or 409), never challenged anew.
        if let Some(gate) = unpaid_under_paid_key(env, call, &settings, &fresh).await? {
            return Ok(gate);
        }
        let challenge =
            super::challenge_with(config, call.req, call.route_id, call.price_units, &fresh);
        return challenge.map(Gate::Challenge);
    };
    let refused = |error: PaymentError| refused(error, Some(config), Some(&fresh));
    let checked = rail::check(env, config, call, &header);
    let (bound, checked, rail_payment) = match checked {
        Ok(checked) => checked,
        Err(error) => return refused(error),
    };
    let tunables = settings.tunables;
    let now = now_ms();
    if let Err(error) = wallet_check(env, &checked.payer, tunables.attempts_per_wallet, now).await {
        return refused(error);
    }
    let payer = checked.payer.clone();
    let gate = checked_gate(env, call, &settings, &fresh, bound, checked, rail_payment);
    let gate = gate.await?;
    // Only what costs the service without paying it counts against the wallet: a refusal (not
    // verified, expired, ...) here; a conflict of the record in `claim_or_resume`. Waiting as told
    // (in progress, too early, uncertain) and a delivery never count.
    if matches!(gate, Gate::Refused(_)) {
        wallet_failure(env, &payer, now).await;
    }
    Ok(gate)
}

/// The gate after the wallet check: bind (on a rail that binds apart), begin in the call's record,
/// `/verify`.
async fn checked_gate(
    env: &Env,
    call: &PaidCall<'_>,
    settings: &Settings,
    fresh: &Bound,
    bound: Bound,
    checked: payment::CheckedPayment,
    rail_payment: RailPayment,
) -> Result<Gate> {
    let config = &settings.config;
    let refused = |error: PaymentError| {
        refuse(error, Some(config), call.asked(Some(fresh)), None, None).map(Gate::Refused)
    };
    let now = now_ms();
    // A payment its rail binds apart (an EVM authorization) is bound to its first call before any
    // record is touched.
    if let Some(binding) = Rail::of(rail_payment.as_deref()).bind(env, call, &checked.claim_key) {
        match binding.await {
            Ok(true) => {}
            Ok(false) => {
                wallet_failure(env, &checked.payer, now).await;
                let asked = call.asked(Some(fresh));
                let error = PaymentError::BoundElsewhere;
                return refuse(error, Some(config), asked, None, None).map(Gate::Replay);
            }
            Err(error) => return refused(error),
        }
    }
    let mut claim = Claim {
        route_id: call.route_id.to_owned(),
        bound,
        resource_url: resource_url(call.req, call.route_id),
        price_units: call.price_units,
        checked,
        resumed: None,
        settings: settings.clone(),
        rail_payment,
        family_id: call.family_id,
    };
    // The facilitator this payment goes to (its rail's), chosen once and carried to `settle`.
    claim.settings.facilitator = claim.facilitator(env, settings.facilitator.clone());
    let claim = match claim_or_resume(env, call, fresh, claim, now).await? {
        Begun::Fresh(claim) => claim,
        Begun::Answered(gate) => return Ok(gate),
    };
    // /verify changes nothing at the facilitator, so a transport failure (a pooled connection the
    // facilitator had just closed) is retried once before the call is refused unpaid.
    let verdict = claim
        .settings
        .facilitator
        .verify(&claim.facilitator_body())
        .await
        .and_then(|answer| read_verify_response(&answer));
    if let Err(error) = verdict {
        release(env, &claim).await;
        return refused(error);
    }
    Ok(Gate::Proceed(claim))
}

/// What the call's record said to `begin`.
enum Begun {
    /// A new claim: verify it.
    Fresh(Box<Claim>),
    /// Resumed (settled earlier, or reconciled as landed), or refused: the gate's answer.
    Answered(Gate),
}

/// Begins the attempt in the call's record and answers what the record decides, the same on both
/// rails: a new claim goes on to `/verify`; a settled, undelivered one resumes without a second
/// charge; one in doubt asks the chain first; every conflict is answered with its own code.
async fn claim_or_resume(
    env: &Env,
    call: &PaidCall<'_>,
    fresh: &Bound,
    mut claim: Claim,
    now: u64,
) -> Result<Begun> {
    let tunables = claim.settings.tunables;
    let begin = Command::Begin {
        route_id: call.route_id.to_owned(),
        fingerprint: call.fingerprint.map(str::to_owned),
        claim_key: claim.checked.claim_key.clone(),
        now_ms: now,
        lease_ms: tunables.lease_ms,
        max_attempts: tunables.attempts_per_key,
    };
    let config = claim.settings.config.clone();
    let answer = |error: PaymentError, settled: Option<&SettledFacts>, wait_ms: Option<u64>| {
        let asked = call.asked(Some(fresh));
        let replay = refuse(error, Some(&config), asked, settled, wait_ms).map(Gate::Replay);
        replay.map(Begun::Answered)
    };
    let refused = |error: PaymentError| {
        let asked = call.asked(Some(fresh));
        let refusal = refuse(error, Some(&config), asked, None, None).map(Gate::Refused);
        refusal.map(Begun::Answered)
    };
    let decision: Decision = match guard::call(env, &claim.bound.record, &begin).await {
        Ok(decision) => decision,
        Err(error) => return refused(error),
    };
    let seconds = PaymentError::seconds;
    match decision {
        // A nonce is honoured only until its expiry for a new claim (a payment already in the
        // record keeps every retry rule after it): the fresh claim is released, nothing moved.
        Decision::Fresh if claim.bound.expired(now / 1000) => {
            release(env, &claim).await;
            refused(PaymentError::NonceExpired)
        }
        Decision::Fresh => Ok(Begun::Fresh(Box::new(claim))),
        Decision::Resume(facts) => {
            claim.resumed = Some(facts);
            Ok(Begun::Answered(Gate::Proceed(Box::new(claim))))
        }
        Decision::Reconcile => match reconcile::reconcile(env, &claim).await {
            reconcile::Reconciled::Landed(facts) => {
                claim.resumed = Some(facts);
                Ok(Begun::Answered(Gate::Proceed(Box::new(claim))))
            }
            reconcile::Reconciled::Released => refused(PaymentError::SettlementReleased),
            reconcile::Reconciled::Unknown(error) => answer(error, None, None),
        },
        Decision::RouteConflict | Decision::InputConflict | Decision::ProofConflict => {
            wallet_failure(env, &claim.checked.payer, now).await;
            let error = match decision {
                Decision::RouteConflict => PaymentError::IdempotencyConflict,
                Decision::InputConflict => PaymentError::RetryInputInvalid,
                _ => PaymentError::ProofConflict,
            };
            answer(error, None, None)
        }
        Decision::InProgress { retry_after_ms } => {
            answer(PaymentError::InProgress, None, Some(retry_after_ms))
        }
        Decision::Redeliver {
            facts,
            row,
            first_delivery,
        } => {
            let redelivery = Redelivery {
                network: claim.network().to_owned(),
                record: claim.bound.record.clone(),
                facts,
                row,
                first_delivery,
            };
            Ok(Begun::Answered(Gate::Redeliver(Box::new(redelivery))))
        }
        Decision::Delivered(facts) => answer(PaymentError::Replayed, Some(&facts), None),
        Decision::TooEarly { retry_after_ms } => {
            let retry_after_s = seconds(retry_after_ms);
            answer(PaymentError::RetryTooEarly { retry_after_s }, None, None)
        }
        Decision::RateLimited { retry_after_ms } => {
            let retry_after_s = seconds(retry_after_ms);
            answer(PaymentError::RateLimited { retry_after_s }, None, None)
        }
    }
}

/// A pack call with no payment under a key that already holds one: delivered again (the key is
/// paid for, and the fingerprint proves the body is the paid one), resumed once when it settled
/// without a delivery, or the record's 409; None when the key holds no payment (challenge it).
async fn unpaid_under_paid_key(
    env: &Env,
    call: &PaidCall<'_>,
    settings: &Settings,
    fresh: &Bound,
) -> Result<Option<Gate>> {
    let config = &settings.config;
    let (CallBinding::IdempotencyKey { .. }, Some(fingerprint)) = (call.binding, call.fingerprint)
    else {
        return Ok(None);
    };
    let peek = Command::Peek {
        route_id: call.route_id.to_owned(),
        fingerprint: Some(fingerprint.to_owned()),
        now_ms: now_ms(),
        lease_ms: settings.tunables.lease_ms,
    };
    let answer = |error: PaymentError, wait_ms: Option<u64>| {
        let asked = call.asked(Some(fresh));
        refuse(error, Some(config), asked, None, wait_ms).map(|r| Some(Gate::Replay(r)))
    };
    let decision: Decision = match guard::call(env, &fresh.record, &peek).await {
        Ok(decision) => decision,
        Err(error) => return answer(error, None),
    };
    let seconds = PaymentError::seconds;
    match decision {
        Decision::Fresh => Ok(None),
        Decision::Redeliver {
            facts,
            row,
            first_delivery,
        } => Ok(Some(Gate::Redeliver(Box::new(Redelivery {
            record: fresh.record.clone(),
            network: row
                .as_ref()
                .map_or_else(|| config.network.clone(), |r| r.network.clone()),
            facts,
            row,
            first_delivery,
        })))),
        Decision::Delivered(facts) => {
            let asked = call.asked(Some(fresh));
            let replay = refuse(
                PaymentError::Replayed,
                Some(config),
                asked,
                Some(&facts),
                None,
            );
            replay.map(|r| Some(Gate::Replay(r)))
        }
        Decision::RouteConflict => answer(PaymentError::IdempotencyConflict, None),
        Decision::InputConflict => answer(PaymentError::RetryInputInvalid, None),
        Decision::TooEarly { retry_after_ms } => answer(
            PaymentError::Uncertain {
                retry_after_s: seconds(retry_after_ms),
            },
            None,
        ),
        Decision::InProgress { retry_after_ms } => {
            answer(PaymentError::InProgress, Some(retry_after_ms))
        }
        _ => answer(PaymentError::InProgress, None),
    }
}
