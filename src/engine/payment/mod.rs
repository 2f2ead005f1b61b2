//! x402 v2 `exact` on Solana, the pure half: the `PAYMENT-REQUIRED` challenge, the size-capped
//! `PAYMENT-SIGNATURE` decoding, the Solana v0 transaction decoding and every local check made
//! before any network call, the facilitator message bodies and answers, and the payment guard's
//! state machine.
//!
//! Invariants:
//! - The requirements are a pure function of the configuration, the price and the call's memo
//!   ([`binding`]: "cm:" + 32 hex of SHA-256(route "\n" Idempotency-Key), or a keyless call's
//!   nonce token), so the echoed `accepted` is compared for exact equality, and a payment signed
//!   for one route or one call never passes the checks of another.
//! - A payment passes only in a layout the `exact` scheme allows ([`layout`]: SetComputeUnitLimit,
//!   SetComputeUnitPrice, TransferChecked under SPL Token or Token-2022, then the wallet's Lighthouse
//!   assertions and exactly one Memo, ours), paying exactly the price of our mint into the
//!   associated token account of our payee under that token program, with the fee payer in no
//!   instruction's accounts and not the owner of the source, a compute unit price under both our
//!   cap and the scheme's bound, and a valid client signature over the message bytes.
//! - The claim key is SHA-256(message bytes) in hex (the same bytes the facilitator hashes).
//! - Errors are the closed `PaymentError`; nothing submitted is ever rendered or stored, and the
//!   facilitator is sent a payload rebuilt from the checked fields only.

pub mod binding;
pub mod cdp_jwt;
pub mod discovery;
pub mod evm;
pub mod facilitator;
pub mod guard;
pub mod idempotency;
pub mod layout;
pub mod mpp;
pub mod pda;
pub mod reconcile;
pub mod transaction;

pub use facilitator::{
    facilitator_request, fee_payer_from_supported, payment_response_header, read_settle_response,
    read_verify_response, SettleOutcome,
};

use crate::engine::base58;
use crate::engine::sign::{hex, sha256_hex};
use crate::engine::ClosedError;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use transaction::MessageVersion;

/// The x402 protocol version spoken.
pub const X402_VERSION: u64 = 2;
/// Largest `PAYMENT-SIGNATURE` header accepted, in bytes of header text. A stock client echoes the
/// challenge's `resource` and `extensions` into it, and the pack's `bazaar` declaration carries its
/// contract's input and output schemas: its largest echo is 10,044 bytes (held under this cap by
/// `edge::schemas` tests), so 12 KiB (headers stay under the 16 KiB a Node proxy admits).
pub const MAX_PAYMENT_HEADER_BYTES: usize = 12_288;
/// Largest base64 transaction accepted (base64 of a 1,232-byte wire transaction).
pub const MAX_TRANSACTION_BASE64: usize = 1644;
/// Compute-unit limit ceiling (the official client asks for 20,000).
pub const MAX_COMPUTE_UNIT_LIMIT: u32 = 200_000;
/// Lamports per signature (Solana's base fee).
pub const LAMPORTS_PER_SIGNATURE: u64 = 5_000;
/// USDC has 6 decimals on every Solana network.
pub const USDC_DECIMALS: u8 = 6;
/// Name of the x402 extension that carries the client's idempotency key.
pub const PAYMENT_IDENTIFIER: &str = "payment-identifier";

/// Known Solana CAIP-2 network ids (the only ones @x402/svm accepts).
pub const SOLANA_MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
pub const SOLANA_DEVNET: &str = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
pub const SOLANA_TESTNET: &str = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z";

/// The scheme's bound on the compute unit price: "The reference implementation enforces ≤ 5
/// lamports per compute unit" (a configured cap above it is refused).
pub const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS: u64 = 5_000_000;

const IX_SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const IX_SET_COMPUTE_UNIT_PRICE: u8 = 3;
const IX_TRANSFER_CHECKED: u8 = 12;

/// The merchant side of every payment: where, what and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentConfig {
    /// CAIP-2 network id, one of the three Solana ids.
    pub network: String,
    /// USDC mint (base58).
    pub asset: String,
    /// Merchant wallet (base58); funds go to its associated token account.
    pub pay_to: String,
    /// `maxTimeoutSeconds` advertised in the requirements.
    pub max_timeout_seconds: u64,
    /// The facilitator's fee payer (from its `/supported`).
    pub fee_payer: String,
    /// Highest compute-unit price accepted, in micro-lamports.
    pub cu_price_cap_microlamports: u64,
    /// Our own (test) wallets: their payments are flagged `house` in the ledger.
    pub house_wallets: Vec<String>,
    /// The EVM offers beside Solana (none by default).
    pub evm: evm::EvmConfig,
}

impl PaymentConfig {
    /// Refuses a configuration the checks could not be exact against.
    pub fn validate(&self) -> Result<(), PaymentError> {
        let known_network =
            [SOLANA_MAINNET, SOLANA_DEVNET, SOLANA_TESTNET].contains(&self.network.as_str());
        let addresses_valid = [&self.asset, &self.pay_to, &self.fee_payer]
            .iter()
            .all(|a| base58::is_solana_address(a))
            && self
                .house_wallets
                .iter()
                .all(|a| base58::is_solana_address(a));
        if known_network
            && addresses_valid
            && self.max_timeout_seconds > 0
            && self.fee_payer != self.pay_to
            && self.cu_price_cap_microlamports <= MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS
        {
            Ok(())
        } else {
            Err(PaymentError::ConfigInvalid)
        }
    }

    fn address(value: &str) -> Result<[u8; 32], PaymentError> {
        base58::decode(value)
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .ok_or(PaymentError::ConfigInvalid)
    }
}

/// Every way a payment can be refused. Closed: static messages, numbers only in `figures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentError {
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
    ComputePriceTooHigh {
        cap: u64,
    },
    FeePayerInInstruction,
    InvalidMint,
    InvalidDecimals,
    InvalidPayee,
    InvalidAmount {
        expected: u64,
    },
    InvalidMemo,
    SignatureInvalid,
    VerifyRejected,
    FacilitatorUnavailable,
    SettlementFailed,
    SettlementPending,
    Replayed,
    InProgress,
    BoundElsewhere,
    ConfigInvalid,
    /// `/settle` was pending, failed on the connection or timed out, and the chain has not
    /// decided yet: the claim is kept; retry the same request after Retry-After.
    Uncertain {
        retry_after_s: u64,
    },
    /// An uncertain payment definitely did not land (or can no longer land): released.
    SettlementReleased,
    /// The Idempotency-Key was first used on another route.
    IdempotencyConflict,
    /// (context-budget-pack) The Idempotency-Key was first used with another body or release.
    RetryInputInvalid,
    /// Another payment proof holds this Idempotency-Key.
    ProofConflict,
    /// Retried before the Retry-After this key was given.
    RetryTooEarly {
        retry_after_s: u64,
    },
    /// Too many payment attempts under this key or from this wallet in the window.
    RateLimited {
        retry_after_s: u64,
    },
    /// The payment state (a Durable Object) could not be reached.
    StateUnavailable,
    /// An EVM-specific refusal (free, 402).
    Evm(evm::EvmRefusal),
}

impl PaymentError {
    /// Every refusal once (figures zero), for the OpenAPI document's closed code lists.
    pub const ALL: [PaymentError; 48] = {
        use PaymentError::*;
        [
            IdempotencyKeyInvalid,
            HeaderOversized,
            HeaderMalformed,
            VersionUnsupported,
            IdentifierMismatch,
            IdentifierInvalid,
            NonceInvalid,
            NonceExpired,
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
            ComputePriceTooHigh { cap: 0 },
            FeePayerInInstruction,
            InvalidMint,
            InvalidDecimals,
            InvalidPayee,
            InvalidAmount { expected: 0 },
            InvalidMemo,
            SignatureInvalid,
            VerifyRejected,
            FacilitatorUnavailable,
            SettlementFailed,
            SettlementPending,
            Replayed,
            InProgress,
            BoundElsewhere,
            ConfigInvalid,
            Uncertain { retry_after_s: 0 },
            SettlementReleased,
            IdempotencyConflict,
            RetryInputInvalid,
            ProofConflict,
            RetryTooEarly { retry_after_s: 0 },
            RateLimited { retry_after_s: 0 },
            StateUnavailable,
            Evm(evm::EvmRefusal::AuthorizationMalformed),
            Evm(evm::EvmRefusal::SignatureMalformed),
            Evm(evm::EvmRefusal::NotYetValid),
            Evm(evm::EvmRefusal::Expired),
            Evm(evm::EvmRefusal::WindowTooLong { max_seconds: 0 }),
        ]
    };

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

/// `Idempotency-Key` (and `payment-identifier` id) syntax: 16–128 of `[A-Za-z0-9_-]`.
pub fn is_valid_idempotency_key(key: &str) -> bool {
    (16..=128).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The memo binding a payment to one route and one call.
pub fn memo_for(route_id: &str, idempotency_key: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(route_id.as_bytes());
    hasher.update(b"\n");
    hasher.update(idempotency_key.as_bytes());
    let digest = hex(&hasher.finalize());
    format!("cm:{}", &digest[..32])
}

/// The one `PaymentRequirements` object for this route, price and call.
pub fn requirements(
    config: &PaymentConfig,
    route_id: &str,
    price_units: u64,
    idempotency_key: &str,
) -> Value {
    requirements_with_memo(config, price_units, &memo_for(route_id, idempotency_key))
}

/// The `PaymentRequirements` object for a price and the memo that binds the call.
pub fn requirements_with_memo(config: &PaymentConfig, price_units: u64, memo: &str) -> Value {
    json!({
        "scheme": "exact",
        "network": config.network,
        "amount": price_units.to_string(),
        "asset": config.asset,
        "payTo": config.pay_to,
        "maxTimeoutSeconds": config.max_timeout_seconds,
        "extra": {
            "feePayer": config.fee_payer,
            "memo": memo,
        },
    })
}

/// The `PaymentRequired` object of a keyed call whose payment-identifier is required (the
/// pack's contract). `resource_url` is the route's URL (origin + path, never a query); `error` a
/// closed code when a payment was refused, else None.
pub fn payment_required(
    config: &PaymentConfig,
    route_id: &str,
    price_units: u64,
    idempotency_key: &str,
    resource_url: &str,
    listing: &discovery::RouteListing,
    error: Option<&'static str>,
) -> Value {
    let bound = binding::by_key(route_id, idempotency_key, true);
    payment_required_for(config, price_units, &bound, resource_url, listing, error)
}

/// The `PaymentRequired` object for a resolved binding (its memo and its identifier rule).
pub fn payment_required_for(
    config: &PaymentConfig,
    price_units: u64,
    bound: &binding::Bound,
    resource_url: &str,
    listing: &discovery::RouteListing,
    error: Option<&'static str>,
) -> Value {
    let mut object = Map::new();
    object.insert("x402Version".into(), json!(X402_VERSION));
    if let Some(code) = error {
        object.insert("error".into(), json!(code));
    }
    object.insert(
        "resource".into(),
        json!({
            "url": resource_url,
            "description": listing.description,
            "mimeType": "application/json",
            "serviceName": "context-meter",
        }),
    );
    let mut accepts = vec![requirements_with_memo(config, price_units, &bound.memo)];
    accepts.extend(config.evm.requirements(price_units));
    object.insert("accepts".into(), Value::Array(accepts));
    object.insert(
        "extensions".into(),
        json!({
            PAYMENT_IDENTIFIER: binding::identifier_declaration(bound.identifier_required),
            discovery::BAZAAR: discovery::bazaar_declaration(listing),
        }),
    );
    Value::Object(object)
}

/// Base64 of the compact JSON (how every x402 header travels).
pub fn encode_header(value: &Value) -> String {
    STANDARD.encode(value.to_string())
}

/// A decoded `PAYMENT-SIGNATURE`: only the three parts we look at.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentPayload {
    pub accepted: Value,
    pub transaction_base64: String,
    pub payment_identifier: Option<String>,
}

/// Decodes the `PAYMENT-SIGNATURE` header text (size-capped base64 of a JSON object).
pub fn decode_payment_header(header: &str) -> Result<PaymentPayload, PaymentError> {
    if header.len() > MAX_PAYMENT_HEADER_BYTES {
        return Err(PaymentError::HeaderOversized);
    }
    let bytes = STANDARD
        .decode(header.as_bytes())
        .map_err(|_| PaymentError::HeaderMalformed)?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| PaymentError::HeaderMalformed)?;
    let object = value.as_object().ok_or(PaymentError::HeaderMalformed)?;
    match object.get("x402Version").and_then(Value::as_u64) {
        Some(X402_VERSION) => {}
        Some(_) => return Err(PaymentError::VersionUnsupported),
        None => return Err(PaymentError::HeaderMalformed),
    }
    let accepted = object
        .get("accepted")
        .filter(|a| a.is_object())
        .ok_or(PaymentError::HeaderMalformed)?
        .clone();
    let transaction_base64 = object
        .get("payload")
        .and_then(|p| p.get("transaction"))
        .and_then(Value::as_str)
        .ok_or(PaymentError::HeaderMalformed)?;
    if transaction_base64.len() > MAX_TRANSACTION_BASE64 {
        return Err(PaymentError::HeaderOversized);
    }
    let payment_identifier = object
        .get("extensions")
        .and_then(|e| e.get(PAYMENT_IDENTIFIER))
        .and_then(|e| e.get("info"))
        .and_then(|i| i.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(PaymentPayload {
        accepted,
        transaction_base64: transaction_base64.to_owned(),
        payment_identifier,
    })
}

/// A payment that passed every local check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPayment {
    /// Lower-case hex SHA-256 of the transaction message bytes: the guard's claim key.
    pub claim_key: String,
    /// The transfer authority (base58): who pays.
    pub payer: String,
    /// Amount in USDC base units (= the price).
    pub amount_units: u64,
    /// What the fee payer will spend: signatures × 5,000 + ceil(limit × price / 10^6).
    pub fee_lamports: u64,
    /// Whether the payer is one of our house wallets.
    pub house: bool,
    /// The requirements it satisfied (ours, byte for byte).
    pub requirements: Value,
    /// The transaction, as received (already decoded and checked).
    pub transaction_base64: String,
}

fn read_u32_le(bytes: &[u8]) -> u32 {
    let mut buf = [0u8; 4];
    buf.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(buf)
}

fn read_u64_le(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(buf)
}

/// Every local check, in order, on a decoded header for (route, price, Idempotency-Key), the
/// payment-identifier required and equal to the key (the pack's binding).
pub fn check_payment(
    config: &PaymentConfig,
    route_id: &str,
    price_units: u64,
    idempotency_key: &str,
    payload: &PaymentPayload,
) -> Result<CheckedPayment, PaymentError> {
    if !is_valid_idempotency_key(idempotency_key) {
        return Err(PaymentError::IdempotencyKeyInvalid);
    }
    let bound = binding::by_key(route_id, idempotency_key, true);
    check_bound_payment(config, price_units, &bound, payload)
}

/// Every local check, in order, on a decoded header for a price and a resolved binding (its
/// payment-identifier rule, then requirements carrying its memo, then the transaction).
pub fn check_bound_payment(
    config: &PaymentConfig,
    price_units: u64,
    bound: &binding::Bound,
    payload: &PaymentPayload,
) -> Result<CheckedPayment, PaymentError> {
    bound
        .identifier
        .check(payload.payment_identifier.as_deref())?;
    let ours = requirements_with_memo(config, price_units, &bound.memo);
    if payload.accepted != ours {
        return Err(PaymentError::RequirementsMismatch);
    }
    let wire = STANDARD
        .decode(payload.transaction_base64.as_bytes())
        .map_err(|_| PaymentError::TransactionMalformed)?;
    let tx = transaction::decode(&wire).map_err(|_| PaymentError::TransactionMalformed)?;
    if tx.version != MessageVersion::V0 {
        return Err(PaymentError::TransactionVersion);
    }
    if !tx.address_table_lookups.is_empty() {
        return Err(PaymentError::LookupTables);
    }
    let fee_payer = PaymentConfig::address(&config.fee_payer)?;
    if tx.account_keys[0] != fee_payer {
        return Err(PaymentError::FeePayerMismatch);
    }
    if tx
        .instructions
        .iter()
        .any(|ix| ix.account_indexes.contains(&0))
    {
        return Err(PaymentError::FeePayerInInstruction);
    }
    if tx.num_required_signatures != 2 {
        return Err(PaymentError::SignersInvalid);
    }

    let layout = layout::payment_instructions(&tx, bound.memo.as_bytes())?;
    let (limit_ix, price_ix, transfer_ix) = (
        layout.compute_unit_limit,
        layout.compute_unit_price,
        layout.transfer,
    );
    if limit_ix.data.len() != 5
        || limit_ix.data[0] != IX_SET_COMPUTE_UNIT_LIMIT
        || !limit_ix.account_indexes.is_empty()
        || price_ix.data.len() != 9
        || price_ix.data[0] != IX_SET_COMPUTE_UNIT_PRICE
        || !price_ix.account_indexes.is_empty()
    {
        return Err(PaymentError::ComputeBudgetInvalid);
    }
    let compute_unit_limit = read_u32_le(&limit_ix.data[1..]);
    let compute_unit_price = read_u64_le(&price_ix.data[1..]);
    if compute_unit_limit > MAX_COMPUTE_UNIT_LIMIT {
        return Err(PaymentError::ComputeLimitTooHigh);
    }
    let price_cap = config
        .cu_price_cap_microlamports
        .min(MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS);
    if compute_unit_price > price_cap {
        return Err(PaymentError::ComputePriceTooHigh { cap: price_cap });
    }

    if transfer_ix.data.len() != 10
        || transfer_ix.data[0] != IX_TRANSFER_CHECKED
        || transfer_ix.account_indexes.len() != 4
    {
        return Err(PaymentError::InstructionLayout);
    }
    let account = |slot: usize| &tx.account_keys[usize::from(transfer_ix.account_indexes[slot])];
    let (source, mint, destination, authority_index) = (
        account(0),
        account(1),
        account(2),
        usize::from(transfer_ix.account_indexes[3]),
    );
    let asset = PaymentConfig::address(&config.asset)?;
    if *mint != asset {
        return Err(PaymentError::InvalidMint);
    }
    if transfer_ix.data[9] != USDC_DECIMALS {
        return Err(PaymentError::InvalidDecimals);
    }
    let token_program = PaymentConfig::address(layout.token_program.address())?;
    let pay_to = PaymentConfig::address(&config.pay_to)?;
    let merchant_ata = pda::associated_token_address_under(&pay_to, &asset, &token_program)
        .ok_or(PaymentError::ConfigInvalid)?;
    if *destination != merchant_ata {
        return Err(PaymentError::InvalidPayee);
    }
    // "The fee payer MUST NOT be the `source` of the transferred funds": its own token account,
    // spent by a delegate, is refused like the fee payer itself in the accounts.
    let fee_payer_ata = pda::associated_token_address_under(&fee_payer, &asset, &token_program)
        .ok_or(PaymentError::ConfigInvalid)?;
    if *source == fee_payer_ata {
        return Err(PaymentError::FeePayerInInstruction);
    }
    let amount_units = read_u64_le(&transfer_ix.data[1..]);
    if amount_units != price_units {
        return Err(PaymentError::InvalidAmount {
            expected: price_units,
        });
    }
    if authority_index != 1 {
        return Err(PaymentError::SignersInvalid);
    }

    let authority = tx.account_keys[authority_index];
    let key = VerifyingKey::from_bytes(&authority).map_err(|_| PaymentError::SignatureInvalid)?;
    let signature = Signature::from_bytes(&tx.signatures[authority_index]);
    key.verify_strict(&tx.message, &signature)
        .map_err(|_| PaymentError::SignatureInvalid)?;

    let priority_lamports =
        (u128::from(compute_unit_limit) * u128::from(compute_unit_price)).div_ceil(1_000_000);
    let fee_lamports = LAMPORTS_PER_SIGNATURE * tx.signatures.len() as u64
        + u64::try_from(priority_lamports).unwrap_or(u64::MAX);
    let payer = base58::encode(&authority);
    let house = config.house_wallets.contains(&payer);
    Ok(CheckedPayment {
        claim_key: sha256_hex(&tx.message),
        payer,
        amount_units,
        fee_lamports,
        house,
        requirements: ours,
        transaction_base64: payload.transaction_base64.clone(),
    })
}

#[cfg(test)]
mod tests;
