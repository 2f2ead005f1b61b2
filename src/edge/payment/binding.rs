//! The edge half of a paid call's binding (ARCHITECTURE §4; the pure half is
//! `engine::payment::binding`): the server secret, the pack's request fingerprint, a fresh
//! challenge's binding (a new nonce drawn from the runtime's CSPRNG on a keyless call) and the
//! binding a presented payment claims.
//!
//! Env var: PAYMENT_NONCE_TTL_SECONDS (life of a keyless challenge's nonce, default 300).
//! Secrets: IDEMPOTENCY_SECRET (optional; else derived from SIGNING_KEY).

use crate::engine::payment::binding::{self, Bound, CallBinding};
use crate::engine::payment::{self, idempotency, PaymentError};
use serde_json::Value;
use worker::{Date, Env};

/// The service release the pack's fingerprint covers (its contract's versionedRetries).
pub const RELEASE_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Default life of a keyless challenge's nonce.
const DEFAULT_NONCE_TTL_S: u64 = 300;

/// The secret of the pack's request fingerprint and of the nonce tokens: `IDEMPOTENCY_SECRET`
/// when set, else an HMAC of a fixed label under the `SIGNING_KEY` seed (domain-separated from
/// signing; no second secret to deploy). None when neither is available. Each use puts its own
/// label or layout into the HMAC input.
pub(crate) fn fingerprint_secret(env: &Env) -> Option<Vec<u8>> {
    use base64::{engine::general_purpose::STANDARD, Engine as _};
    if let Ok(secret) = env.secret("IDEMPOTENCY_SECRET") {
        let secret = secret.to_string();
        if !secret.is_empty() {
            return Some(secret.into_bytes());
        }
    }
    let seed = STANDARD
        .decode(env.secret("SIGNING_KEY").ok()?.to_string().trim())
        .ok()?;
    Some(payment::hmac::hmac_sha256(&seed, &[b"context-meter idempotency fingerprint v1"]).to_vec())
}

/// The pack's request fingerprint for `body` on `route_id` (None when no secret is available:
/// the caller answers 503).
pub fn pack_fingerprint(env: &Env, route_id: &str, body: &[u8]) -> Option<String> {
    fingerprint_secret(env)
        .map(|secret| idempotency::fingerprint(&secret, RELEASE_VERSION, route_id, body))
}

/// The binding a fresh challenge carries: the key's memo, or a new nonce token (drawn from the
/// runtime's CSPRNG, keyed by the server secret, valid `PAYMENT_NONCE_TTL_SECONDS`).
pub fn challenge_bound(
    env: &Env,
    binding: &CallBinding,
    route_id: &str,
    price_units: u64,
) -> std::result::Result<Bound, PaymentError> {
    if let CallBinding::IdempotencyKey { key, .. } = binding {
        if !payment::is_valid_idempotency_key(key) {
            return Err(PaymentError::IdempotencyKeyInvalid);
        }
    }
    let mut nonce = [0u8; binding::NONCE_BYTES];
    let secret = match binding {
        CallBinding::ServerNonce => {
            getrandom::fill(&mut nonce).map_err(|_| PaymentError::StateUnavailable)?;
            fingerprint_secret(env).ok_or(PaymentError::ConfigInvalid)?
        }
        CallBinding::IdempotencyKey { .. } => Vec::new(),
    };
    let ttl_s = crate::edge::config::var_u64(env, "PAYMENT_NONCE_TTL_SECONDS", DEFAULT_NONCE_TTL_S);
    Ok(binding::for_challenge(
        binding,
        &secret,
        route_id,
        price_units,
        &nonce,
        Date::now().as_millis() / 1000,
        ttl_s,
    ))
}

/// The binding a presented payment claims: the key's, or the nonce token its `accepted` memo
/// carries (refused free unless we issued it for this route and price).
pub fn payment_bound(
    env: &Env,
    binding: &CallBinding,
    route_id: &str,
    price_units: u64,
    accepted: &Value,
) -> std::result::Result<Bound, PaymentError> {
    let secret = match binding {
        CallBinding::ServerNonce => fingerprint_secret(env).ok_or(PaymentError::ConfigInvalid)?,
        CallBinding::IdempotencyKey { .. } => Vec::new(),
    };
    let memo = accepted
        .get("extra")
        .and_then(|e| e.get("memo"))
        .and_then(Value::as_str);
    binding::for_payment(binding, &secret, route_id, price_units, memo)
}
