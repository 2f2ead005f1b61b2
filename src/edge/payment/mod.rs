//! x402 v2 on a paid route, the I/O half: reads the configuration from `[vars]`, asks the
//! facilitator for its fee payer (`/supported`, cached), answers the challenge, runs the engine's
//! local checks, counts the attempt for the wallet, begins the attempt in the call's idempotency
//! record (the `PaymentGuard` Durable Object named by the call's binding: its Idempotency-Key, or
//! without one the server nonce its challenge carried, `engine::payment::binding`), verifies and
//! settles with the facilitator (`payment::facilitator`), reconciles a settlement in doubt with the
//! chain (`reconcile`), and records delivery.
//!
//! Files: this one holds the call, the claim, its record's transitions, the configuration and the
//! answers; `gate` the gate up to the engine, `settle` everything after it, `reconcile` the chain;
//! `rail` the rail interface those three ask (never a rail by name), over each rail's own steps in
//! `solana` and `evm`. Below them all: `binding`, `facilitator` (and its credentials).
//!
//! Order (ARCHITECTURE §4): free validation (the router, before calling `gate`) → decode header
//! (size-capped) → local checks → wallet attempt count → key record `begin` → facilitator
//! `/verify` → [engine runs] → record `settling` → `/settle` (timed) → record `settled` or
//! `uncertain` → [ledger row] → `delivered`. Nothing moves before `settling` is written, so a
//! refusal before it consumes nothing and says so; after it, an unknown outcome is
//! PAYMENT_UNCERTAIN (409, Retry-After), never "not consumed", and the next retry with the same
//! key and proof asks the chain (`reconcile`, through the payment's `rail`) before anything else.
//!
//! Env vars: NETWORK, USDC_MINT, PAY_TO, FACILITATOR_URL, MAX_TIMEOUT_SECONDS,
//! CU_PRICE_CAP_MICROLAMPORTS, HOUSE_WALLETS (comma-separated, may be empty), SOLANA_RPC_URL
//! (reconciliation; without it an uncertain payment is only ever re-submitted, never released),
//! PAYMENT_LEASE_MS, SETTLE_TIMEOUT_MS, PAY_ATTEMPTS_PER_KEY, PAY_ATTEMPTS_PER_WALLET (per minute),
//! PAYMENT_NONCE_TTL_SECONDS (life of a keyless challenge's nonce, default 300).
//! Secrets: IDEMPOTENCY_SECRET (optional; else derived from SIGNING_KEY; keys the pack's
//! fingerprint and the nonce tokens, each under its own label). Durable Object binding:
//! PAYMENT_GUARD (class PaymentGuard).

pub mod binding;
pub mod evm;
pub mod facilitator;
pub mod facilitator_auth;
pub mod gate;
pub mod mpp;
pub mod rail;
pub mod reconcile;
pub mod settle;
pub mod solana;

pub use gate::gate;
pub use settle::{delivered, settle};

use crate::edge::guard::{self, Command, TransitionAnswer};
use crate::edge::metrics;
use crate::edge::payment::binding::challenge_bound;
use crate::edge::payment::facilitator::Facilitator;
use crate::engine::payment::binding::{Bound, CallBinding};
use crate::engine::payment::evm::CheckedEvmPayment;
use crate::engine::payment::{
    self, guard::SettledFacts, CheckedPayment, PaymentConfig, PaymentError,
};
use crate::engine::ClosedError;
use serde_json::{json, Value};
use worker::{Date, Env, Headers, Request, Response, Result};

/// Default lease of a claim: verify + engine + settle must fit in it.
const DEFAULT_LEASE_MS: u64 = 120_000;
/// Default time a `/settle` answer is waited for before the payment is uncertain.
const DEFAULT_SETTLE_TIMEOUT_MS: u64 = 45_000;
/// Default payment attempts per minute per Idempotency-Key and per wallet.
const DEFAULT_ATTEMPTS_PER_KEY: u64 = 30;
const DEFAULT_ATTEMPTS_PER_WALLET: u64 = 120;
pub use crate::edge::payment::binding::{pack_fingerprint, RELEASE_VERSION};

/// What the router does next.
pub enum Gate {
    /// 402 with `PAYMENT-REQUIRED`: no payment was presented.
    Challenge(Response),
    /// The payment was refused before anything moved (the body says it was not consumed).
    Refused(Response),
    /// 409: already delivered, being processed, or bound to another route or key.
    Replay(Response),
    /// Checked, claimed and verified (or settled earlier and resumable): run the engine.
    /// (Boxed: a claim is much larger than a Response handle.)
    Proceed(Box<Claim>),
    /// Delivered already (or settled and never delivered), asked again as told after a lost
    /// answer: run the engine and deliver with the original receipt, no second charge or row.
    Redeliver(Box<Redelivery>),
}

/// A paid payment's result asked for again (ARCHITECTURE §4, "A lost answer").
#[derive(Debug, Clone)]
pub struct Redelivery {
    /// The payment's record (its guard object's name).
    pub record: String,
    /// The payment's chain (CAIP-2), for its PAYMENT-RESPONSE.
    pub network: String,
    pub facts: SettledFacts,
    /// The paid call's closed ledger figures (None on a record from before they were kept).
    pub row: Option<crate::engine::payment::outbox::PendingRow>,
    /// Settled but never delivered until now: the claim to mark delivered once its row is written.
    pub first_delivery: Option<String>,
}

impl Redelivery {
    /// The original `PAYMENT-RESPONSE`.
    pub fn payment_response_header(&self) -> String {
        payment::payment_response_header(&self.network, &self.facts.payer, Some(&self.facts.tx_sig))
    }
}

/// What only a payment's rail keeps of it beside the shared `CheckedPayment`: an EVM
/// authorization; nothing on Solana, whose checked transaction is the whole payment.
pub(crate) type RailPayment = Option<Box<CheckedEvmPayment>>;

/// A payment as its rail checked it: the bound call, the claim's shared facts, the rail's own.
pub(crate) type Checked = (Bound, CheckedPayment, RailPayment);

/// A claimed payment, carried from `gate` to `settle` / `delivered` / `release`.
#[derive(Debug, Clone)]
pub struct Claim {
    pub route_id: String,
    /// How the call is bound: its memo, its guard record, the identifier sent to the facilitator.
    pub bound: Bound,
    /// The route's resource URL as the challenge stated it (forwarded to the facilitator).
    pub resource_url: String,
    pub price_units: u64,
    pub checked: CheckedPayment,
    /// Set when this payment was settled by an earlier attempt that never delivered.
    pub resumed: Option<SettledFacts>,
    /// The request's payment settings, read once by the gate; their facilitator is the one this
    /// payment goes to (its rail's).
    pub(crate) settings: Settings,
    /// What only its rail keeps (an EVM payment: `checked` then carries its claim key, payer and
    /// amount); read through [`Claim::rail`].
    pub(crate) rail_payment: RailPayment,
    /// The family label its metrics count under.
    pub(crate) family_id: &'static str,
}

/// What a claim is, on either rail (its rail's own facts: `rail`).
impl Claim {
    /// The claim (hex SHA-256 of the transaction message, or the EVM authorization's identity).
    pub fn claim_key(&self) -> &str {
        &self.checked.claim_key
    }

    /// The settlement facts once the payment landed as `tx_sig` (an EVM payment's fee is 0: the
    /// facilitator pays the gas).
    pub(crate) fn landed(&self, tx_sig: String) -> SettledFacts {
        SettledFacts {
            tx_sig,
            payer: self.checked.payer.clone(),
            fee_lamports: self.checked.fee_lamports,
            house: self.checked.house,
            settled_ms: now_ms(),
        }
    }
}

/// One paid call as the router bound it, after free validation of its body.
pub struct PaidCall<'a> {
    pub req: &'a Request,
    pub family_id: &'static str,
    pub route_id: &'a str,
    pub price_units: u64,
    /// Its Idempotency-Key, or a server nonce when it sent none.
    pub binding: &'a CallBinding,
    /// The pack's keyed request fingerprint (None on the criteria families).
    pub fingerprint: Option<&'a str>,
}

impl PaidCall<'_> {
    fn asked<'b>(&'b self, fresh: Option<&'b Bound>) -> Asked<'b> {
        Asked {
            req: self.req,
            route_id: self.route_id,
            price_units: self.price_units,
            fresh,
        }
    }
}

/// The payment settings read per request (each with a default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tunables {
    pub(crate) lease_ms: u64,
    pub(crate) settle_timeout_ms: u64,
    pub(crate) attempts_per_key: u32,
    pub(crate) attempts_per_wallet: u32,
}

pub(crate) fn tunables(env: &Env) -> Tunables {
    let get = |name: &str, default: u64| crate::edge::config::var_u64(env, name, default);
    Tunables {
        lease_ms: get("PAYMENT_LEASE_MS", DEFAULT_LEASE_MS).max(1_000),
        settle_timeout_ms: get("SETTLE_TIMEOUT_MS", DEFAULT_SETTLE_TIMEOUT_MS).max(1_000),
        attempts_per_key: get("PAY_ATTEMPTS_PER_KEY", DEFAULT_ATTEMPTS_PER_KEY).clamp(1, 10_000)
            as u32,
        attempts_per_wallet: get("PAY_ATTEMPTS_PER_WALLET", DEFAULT_ATTEMPTS_PER_WALLET)
            .clamp(1, 100_000) as u32,
    }
}

/// A settled payment: the ledger's payment columns and the `PAYMENT-RESPONSE` header value.
#[derive(Debug, Clone)]
pub struct Settled {
    /// What settlement established (the ledger row's payment half).
    pub facts: SettledFacts,
    /// True when this delivery resumed an earlier settlement (no second charge).
    pub resumed: bool,
    pub payment_response_header: String,
}

fn var(env: &Env, name: &str) -> std::result::Result<String, PaymentError> {
    env.var(name)
        .map(|v| v.to_string())
        .map_err(|_| PaymentError::ConfigInvalid)
}

pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// Closed JSON body of a payment refusal: `{code, message, <figures>, payment}`, where `payment`
/// says what happened to the money in words that are true for the refusal: "not verified, not
/// consumed" only where nothing can have moved; "uncertain…" or "released…" after a settle in
/// doubt; absent on the 409/429 conflicts (their messages say nothing was charged).
pub fn refusal_body(error: &PaymentError, consumed: bool) -> Value {
    let untouched = !consumed && error.status() != 409 && error.status() != 429;
    let mut body = crate::edge::respond::refusal_body(error, untouched);
    let said = match error {
        PaymentError::Uncertain { .. } => Some("uncertain: submitted, outcome not known yet"),
        PaymentError::SettlementReleased => Some("released: did not land, not consumed"),
        _ if consumed => Some("settled"),
        _ => None,
    };
    if let Some(said) = said {
        body["payment"] = Value::from(said);
    }
    body
}

pub(crate) fn json_response(
    status: u16,
    body: &Value,
    headers: &[(&str, String)],
) -> Result<Response> {
    let out = Headers::new();
    out.set("content-type", "application/json")?;
    out.set("cache-control", "no-store")?;
    for (name, value) in headers {
        out.set(name, value)?;
    }
    Ok(Response::from_bytes(body.to_string().into_bytes())?
        .with_status(status)
        .with_headers(out))
}

/// The paid route's resource URL: this request's origin + the route's path (`route_id`), never a
/// query; a free check's spent allowance names the paid route it upgrades to, not its own path.
pub(crate) fn resource_url(req: &Request, route_id: &str) -> String {
    match req.url() {
        Ok(url) => format!("{}{}", url.origin().ascii_serialization(), route_id),
        Err(_) => String::new(),
    }
}

/// What the paid route publishes for discovery (its description and `bazaar` declaration).
fn listing(route_id: &str) -> payment::discovery::RouteListing {
    let route = crate::edge::routes::find(crate::edge::routes::Verb::Post, route_id);
    match route {
        Some(route) => crate::edge::route_docs::listing(route),
        None => payment::discovery::RouteListing {
            description: format!("context-meter {route_id}"),
            method: "POST",
            body_schema: json!({"type": "object"}),
            body_example: json!({}),
            output_schema: json!({"type": "object"}),
            headers: Vec::new(),
        },
    }
}

/// Our own challenge for a claim (no error): the `resource` and `extensions` the facilitator is
/// sent with the payment.
pub(crate) fn challenge_of(claim: &Claim) -> Value {
    payment::payment_required_for(
        &claim.settings.config,
        claim.price_units,
        &claim.bound,
        &claim.resource_url,
        &listing(&claim.route_id),
        None,
    )
}

/// The x402 payment settings of one request, read from the environment once (by the gate, or by
/// the challenge of a paid route on its own) and passed down with the claim: the merchant
/// configuration (Solana and the EVM offers), the facilitator, and the tunables.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) config: PaymentConfig,
    pub(crate) facilitator: Facilitator,
    pub(crate) tunables: Tunables,
}

/// The payment settings from `[vars]` and the secrets, plus the facilitator's fee payer.
pub(crate) async fn load_settings(env: &Env) -> std::result::Result<Settings, PaymentError> {
    let network = var(env, "NETWORK")?;
    let facilitator = Facilitator::from_env(env)?;
    let number = |name: &str| -> std::result::Result<u64, PaymentError> {
        var(env, name)?
            .trim()
            .parse()
            .map_err(|_| PaymentError::ConfigInvalid)
    };
    let (evm_house, house_wallets): (Vec<String>, Vec<String>) = var(env, "HOUSE_WALLETS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .partition(|w| payment::evm::is_evm_address(w));
    let evm = evm::load_config(env, number("MAX_TIMEOUT_SECONDS")?, &evm_house)?;
    let fee_payer = facilitator.fee_payer(&network).await?;
    let config = PaymentConfig {
        network,
        asset: var(env, "USDC_MINT")?,
        pay_to: var(env, "PAY_TO")?,
        max_timeout_seconds: number("MAX_TIMEOUT_SECONDS")?,
        fee_payer,
        cu_price_cap_microlamports: number("CU_PRICE_CAP_MICROLAMPORTS")?,
        house_wallets,
        evm,
    };
    config.validate()?;
    Ok(Settings {
        config,
        facilitator,
        tunables: tunables(env),
    })
}

/// Asks the paying wallet's own object whether it may attempt a payment: Err(RateLimited) when
/// `max_attempts` of its attempts failed within the minute, Err(StateUnavailable) when the object
/// is unavailable. Counts nothing: only a failure counts ([`wallet_failure`]).
pub(crate) async fn wallet_check(
    env: &Env,
    payer: &str,
    max_attempts: u32,
    now_ms: u64,
) -> std::result::Result<(), PaymentError> {
    let command = Command::WalletCheck {
        now_ms,
        max_attempts,
    };
    let wallet: TransitionAnswer = guard::call(env, &guard::wallet_object(payer), &command).await?;
    if wallet.ok {
        return Ok(());
    }
    Err(PaymentError::RateLimited {
        retry_after_s: PaymentError::seconds(wallet.retry_after_ms.unwrap_or(1_000)),
    })
}

/// Counts one refused, unverified or failed attempt of the paying wallet (what loads the
/// facilitator and the objects for nothing). A delivered call never counts.
pub(crate) async fn wallet_failure(env: &Env, payer: &str, now_ms: u64) {
    let command = Command::WalletFailure { now_ms };
    let counted =
        guard::call::<TransitionAnswer>(env, &guard::wallet_object(payer), &command).await;
    if counted.is_err() {
        worker::console_error!("payment guard: wallet failure not counted");
    }
}

/// A state transition of the claim's own record: true when the guard applied it.
pub(crate) async fn transition(env: &Env, claim: &Claim, command: Command) -> bool {
    guard::transition(env, &claim.bound.record, command).await
}

/// Nothing was delivered: frees an unsettled claim (the key takes a new proof), or, if it was
/// settled, keeps the settlement and lets the same payment resume at once. A guard that could not
/// record it leaves the claim to its lease, and the gap is counted as `release_unrecorded`.
pub async fn release(env: &Env, claim: &Claim) {
    let command = Command::Release {
        claim_key: claim.claim_key().to_owned(),
    };
    let released = transition(env, claim, command).await;
    count_guard_gap(claim.family_id, "release_unrecorded", released);
}

/// Counts a guard transition that did not happen under `what` (closed labels, no payload).
pub(crate) fn count_guard_gap(family_id: &'static str, what: &'static str, recorded: bool) {
    if !recorded {
        metrics::payment(family_id, what);
    }
}

/// The request a payment answer is for, and the binding a fresh challenge for it carries.
#[derive(Clone, Copy)]
pub(crate) struct Asked<'a> {
    pub(crate) req: &'a Request,
    pub(crate) route_id: &'a str,
    pub(crate) price_units: u64,
    pub(crate) fresh: Option<&'a Bound>,
}

/// A refusal as the client sees it: 402 refusals carry a fresh `PAYMENT-REQUIRED` (with the code
/// in `error`) so the client can pay again correctly; Retry-After where the refusal has one
/// (`retry_after_ms` overrides the refusal's own); the original `PAYMENT-RESPONSE` where `settled`
/// is given; others the closed body only.
pub(crate) fn refuse(
    error: PaymentError,
    config: Option<&PaymentConfig>,
    asked: Asked,
    settled: Option<&SettledFacts>,
    retry_after_ms: Option<u64>,
) -> Result<Response> {
    let mut headers = Vec::new();
    if let (402, Some(config), Some(fresh)) = (error.status(), config, asked.fresh) {
        let required = payment::payment_required_for(
            config,
            asked.price_units,
            fresh,
            &resource_url(asked.req, asked.route_id),
            &listing(asked.route_id),
            Some(error.code()),
        );
        headers.push(("PAYMENT-REQUIRED", payment::encode_header(&required)));
    }
    let seconds = retry_after_ms
        .map(PaymentError::seconds)
        .or(error.retry_after_s());
    if let Some(seconds) = seconds {
        headers.push(("Retry-After", seconds.to_string()));
    }
    if let (Some(facts), Some(config)) = (settled, config) {
        headers.push((
            "PAYMENT-RESPONSE",
            payment::payment_response_header(&config.network, &facts.payer, Some(&facts.tx_sig)),
        ));
    }
    json_response(error.status(), &refusal_body(&error, false), &headers)
}

fn challenge_with(
    config: &PaymentConfig,
    req: &Request,
    route_id: &str,
    price_units: u64,
    bound: &Bound,
) -> Result<Response> {
    let required = payment::payment_required_for(
        config,
        price_units,
        bound,
        &resource_url(req, route_id),
        &listing(route_id),
        None,
    );
    let retry = if bound.expires_s.is_some() {
        "This route is paid: pay the PAYMENT-REQUIRED challenge with x402 v2 (its memo binds this call) and retry the same request with PAYMENT-SIGNATURE."
    } else {
        "This route is paid: pay the PAYMENT-REQUIRED challenge with x402 v2 and retry with the same Idempotency-Key."
    };
    // The flat refusal shape every other refusal has (`{code, message, <figures>}`).
    let body = json!({
        "code": "payment_required",
        "message": retry,
        "price_units": price_units,
    });
    json_response(
        402,
        &body,
        &[("PAYMENT-REQUIRED", payment::encode_header(&required))],
    )
}

/// The 402 challenge of a paid route on its own (e.g. when a free allowance is exhausted): the
/// same answer `gate` gives a call without payment. Refuses an invalid Idempotency-Key (400).
pub async fn challenge(
    req: &Request,
    env: &Env,
    route_id: &str,
    price_units: u64,
    binding: &CallBinding,
) -> Result<Response> {
    let asked = Asked {
        req,
        route_id,
        price_units,
        fresh: None,
    };
    let config = match load_settings(env).await {
        Ok(settings) => settings.config,
        Err(error) => return refuse(error, None, asked, None, None),
    };
    match challenge_bound(env, binding, route_id, price_units) {
        Ok(bound) => challenge_with(&config, req, route_id, price_units, &bound),
        Err(error) => refuse(error, None, asked, None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_transition_that_did_not_happen_is_counted() {
        for what in ["delivered_unmarked", "release_unrecorded"] {
            let line = format!("cm_payments_total{{family=\"token-opt\",result=\"{what}\"}}");
            count_guard_gap("token-opt", what, true);
            assert!(!metrics::render().contains(&line), "{what}");
            count_guard_gap("token-opt", what, false);
            assert!(metrics::render().contains(&format!("{line} 1")), "{what}");
        }
    }
}
