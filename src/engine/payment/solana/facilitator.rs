//! The Solana rail's facilitator bodies (pure): the `/verify` and `/settle` request rebuilt from a
//! checked transaction, and a `/settle` answer read with Solana's transaction id.

use super::{is_transaction_signature, CheckedPayment};
use crate::engine::payment::facilitator::{echoed_extensions, SettleAnswer, SettleOutcome};
use crate::engine::payment::X402_VERSION;
use serde_json::{json, Value};

/// Body of the facilitator's `/verify` and `/settle` requests: `{x402Version, paymentPayload,
/// paymentRequirements}` as `@x402/core`'s HTTPFacilitatorClient sends them. The payload is rebuilt
/// from the checked parts and our own challenge `required` (from
/// [`payment_required`](crate::engine::payment::payment_required) without an error): its
/// `resource` and declared `extensions` (the `bazaar` declaration, so a facilitator that catalogues
/// services can list this route, and `payment-identifier` with the call's id), as a stock client
/// echoes them. Nothing else the client sent is forwarded.
pub fn facilitator_request(
    checked: &CheckedPayment,
    idempotency_key: &str,
    required: &Value,
) -> Value {
    let extensions = echoed_extensions(required, Some(idempotency_key));
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

/// Reads a `/settle` answer.
pub fn read_settle_response(body: &[u8]) -> SettleOutcome {
    let Some(answer) = SettleAnswer::read(body, is_transaction_signature) else {
        return SettleOutcome::Failed;
    };
    match (answer.success, answer.transaction) {
        (Some(true), Some(tx_sig)) => SettleOutcome::Settled { tx_sig },
        _ if answer.reason == "settlement_pending" => SettleOutcome::Pending,
        _ => SettleOutcome::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::base58;
    use crate::engine::payment::SOLANA_DEVNET;

    #[test]
    fn settle_answers_are_read_closed() {
        let sig = base58::encode(&[7u8; 64]);
        let ok = format!(
            r#"{{"success":true,"transaction":"{sig}","network":"{SOLANA_DEVNET}","payer":"p"}}"#
        );
        assert_eq!(
            read_settle_response(ok.as_bytes()),
            SettleOutcome::Settled {
                tx_sig: sig.clone()
            }
        );
        assert_eq!(
            read_settle_response(br#"{"success":false,"errorReason":"settlement_pending","transaction":"x","network":"n"}"#),
            SettleOutcome::Pending
        );
        assert_eq!(
            read_settle_response(br#"{"success":false,"errorReason":"invalid_exact_svm_transaction_failed","transaction":"","network":"n"}"#),
            SettleOutcome::Failed
        );
        assert_eq!(
            read_settle_response(br#"{"success":true,"transaction":"short"}"#),
            SettleOutcome::Failed
        );
    }
}
