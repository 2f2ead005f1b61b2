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

use crate::edge::facilitator::{post_json, Facilitator};
use crate::edge::guard::{Command, TransitionAnswer};
use crate::edge::payment::{self as pay, Asked, Claim, Gate, Settled};
use crate::edge::reconcile::{mark_uncertain, Reconciled};
use crate::engine::payment::binding::{self, Bound, CallBinding, IdentifierRule};
use crate::engine::payment::evm::{
    self, reconcile, CheckedEvmPayment, EvmConfig, EvmOffer, EvmPayload,
};
use crate::engine::payment::guard::SettledFacts;
use crate::engine::payment::idempotency::Decision;
use crate::engine::payment::reconcile::{ChainVerdict, SettleVerdict};
use crate::engine::payment::{CheckedPayment, PaymentConfig, PaymentError};
use crate::engine::ClosedError;
use serde_json::Value;
use worker::{Env, Response, ResponseBuilder, Result};

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

/// The EVM half of `payment::gate`, for a header that pays on an `eip155:` network.
pub(crate) async fn gate(
    env: &Env,
    config: &PaymentConfig,
    facilitator: &Facilitator,
    asked: Asked<'_>,
    (binding, fingerprint): (&CallBinding, Option<&str>),
    payload: &EvmPayload,
) -> Result<Gate> {
    let facilitator = evm_facilitator(env, facilitator);
    let refused = |error: PaymentError| {
        pay::refuse(error, Some(config), asked, None, None).map(Gate::Refused)
    };
    let now_s = pay::now_ms() / 1000;
    let checked = evm::check(&config.evm, asked.price_units, now_s, payload).and_then(|checked| {
        let bound = evm_bound(asked.route_id, binding, &checked.claim_key);
        bound
            .identifier
            .check(payload.payment_identifier.as_deref())?;
        Ok((bound, checked))
    });
    let (bound, checked) = match checked {
        Ok(checked) => checked,
        Err(error) => return refused(error),
    };
    let key = match binding {
        CallBinding::IdempotencyKey { key, .. } => key.as_str(),
        CallBinding::ServerNonce => "",
    };
    let tunables = pay::tunables(env);
    let now = pay::now_ms();
    if let Err(error) =
        pay::wallet_attempt(env, &checked.payer, tunables.attempts_per_wallet, now).await
    {
        return refused(error);
    }
    // The authorization is bound to its first call before any record is touched.
    let bound_to = format!("{}\n{key}", asked.route_id);
    let authorization = authorization_object(&checked.claim_key);
    let bind: TransitionAnswer =
        match pay::guard_call(env, &authorization, &Command::Bind { binding: bound_to }).await {
            Ok(answer) => answer,
            Err(error) => return refused(error),
        };
    let answer_with =
        |error: PaymentError, settled: Option<&SettledFacts>, wait_ms: Option<u64>| {
            pay::refuse(error, Some(config), asked, settled, wait_ms).map(Gate::Replay)
        };
    if !bind.ok {
        return answer_with(PaymentError::BoundElsewhere, None, None);
    }
    let decision: Decision = match pay::guard_call(
        env,
        &bound.record,
        &Command::Begin {
            route_id: asked.route_id.to_owned(),
            fingerprint: fingerprint.map(str::to_owned),
            claim_key: checked.claim_key.clone(),
            now_ms: now,
            lease_ms: tunables.lease_ms,
            max_attempts: tunables.attempts_per_key,
        },
    )
    .await
    {
        Ok(decision) => decision,
        Err(error) => return refused(error),
    };
    let mut claim = Claim {
        route_id: asked.route_id.to_owned(),
        bound,
        resource_url: pay::resource_url(asked.req, asked.route_id),
        price_units: asked.price_units,
        checked: stand_in(&checked),
        resumed: None,
        config: config.clone(),
        evm: Some(Box::new(checked)),
    };
    match decision {
        Decision::Fresh => {}
        Decision::Resume(facts) => {
            claim.resumed = Some(facts);
            return Ok(Gate::Proceed(Box::new(claim)));
        }
        Decision::Reconcile => {
            return match reconcile_claim(env, &claim, &facilitator).await {
                Reconciled::Landed(facts) => {
                    claim.resumed = Some(facts);
                    Ok(Gate::Proceed(Box::new(claim)))
                }
                Reconciled::Released => refused(PaymentError::SettlementReleased),
                Reconciled::Unknown(error) => answer_with(error, None, None),
            };
        }
        Decision::RouteConflict => {
            return answer_with(PaymentError::IdempotencyConflict, None, None)
        }
        Decision::InputConflict => return answer_with(PaymentError::RetryInputInvalid, None, None),
        Decision::ProofConflict => return answer_with(PaymentError::ProofConflict, None, None),
        Decision::InProgress { retry_after_ms } => {
            return answer_with(PaymentError::InProgress, None, Some(retry_after_ms))
        }
        Decision::Delivered(facts) => {
            return answer_with(PaymentError::Replayed, Some(&facts), None)
        }
        Decision::TooEarly { retry_after_ms } => {
            let retry_after_s = PaymentError::seconds(retry_after_ms);
            return answer_with(PaymentError::RetryTooEarly { retry_after_s }, None, None);
        }
        Decision::RateLimited { retry_after_ms } => {
            let retry_after_s = PaymentError::seconds(retry_after_ms);
            return answer_with(PaymentError::RateLimited { retry_after_s }, None, None);
        }
    }
    let Some(evm) = claim.evm.as_deref() else {
        return refused(PaymentError::ConfigInvalid);
    };
    let body = evm::facilitator_request(evm, identifier_of(&claim), &pay::challenge_of(&claim));
    let answer = facilitator.verify(&body).await;
    if let Err(error) =
        answer.and_then(|answer| crate::engine::payment::read_verify_response(&answer))
    {
        pay::release(env, claim.clone()).await?;
        return refused(error);
    }
    Ok(Gate::Proceed(Box::new(claim)))
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

/// The payment-identifier forwarded to the facilitator: the call's key, if it has one.
fn identifier_of(claim: &Claim) -> Option<&str> {
    Some(claim.bound.identifier_id.as_str()).filter(|id| !id.is_empty())
}

fn facts_of(claim: &Claim, tx_sig: String) -> SettledFacts {
    SettledFacts {
        tx_sig,
        payer: claim.checked.payer.clone(),
        fee_lamports: claim.checked.fee_lamports,
        house: claim.checked.house,
        settled_ms: pay::now_ms(),
    }
}

/// Asks the network about an uncertain EVM payment (`engine::payment::evm::reconcile`); while it
/// is still unknown and the authorization still valid, re-submits the same authorization through
/// `/settle` (the token executes a nonce at most once). Records the outcome.
async fn reconcile_claim(env: &Env, claim: &Claim, facilitator: &Facilitator) -> Reconciled {
    let Some(evm) = claim.evm.as_deref() else {
        return Reconciled::Unknown(mark_uncertain(env, claim).await);
    };
    let now_s = pay::now_ms() / 1000;
    let mut chain = ChainVerdict::Unknown;
    let rpc_url = crate::edge::config::var(env, &format!("EVM_{}_RPC_URL", evm.offer.chain_id));
    if let Some(rpc_url) = rpc_url.as_deref() {
        let ask = |body: Value| async move { post_json(rpc_url, &body).await.ok() };
        let used = ask(reconcile::authorization_state_request(evm))
            .await
            .and_then(|b| reconcile::read_authorization_state(&b));
        let mut transfer = None;
        if used == Some(true) {
            let latest = ask(reconcile::block_number_request())
                .await
                .and_then(|b| reconcile::read_block_number(&b));
            let from_block = latest.map(|n| n.saturating_sub(reconcile::LOG_LOOKBACK_BLOCKS));
            let hash = match from_block {
                Some(from) => ask(reconcile::used_log_request(evm, from))
                    .await
                    .and_then(|b| reconcile::read_used_log(&b)),
                None => None,
            };
            if let Some(hash) = hash {
                let pays = ask(reconcile::receipt_request(&hash))
                    .await
                    .and_then(|b| reconcile::receipt_pays(&b, evm));
                transfer = pays.map(|pays| (hash, pays));
            }
        }
        chain = reconcile::chain_verdict(used, transfer, now_s, evm.valid_before_s);
    }
    if chain == ChainVerdict::Unknown && now_s < evm.valid_before_s {
        let body = evm::facilitator_request(evm, identifier_of(claim), &pay::challenge_of(claim));
        let timeout = pay::tunables(env).settle_timeout_ms;
        if let Ok(answer) = facilitator.settle_within(&body, timeout).await {
            if let SettleVerdict::Landed { tx_sig } = evm::settle_verdict(&answer) {
                chain = ChainVerdict::Landed { tx_sig };
            }
        }
    }
    match chain {
        ChainVerdict::Landed { tx_sig } => {
            let facts = facts_of(claim, tx_sig);
            let command = Command::Settled {
                claim_key: claim.claim_key().to_owned(),
                facts: facts.clone(),
            };
            if !pay::transition(env, claim, command).await {
                worker::console_error!("payment guard: reconciled settlement not recorded");
            }
            Reconciled::Landed(facts)
        }
        ChainVerdict::Failed => {
            let _ = pay::release(env, claim.clone()).await;
            Reconciled::Released
        }
        ChainVerdict::Unknown => Reconciled::Unknown(mark_uncertain(env, claim).await),
    }
}

/// Settles a claimed EVM payment (the EVM half of `payment::settle`, same states and answers).
pub async fn settle(
    env: &Env,
    claim: &Claim,
    evm: &CheckedEvmPayment,
) -> std::result::Result<Settled, Response> {
    let network = evm.offer.network.clone();
    let settled = |facts: &SettledFacts, resumed: bool| Settled {
        payer: facts.payer.clone(),
        tx_sig: facts.tx_sig.clone(),
        fee_lamports: facts.fee_lamports,
        house: facts.house,
        price_units: claim.price_units,
        resumed,
        payment_response_header: crate::engine::payment::payment_response_header(
            &network,
            &facts.payer,
            Some(&facts.tx_sig),
        ),
    };
    if let Some(facts) = &claim.resumed {
        return Ok(settled(facts, true));
    }
    let failure = |error: PaymentError| -> Response {
        let mut headers = Vec::new();
        if error.status() == 402 {
            let header =
                crate::engine::payment::payment_response_header(&network, &evm.payer, None);
            headers.push(("PAYMENT-RESPONSE", header));
        }
        if let Some(seconds) = error.retry_after_s() {
            headers.push(("Retry-After", seconds.to_string()));
        }
        pay::json_response(error.status(), &pay::refusal_body(&error, false), &headers)
            .unwrap_or_else(|_| ResponseBuilder::new().with_status(error.status()).empty())
    };
    let facilitator = match Facilitator::from_env(env) {
        Ok(configured) => evm_facilitator(env, &configured),
        Err(error) => {
            let _ = pay::release(env, claim.clone()).await;
            return Err(failure(error));
        }
    };
    let tunables = pay::tunables(env);
    let marked = pay::guard_call::<TransitionAnswer>(
        env,
        &claim.bound.record,
        &Command::Settling {
            claim_key: claim.claim_key().to_owned(),
            now_ms: pay::now_ms(),
            lease_ms: tunables.lease_ms,
        },
    )
    .await;
    if !matches!(marked, Ok(TransitionAnswer { ok: true, .. })) {
        let _ = pay::release(env, claim.clone()).await;
        return Err(failure(PaymentError::StateUnavailable));
    }
    let body = evm::facilitator_request(evm, identifier_of(claim), &pay::challenge_of(claim));
    let verdict = match facilitator
        .settle_within(&body, tunables.settle_timeout_ms)
        .await
    {
        Ok(answer) => evm::settle_verdict(&answer),
        // Our credentials were refused: nothing was submitted; released, nothing charged.
        Err(Some(error)) => {
            let _ = pay::release(env, claim.clone()).await;
            return Err(failure(error));
        }
        Err(None) => SettleVerdict::Unknown,
    };
    let landed = match verdict {
        SettleVerdict::Landed { tx_sig } => {
            let facts = facts_of(claim, tx_sig);
            let command = Command::Settled {
                claim_key: claim.claim_key().to_owned(),
                facts: facts.clone(),
            };
            if !pay::transition(env, claim, command).await {
                worker::console_error!("payment guard: settled state not recorded");
            }
            facts
        }
        SettleVerdict::NotSent => {
            let _ = pay::release(env, claim.clone()).await;
            return Err(failure(PaymentError::SettlementFailed));
        }
        SettleVerdict::Unknown => match reconcile_claim(env, claim, &facilitator).await {
            Reconciled::Landed(facts) => facts,
            Reconciled::Released => return Err(failure(PaymentError::SettlementReleased)),
            Reconciled::Unknown(error) => return Err(failure(error)),
        },
    };
    Ok(settled(&landed, false))
}
