//! x402 v2 on a paid route, the I/O half: reads the configuration from `[vars]`, asks the
//! facilitator for its fee payer (`/supported`, cached), answers the challenge, runs the engine's
//! local checks, counts the attempt for the wallet, begins the attempt in the call's idempotency
//! record (the `PaymentGuard` Durable Object named by the call's binding: its Idempotency-Key, or
//! without one the server nonce its challenge carried, `engine::payment::binding`), verifies and
//! settles with the facilitator (`edge::facilitator`), reconciles a settlement in doubt with the
//! chain (`edge::reconcile`), and records delivery.
//!
//! Order (ARCHITECTURE §4): free validation (the router, before calling `gate`) → decode header
//! (size-capped) → local checks → wallet attempt count → key record `begin` → facilitator
//! `/verify` → [engine runs] → record `settling` → `/settle` (timed) → record `settled` or
//! `uncertain` → [ledger row] → `delivered`. Nothing moves before `settling` is written, so a
//! refusal before it consumes nothing and says so; after it, an unknown outcome is
//! PAYMENT_UNCERTAIN (409, Retry-After), never "not consumed", and the next retry with the same
//! key and proof asks the chain (`engine::payment::reconcile`) before anything else.
//!
//! Env vars: NETWORK, USDC_MINT, PAY_TO, FACILITATOR_URL, MAX_TIMEOUT_SECONDS,
//! CU_PRICE_CAP_MICROLAMPORTS, HOUSE_WALLETS (comma-separated, may be empty), SOLANA_RPC_URL
//! (reconciliation; without it an uncertain payment is only ever re-submitted, never released),
//! PAYMENT_LEASE_MS, SETTLE_TIMEOUT_MS, PAY_ATTEMPTS_PER_KEY, PAY_ATTEMPTS_PER_WALLET (per minute),
//! PAYMENT_NONCE_TTL_SECONDS (life of a keyless challenge's nonce, default 300).
//! Secrets: IDEMPOTENCY_SECRET (optional; else derived from SIGNING_KEY; keys the pack's
//! fingerprint and the nonce tokens, each under its own label). Durable Object binding:
//! PAYMENT_GUARD (class PaymentGuard).

use crate::edge::binding::{challenge_bound, payment_bound};
use crate::edge::facilitator::Facilitator;
use crate::edge::guard::{self, Command, TransitionAnswer};
use crate::edge::reconcile::{reconcile_claim, Reconciled};
use crate::engine::payment::binding::{Bound, CallBinding};
use crate::engine::payment::evm::CheckedEvmPayment;
use crate::engine::payment::idempotency::Decision;
use crate::engine::payment::reconcile::{self, SettleVerdict};
use crate::engine::payment::{
    self, check_bound_payment, decode_payment_header, facilitator_request, guard::SettledFacts,
    read_verify_response, CheckedPayment, PaymentConfig, PaymentError,
};
use crate::engine::ClosedError;
use serde_json::{json, Value};
use worker::{
    wasm_bindgen::JsValue, Date, Env, Headers, Method, Request, RequestInit, Response,
    ResponseBuilder, Result,
};

/// Default lease of a claim: verify + engine + settle must fit in it.
const DEFAULT_LEASE_MS: u64 = 120_000;
/// Default time a `/settle` answer is waited for before the payment is uncertain.
const DEFAULT_SETTLE_TIMEOUT_MS: u64 = 45_000;
/// Default payment attempts per minute per Idempotency-Key and per wallet.
const DEFAULT_ATTEMPTS_PER_KEY: u64 = 30;
const DEFAULT_ATTEMPTS_PER_WALLET: u64 = 120;
pub use crate::edge::binding::{pack_fingerprint, RELEASE_VERSION};

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
}

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
    pub(crate) config: PaymentConfig,
    /// An EVM payment (`edge::evm`); `checked` then carries its claim key, payer and amount.
    pub(crate) evm: Option<Box<CheckedEvmPayment>>,
}

impl Claim {
    /// The claim (hex SHA-256 of the transaction message).
    pub fn claim_key(&self) -> &str {
        &self.checked.claim_key
    }
}

/// The payment settings read per request (each with a default).
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
    pub payer: String,
    pub tx_sig: String,
    pub fee_lamports: u64,
    pub house: bool,
    pub price_units: u64,
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
        Some(route) => crate::edge::schemas::listing(route),
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
        &claim.config,
        claim.price_units,
        &claim.bound,
        &claim.resource_url,
        &listing(&claim.route_id),
        None,
    )
}

/// The payment configuration from `[vars]` plus the facilitator's fee payer.
pub async fn load_config(
    env: &Env,
) -> std::result::Result<(PaymentConfig, Facilitator), PaymentError> {
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
    let evm = crate::edge::evm::load_config(env, number("MAX_TIMEOUT_SECONDS")?, &evm_house)?;
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
    Ok((config, facilitator))
}

/// Counts one payment attempt of the paying wallet in that wallet's own object (every rail):
/// Err(RateLimited) past `max_attempts` a minute, Err(StateUnavailable) when the object is.
pub(crate) async fn wallet_attempt(
    env: &Env,
    payer: &str,
    max_attempts: u32,
    now_ms: u64,
) -> std::result::Result<(), PaymentError> {
    let command = Command::WalletAttempt {
        now_ms,
        max_attempts,
    };
    let wallet: TransitionAnswer = guard_call(env, &guard::wallet_object(payer), &command).await?;
    if wallet.ok {
        return Ok(());
    }
    Err(PaymentError::RateLimited {
        retry_after_s: PaymentError::seconds(wallet.retry_after_ms.unwrap_or(1_000)),
    })
}

pub(crate) async fn guard_call<T: serde::de::DeserializeOwned>(
    env: &Env,
    object: &str,
    command: &Command,
) -> std::result::Result<T, PaymentError> {
    let call = async {
        let stub = env
            .durable_object(guard::BINDING)?
            .id_from_name(object)?
            .get_stub()?;
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(JsValue::from_str(&serde_json::to_string(command)?)));
        let request = Request::new_with_init("https://payment-guard/", &init)?;
        let mut response = stub.fetch_with_request(request).await?;
        response.json::<T>().await
    };
    call.await.map_err(|_| PaymentError::StateUnavailable)
}

pub(crate) async fn transition(env: &Env, claim: &Claim, command: Command) -> bool {
    guard_call::<TransitionAnswer>(env, &claim.bound.record, &command)
        .await
        .map(|a| a.ok)
        .unwrap_or(false)
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
    let config = match load_config(env).await {
        Ok((config, _)) => config,
        Err(error) => return refuse(error, None, asked, None, None),
    };
    match challenge_bound(env, binding, route_id, price_units) {
        Ok(bound) => challenge_with(&config, req, route_id, price_units, &bound),
        Err(error) => refuse(error, None, asked, None, None),
    }
}

/// The payment gate of a paid route. Call after free validation of the body. `binding` is how
/// the router bound the call (its Idempotency-Key, or a server nonce when it sent none);
/// `fingerprint` is the pack's keyed request fingerprint (None on the criteria families).
pub async fn gate(
    req: &Request,
    env: &Env,
    route_id: &str,
    price_units: u64,
    binding: &CallBinding,
    fingerprint: Option<&str>,
) -> Result<Gate> {
    let refused = |error: PaymentError,
                   config: Option<&PaymentConfig>,
                   fresh: Option<&Bound>|
     -> Result<Gate> {
        let asked = Asked {
            req,
            route_id,
            price_units,
            fresh,
        };
        refuse(error, config, asked, None, None).map(Gate::Refused)
    };
    let (config, facilitator) = match load_config(env).await {
        Ok(loaded) => loaded,
        Err(error) => return refused(error, None, None),
    };
    // The binding a fresh challenge carries (a new nonce on a keyless call).
    let fresh = match challenge_bound(env, binding, route_id, price_units) {
        Ok(bound) => bound,
        Err(error) => return refused(error, None, None),
    };
    let signature_header = req.headers().get("PAYMENT-SIGNATURE")?;
    let Some(signature_header) = signature_header else {
        if req.headers().get("X-PAYMENT")?.is_some() {
            return refused(PaymentError::VersionUnsupported, None, None);
        }
        return challenge_with(&config, req, route_id, price_units, &fresh).map(Gate::Challenge);
    };

    // A payment on an `eip155:` network takes the EVM path (`edge::evm`).
    match payment::evm::decode_payment_header(&signature_header) {
        Ok(Some(evm)) => {
            let asked = Asked {
                req,
                route_id,
                price_units,
                fresh: Some(&fresh),
            };
            let called = (binding, fingerprint);
            return crate::edge::evm::gate(env, &config, &facilitator, asked, called, &evm).await;
        }
        Ok(None) => {}
        Err(error) => return refused(error, Some(&config), Some(&fresh)),
    }
    let checked = decode_payment_header(&signature_header).and_then(|payload| {
        let bound = payment_bound(env, binding, route_id, price_units, &payload.accepted)?;
        check_bound_payment(&config, price_units, &bound, &payload).map(|c| (bound, c))
    });
    let (bound, checked) = match checked {
        Ok(checked) => checked,
        Err(error) => return refused(error, Some(&config), Some(&fresh)),
    };
    let tunables = tunables(env);
    let now = now_ms();

    if let Err(error) = wallet_attempt(env, &checked.payer, tunables.attempts_per_wallet, now).await
    {
        return refused(error, Some(&config), Some(&fresh));
    }

    let decision: Decision = match guard_call(
        env,
        &bound.record,
        &Command::Begin {
            route_id: route_id.to_owned(),
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
        Err(error) => return refused(error, Some(&config), Some(&fresh)),
    };
    let answer_with = |error: PaymentError,
                       settled: Option<&SettledFacts>,
                       wait_ms: Option<u64>|
     -> Result<Gate> {
        refuse(
            error,
            Some(&config),
            Asked {
                req,
                route_id,
                price_units,
                fresh: Some(&fresh),
            },
            settled,
            wait_ms,
        )
        .map(Gate::Replay)
    };
    let conflict = |error: PaymentError, settled: Option<&SettledFacts>| -> Result<Gate> {
        answer_with(error, settled, None)
    };
    let mut claim = Claim {
        route_id: route_id.to_owned(),
        bound,
        resource_url: resource_url(req, route_id),
        price_units,
        checked,
        resumed: None,
        config: config.clone(),
        evm: None,
    };
    match decision {
        // A nonce is honoured only until its expiry for a new claim (a payment already in the
        // record keeps every retry rule after it): the fresh claim is released, nothing moved.
        Decision::Fresh if claim.bound.expired(now / 1000) => {
            release(env, claim.clone()).await?;
            return refused(PaymentError::NonceExpired, Some(&config), Some(&fresh));
        }
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
                Reconciled::Released => refused(
                    PaymentError::SettlementReleased,
                    Some(&config),
                    Some(&fresh),
                ),
                Reconciled::Unknown(error) => conflict(error, None),
            };
        }
        Decision::RouteConflict => return conflict(PaymentError::IdempotencyConflict, None),
        Decision::InputConflict => return conflict(PaymentError::RetryInputInvalid, None),
        Decision::ProofConflict => return conflict(PaymentError::ProofConflict, None),
        Decision::InProgress { retry_after_ms } => {
            return answer_with(PaymentError::InProgress, None, Some(retry_after_ms));
        }
        Decision::Delivered(facts) => return conflict(PaymentError::Replayed, Some(&facts)),
        Decision::TooEarly { retry_after_ms } => {
            return conflict(
                PaymentError::RetryTooEarly {
                    retry_after_s: PaymentError::seconds(retry_after_ms),
                },
                None,
            )
        }
        Decision::RateLimited { retry_after_ms } => {
            return conflict(
                PaymentError::RateLimited {
                    retry_after_s: PaymentError::seconds(retry_after_ms),
                },
                None,
            )
        }
    }

    let body = facilitator_request(
        &claim.checked,
        &claim.bound.identifier_id,
        &challenge_of(&claim),
    );
    // /verify changes nothing at the facilitator, so a transport failure (a pooled connection the
    // facilitator had just closed) is retried once before the call is refused unpaid.
    let verdict = facilitator
        .verify(&body)
        .await
        .and_then(|answer| read_verify_response(&answer));
    if let Err(error) = verdict {
        release(env, claim.clone()).await?;
        return refused(error, Some(&claim.config), Some(&fresh));
    }
    Ok(Gate::Proceed(Box::new(claim)))
}

/// Settles a claimed payment after the engine produced a chargeable result. A resumed claim
/// returns its earlier settlement (no second charge). `settling` is recorded before `/settle` is
/// called. Landed → Ok. Refused by the facilitator before signing, or definitely failed on chain →
/// 402 (released, nothing charged). Pending, a failed connection, a timeout, or any other answer →
/// the chain is asked at once; still unknown → 409 PAYMENT_UNCERTAIN with Retry-After, claim kept.
pub async fn settle(env: &Env, claim: &Claim) -> std::result::Result<Settled, Response> {
    let network = claim.config.network.clone();
    let settled = |facts: &SettledFacts, resumed: bool| Settled {
        payer: facts.payer.clone(),
        tx_sig: facts.tx_sig.clone(),
        fee_lamports: facts.fee_lamports,
        house: facts.house,
        price_units: claim.price_units,
        resumed,
        payment_response_header: payment::payment_response_header(
            &network,
            &facts.payer,
            Some(&facts.tx_sig),
        ),
    };
    if let Some(facts) = &claim.resumed {
        return Ok(settled(facts, true));
    }
    if let Some(evm) = claim.evm.as_deref() {
        return crate::edge::evm::settle(env, claim, evm).await;
    }
    let failure = |error: PaymentError| -> Response {
        let mut headers = Vec::new();
        if error.status() == 402 {
            let header = payment::payment_response_header(&network, &claim.checked.payer, None);
            headers.push(("PAYMENT-RESPONSE", header));
        }
        if let Some(seconds) = error.retry_after_s() {
            headers.push(("Retry-After", seconds.to_string()));
        }
        json_response(error.status(), &refusal_body(&error, false), &headers)
            .unwrap_or_else(|_| ResponseBuilder::new().with_status(error.status()).empty())
    };
    let facilitator = match Facilitator::from_env(env) {
        Ok(facilitator) => facilitator,
        Err(error) => {
            let _ = release(env, claim.clone()).await;
            return Err(failure(error));
        }
    };
    let tunables = tunables(env);
    // Nothing moves before this is written; if it cannot be written, nothing is submitted.
    let marked = guard_call::<TransitionAnswer>(
        env,
        &claim.bound.record,
        &Command::Settling {
            claim_key: claim.claim_key().to_owned(),
            now_ms: now_ms(),
            lease_ms: tunables.lease_ms,
        },
    )
    .await;
    if !matches!(marked, Ok(TransitionAnswer { ok: true, .. })) {
        let _ = release(env, claim.clone()).await;
        return Err(failure(PaymentError::StateUnavailable));
    }
    let body = facilitator_request(
        &claim.checked,
        &claim.bound.identifier_id,
        &challenge_of(claim),
    );
    let verdict = match facilitator
        .settle_within(&body, tunables.settle_timeout_ms)
        .await
    {
        Ok(answer) => reconcile::settle_verdict(&answer),
        // Our credentials were refused: nothing was submitted; released, 503, nothing charged.
        Err(Some(error)) => {
            let _ = release(env, claim.clone()).await;
            return Err(failure(error));
        }
        Err(None) => SettleVerdict::Unknown,
    };
    let landed = match verdict {
        SettleVerdict::Landed { tx_sig } => {
            let facts = SettledFacts {
                tx_sig,
                payer: claim.checked.payer.clone(),
                fee_lamports: claim.checked.fee_lamports,
                house: claim.checked.house,
                settled_ms: now_ms(),
            };
            // The money moved: record it; a guard failure here must not hide the settlement.
            let command = Command::Settled {
                claim_key: claim.claim_key().to_owned(),
                facts: facts.clone(),
            };
            if !transition(env, claim, command).await {
                worker::console_error!("payment guard: settled state not recorded");
            }
            facts
        }
        SettleVerdict::NotSent => {
            let _ = release(env, claim.clone()).await;
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

/// Records delivery: from now on the same payment is answered 409 with its PAYMENT-RESPONSE.
pub async fn delivered(env: &Env, claim: &Claim) -> Result<()> {
    let command = Command::Delivered {
        claim_key: claim.claim_key().to_owned(),
    };
    if transition(env, claim, command).await {
        Ok(())
    } else {
        Err(worker::Error::RustError(
            "payment guard refused delivery".into(),
        ))
    }
}

/// Nothing was delivered: frees an unsettled claim (the key takes a new proof), or, if it was
/// settled, keeps the settlement and lets the same payment resume at once.
pub async fn release(env: &Env, claim: Claim) -> Result<()> {
    let command = Command::Release {
        claim_key: claim.claim_key().to_owned(),
    };
    let _ = transition(env, &claim, command).await;
    Ok(())
}
