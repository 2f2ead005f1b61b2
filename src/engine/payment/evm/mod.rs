//! x402 v2 `exact` on EVM networks (EIP-3009 `transferWithAuthorization` of USDC), the pure half:
//! the offers configured in `[vars]` and their `PaymentRequirements`, the size-capped decoding of an
//! EVM `PAYMENT-SIGNATURE`, every local check made before the facilitator sees it, the
//! authorization's identity (the guard's claim key), the facilitator bodies and the `/settle`
//! answer. Reconciliation of a settlement in doubt is [`reconcile`].
//!
//! Invariants (ARCHITECTURE §4):
//! - The requirements of an offer at a price are a pure function of the configuration, so the
//!   `accepted` object a client echoes is compared for exact equality with one of ours: version,
//!   scheme, network, asset, payTo, amount, maxTimeoutSeconds and the EIP-712 `extra` all at once.
//! - `to` equals our payTo (hex, case-insensitive), `value` equals the price exactly,
//!   `validAfter <= now < validBefore`, and `validBefore - now <= maxTimeoutSeconds +`
//!   [`CLOCK_SKEW_S`]: the official client signs `validAfter = 0` and `validBefore = now +
//!   maxTimeoutSeconds`, so the window is measured from now (the reading `validBefore -
//!   validAfter` would refuse every stock payment). Every hex field is well formed and capped.
//! - The signature is checked by the facilitator's `/verify`, not here: it accepts smart-contract
//!   wallets (ERC-1271, and ERC-6492 for undeployed ones), which a local ecrecover cannot, and it
//!   keeps keccak-256 and secp256k1 out of the wasm bundle. Nothing moves before `/verify` says
//!   valid, and a bad signature is refused there with nothing charged.
//! - The identity of a payment is (chain id, asset, from, nonce), lower-case: EIP-3009 lets a
//!   nonce be used once per authorizer and token, so this is exactly what the chain refuses to
//!   execute twice. The claim key is the hex SHA-256 of it; the guard binds it to one route and
//!   call, so a replay is refused across routes and after a facilitator restart.
//! - Errors are the closed `PaymentError` (EVM-specific ones as [`EvmRefusal`]); nothing submitted
//!   is rendered, and the facilitator is sent a payload rebuilt from the checked fields only.

pub mod reconcile;

use super::error::EvmRefusal;
use super::facilitator::{echoed_extensions, SettleAnswer};
use super::reconcile::SettleVerdict;
use super::{header, PaymentError, MAX_SIGNATURE_BYTES, X402_VERSION};
use crate::engine::sign::sha256_hex;
use serde_json::{json, Value};

/// Known EVM networks (CAIP-2): Base mainnet and Base Sepolia.
pub const BASE_MAINNET: &str = "eip155:8453";
pub const BASE_SEPOLIA: &str = "eip155:84532";
/// Seconds a client clock may run ahead of ours when it sets `validBefore`.
pub const CLOCK_SKEW_S: u64 = 30;
/// Largest decimal integer field (uint256 has 78 digits).
const MAX_DECIMAL_DIGITS: usize = 78;

/// One EVM network offered: where, what, and the EIP-712 domain the client signs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvmOffer {
    /// CAIP-2 id, `eip155:<chain id>`.
    pub network: String,
    pub chain_id: u64,
    /// The USDC contract (0x + 40 hex, as configured).
    pub asset: String,
    /// The merchant's address (0x + 40 hex, as configured).
    pub pay_to: String,
    /// EIP-712 domain name and version of the token (`extra.name`, `extra.version`).
    pub name: String,
    pub version: String,
}

impl EvmOffer {
    /// Builds an offer from its `[vars]`, refusing anything the checks could not be exact against.
    pub fn parse(
        network: &str,
        asset: &str,
        pay_to: &str,
        name: &str,
        version: &str,
    ) -> Result<Self, PaymentError> {
        let chain_id = chain_id_of(network).ok_or(PaymentError::ConfigInvalid)?;
        let text_ok = |s: &str| !s.is_empty() && s.len() <= 64 && !s.chars().any(char::is_control);
        if !is_evm_address(asset) || !is_evm_address(pay_to) || !text_ok(name) || !text_ok(version)
        {
            return Err(PaymentError::ConfigInvalid);
        }
        Ok(Self {
            network: network.to_owned(),
            chain_id,
            asset: asset.to_owned(),
            pay_to: pay_to.to_owned(),
            name: name.to_owned(),
            version: version.to_owned(),
        })
    }

    /// The one `PaymentRequirements` object of this offer at a price.
    pub fn requirements(&self, price_units: u64, max_timeout_seconds: u64) -> Value {
        json!({
            "scheme": "exact",
            "network": self.network,
            "amount": price_units.to_string(),
            "asset": self.asset,
            "payTo": self.pay_to,
            "maxTimeoutSeconds": max_timeout_seconds,
            "extra": { "name": self.name, "version": self.version },
        })
    }
}

/// The EVM side of the payment configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EvmConfig {
    pub offers: Vec<EvmOffer>,
    pub max_timeout_seconds: u64,
    /// Our own (test) wallets, lower-case 0x addresses.
    pub house_wallets: Vec<String>,
}

impl EvmConfig {
    /// The requirements of every offer at a price, in configured order.
    pub fn requirements(&self, price_units: u64) -> Vec<Value> {
        self.offers
            .iter()
            .map(|offer| offer.requirements(price_units, self.max_timeout_seconds))
            .collect()
    }
}

/// The chain id of an `eip155:<decimal>` network id.
pub fn chain_id_of(network: &str) -> Option<u64> {
    let digits = network.strip_prefix("eip155:")?;
    if digits.is_empty() || digits.len() > 19 || digits.starts_with('0') {
        return None;
    }
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
        .filter(|&id| id > 0)
}

fn is_hex_of(s: &str, hex_digits: usize) -> bool {
    s.strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .is_some_and(|h| h.len() == hex_digits && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `0x` (or `0X`) and 40 hex digits, any case: an EVM address (a free-tier wallet too).
pub fn is_evm_address(s: &str) -> bool {
    is_hex_of(s, 40)
}

/// Lower-case form of a hex field whose syntax is already checked (`0x` prefix kept).
fn lower_hex(s: &str) -> String {
    format!("0x{}", s[2..].to_ascii_lowercase())
}

/// An unsigned integer field: decimal, or hex when it starts with `0x`/`0X` (the scheme's encoding
/// rules). Err when malformed; Ok(None) when well formed but above `u64::MAX`.
fn parse_uint(s: &str) -> Result<Option<u64>, ()> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(());
        }
        let significant = hex.trim_start_matches('0');
        return Ok(if significant.len() > 16 {
            None
        } else {
            Some(
                u64::from_str_radix(
                    if significant.is_empty() {
                        "0"
                    } else {
                        significant
                    },
                    16,
                )
                .map_err(|_| ())?,
            )
        });
    }
    if s.is_empty() || s.len() > MAX_DECIMAL_DIGITS || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    Ok(s.parse().ok())
}

/// A decoded EVM `PAYMENT-SIGNATURE`: the parts we look at, as sent (checked by [`check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EvmPayload {
    pub accepted: Value,
    pub from: String,
    pub to: String,
    pub value: String,
    pub valid_after: String,
    pub valid_before: String,
    pub nonce: String,
    pub signature: String,
    pub payment_identifier: Option<String>,
}

/// Decodes the header when it pays on an EVM network (`accepted.network` starts with `eip155:`);
/// Ok(None) when it is not an EVM payment (the Solana path decodes it). Size-capped throughout.
pub fn decode_payment_header(header: &str) -> Result<Option<EvmPayload>, PaymentError> {
    let object = header::decode_header_object(header)?;
    let accepted = match object.get("accepted") {
        Some(accepted) if accepted.is_object() => accepted,
        _ => return Err(PaymentError::HeaderMalformed),
    };
    let evm = accepted
        .get("network")
        .and_then(Value::as_str)
        .is_some_and(|n| n.starts_with("eip155:"));
    if !evm {
        return Ok(None);
    }
    header::check_version(&object)?;
    let payload = object.get("payload");
    let authorization = payload.and_then(|p| p.get("authorization"));
    let field = |name: &str| -> Result<String, PaymentError> {
        authorization
            .and_then(|a| a.get(name))
            .and_then(Value::as_str)
            .filter(|s| s.len() <= 2 + 2 * 32 + 16)
            .map(str::to_owned)
            .ok_or(EvmRefusal::AuthorizationMalformed.into())
    };
    let payment_identifier = header::payment_identifier(&object);
    // The authorization first, then its signature (a payload without one is malformed as such).
    let (from, to, value) = (field("from")?, field("to")?, field("value")?);
    let (valid_after, valid_before, nonce) =
        (field("validAfter")?, field("validBefore")?, field("nonce")?);
    let signature = payload
        .and_then(|p| p.get("signature"))
        .and_then(Value::as_str)
        .ok_or(PaymentError::from(EvmRefusal::SignatureMalformed))?;
    Ok(Some(EvmPayload {
        accepted: accepted.clone(),
        from,
        to,
        value,
        valid_after,
        valid_before,
        nonce,
        signature: signature.to_owned(),
        payment_identifier,
    }))
}

/// An EVM payment that passed every local check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedEvmPayment {
    /// Hex SHA-256 of "chain id \n asset \n from \n nonce" (lower-case): the guard's claim key.
    pub claim_key: String,
    /// The authorizer (lower-case 0x address): who pays.
    pub payer: String,
    pub amount_units: u64,
    pub house: bool,
    /// The offer it paid under.
    pub offer: EvmOffer,
    /// The requirements it satisfied (ours, byte for byte).
    pub requirements: Value,
    /// The authorization, rebuilt from the checked fields (lower-case hex, decimal integers).
    pub authorization: Value,
    /// The signature, lower-case hex.
    pub signature: String,
    /// The nonce (lower-case 0x + 64 hex).
    pub nonce: String,
    /// `validBefore`, seconds since the epoch: after it the authorization can never execute.
    pub valid_before_s: u64,
}

/// The authorization's identity string (chain id, asset, from, nonce), lower-case.
pub fn identity(chain_id: u64, asset: &str, from: &str, nonce: &str) -> String {
    format!(
        "{chain_id}\n{}\n{}\n{}",
        asset.to_ascii_lowercase(),
        from.to_ascii_lowercase(),
        nonce.to_ascii_lowercase()
    )
}

/// Every local check, in order, on a decoded EVM payment for a price at `now_s` (Unix seconds).
pub fn check(
    config: &EvmConfig,
    price_units: u64,
    now_s: u64,
    payload: &EvmPayload,
) -> Result<CheckedEvmPayment, PaymentError> {
    let offer = config
        .offers
        .iter()
        .find(|offer| {
            payload.accepted == offer.requirements(price_units, config.max_timeout_seconds)
        })
        .ok_or(PaymentError::RequirementsMismatch)?;
    let malformed = || PaymentError::from(EvmRefusal::AuthorizationMalformed);
    if !is_evm_address(&payload.from) || !is_evm_address(&payload.to) {
        return Err(malformed());
    }
    if !is_hex_of(&payload.nonce, 64) {
        return Err(malformed());
    }
    let value = parse_uint(&payload.value).map_err(|_| malformed())?;
    let valid_after = parse_uint(&payload.valid_after).map_err(|_| malformed())?;
    let valid_before = parse_uint(&payload.valid_before).map_err(|_| malformed())?;
    let signature_ok = payload
        .signature
        .strip_prefix("0x")
        .or_else(|| payload.signature.strip_prefix("0X"))
        .is_some_and(|h| {
            !h.is_empty()
                && h.len() % 2 == 0
                && h.len() <= 2 * MAX_SIGNATURE_BYTES
                && h.bytes().all(|b| b.is_ascii_hexdigit())
        });
    if !signature_ok {
        return Err(EvmRefusal::SignatureMalformed.into());
    }
    if !payload.to.eq_ignore_ascii_case(&offer.pay_to) {
        return Err(PaymentError::InvalidPayee);
    }
    if value != Some(price_units) {
        return Err(PaymentError::InvalidAmount {
            expected: price_units,
        });
    }
    match valid_after {
        Some(after) if after <= now_s => {}
        _ => return Err(EvmRefusal::NotYetValid.into()),
    }
    let max_window = config.max_timeout_seconds.saturating_add(CLOCK_SKEW_S);
    let valid_before_s = match valid_before {
        Some(before) if before <= now_s => return Err(EvmRefusal::Expired.into()),
        Some(before) if before - now_s <= max_window => before,
        _ => {
            return Err(EvmRefusal::WindowTooLong {
                max_seconds: max_window,
            }
            .into())
        }
    };
    let payer = lower_hex(&payload.from);
    let nonce = lower_hex(&payload.nonce);
    let authorization = json!({
        "from": payer,
        "to": lower_hex(&payload.to),
        "value": price_units.to_string(),
        "validAfter": valid_after.unwrap_or(0).to_string(),
        "validBefore": valid_before_s.to_string(),
        "nonce": nonce,
    });
    Ok(CheckedEvmPayment {
        claim_key: sha256_hex(identity(offer.chain_id, &offer.asset, &payer, &nonce).as_bytes()),
        house: config.house_wallets.contains(&payer),
        payer,
        amount_units: price_units,
        offer: offer.clone(),
        requirements: offer.requirements(price_units, config.max_timeout_seconds),
        authorization,
        signature: lower_hex(&payload.signature),
        nonce,
        valid_before_s,
    })
}

/// Body of the facilitator's `/verify` and `/settle` requests, rebuilt from the checked fields and
/// our own challenge `required` (its `resource` and declared extensions: the `bazaar` declaration,
/// so a facilitator that catalogues services can list the route, as on Solana). The
/// payment-identifier is forwarded only when the call carries one.
pub fn facilitator_request(
    checked: &CheckedEvmPayment,
    payment_identifier: Option<&str>,
    required: &Value,
) -> Value {
    let extensions = echoed_extensions(required, payment_identifier);
    let mut payment_payload = json!({
        "x402Version": X402_VERSION,
        "accepted": checked.requirements,
        "payload": { "authorization": checked.authorization, "signature": checked.signature },
    });
    if let Some(resource) = required.get("resource") {
        payment_payload["resource"] = resource.clone();
    }
    if !extensions.is_empty() {
        payment_payload["extensions"] = Value::Object(extensions);
    }
    json!({
        "x402Version": X402_VERSION,
        "paymentPayload": payment_payload,
        "paymentRequirements": checked.requirements,
    })
}

/// A 32-byte transaction hash: `0x` + 64 hex.
pub fn is_tx_hash(s: &str) -> bool {
    is_hex_of(s, 64)
}

/// `/settle` failure reasons of `@x402/evm` after which the authorization may have executed (a
/// used nonce, a transaction that was sent, a receipt that did not match): the chain is asked.
const MAYBE_SUBMITTED: [&str; 4] = [
    "invalid_exact_evm_nonce_already_used",
    "invalid_exact_evm_transaction_failed",
    "invalid_exact_evm_transfer_event_mismatch",
    "invalid_transaction_state",
];

/// Reads a `/settle` answer for an EVM payment. Landed only with `success: true` and a 0x hash.
/// Refused before anything was sent (`invalid_*` outside [`MAYBE_SUBMITTED`], or an insufficient
/// balance) → NotSent. Anything else (a used nonce, a failed or unreadable answer) → Unknown: the
/// chain is asked, since a used nonce may be this very payment, submitted by anyone.
pub fn settle_verdict(body: &[u8]) -> SettleVerdict {
    let Some(answer) = SettleAnswer::read(body, is_tx_hash) else {
        return SettleVerdict::Unknown;
    };
    let reason = answer.reason.as_str();
    match (answer.success, answer.transaction) {
        (Some(true), Some(hash)) => SettleVerdict::Landed {
            tx_sig: lower_hex(&hash),
        },
        (Some(false), _)
            if !MAYBE_SUBMITTED.contains(&reason)
                && (reason.starts_with("invalid_") || reason.contains("insufficient")) =>
        {
            SettleVerdict::NotSent
        }
        _ => SettleVerdict::Unknown,
    }
}

/// How EVM payments are taken, as every family's served document publishes it (`payment.evm`).
pub fn served_rules() -> Value {
    use crate::engine::ClosedError;
    let refusals: Vec<Value> = EvmRefusal::ALL
        .iter()
        .map(|r| {
            let error = PaymentError::Evm(*r);
            json!({"code": error.code(), "status": error.status(), "message": error.message()})
        })
        .collect();
    json!({
        "scheme": "x402 v2 exact on the eip155 networks listed in accepts: EIP-3009 transferWithAuthorization of USDC (payload.authorization + payload.signature), under the EIP-712 domain extra.name, extra.version, the chain id and the asset",
        "checks": "before the facilitator, free: accepted equals one of our EVM requirements (version, scheme, network, asset, payTo, amount, maxTimeoutSeconds, extra); to equals payTo (hex, any case); value equals the price exactly; validAfter <= now < validBefore and validBefore - now <= maxTimeoutSeconds + 30 s of clock skew (the official client signs validAfter 0 and validBefore now + maxTimeoutSeconds, so the window is measured from now; the reading validBefore - validAfter was declined: it refuses every stock payment); every hex field well formed (addresses 20 bytes, nonce 32 bytes, signature at most 2048 bytes)",
        "signature": "checked by the facilitator's /verify, not locally: it accepts smart-contract wallets (ERC-1271, ERC-6492), which a local ecrecover cannot, and keeps secp256k1 recovery out of the service; nothing moves before /verify says valid",
        "binding": "a payment is identified by (chain id, asset, from, nonce), which the token executes at most once; that identity is bound to the first call it is presented for (route and Idempotency-Key). Presented for another route or key: 409 payment_bound_elsewhere, nothing charged, also after a facilitator restart. Under an Idempotency-Key the key's retry rules above hold as for Solana.",
        "uncertainty": "a settle in doubt is reconciled with the network's JSON-RPC: authorizationState(from, nonce) on the token; used → the AuthorizationUsed log's transaction must carry our Transfer(from, payTo, value) to count as landed; unused and validBefore passed → released; unused and still valid → the same authorization is re-submitted; no answer → 409 PAYMENT_UNCERTAIN again",
        "ledger": "an EVM payment fills the criteria's \"payment tx id + Solana fee (lamports)\" with its chain and 0x transaction hash (tx_sig = eip155:<chain id>:<hash, lower-case>) and 0 (fee_lamports: no Solana fee is paid; the facilitator pays the EVM gas); payer is the lower-case 0x address. NULL for the fee was declined: the column is NOT NULL in every ledger table.",
        "payment_response": "PAYMENT-RESPONSE carries the 0x transaction hash, the eip155 network and the payer",
        "refusals": refusals,
    })
}

#[cfg(test)]
mod tests;
