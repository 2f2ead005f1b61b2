//! x402 `exact` on EVM networks, the I/O half (ARCHITECTURE §4): reads the EVM offers from
//! `[vars]`, and for a `PAYMENT-SIGNATURE` that pays on an `eip155:` network runs the engine's local
//! checks, counts the attempt for the wallet, binds the authorization to this call in its own guard
//! object, begins the attempt in the call's idempotency record, verifies and settles with the
//! facilitator, and reconciles a settlement in doubt with the network's JSON-RPC.
//!
//! Binding: the authorization's identity (chain id, asset, from, nonce) names a `PaymentGuard`
//! object (`evm:<claim key>`) that holds the one call it was first presented for (route and
//! Idempotency-Key, or route alone). Another route or key is refused there (409
//! `payment_bound_elsewhere`), free, across routes and after a facilitator restart. With an
//! Idempotency-Key the key's own record keeps its retry rules (never charged twice under one key);
//! without one, the authorization's object holds the record itself.
//!
//! Env vars: `EVM_NETWORKS` (comma-separated CAIP-2 ids; empty or unset: no EVM offer), and per
//! chain id N: `EVM_N_ASSET`, `EVM_N_PAY_TO`, `EVM_N_NAME`, `EVM_N_VERSION` (the token's EIP-712
//! domain name and version), optional `EVM_N_RPC_URL` (reconciliation; without it a payment in
//! doubt stays uncertain). Optional `EVM_FACILITATOR_URL` (else `FACILITATOR_URL`).

use super::PaidCall;
use crate::edge::guard::{self, Command, TransitionAnswer};
use crate::edge::payment::facilitator::{rpc_call, Facilitator};
use crate::engine::payment::binding::{self, Bound, CallBinding, IdentifierRule};
use crate::engine::payment::evm::{
    self, reconcile, CheckedEvmPayment, EvmConfig, EvmOffer, EvmPayload,
};
use crate::engine::payment::reconcile::ChainVerdict;
use crate::engine::payment::{CheckedPayment, PaymentConfig, PaymentError};
use worker::Env;

/// The EVM side of the payment configuration: the offers, the window, our 0x house wallets.
pub fn load_config(
    env: &Env,
    max_timeout_seconds: u64,
    house_wallets: &[String],
) -> std::result::Result<EvmConfig, PaymentError> {
    Ok(EvmConfig {
        offers: load_offers(env)?,
        max_timeout_seconds,
        house_wallets: house_wallets
            .iter()
            .map(|w| w.to_ascii_lowercase())
            .collect(),
    })
}

/// The EVM offers from `[vars]` (no offer when `EVM_NETWORKS` is empty or unset).
pub fn load_offers(env: &Env) -> std::result::Result<Vec<EvmOffer>, PaymentError> {
    let var =
        |name: String| crate::edge::config::var(env, &name).ok_or(PaymentError::ConfigInvalid);
    let networks = crate::edge::config::var(env, "EVM_NETWORKS").unwrap_or_default();
    networks
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|network| {
            let id = evm::chain_id_of(network).ok_or(PaymentError::ConfigInvalid)?;
            EvmOffer::parse(
                network,
                &var(format!("EVM_{id}_ASSET"))?,
                &var(format!("EVM_{id}_PAY_TO"))?,
                &var(format!("EVM_{id}_NAME"))?,
                &var(format!("EVM_{id}_VERSION"))?,
            )
        })
        .collect()
}

/// The facilitator EVM payments go to: `EVM_FACILITATOR_URL` when set (same credentials), else
/// the configured one.
pub fn evm_facilitator(env: &Env, configured: &Facilitator) -> Facilitator {
    let mut facilitator = configured.clone();
    if let Some(url) = crate::edge::config::var(env, "EVM_FACILITATOR_URL") {
        facilitator.url = url.trim_end_matches('/').to_owned();
    }
    facilitator
}

/// The guard object an authorization is bound in.
pub fn authorization_object(claim_key: &str) -> String {
    format!("evm:{claim_key}")
}

/// How an EVM payment is bound: by the call's Idempotency-Key (its record, its identifier rule),
/// or without one by its own authorization (the record is the authorization's object; an
/// identifier, when sent, must be well formed and binds nothing).
fn evm_bound(route_id: &str, binding: &CallBinding, claim_key: &str) -> Bound {
    match binding {
        CallBinding::IdempotencyKey {
            key,
            identifier_required,
        } => binding::by_key(route_id, key, *identifier_required),
        CallBinding::ServerNonce => Bound {
            memo: String::new(),
            record: authorization_object(claim_key),
            identifier_id: String::new(),
            identifier: IdentifierRule::WellFormedWhenSent,
            identifier_required: false,
            expires_s: None,
        },
    }
}

/// The EVM payment's local checks (offer, amount, window, signature shape) and its binding: the
/// bound call, the claim's shared facts and the EVM payment itself.
#[allow(clippy::type_complexity)]
pub(crate) fn check(
    config: &PaymentConfig,
    call: &PaidCall<'_>,
    payload: &EvmPayload,
) -> Result<(Bound, CheckedPayment, Option<Box<CheckedEvmPayment>>), PaymentError> {
    let now_s = super::now_ms() / 1000;
    let checked = evm::check(&config.evm, call.price_units, now_s, payload)?;
    let bound = evm_bound(call.route_id, call.binding, &checked.claim_key);
    bound
        .identifier
        .check(payload.payment_identifier.as_deref())?;
    Ok((bound, stand_in(&checked), Some(Box::new(checked))))
}

/// Binds the authorization to this call (route and Idempotency-Key) in its own guard object: false
/// when it is already bound to another call.
pub(crate) async fn bind(
    env: &Env,
    call: &PaidCall<'_>,
    claim_key: &str,
) -> Result<bool, PaymentError> {
    let key = match call.binding {
        CallBinding::IdempotencyKey { key, .. } => key.as_str(),
        CallBinding::ServerNonce => "",
    };
    // Kept in the authorization's object as a keyed HMAC: the object holds no submitted key.
    let secret = super::binding::fingerprint_secret(env).ok_or(PaymentError::ConfigInvalid)?;
    let call_id = format!("{}\n{key}", call.route_id);
    let binding = crate::engine::sign::hex(&crate::engine::payment::hmac::hmac_sha256(
        &secret,
        &[b"context-meter evm binding v1\n", call_id.as_bytes()],
    ));
    let object = authorization_object(claim_key);
    let answer: TransitionAnswer = guard::call(env, &object, &Command::Bind { binding }).await?;
    Ok(answer.ok)
}

/// The Solana-shaped facts the shared claim carries for an EVM payment: the claim key, the payer,
/// the amount and the house flag; no Solana fee (the ledger's `fee_lamports` is 0 for EVM: the
/// facilitator pays the EVM gas) and no transaction.
fn stand_in(checked: &CheckedEvmPayment) -> CheckedPayment {
    CheckedPayment {
        claim_key: checked.claim_key.clone(),
        payer: checked.payer.clone(),
        amount_units: checked.amount_units,
        fee_lamports: 0,
        house: checked.house,
        requirements: checked.requirements.clone(),
        transaction_base64: String::new(),
    }
}

/// What the network says of an uncertain EVM payment (`engine::payment::evm::reconcile`): whether
/// its authorization was used, and by a transfer that pays us (Unknown without `EVM_N_RPC_URL`).
pub(crate) async fn chain_verdict(env: &Env, evm: &CheckedEvmPayment) -> ChainVerdict {
    let now_s = super::now_ms() / 1000;
    let rpc_url = crate::edge::config::var(env, &format!("EVM_{}_RPC_URL", evm.offer.chain_id));
    let Some(rpc_url) = rpc_url.as_deref() else {
        return ChainVerdict::Unknown;
    };
    let used = rpc_call(rpc_url, &reconcile::authorization_state_request(evm))
        .await
        .and_then(|b| reconcile::read_authorization_state(&b));
    let mut transfer = None;
    if used == Some(true) {
        let latest = rpc_call(rpc_url, &reconcile::block_number_request())
            .await
            .and_then(|b| reconcile::read_block_number(&b));
        let from_block = latest.map(|n| n.saturating_sub(reconcile::LOG_LOOKBACK_BLOCKS));
        let hash = match from_block {
            Some(from) => rpc_call(rpc_url, &reconcile::used_log_request(evm, from))
                .await
                .and_then(|b| reconcile::read_used_log(&b)),
            None => None,
        };
        if let Some(hash) = hash {
            let pays = rpc_call(rpc_url, &reconcile::receipt_request(&hash))
                .await
                .and_then(|b| reconcile::receipt_pays(&b, evm));
            transfer = pays.map(|pays| (hash, pays));
        }
    }
    reconcile::chain_verdict(used, transfer, now_s, evm.valid_before_s)
}
