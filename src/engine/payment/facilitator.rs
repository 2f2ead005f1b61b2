//! The facilitator's message bodies and answers (pure): the `/verify` and `/settle` request
//! rebuilt from checked fields only, the fee payer in a `/supported` answer, the `/verify` and
//! `/settle` verdicts, and the `PAYMENT-RESPONSE` header value.

use super::{encode_header, CheckedPayment, PaymentError, PAYMENT_IDENTIFIER, X402_VERSION};
use crate::engine::base58;
use crate::engine::ClosedError;
use serde_json::{json, Value};

/// Body of the facilitator's `/verify` and `/settle` requests: `{x402Version, paymentPayload,
/// paymentRequirements}` as `@x402/core`'s HTTPFacilitatorClient sends them. The payload is rebuilt
/// from the checked parts and our own challenge `required` (from [`payment_required`] without an
/// error): its `resource` and declared `extensions` (the `bazaar` declaration, so a facilitator that
/// catalogues services can list this route, and `payment-identifier` with the call's id), as a
/// stock client echoes them. Nothing else the client sent is forwarded.
pub fn facilitator_request(
    checked: &CheckedPayment,
    idempotency_key: &str,
    required: &Value,
) -> Value {
    let mut extensions = required
        .get("extensions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    extensions.insert(
        PAYMENT_IDENTIFIER.into(),
        json!({ "info": { "required": true, "id": idempotency_key } }),
    );
    json!({
        "x402Version": X402_VERSION,
        "paymentPayload": {
            "x402Version": X402_VERSION,
            "resource": required.get("resource").cloned().unwrap_or(Value::Null),
            "accepted": checked.requirements,
            "payload": { "transaction": checked.transaction_base64 },
            "extensions": extensions,
        },
        "paymentRequirements": checked.requirements,
    })
}

/// The fee payer our network's `exact` kind names in a `/supported` answer.
pub fn fee_payer_from_supported(body: &[u8], network: &str) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value
        .get("kinds")?
        .as_array()?
        .iter()
        .find(|kind| {
            kind.get("x402Version").and_then(Value::as_u64) == Some(X402_VERSION)
                && kind.get("scheme").and_then(Value::as_str) == Some("exact")
                && kind.get("network").and_then(Value::as_str) == Some(network)
        })?
        .get("extra")?
        .get("feePayer")?
        .as_str()
        .filter(|a| base58::is_solana_address(a))
        .map(str::to_owned)
}

/// Reads a `/verify` answer: Ok only for `isValid: true`.
pub fn read_verify_response(body: &[u8]) -> Result<(), PaymentError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| PaymentError::FacilitatorUnavailable)?;
    match value.get("isValid").and_then(Value::as_bool) {
        Some(true) => Ok(()),
        Some(false) => Err(PaymentError::VerifyRejected),
        None => Err(PaymentError::FacilitatorUnavailable),
    }
}

/// What a `/settle` answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettleOutcome {
    /// On chain: the transaction signature (base58, 64 bytes).
    Settled { tx_sig: String },
    /// Sent but not confirmed yet (`settlement_pending`).
    Pending,
    /// Not settled.
    Failed,
}

/// Reads a `/settle` answer.
pub fn read_settle_response(body: &[u8]) -> SettleOutcome {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return SettleOutcome::Failed;
    };
    let signature = value
        .get("transaction")
        .and_then(Value::as_str)
        .filter(|s| s.len() <= 88 && base58::decode(s).is_some_and(|b| b.len() == 64));
    match (value.get("success").and_then(Value::as_bool), signature) {
        (Some(true), Some(sig)) => SettleOutcome::Settled {
            tx_sig: sig.to_owned(),
        },
        _ if value.get("errorReason").and_then(Value::as_str) == Some("settlement_pending") => {
            SettleOutcome::Pending
        }
        _ => SettleOutcome::Failed,
    }
}

/// The `PAYMENT-RESPONSE` header value (base64 JSON `SettleResponse`).
pub fn payment_response_header(network: &str, payer: &str, settled_tx_sig: Option<&str>) -> String {
    let value = match settled_tx_sig {
        Some(sig) => json!({
            "success": true,
            "transaction": sig,
            "network": network,
            "payer": payer,
        }),
        None => json!({
            "success": false,
            "errorReason": PaymentError::SettlementFailed.code(),
            "transaction": "",
            "network": network,
            "payer": payer,
        }),
    };
    encode_header(&value)
}
