//! Intake of a body route, all free and before any allowance or payment is touched: the
//! Content-Type and Content-Encoding, the body read under the endpoint's cap (over it, the
//! family's own refusal), and how a paid call is bound to its payment.

use crate::edge::body::{self, Unread};
use crate::edge::error::{EdgeError, Refused};
use crate::edge::family::{Body, KeyRule};
use crate::engine::payment::binding::CallBinding;
use crate::engine::payment::is_valid_idempotency_key;
use worker::Request;

/// Content-Type check and capped body read. `given`: the body already in hand (an MCP tool's
/// arguments, `edge::mcp::call`), held to the same cap instead of being streamed again.
pub async fn read<P>(
    endpoint: &Body<P>,
    req: &mut Request,
    given: Option<Vec<u8>>,
) -> Result<Vec<u8>, Refused> {
    if !body::is_json_content_type(req) {
        return Err(EdgeError::UnsupportedMediaType.into());
    }
    // Compressed bodies are refused (the pack contract's 415 "unsupported media type or compression").
    let encoding = req.headers().get("content-encoding").ok().flatten();
    if encoding.is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity") && !e.trim().is_empty())
    {
        return Err(EdgeError::ContentEncodingUnsupported.into());
    }
    if let Some(bytes) = given {
        if bytes.len() > endpoint.cap {
            return Err((endpoint.over_cap)(bytes.len() as u64));
        }
        return Ok(bytes);
    }
    match body::read_capped(req, endpoint.cap).await {
        Ok(bytes) => Ok(bytes),
        // Over the cap: the family's own published refusal (its code, message and figures).
        Err(Unread::TooLarge { seen }) => Err((endpoint.over_cap)(seen)),
        Err(Unread::Failed(e)) => Err(e.into()),
    }
}

/// The request's `Idempotency-Key` when it is well formed (16–128 of `[A-Za-z0-9_-]`).
pub fn sent_idempotency_key(req: &Request) -> Option<String> {
    req.headers()
        .get("idempotency-key")
        .ok()
        .flatten()
        .filter(|k| is_valid_idempotency_key(k))
}

/// How a paid call is bound to its payment, decided here only (free, before any payment), by the
/// family's key rule: the pack requires its Idempotency-Key (the contract's own code when it is
/// missing or malformed) and a payment-identifier equal to it; a criteria-family call is bound by
/// its key when it sends one (a malformed key is refused, never ignored) and by a server nonce in
/// the challenge when it sends none (ARCHITECTURE §4).
pub fn call_binding(key: KeyRule, req: &Request) -> Result<CallBinding, Refused> {
    let raw = req.headers().get("idempotency-key").ok().flatten();
    match (key, raw) {
        (KeyRule::Contract(check), raw) => {
            check(raw.as_deref())?;
            let key = sent_idempotency_key(req).ok_or(EdgeError::IdempotencyKeyInvalid)?;
            Ok(CallBinding::pack(key))
        }
        (KeyRule::Optional, None) => Ok(CallBinding::criteria(None)),
        (KeyRule::Optional, Some(key)) if is_valid_idempotency_key(&key) => {
            Ok(CallBinding::criteria(Some(key)))
        }
        (KeyRule::Optional, Some(_)) => Err(EdgeError::IdempotencyKeyInvalid.into()),
    }
}

/// The binding a free check's spent allowance offers its paid route: the family's rule, with the
/// key the request sent or one drawn for it.
pub fn offered_binding(key_rule: KeyRule, key: String) -> CallBinding {
    if key_rule.is_contract() {
        CallBinding::pack(key)
    } else {
        CallBinding::criteria(Some(key))
    }
}
