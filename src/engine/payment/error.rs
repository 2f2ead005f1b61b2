//! The closed refusal of a payment, on every rail: [`PaymentError`], its codes, statuses, static
//! messages and figures, and [`PaymentError::ALL`] for the OpenAPI document's closed code lists;
//! the EVM rail's own refusals ([`EvmRefusal`]) are declared here too, so the closed set does not
//! depend on a rail.

use super::{
    MAX_COMPUTE_UNIT_LIMIT, MAX_PAYMENT_HEADER_BYTES, MAX_SIGNATURE_BYTES, MAX_TRANSACTION_BASE64,
};
use crate::engine::ClosedError;

/// Declares `PaymentError` (its own variants, then `Evm`) and `PaymentError::ALL` from one list,
/// so a new variant cannot be left out of `ALL`. Every field is a `u64` figure (zero in `ALL`).
macro_rules! payment_errors {
    ($($(#[$doc:meta])* $name:ident $({ $field:ident: u64 })?,)*) => {
        /// Every way a payment can be refused. Closed: static messages, numbers only in `figures`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum PaymentError {
            $($(#[$doc])* $name $({ $field: u64 })?,)*
            /// An EVM-specific refusal (free, 402).
            Evm(EvmRefusal),
        }

        /// How many refusals `ALL` lists.
        const REFUSAL_COUNT: usize = [$(stringify!($name)),*].len() + EvmRefusal::ALL.len();

        impl PaymentError {
            /// Every refusal once (figures zero), for the OpenAPI document's closed code lists:
            /// the declaration order, the EVM refusals last.
            pub const ALL: [PaymentError; REFUSAL_COUNT] = {
                let own = [$(PaymentError::$name $({ $field: 0 })?),*];
                let mut all = [PaymentError::Evm(EvmRefusal::ALL[0]); REFUSAL_COUNT];
                let mut at = 0;
                while at < own.len() {
                    all[at] = own[at];
                    at += 1;
                }
                while at < all.len() {
                    all[at] = PaymentError::Evm(EvmRefusal::ALL[at - own.len()]);
                    at += 1;
                }
                all
            };
        }
    };
}

payment_errors! {
    IdempotencyKeyInvalid,
    HeaderOversized,
    HeaderMalformed,
    VersionUnsupported,
    IdentifierMismatch,
    /// (no Idempotency-Key) A payment-identifier id was sent that is not well formed.
    IdentifierInvalid,
    /// (no Idempotency-Key) The memo is not a nonce token this service issued for this route and price.
    NonceInvalid,
    /// (no Idempotency-Key) The nonce token expired before a payment for it was claimed.
    NonceExpired,
    /// The facilitator refused our credentials (401/403): nothing was submitted.
    FacilitatorAuthRejected,
    RequirementsMismatch,
    TransactionMalformed,
    TransactionVersion,
    LookupTables,
    FeePayerMismatch,
    SignersInvalid,
    InstructionLayout,
    MemoCount,
    ComputeBudgetInvalid,
    ComputeLimitTooHigh,
    ComputePriceTooHigh { cap: u64 },
    FeePayerInInstruction,
    InvalidMint,
    InvalidDecimals,
    InvalidPayee,
    InvalidAmount { expected: u64 },
    InvalidMemo,
    SignatureInvalid,
    VerifyRejected,
    FacilitatorUnavailable,
    SettlementFailed,
    SettlementPending,
    Replayed,
    /// A delivered payment's retry whose re-run figures differ from the paid call's: not the
    /// identical retry a lost answer warrants, so nothing is delivered.
    RedeliveryMismatch,
    InProgress,
    BoundElsewhere,
    ConfigInvalid,
    /// `/settle` was pending, failed on the connection or timed out, and the chain has not
    /// decided yet: the claim is kept; retry the same request after Retry-After.
    Uncertain { retry_after_s: u64 },
    /// An uncertain payment definitely did not land (or can no longer land): released.
    SettlementReleased,
    /// The Idempotency-Key was first used on another route.
    IdempotencyConflict,
    /// (context-budget-pack) The Idempotency-Key was first used with another body or release.
    RetryInputInvalid,
    /// Another payment proof holds this Idempotency-Key.
    ProofConflict,
    /// Retried before the Retry-After this key was given.
    RetryTooEarly { retry_after_s: u64 },
    /// Too many payment attempts under this key or from this wallet in the window.
    RateLimited { retry_after_s: u64 },
    /// The payment state (a Durable Object) could not be reached.
    StateUnavailable,
}

impl PaymentError {
    /// Seconds for a `Retry-After` header, for the refusals that carry one.
    pub fn retry_after_s(&self) -> Option<u64> {
        match self {
            PaymentError::Uncertain { retry_after_s }
            | PaymentError::RetryTooEarly { retry_after_s }
            | PaymentError::RateLimited { retry_after_s } => Some(*retry_after_s),
            PaymentError::InProgress => Some(1),
            PaymentError::FacilitatorUnavailable | PaymentError::StateUnavailable => Some(5),
            _ => None,
        }
    }

    /// Whole seconds (at least 1) from milliseconds, for `Retry-After`.
    pub fn seconds(ms: u64) -> u64 {
        ms.div_ceil(1000).max(1)
    }
}

impl ClosedError for PaymentError {
    fn code(&self) -> &'static str {
        use PaymentError::*;
        match self {
            IdempotencyKeyInvalid => "idempotency_key_invalid",
            HeaderOversized => "payment_header_oversized",
            HeaderMalformed => "payment_header_malformed",
            VersionUnsupported => "payment_version_unsupported",
            IdentifierMismatch => "payment_identifier_mismatch",
            IdentifierInvalid => "payment_identifier_invalid",
            NonceInvalid => "payment_nonce_invalid",
            NonceExpired => "payment_nonce_expired",
            FacilitatorAuthRejected => "payment_facilitator_auth_rejected",
            RequirementsMismatch => "payment_requirements_mismatch",
            TransactionMalformed => "payment_transaction_malformed",
            TransactionVersion => "payment_transaction_version",
            LookupTables => "payment_lookup_tables",
            FeePayerMismatch => "payment_fee_payer_mismatch",
            SignersInvalid => "payment_signers_invalid",
            InstructionLayout => "payment_instruction_layout",
            MemoCount => "payment_memo_count",
            ComputeBudgetInvalid => "payment_compute_budget_invalid",
            ComputeLimitTooHigh => "payment_compute_limit_too_high",
            ComputePriceTooHigh { .. } => "payment_compute_price_too_high",
            FeePayerInInstruction => "payment_fee_payer_in_instruction",
            InvalidMint => "payment_invalid_mint",
            InvalidDecimals => "payment_invalid_decimals",
            InvalidPayee => "payment_invalid_payee",
            InvalidAmount { .. } => "payment_invalid_amount",
            InvalidMemo => "payment_invalid_memo",
            SignatureInvalid => "payment_signature_invalid",
            VerifyRejected => "payment_verify_rejected",
            FacilitatorUnavailable => "payment_facilitator_unavailable",
            SettlementFailed => "payment_settlement_failed",
            SettlementPending => "payment_settlement_pending",
            Replayed => "payment_replayed",
            RedeliveryMismatch => "payment_redelivery_mismatch",
            InProgress => "payment_in_progress",
            BoundElsewhere => "payment_bound_elsewhere",
            ConfigInvalid => "payment_config_invalid",
            Uncertain { .. } => "PAYMENT_UNCERTAIN",
            SettlementReleased => "payment_released",
            IdempotencyConflict => "IDEMPOTENCY_CONFLICT",
            RetryInputInvalid => "INVALID_RETRY_INPUT",
            ProofConflict => "payment_proof_conflict",
            RetryTooEarly { .. } => "INVALID_RETRY_AFTER",
            RateLimited { .. } => "payment_rate_limited",
            StateUnavailable => "payment_state_unavailable",
            Evm(refusal) => refusal.code(),
        }
    }

    fn status(&self) -> u16 {
        use PaymentError::*;
        match self {
            IdempotencyKeyInvalid
            | HeaderOversized
            | HeaderMalformed
            | VersionUnsupported
            | IdentifierMismatch
            | IdentifierInvalid => 400,
            Replayed
            | RedeliveryMismatch
            | InProgress
            | BoundElsewhere
            | Uncertain { .. }
            | IdempotencyConflict
            | RetryInputInvalid
            | ProofConflict => 409,
            RetryTooEarly { .. } | RateLimited { .. } => 429,
            FacilitatorUnavailable
            | FacilitatorAuthRejected
            | SettlementPending
            | ConfigInvalid
            | StateUnavailable => 503,
            _ => 402,
        }
    }

    fn message(&self) -> &'static str {
        use PaymentError::*;
        match self {
            IdempotencyKeyInvalid => "A paid call needs an Idempotency-Key header of 16 to 128 characters from A-Z, a-z, 0-9, '_' and '-'.",
            HeaderOversized => "The PAYMENT-SIGNATURE header or its transaction exceeds the size cap.",
            HeaderMalformed => "The PAYMENT-SIGNATURE header is not base64 of an x402 payment payload JSON object.",
            VersionUnsupported => "Only x402 version 2 (PAYMENT-SIGNATURE) is accepted; X-PAYMENT (x402 version 1) is not.",
            IdentifierMismatch => "The payment-identifier extension id must equal this request's Idempotency-Key.",
            IdentifierInvalid => "A payment-identifier extension id, when sent, must be 16 to 128 characters from A-Z, a-z, 0-9, '_' and '-'.",
            NonceInvalid => "Without an Idempotency-Key the payment must carry, as accepted extra.memo and as its Memo, a nonce token this service issued for this route and price.",
            NonceExpired => "The challenge's nonce expired before this payment was claimed: pay the new PAYMENT-REQUIRED challenge.",
            FacilitatorAuthRejected => "The payment facilitator refused this service's credentials; nothing was submitted or charged.",
            RequirementsMismatch => "The accepted payment requirements differ from the ones this route and Idempotency-Key require.",
            TransactionMalformed => "The payment transaction does not decode as a Solana transaction.",
            TransactionVersion => "The payment transaction must be a version 0 transaction.",
            LookupTables => "The payment transaction must not use address lookup tables.",
            FeePayerMismatch => "The payment transaction's fee payer is not the facilitator's fee payer.",
            SignersInvalid => "The payment transaction must have exactly two signers: the fee payer and the transfer authority.",
            InstructionLayout => "The payment transaction must be 3 to 6 instructions in the x402 exact order: compute unit limit, compute unit price, one TransferChecked (SPL Token or Token-2022), then Lighthouse or Memo instructions, a sixth only a Memo.",
            MemoCount => "The payment transaction must carry exactly one Memo instruction, the challenge's extra.memo.",
            ComputeBudgetInvalid => "A compute budget instruction of the payment transaction is malformed.",
            ComputeLimitTooHigh => "The payment transaction's compute unit limit is above the accepted ceiling.",
            ComputePriceTooHigh { .. } => "The payment transaction's compute unit price is above the accepted cap.",
            FeePayerInInstruction => "The facilitator's fee payer must not appear in any instruction's accounts nor own the transfer's source.",
            InvalidMint => "The transfer is not of the required asset.",
            InvalidDecimals => "The transfer's decimals are not the asset's decimals.",
            InvalidPayee => "The transfer's destination is not the payee's associated token account.",
            InvalidAmount { .. } => "The transfer amount is not exactly the price of this route.",
            InvalidMemo => "The memo is not the one the challenge bound to this route and Idempotency-Key.",
            SignatureInvalid => "The transfer authority's signature over the transaction message does not verify.",
            VerifyRejected => "The facilitator did not verify the payment.",
            FacilitatorUnavailable => "The payment facilitator could not be reached or answered unreadably.",
            SettlementFailed => "The payment could not be settled; no content is delivered.",
            SettlementPending => "The payment's settlement is not confirmed yet; retry the same request later.",
            Replayed => "This payment has already been delivered on.",
            RedeliveryMismatch => "This payment was delivered for another request: only the identical request is delivered again. Nothing was charged.",
            InProgress => "This payment is being processed by another request.",
            BoundElsewhere => "This payment was claimed for another route or Idempotency-Key.",
            ConfigInvalid => "The payment configuration of this service is unavailable; nothing was charged.",
            Uncertain { .. } => "The payment was submitted but its settlement is not known yet; nothing is delivered yet and the claim is kept. Retry the identical request (same Idempotency-Key, body and PAYMENT-SIGNATURE) after Retry-After; never pay again under this key.",
            SettlementReleased => "The earlier payment under this Idempotency-Key did not land and can no longer land; nothing was charged. Pay the new challenge to retry.",
            IdempotencyConflict => "This Idempotency-Key was first used on another route; nothing was charged. Use a fresh key.",
            RetryInputInvalid => "This Idempotency-Key was first used with another request body or service release; nothing was charged. Retry only with the identical body, or use a fresh key.",
            ProofConflict => "Another payment holds this Idempotency-Key; nothing was charged for this one. Retry with the original PAYMENT-SIGNATURE, or use a fresh key.",
            RetryTooEarly { .. } => "The retry came before the Retry-After this Idempotency-Key was given; nothing was charged. Wait, then retry the identical request.",
            RateLimited { .. } => "Too many payment attempts for this Idempotency-Key or wallet; nothing was charged. Wait for Retry-After and keep the same payment identity.",
            StateUnavailable => "The payment state is unavailable; nothing was charged. Retry the identical request later.",
            Evm(refusal) => refusal.message(),
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            PaymentError::ComputePriceTooHigh { cap } => vec![("cap_microlamports", *cap)],
            PaymentError::InvalidAmount { expected } => vec![("expected_units", *expected)],
            PaymentError::HeaderOversized => vec![
                ("max_header_bytes", MAX_PAYMENT_HEADER_BYTES as u64),
                ("max_transaction_base64", MAX_TRANSACTION_BASE64 as u64),
            ],
            PaymentError::ComputeLimitTooHigh => {
                vec![("max_compute_units", u64::from(MAX_COMPUTE_UNIT_LIMIT))]
            }
            PaymentError::Uncertain { retry_after_s }
            | PaymentError::RetryTooEarly { retry_after_s }
            | PaymentError::RateLimited { retry_after_s } => {
                vec![("retry_after_s", *retry_after_s)]
            }
            PaymentError::Evm(refusal) => refusal.figures(),
            _ => Vec::new(),
        }
    }
}

/// EVM-specific refusals of a payment, all free (402 with a fresh challenge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvmRefusal {
    /// The payload is not an EIP-3009 authorization with well-formed fields.
    AuthorizationMalformed,
    /// The signature is not 0x-prefixed hex of 1 to [`MAX_SIGNATURE_BYTES`] bytes.
    SignatureMalformed,
    /// `validAfter` is later than now.
    NotYetValid,
    /// `validBefore` is now or earlier.
    Expired,
    /// `validBefore` is further from now than `maxTimeoutSeconds` (plus clock skew) allows.
    WindowTooLong { max_seconds: u64 },
}

impl EvmRefusal {
    /// Every EVM refusal once (figures zero).
    pub const ALL: [EvmRefusal; 5] = [
        EvmRefusal::AuthorizationMalformed,
        EvmRefusal::SignatureMalformed,
        EvmRefusal::NotYetValid,
        EvmRefusal::Expired,
        EvmRefusal::WindowTooLong { max_seconds: 0 },
    ];

    pub fn code(&self) -> &'static str {
        match self {
            EvmRefusal::AuthorizationMalformed => "payment_authorization_malformed",
            EvmRefusal::SignatureMalformed => "payment_signature_malformed",
            EvmRefusal::NotYetValid => "payment_authorization_not_yet_valid",
            EvmRefusal::Expired => "payment_authorization_expired",
            EvmRefusal::WindowTooLong { .. } => "payment_authorization_window_too_long",
        }
    }

    pub fn message(&self) -> &'static str {
        match self {
            EvmRefusal::AuthorizationMalformed => "The EVM payment is not an EIP-3009 authorization with from, to, value, validAfter, validBefore and a 32-byte nonce, each well formed.",
            EvmRefusal::SignatureMalformed => "The EVM payment's signature is not 0x-prefixed hex of an accepted length.",
            EvmRefusal::NotYetValid => "The authorization's validAfter is in the future.",
            EvmRefusal::Expired => "The authorization's validBefore has passed.",
            EvmRefusal::WindowTooLong { .. } => "The authorization's validBefore is further ahead than maxTimeoutSeconds allows.",
        }
    }

    pub fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            EvmRefusal::WindowTooLong { max_seconds } => vec![("max_window_s", *max_seconds)],
            EvmRefusal::SignatureMalformed => {
                vec![("max_signature_bytes", MAX_SIGNATURE_BYTES as u64)]
            }
            _ => Vec::new(),
        }
    }
}

impl From<EvmRefusal> for PaymentError {
    fn from(refusal: EvmRefusal) -> Self {
        PaymentError::Evm(refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PaymentError::*;

    #[test]
    fn error_codes_are_distinct_and_messages_static() {
        // `ALL` is generated from the declaration, so it holds every variant; the EVM refusals
        // come from `EvmRefusal::ALL`.
        let mut codes: Vec<&str> = PaymentError::ALL.iter().map(|e| e.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), PaymentError::ALL.len());
        for refusal in EvmRefusal::ALL {
            assert!(codes.contains(&Evm(refusal).code()), "{}", refusal.code());
        }
        for error in PaymentError::ALL {
            let code = error.code();
            assert!(
                code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                "{code}"
            );
            assert!(!error.message().is_empty(), "{code}");
            assert!(
                [400, 402, 409, 429, 503].contains(&error.status()),
                "{code}"
            );
        }
        // The contract's statuses: a payment-identifier that is not the key is 400, uncertainty 409,
        // an unavailable configuration 503, every Retry-After refusal carries its figure.
        assert_eq!(IdentifierMismatch.status(), 400);
        assert_eq!(Uncertain { retry_after_s: 5 }.status(), 409);
        assert_eq!(ConfigInvalid.status(), 503);
        assert_eq!(FacilitatorAuthRejected.status(), 503);
        assert_eq!(NonceInvalid.status(), 402);
        assert_eq!(NonceExpired.status(), 402);
        assert_eq!(
            RetryTooEarly { retry_after_s: 3 }.figures(),
            vec![("retry_after_s", 3)]
        );
        assert_eq!(Replayed.status(), 409);
        assert_eq!(
            InvalidAmount { expected: 5 }.figures(),
            vec![("expected_units", 5)]
        );
    }
}
