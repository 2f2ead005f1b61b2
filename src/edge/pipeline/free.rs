//! The free check: intake, free validation, the caller wallet, the engine's report, then the
//! (family, wallet) allowance; the report is signed only when the allowance admits the call, and a
//! spent allowance answers 402 with the paid route's challenge.

use super::{apart, intake, now_ms, price_units, sign_for};
use crate::edge::engines::Checked;
use crate::edge::error::{EdgeError, Refused};
use crate::edge::family::{Family, Rail};
use crate::edge::{allowance, config, metrics, payment, respond, routes};
use crate::engine::allowance::Decision;
use serde_json::Value;
use worker::{Context, Env, Request, Response};

/// A free check (`Handler::Free`).
pub async fn check(
    mut req: Request,
    given: Option<Vec<u8>>,
    env: &Env,
    ctx: &Context,
    family: &'static Family,
) -> Result<Response, Refused> {
    let free = family.free.as_ref().ok_or(EdgeError::NotCovered)?;
    let body = apart(intake::read(&free.body, &mut req, given)).await?;
    let mut checked = (free.body.parse)(&body)?;
    drop(body);
    let header_caller = req
        .headers()
        .get("x-caller")
        .ok()
        .flatten()
        .filter(|h| !h.is_empty());
    let caller = free_caller(&mut *checked, family, header_caller)?;
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

/// The free check's wallet, decided before the allowance is touched: the body's `caller` where the
/// family's input has one, else `header` (the non-empty `X-Caller`), on every family alike. It must
/// be a Solana or an EVM address (counted under its lower-case form). The wallet is given to the
/// request (token-efficiency's pre-check requires one), so a wallet named only in the header is
/// answered like one in the body.
pub fn free_caller(
    checked: &mut dyn Checked,
    family: &Family,
    header: Option<String>,
) -> Result<String, Refused> {
    let in_body = family
        .caller
        .in_body
        .then(|| checked.body_caller().map(str::to_owned))
        .flatten();
    let caller = in_body
        .or(header)
        .ok_or_else(|| (family.caller.refusal)(false))?;
    if !crate::engine::wallet::is_wallet_address(&caller) {
        return Err((family.caller.refusal)(true));
    }
    checked.name_caller(&caller);
    Ok(crate::engine::wallet::allowance_name(&caller))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::family;

    /// 32 zero bytes in base58: a valid Solana address.
    const WALLET: &str = "11111111111111111111111111111111";
    const OTHER_WALLET: &str = "11111111111111111111111111111112";

    fn free_bodies() -> [(&'static Family, String); 3] {
        [
            (
                &family::TOKEN_EFFICIENCY,
                r#"{"payload":"a b c","budget_tokens":5}"#.to_owned(),
            ),
            (
                &family::CONTEXT_COMPOSITION,
                r#"{"envelope_version":"context-composition-envelope/1","declared_format_id":"anthropic-messages","record":[{"role":"user","content":"hi"}]}"#.to_owned(),
            ),
            (
                &family::BUDGET_PACK,
                r#"{"sources":[{"id":"s","text":"abcd"}],"candidates":[{"id":"c","sourceId":"s","start":0,"end":4,"costUnits":1}],"budgetUnits":5}"#.to_owned(),
            ),
        ]
    }

    fn parsed(family: &Family, body: &str) -> Box<dyn Checked> {
        let free = family.free.as_ref().expect("a free check");
        match (free.body.parse)(body.as_bytes()) {
            Ok(parsed) => parsed,
            Err(refused) => panic!("{}: {}", family.id, refused.code()),
        }
    }

    #[test]
    fn a_wallet_in_the_header_alone_serves_every_free_check() {
        for (family, body) in free_bodies() {
            let missing = free_caller(&mut *parsed(family, &body), family, None);
            assert_eq!(missing.err().map(|r| r.code()), Some("caller_missing"));
            let invalid = free_caller(&mut *parsed(family, &body), family, Some("0OIl".into()));
            assert_eq!(invalid.err().map(|r| r.code()), Some("caller_invalid"));
            let mut request = parsed(family, &body);
            let wallet = free_caller(&mut *request, family, Some(WALLET.into()));
            assert_eq!(wallet.ok().as_deref(), Some(WALLET), "{}", family.id);
            // The pre-check answers it: nothing is left to refuse after the allowance.
            let report = request.precheck(0);
            assert!(report.is_ok(), "{}", family.id);
            // An EVM address is a wallet too, counted under its lower-case form.
            let evm = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
            let mut request = parsed(family, &body);
            let wallet = free_caller(&mut *request, family, Some(evm.into()));
            let folded = evm.to_ascii_lowercase();
            assert_eq!(
                wallet.ok().as_deref(),
                Some(folded.as_str()),
                "{}",
                family.id
            );
            assert!(request.precheck(0).is_ok(), "{}", family.id);
            let short = free_caller(&mut *parsed(family, &body), family, Some(evm[..41].into()));
            assert_eq!(short.err().map(|r| r.code()), Some("caller_invalid"));
        }
    }

    #[test]
    fn a_body_caller_outranks_the_header() {
        let body = format!(r#"{{"payload":"a b c","budget_tokens":5,"caller":"{WALLET}"}}"#);
        let mut request = parsed(&family::TOKEN_EFFICIENCY, &body);
        let wallet = free_caller(
            &mut *request,
            &family::TOKEN_EFFICIENCY,
            Some(OTHER_WALLET.into()),
        );
        assert_eq!(wallet.ok().as_deref(), Some(WALLET));
    }
}
