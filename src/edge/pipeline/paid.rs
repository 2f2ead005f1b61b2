//! A paid call: intake and free validation, the call's binding (and the pack's keyed body
//! fingerprint), then its rail: x402 here (payment gate → engine → settle only a chargeable result
//! → ledger row → delivered → 200 with `PAYMENT-RESPONSE`), or MPP (`payment::mpp`). Anything not
//! delivered releases the claim; nothing is settled for it.

use super::{apart, intake, now_ms, price_units, sign_for};
use crate::edge::deliver::{redeliver, run_engine, write_row, Again, Chargeable};
use crate::edge::engines::Runnable;
use crate::edge::error::{EdgeError, Refused};
use crate::edge::family::{KeyRule, PaidOp, Rail};
use crate::edge::payment::binding;
use crate::edge::payment::mpp;
use crate::edge::payment::{self, Gate, PaidCall, Redelivery};
use crate::edge::routes::Route;
use crate::edge::{config, ledger, metrics};
use crate::engine::payment::binding::CallBinding;
use crate::engine::payment::PaymentError;
use crate::engine::ClosedError;
use worker::{Env, Request, Response};

/// A paid route (`Handler::Paid`).
pub async fn call(
    route: &'static Route,
    op: &'static PaidOp,
    rail: Rail,
    mut req: Request,
    given: Option<Vec<u8>>,
    env: &Env,
) -> Result<Response, Refused> {
    let body = apart(intake::read(&op.body, &mut req, given)).await?;
    let runnable = (op.body.parse)(&body)?;
    let family = op.family;
    let binding = intake::call_binding(family.key, &req)?;
    // The pack's contract asks for INVALID_RETRY_INPUT on a changed body: a keyed HMAC of
    // (release, route, body) goes into the key's record. The criteria families keep nothing.
    let fingerprint = match family.key {
        KeyRule::Contract(_) => Some(
            binding::pack_fingerprint(env, route.path, &body).ok_or(EdgeError::Misconfigured)?,
        ),
        KeyRule::Optional => None,
    };
    drop(body);
    let call = PaidCall {
        req: &req,
        family_id: family.id,
        route_id: route.path,
        price_units: price_units(env, op),
        binding: &binding,
        fingerprint: fingerprint.as_deref(),
    };
    match rail {
        Rail::X402 => apart(x402(op, env, &call, &*runnable)).await,
        Rail::Mpp => {
            // The contract's second rail: same validation, engine and delivery; MPP payment.
            let CallBinding::IdempotencyKey { key, .. } = &binding else {
                return Err(EdgeError::IdempotencyKeyInvalid.into());
            };
            apart(mpp::paid(op, env, &call, key, &*runnable)).await
        }
    }
}

/// The x402 pipeline after free validation.
async fn x402(
    op: &'static PaidOp,
    env: &Env,
    call: &PaidCall<'_>,
    runnable: &dyn Runnable,
) -> Result<Response, Refused> {
    let family = op.family;
    let signer = config::signer(env)?;
    let claim = match payment::gate(env, call).await? {
        Gate::Challenge(r) | Gate::Refused(r) | Gate::Replay(r) => return Ok(r),
        Gate::Redeliver(redelivery) => {
            return again(op, env, call, runnable, &signer, &redelivery).await
        }
        Gate::Proceed(claim) => claim,
    };
    let now = now_ms();
    let delivery = match run_engine(op, runnable, &signer, now) {
        Ok(Chargeable::Yes(delivery)) => delivery,
        // Nothing to charge for: the claim is released, the answer given as it is.
        Ok(Chargeable::No(unpaid)) => {
            payment::release(env, &claim).await;
            return Ok(unpaid);
        }
        Err(refused) => {
            payment::release(env, &claim).await;
            return Err(refused);
        }
    };
    let row = ledger::pending_row(
        family,
        claim.network(),
        call.price_units,
        now,
        &delivery.ledger,
    );
    let settled = match payment::settle(env, &claim, &row).await {
        Ok(settled) => settled,
        Err(response) => {
            let outcome = if response.status_code() == 409 {
                "uncertain"
            } else {
                payment::wallet_failure(env, &claim.checked.payer, now).await;
                "failed"
            };
            metrics::payment(family.id, outcome);
            return Ok(response);
        }
    };
    metrics::payment(
        family.id,
        if settled.resumed {
            "resumed"
        } else {
            "settled"
        },
    );
    let written = write_row(env, op, &row, &settled.facts).await;
    payment::delivered(env, &claim, written).await;
    let mut response = sign_for(family, delivery.status, delivery.report, &signer)?;
    let _ = response
        .headers_mut()
        .set("payment-response", &settled.payment_response_header);
    Ok(response)
}

/// A retry after a lost answer (ARCHITECTURE §4): delivered again with the original
/// PAYMENT-RESPONSE when it is the paid call, else 409 `payment_redelivery_mismatch`.
async fn again(
    op: &'static PaidOp,
    env: &Env,
    call: &PaidCall<'_>,
    runnable: &dyn Runnable,
    signer: &crate::engine::sign::ReportSigner,
    redelivery: &Redelivery,
) -> Result<Response, Refused> {
    let receipt = redelivery.payment_response_header();
    let first = redelivery
        .first_delivery
        .as_deref()
        .map(|key| (redelivery.record.as_str(), key));
    let again = Again {
        row: redelivery.row.as_ref(),
        facts: &redelivery.facts,
        first_delivery: first,
        receipt: ("payment-response", receipt.clone()),
        fingerprinted: call.fingerprint.is_some(),
    };
    if let Some(response) = redeliver(env, op, runnable, signer, again).await? {
        return Ok(response);
    }
    let error = PaymentError::RedeliveryMismatch;
    let body = payment::refusal_body(&error, false);
    Ok(payment::json_response(
        error.status(),
        &body,
        &[("PAYMENT-RESPONSE", receipt)],
    )?)
}
