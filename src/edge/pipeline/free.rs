//! The free check: intake, free validation, the caller wallet, the engine's report, then the
//! (family, wallet) allowance; the report is signed only when the allowance admits the call, and a
//! spent allowance answers 402 with the paid route's challenge.

use super::{apart, intake, now_ms, price_units, sign_for};
use crate::edge::error::{EdgeError, Refused};
use crate::edge::family::{Family, Rail};
use crate::edge::{allowance, config, engines, metrics, payment, respond, routes};
use crate::engine::allowance::Decision;
use serde_json::Value;
use worker::{Context, Env, Request, Response};

/// A free check (`Handler::Free`).
pub async fn check(
    mut req: Request,
    env: &Env,
    ctx: &Context,
    family: &'static Family,
) -> Result<Response, Refused> {
    let free = family.free.as_ref().ok_or(EdgeError::NotCovered)?;
    let body = apart(intake::read(&free.body, &mut req)).await?;
    let mut checked = (free.body.parse)(&body)?;
    drop(body);
    let header_caller = req
        .headers()
        .get("x-caller")
        .ok()
        .flatten()
        .filter(|h| !h.is_empty());
    let caller = engines::free_caller(&mut *checked, family, header_caller)?;
    // Every refusal a free check can give is decided before the allowance is touched: the
    // engine is pure and deterministic, so the report is computed first, and dropped unseen
    // when the allowance then refuses the call.
    let signer = config::signer(env)?;
    let now = now_ms();
    let report = checked.precheck(now)?;
    metrics::engine_latency(now_ms().saturating_sub(now));
    let limits = config::free_limits(env);
    let decision = allowance::spend(env, family.id, &caller, now, limits).await?;
    let spent = match decision {
        Decision::Allowed { .. } => None,
        Decision::Exhausted { .. } => Some(EdgeError::FreeTierExhausted),
        Decision::TooSoon { wait_ms } => Some(EdgeError::FreeTierTooEarly {
            retry_after_ms: wait_ms.max(1),
        }),
    };
    if let Some(spent) = spent {
        drop(report);
        metrics::free_tier_exhausted(family.id);
        return apart(free_tier_refusal(&req, env, family, spent)).await;
    }
    count_free_use(env, ctx, family, now);
    sign_for(family, 200, report, &signer)
}

/// 402 for a spent free allowance, carrying the paid route's `PAYMENT-REQUIRED` challenge. The
/// challenge's memo binds the request's Idempotency-Key when it sent a valid one; otherwise a fresh
/// key is drawn and returned in the body, to be sent with the paid call.
async fn free_tier_refusal(
    req: &Request,
    env: &Env,
    family: &'static Family,
    spent: EdgeError,
) -> Result<Response, Refused> {
    let op = family.ops[0];
    let paid_path = routes::paid_path(op, Rail::X402).unwrap_or_default();
    let (key, drawn) = match intake::sent_idempotency_key(req) {
        Some(k) => (k, false),
        None => (fresh_idempotency_key()?, true),
    };
    let binding = intake::offered_binding(family.key, key.clone());
    let challenge = payment::challenge(req, env, paid_path, price_units(env, op), &binding).await?;
    let mut body = respond::refusal_body(&spent, false);
    body["paid_route"] = Value::from(paid_path);
    if drawn {
        body["idempotency_key"] = Value::from(key);
    }
    let mut response = respond::json(402, &body)?;
    if let Ok(Some(required)) = challenge.headers().get("payment-required") {
        let _ = response.headers_mut().set("payment-required", &required);
    }
    Ok(response)
}

/// 32 random characters of `[0-9a-f]` from the runtime's CSPRNG.
fn fresh_idempotency_key() -> Result<String, EdgeError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| EdgeError::Internal)?;
    Ok(crate::engine::sign::hex(&bytes))
}

/// Adds one to the (family, UTC day) free-use aggregate after the response is sent.
fn count_free_use(env: &Env, ctx: &Context, family: &'static Family, now: u64) {
    let Ok(db) = env.d1("DB") else { return };
    let day = crate::engine::time::utc_day(now);
    ctx.wait_until(async move {
        let statement = db.prepare(
            "INSERT INTO free_use (family, day, count) VALUES (?1, ?2, 1) \
             ON CONFLICT (family, day) DO UPDATE SET count = count + 1",
        );
        if let Ok(bound) = statement.bind(&[family.id.into(), day.into()]) {
            let _ = bound.run().await;
        }
    });
}
