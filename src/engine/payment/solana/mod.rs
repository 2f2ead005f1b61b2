//! x402 v2 `exact` on Solana, the pure half: the `PAYMENT-SIGNATURE` of a Solana payment, its v0
//! transaction ([`transaction`]) and every local check made before any network call.
//!
//! Invariants:
//! - A payment passes only in a layout the `exact` scheme allows ([`layout`]: SetComputeUnitLimit,
//!   SetComputeUnitPrice, TransferChecked under SPL Token or Token-2022, then the wallet's Lighthouse
//!   assertions and exactly one Memo, ours), paying exactly the price of our mint into the
//!   associated token account of our payee under that token program ([`pda`]), with the fee payer
//!   in no instruction's accounts and not the owner of the source, a compute unit price under both
//!   our cap and the scheme's bound, and a valid client signature over the message bytes.
//! - The claim key is SHA-256(message bytes) in hex (the same bytes the facilitator hashes).

pub mod facilitator;
pub mod layout;
pub mod pda;
pub mod reconcile;
pub mod transaction;

use super::{
    binding, header, is_valid_idempotency_key, requirements_with_memo, PaymentConfig, PaymentError,
    LAMPORTS_PER_SIGNATURE, MAX_COMPUTE_UNIT_LIMIT, MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS,
    MAX_TRANSACTION_BASE64, USDC_DECIMALS,
};
use crate::engine::base58;
use crate::engine::sign::sha256_hex;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::Value;
use transaction::MessageVersion;

const IX_SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const IX_SET_COMPUTE_UNIT_PRICE: u8 = 3;
const IX_TRANSFER_CHECKED: u8 = 12;

/// A transaction id as a facilitator reports it: base58 of a 64-byte signature.
pub fn is_transaction_signature(s: &str) -> bool {
    s.len() <= 88 && base58::decode(s).is_some_and(|b| b.len() == 64)
}

/// A decoded `PAYMENT-SIGNATURE`: only the three parts we look at.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentPayload {
    pub accepted: Value,
    pub transaction_base64: String,
    pub payment_identifier: Option<String>,
}

/// Decodes the `PAYMENT-SIGNATURE` header text of a Solana payment (size-capped throughout).
pub fn decode_payment_header(header: &str) -> Result<PaymentPayload, PaymentError> {
    let object = header::decode_header_object(header)?;
    header::check_version(&object)?;
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
    let payment_identifier = header::payment_identifier(&object);
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
