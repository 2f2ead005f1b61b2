//! What the payment layer serves about itself, assembled above the rails: the `payment` member of
//! every family's served document (the key's states and retry rules from [`super::idempotency`],
//! the closed refusals, and each rail's own rules, e.g. [`super::evm::served_rules`]).

use super::idempotency::{REDELIVERY_LIMIT, UNCERTAIN_RETRY_AFTER_MS};
use super::{evm, PaymentError};
use crate::engine::ClosedError;
use serde_json::{json, Value};

/// The payment states, retry rules and payment refusals as every family's served document
/// publishes them (`payment` member). `pack` adds the keyed-fingerprint privacy note and
/// INVALID_RETRY_INPUT; the criteria families state that they keep no fingerprint.
pub fn rules(pack: bool) -> Value {
    let states = json!([
        {"state": "claimed", "meaning": "the payment passed the local checks and holds the key; /verify and the operation run; nothing has been submitted", "client": "wait: a second request with the same proof gets 409 payment_in_progress with Retry-After"},
        {"state": "settling", "meaning": "written before /settle is called: the payment may be on its way to the chain", "client": "wait for the answer; if it is lost, retry the identical request after Retry-After"},
        {"state": "uncertain", "meaning": "/settle was pending, failed on the connection or timed out, and the chain has not decided: the claim is kept", "client": "409 PAYMENT_UNCERTAIN: retry the identical request (same Idempotency-Key, body, PAYMENT-SIGNATURE) after Retry-After; never pay again under this key"},
        {"state": "settled", "meaning": "the payment landed; delivery is in progress or failed before the answer", "client": "retry the identical request: the operation runs again and is delivered with no second charge"},
        {"state": "delivered", "meaning": "answered 200 with PAYMENT-RESPONSE", "client": "lost the answer? retry the identical request (same Idempotency-Key, body and PAYMENT-SIGNATURE): the result is delivered again, signed, with the original PAYMENT-RESPONSE, no second charge and no second ledger row; use a fresh key for a new call"},
        {"state": "released", "meaning": "nothing moved (a refusal before settlement), or an uncertain payment definitely did not land (its blockhash expired unlanded): 402 payment_released", "client": "pay the new PAYMENT-REQUIRED challenge under the same key"},
    ]);
    let mut refusals: Vec<PaymentError> = vec![
        PaymentError::Uncertain {
            retry_after_s: UNCERTAIN_RETRY_AFTER_MS / 1000,
        },
        PaymentError::SettlementReleased,
        PaymentError::IdempotencyConflict,
        PaymentError::ProofConflict,
        PaymentError::InProgress,
        PaymentError::Replayed,
        PaymentError::RedeliveryMismatch,
        PaymentError::RetryTooEarly { retry_after_s: 1 },
        PaymentError::RateLimited { retry_after_s: 1 },
        PaymentError::IdentifierMismatch,
        PaymentError::StateUnavailable,
        PaymentError::FacilitatorUnavailable,
        PaymentError::FacilitatorAuthRejected,
        PaymentError::ConfigInvalid,
    ];
    if pack {
        refusals.insert(3, PaymentError::RetryInputInvalid);
    } else {
        refusals.push(PaymentError::IdentifierInvalid);
        refusals.push(PaymentError::NonceInvalid);
        refusals.push(PaymentError::NonceExpired);
    }
    let refusals: Vec<Value> = refusals
        .iter()
        .map(|e| {
            json!({"code": e.code(), "status": e.status(), "message": e.message(),
                "retry_after": e.retry_after_s().is_some()})
        })
        .collect();
    let fingerprint = if pack {
        "The key's record holds a keyed HMAC-SHA256 (server secret, never a plain hash) of the service release version, the route and the request body, so that a retry with another body or across a release upgrade is refused with 409 INVALID_RETRY_INPUT (the contract's versionedRetries). It is deleted with the record after 24 hours; nothing else derived from the body is kept."
    } else {
        "No fingerprint of the body is kept (the criteria forbid retaining anything derived from a submission). The payment is bound to route and Idempotency-Key by its memo; the key's record holds the route, the payment's claim (SHA-256 of its transaction message), its state and, once the operation ran, the ledger row's closed fields (the counts, sizes, op and verdict the ledger publishes anyway) until the record is deleted. An identical retry after delivery is recognised by those figures: the operation runs again and its figures must equal the paid call's."
    };
    let same_proof_after_delivery = if pack {
        format!("Re-delivered: a lost answer is retried with the identical Idempotency-Key, body and PAYMENT-SIGNATURE (or with no credential at all: the key is paid for), and the result is computed again (deterministic: the same provenance hashes) and delivered signed, with the original PAYMENT-RESPONSE, no second charge and no second ledger row. The keyed fingerprint proves the body is the paid one. Up to {REDELIVERY_LIMIT} re-deliveries per payment; after them 409 payment_replayed with the original PAYMENT-RESPONSE.")
    } else {
        format!("Re-delivered: a lost answer is retried with the identical Idempotency-Key (or none, on a keyless call), body and PAYMENT-SIGNATURE, and the operation runs again and is delivered signed, with the original PAYMENT-RESPONSE, no second charge and no second ledger row. No body fingerprint is kept, so the retry is recognised by the paid call's closed ledger figures (sizes, counts, op, verdict), which the re-run must equal; a retry whose figures differ gets 409 payment_redelivery_mismatch (nothing delivered). So what a changed body can obtain under one payment is bounded: a result with exactly the paid call's figures, at most {REDELIVERY_LIMIT} times, within the record's 24 hours; after that 409 payment_replayed with the original PAYMENT-RESPONSE.")
    };
    let binding = if pack {
        "Idempotency-Key required; the payment-identifier extension id is required and must equal it (400 payment_identifier_mismatch); extra.memo = \"cm:\" + 32 hex of SHA-256(route \"\\n\" key)."
    } else {
        "Idempotency-Key optional. With one: extra.memo = \"cm:\" + 32 hex of SHA-256(route \"\\n\" key), and a payment-identifier id, when sent, must equal the key. Without one (a stock x402 client): the challenge's extra.memo is a server-issued nonce token \"cmn1.<nonce>.<expiry>.<mac>\" (HMAC under a server secret over route, price, nonce and expiry; checked with no stored state); the payment's record is named by that nonce, so one challenge is charged at most once, and a new payment for an expired nonce is refused free (402 payment_nonce_expired). Retry a keyless call with the identical body and PAYMENT-SIGNATURE."
    };
    json!({
        "binding": binding,
        "idempotency": {
            "record": "one Durable Object per Idempotency-Key (or per server nonce on a keyless call), kept 24 hours: route, claim, state, times, settlement facts; never the result",
            "fingerprint": fingerprint,
            "retry": "Retry only with the identical Idempotency-Key, body, protocol and PAYMENT-SIGNATURE. Another route under a known key: 409 IDEMPOTENCY_CONFLICT. Another proof while the first is claimed, settling, uncertain, settled or delivered: 409 payment_proof_conflict. Nothing is charged by any of these.",
            "same_proof_after_delivery": same_proof_after_delivery,
            "rate": "the attempts that cost the service without paying it are limited: per Idempotency-Key (in its record: every attempt but a delivered payment's identical retries, which are bounded by the re-delivery limit) and per paying wallet (in that wallet's own object: refused, unverified and failed attempts only; a delivered, settled call does not use up the wallet's allowance); over the limit: 429 payment_rate_limited with Retry-After",
            "retry_after": "a retry before the Retry-After a key was given: 429 INVALID_RETRY_AFTER with the remaining wait",
        },
        "states": states,
        "uncertainty": "A settle that is pending, fails on the connection or times out is PAYMENT_UNCERTAIN (409, Retry-After), never \"not consumed\". The next retry asks the chain first: is the payment's blockhash still valid, and did a transaction with this payment's memo land from the payer's token account? Landed: delivered, no second charge. Not landed and the blockhash expired: released, and said so (402 payment_released). Otherwise the same signed payment is re-submitted (one message has one signature, executed at most once) and, if still unknown, 409 again.",
        "ledger": "every settled payment has exactly one ledger row: its closed fields wait in the payment's record until D1 confirms them (the record's alarm retries), so a D1 outage or a worker gone after settlement loses no row. tx_sig names the chain and the transaction, <CAIP-2>:<transaction>; a payment that settled but was never delivered is written with '#undelivered' after it, replaced by the delivered row if a retry delivers it. A re-delivery writes no row.",
        "payment_refusals": refusals,
        "evm": evm::served_rules(),
    })
}
