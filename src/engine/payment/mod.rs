//! x402 v2 `exact` payments, the pure half, shared by the rails: the merchant configuration, the
//! closed [`PaymentError`], the `PAYMENT-REQUIRED` challenge and the call's memo, the x402 header
//! encoding ([`header`]), the facilitator bodies and answers, and the payment guard's state
//! machine ([`idempotency`]). Each rail checks its own payments: [`solana`] (the SPL transfer),
//! [`evm`] (EIP-3009) and [`mpp`] (the MPP tempo charge).
//!
//! Invariants:
//! - The requirements are a pure function of the configuration, the price and the call's memo
//!   ([`binding`]: "cm:" + 32 hex of SHA-256(route "\n" Idempotency-Key), or a keyless call's
//!   nonce token), so the echoed `accepted` is compared for exact equality, and a payment signed
//!   for one route or one call never passes the checks of another.
//! - Errors are the closed `PaymentError`; nothing submitted is ever rendered or stored, and the
//!   facilitator is sent a payload rebuilt from the checked fields only.

pub mod binding;
pub mod cdp_jwt;
pub mod discovery;
mod error;
pub mod evm;
pub mod facilitator;
#[cfg(test)]
mod fixtures;
pub mod guard;
pub mod header;
pub mod hmac;
pub mod idempotency;
pub mod mpp;
pub mod outbox;
pub mod reconcile;
pub mod served;
pub mod solana;

pub use error::PaymentError;
pub use facilitator::{
    fee_payer_from_supported, payment_response_header, read_verify_response, SettleOutcome,
};
pub use header::encode_header;
pub use solana::facilitator::{facilitator_request, read_settle_response};
pub use solana::{
    check_bound_payment, check_payment, decode_payment_header, layout, pda, transaction,
    CheckedPayment, PaymentPayload,
};

use crate::engine::base58;
use crate::engine::sign::hex;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The x402 protocol version spoken.
pub const X402_VERSION: u64 = 2;
/// Largest `PAYMENT-SIGNATURE` header accepted, in bytes of header text. A stock client echoes the
/// challenge's `resource` and `extensions` into it, and the pack's `bazaar` declaration carries its
/// contract's input and output schemas: its largest echo is 10,044 bytes (held under this cap by
/// `edge::schemas` tests), so 12 KiB (headers stay under the 16 KiB a Node proxy admits).
pub const MAX_PAYMENT_HEADER_BYTES: usize = 12_288;
/// Largest EVM signature accepted, in bytes (an EOA signs 65; ERC-1271/6492 wrappers are longer).
pub const MAX_SIGNATURE_BYTES: usize = 2048;
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

    /// A configured base58 address as its 32 bytes.
    pub(crate) fn address(value: &str) -> Result<[u8; 32], PaymentError> {
        base58::decode(value)
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .ok_or(PaymentError::ConfigInvalid)
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

#[cfg(test)]
mod tests;
