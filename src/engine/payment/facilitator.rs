//! The facilitator protocol every rail speaks (pure): the extensions a stock client echoes, the
//! fee payer and the networks in a `/supported` answer, the `/verify` verdict, the parts of a
//! `/settle` answer, and the `PAYMENT-RESPONSE` header value. Each rail builds its own `/verify`
//! and `/settle` request from its checked fields and reads its own transaction id
//! ([`super::solana::facilitator`], [`super::evm`]).

use super::{encode_header, PaymentError, PAYMENT_IDENTIFIER, X402_VERSION};
use crate::engine::base58;
use crate::engine::ClosedError;
use serde_json::{json, Map, Value};

/// The extensions our challenge `required` declared, as a stock client echoes them, with the
/// call's payment-identifier id; without that extension when the call carries none.
pub fn echoed_extensions(required: &Value, payment_identifier: Option<&str>) -> Map<String, Value> {
    let mut extensions = required
        .get("extensions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    match payment_identifier {
        Some(id) => {
            extensions.insert(
                PAYMENT_IDENTIFIER.into(),
                json!({ "info": { "required": true, "id": id } }),
            );
        }
        None => {
            extensions.remove(PAYMENT_IDENTIFIER);
        }
    }
    extensions
}

/// The x402 v2 `exact` kind a `/supported` answer lists for `network`, if any.
fn exact_kind(body: &[u8], network: &str) -> Option<Value> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let kinds = value.get("kinds")?.as_array()?;
    kinds
        .iter()
        .find(|kind| {
            kind.get("x402Version").and_then(Value::as_u64) == Some(X402_VERSION)
                && kind.get("scheme").and_then(Value::as_str) == Some("exact")
                && kind.get("network").and_then(Value::as_str) == Some(network)
        })
        .cloned()
}

/// The fee payer our network's `exact` kind names in a `/supported` answer.
pub fn fee_payer_from_supported(body: &[u8], network: &str) -> Option<String> {
    exact_kind(body, network)?
        .get("extra")?
        .get("feePayer")?
        .as_str()
        .filter(|a| base58::is_solana_address(a))
        .map(str::to_owned)
}

/// Whether a `/supported` answer lists x402 v2 `exact` on `network` (any rail; readiness).
pub fn supports_network(body: &[u8], network: &str) -> bool {
    exact_kind(body, network).is_some()
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

/// The parts of a `/settle` answer every reading looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettleAnswer {
    /// `success`, when it is a boolean.
    pub success: Option<bool>,
    /// `transaction`, when it is a string the rail's `well_formed` accepts.
    pub transaction: Option<String>,
    /// `errorReason`, or "" when absent.
    pub reason: String,
}

impl SettleAnswer {
    /// Reads a `/settle` answer; None when it is not JSON.
    pub fn read(body: &[u8], well_formed: impl Fn(&str) -> bool) -> Option<SettleAnswer> {
        let value = serde_json::from_slice::<Value>(body).ok()?;
        let text = |name: &str| value.get(name).and_then(Value::as_str);
        Some(SettleAnswer {
            success: value.get("success").and_then(Value::as_bool),
            transaction: text("transaction")
                .filter(|s| well_formed(s))
                .map(str::to_owned),
            reason: text("errorReason").unwrap_or("").to_owned(),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::payment::{SOLANA_DEVNET, SOLANA_MAINNET};
    use base64::{engine::general_purpose::STANDARD, Engine as _};

    #[test]
    fn facilitator_answers_are_read_closed() {
        let supported = br#"{"kinds":[{"x402Version":1,"scheme":"exact","network":"solana-devnet","extra":{"feePayer":"11111111111111111111111111111111"}},{"x402Version":2,"scheme":"exact","network":"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1","extra":{"feePayer":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}}],"extensions":[],"signers":{}}"#;
        assert_eq!(
            fee_payer_from_supported(supported, SOLANA_DEVNET).as_deref(),
            Some("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
        );
        assert_eq!(fee_payer_from_supported(supported, SOLANA_MAINNET), None);
        assert_eq!(fee_payer_from_supported(b"nope", SOLANA_DEVNET), None);
        assert!(supports_network(supported, SOLANA_DEVNET));
        assert!(!supports_network(supported, SOLANA_MAINNET));
        assert!(!supports_network(b"nope", SOLANA_DEVNET));

        assert_eq!(
            read_verify_response(br#"{"isValid":true,"payer":"x"}"#),
            Ok(())
        );
        assert_eq!(
            read_verify_response(br#"{"isValid":false,"invalidReason":"x"}"#),
            Err(PaymentError::VerifyRejected)
        );
        assert_eq!(
            read_verify_response(b"<html>"),
            Err(PaymentError::FacilitatorUnavailable)
        );

        let sig = base58::encode(&[7u8; 64]);
        let header = payment_response_header(SOLANA_DEVNET, "payer1", Some(&sig));
        let decoded: Value = serde_json::from_slice(&STANDARD.decode(header).unwrap()).unwrap();
        assert_eq!(decoded["success"], true);
        assert_eq!(decoded["transaction"], sig.as_str());
        let failed = payment_response_header(SOLANA_DEVNET, "payer1", None);
        let decoded: Value = serde_json::from_slice(&STANDARD.decode(failed).unwrap()).unwrap();
        assert_eq!(decoded["success"], false);
        assert_eq!(decoded["errorReason"], "payment_settlement_failed");
    }
}
