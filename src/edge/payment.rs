//! x402 v2 on a paid route, the I/O half: reads the configuration from `[vars]`, asks the
//! facilitator for its fee payer (`/supported`, cached), answers the challenge, runs the engine's
//! local checks, claims the payment in the guard Durable Object, verifies and settles with the
//! facilitator, and records delivery.
//!
//! Order (DESIGN §4): free validation (the router, before calling `gate`) → decode header
//! (size-capped) → local checks → guard claim → facilitator `/verify` → [engine runs] → `settle`
//! (retry `settlement_pending` once) → [ledger row] → `delivered`. Any refusal before `settle`
//! consumes nothing and says so; the router calls `release` whenever nothing is delivered.
//!
//! Env vars: NETWORK, USDC_MINT, PAY_TO, FACILITATOR_URL, MAX_TIMEOUT_SECONDS,
//! CU_PRICE_CAP_MICROLAMPORTS, HOUSE_WALLETS (comma-separated, may be empty). Durable Object
//! binding: PAYMENT_GUARD (class PaymentGuard).

use crate::edge::guard::{self, ClaimAnswer, Command, TransitionAnswer};
use crate::engine::payment::{
    self, check_payment, decode_payment_header, facilitator_request, fee_payer_from_supported,
    guard::SettledFacts, is_valid_idempotency_key, read_settle_response, read_verify_response,
    CheckedPayment, PaymentConfig, PaymentError, SettleOutcome,
};
use crate::engine::ClosedError;
use serde_json::{json, Value};
use std::cell::RefCell;
use worker::{
    wasm_bindgen::JsValue, Date, Env, Fetch, Headers, Method, Request, RequestInit, Response,
    ResponseBuilder, Result,
};

/// How long the facilitator's fee payer is cached.
const FEE_PAYER_TTL_MS: u64 = 10 * 60 * 1000;
/// Largest facilitator answer read.
const MAX_FACILITATOR_ANSWER_BYTES: usize = 64 * 1024;

thread_local! {
    static FEE_PAYER: RefCell<Option<(String, String, u64)>> = const { RefCell::new(None) };
}

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
    pub idempotency_key: String,
    pub price_units: u64,
    pub checked: CheckedPayment,
    /// Set when this payment was settled by an earlier attempt that never delivered.
    pub resumed: Option<SettledFacts>,
    config: PaymentConfig,
}

impl Claim {
    /// The guard key (hex SHA-256 of the transaction message).
    pub fn claim_key(&self) -> &str {
        &self.checked.claim_key
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

fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// Closed JSON body of a payment refusal. `consumed` is false for every refusal before settlement.
pub fn refusal_body(error: &PaymentError, consumed: bool) -> Value {
    // The one refusal shape of the service: {code, message, <figures>, payment}.
    let mut body = crate::edge::respond::refusal_body(error, !consumed);
    if consumed {
        body["payment"] = Value::from("settled");
    }
    body
}

fn json_response(status: u16, body: &Value, headers: &[(&str, String)]) -> Result<Response> {
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

/// The route's resource URL: origin + path, never the query.
fn resource_url(req: &Request) -> String {
    match req.url() {
        Ok(url) => format!("{}{}", url.origin().ascii_serialization(), url.path()),
        Err(_) => String::new(),
    }
}

async fn post_json(url: &str, body: &Value) -> std::result::Result<Vec<u8>, PaymentError> {
    let headers = Headers::new();
    headers
        .set("content-type", "application/json")
        .map_err(|_| PaymentError::FacilitatorUnavailable)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(JsValue::from_str(&body.to_string())));
    let request =
        Request::new_with_init(url, &init).map_err(|_| PaymentError::FacilitatorUnavailable)?;
    read_answer(Fetch::Request(request).send().await).await
}

async fn read_answer(answer: Result<Response>) -> std::result::Result<Vec<u8>, PaymentError> {
    let mut response = answer.map_err(|_| PaymentError::FacilitatorUnavailable)?;
    let bytes = response
        .bytes()
        .await
        .map_err(|_| PaymentError::FacilitatorUnavailable)?;
    if bytes.len() > MAX_FACILITATOR_ANSWER_BYTES {
        return Err(PaymentError::FacilitatorUnavailable);
    }
    Ok(bytes)
}

async fn fee_payer(facilitator: &str, network: &str) -> std::result::Result<String, PaymentError> {
    let now = now_ms();
    let cached = FEE_PAYER.with(|cell| {
        cell.borrow().as_ref().and_then(|(url, payer, at)| {
            (url == facilitator && now.saturating_sub(*at) < FEE_PAYER_TTL_MS)
                .then(|| payer.clone())
        })
    });
    if let Some(payer) = cached {
        return Ok(payer);
    }
    let url = format!("{facilitator}/supported");
    let request =
        Request::new(&url, Method::Get).map_err(|_| PaymentError::FacilitatorUnavailable)?;
    let body = read_answer(Fetch::Request(request).send().await).await?;
    let payer =
        fee_payer_from_supported(&body, network).ok_or(PaymentError::FacilitatorUnavailable)?;
    FEE_PAYER.with(|cell| *cell.borrow_mut() = Some((facilitator.to_owned(), payer.clone(), now)));
    Ok(payer)
}

/// The payment configuration from `[vars]` plus the facilitator's fee payer.
pub async fn load_config(env: &Env) -> std::result::Result<(PaymentConfig, String), PaymentError> {
    let network = var(env, "NETWORK")?;
    let facilitator = var(env, "FACILITATOR_URL")?
        .trim_end_matches('/')
        .to_owned();
    let number = |name: &str| -> std::result::Result<u64, PaymentError> {
        var(env, name)?
            .trim()
            .parse()
            .map_err(|_| PaymentError::ConfigInvalid)
    };
    let house_wallets = var(env, "HOUSE_WALLETS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let fee_payer = fee_payer(&facilitator, &network).await?;
    let config = PaymentConfig {
        network,
        asset: var(env, "USDC_MINT")?,
        pay_to: var(env, "PAY_TO")?,
        max_timeout_seconds: number("MAX_TIMEOUT_SECONDS")?,
        fee_payer,
        cu_price_cap_microlamports: number("CU_PRICE_CAP_MICROLAMPORTS")?,
        house_wallets,
    };
    config.validate()?;
    Ok((config, facilitator))
}

async fn guard_call<T: serde::de::DeserializeOwned>(
    env: &Env,
    claim_key: &str,
    command: &Command,
) -> Result<T> {
    let stub = env
        .durable_object(guard::BINDING)?
        .id_from_name(claim_key)?
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
}

/// A refusal as the client sees it: 402 refusals carry a fresh `PAYMENT-REQUIRED` (with the code
/// in `error`) so the client can pay again correctly; others carry the closed body only.
fn refuse(
    error: PaymentError,
    config: Option<&PaymentConfig>,
    req: &Request,
    route_id: &str,
    price_units: u64,
    idempotency_key: &str,
) -> Result<Response> {
    let mut headers = Vec::new();
    if let (402, Some(config)) = (error.status(), config) {
        let required = payment::payment_required(
            config,
            route_id,
            price_units,
            idempotency_key,
            &resource_url(req),
            Some(error.code()),
        );
        headers.push(("PAYMENT-REQUIRED", payment::encode_header(&required)));
    }
    json_response(error.status(), &refusal_body(&error, false), &headers)
}

fn challenge_with(
    config: &PaymentConfig,
    req: &Request,
    route_id: &str,
    price_units: u64,
    idempotency_key: &str,
) -> Result<Response> {
    let required = payment::payment_required(
        config,
        route_id,
        price_units,
        idempotency_key,
        &resource_url(req),
        None,
    );
    let body = json!({
        "error": {
            "code": "payment_required",
            "message": "This route is paid: pay the PAYMENT-REQUIRED challenge with x402 v2 and retry with the same Idempotency-Key.",
            "figures": { "price_units": price_units },
        },
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
    idempotency_key: &str,
) -> Result<Response> {
    let config = match load_config(env).await {
        Ok((config, _)) => config,
        Err(error) => return json_response(error.status(), &refusal_body(&error, false), &[]),
    };
    if !is_valid_idempotency_key(idempotency_key) {
        let error = PaymentError::IdempotencyKeyInvalid;
        return json_response(error.status(), &refusal_body(&error, false), &[]);
    }
    challenge_with(&config, req, route_id, price_units, idempotency_key)
}

/// The payment gate of a paid route. Call after free validation of the body.
pub async fn gate(
    req: &Request,
    env: &Env,
    route_id: &str,
    price_units: u64,
    idempotency_key: &str,
) -> Result<Gate> {
    let refused = |error: PaymentError, config: Option<&PaymentConfig>| -> Result<Gate> {
        refuse(error, config, req, route_id, price_units, idempotency_key).map(Gate::Refused)
    };
    let (config, facilitator) = match load_config(env).await {
        Ok(loaded) => loaded,
        Err(error) => return refused(error, None),
    };
    if !is_valid_idempotency_key(idempotency_key) {
        return refused(PaymentError::IdempotencyKeyInvalid, None);
    }
    let signature_header = req.headers().get("PAYMENT-SIGNATURE")?;
    let Some(signature_header) = signature_header else {
        if req.headers().get("X-PAYMENT")?.is_some() {
            return refused(PaymentError::VersionUnsupported, None);
        }
        return challenge_with(&config, req, route_id, price_units, idempotency_key)
            .map(Gate::Challenge);
    };

    let checked = match decode_payment_header(&signature_header).and_then(|payload| {
        check_payment(&config, route_id, price_units, idempotency_key, &payload)
    }) {
        Ok(checked) => checked,
        Err(error) => return refused(error, Some(&config)),
    };

    let answer: ClaimAnswer = guard_call(
        env,
        &checked.claim_key,
        &Command::Claim {
            claim_key: checked.claim_key.clone(),
            route_id: route_id.to_owned(),
            idempotency_key: idempotency_key.to_owned(),
            now_ms: now_ms(),
        },
    )
    .await?;
    let replay = |error: PaymentError| -> Result<Gate> {
        json_response(error.status(), &refusal_body(&error, false), &[]).map(Gate::Replay)
    };
    let mut claim = Claim {
        route_id: route_id.to_owned(),
        idempotency_key: idempotency_key.to_owned(),
        price_units,
        checked,
        resumed: None,
        config,
    };
    match answer.decision.as_str() {
        "fresh" => {}
        "resume" => {
            claim.resumed = answer.facts;
            if claim.resumed.is_some() {
                return Ok(Gate::Proceed(Box::new(claim)));
            }
            return replay(PaymentError::InProgress);
        }
        "replay" => return replay(PaymentError::Replayed),
        "bound_elsewhere" => return replay(PaymentError::BoundElsewhere),
        _ => return replay(PaymentError::InProgress),
    }

    let body = facilitator_request(&claim.checked, idempotency_key);
    // /verify changes nothing at the facilitator, so a transport failure (a pooled connection the
    // facilitator had just closed) is retried once before the call is refused unpaid.
    let url = format!("{facilitator}/verify");
    let answer = match post_json(&url, &body).await {
        Err(PaymentError::FacilitatorUnavailable) => post_json(&url, &body).await,
        first => first,
    };
    let verdict = answer.and_then(|answer| read_verify_response(&answer));
    if let Err(error) = verdict {
        release(env, claim.clone()).await?;
        return refused(error, Some(&claim.config));
    }
    Ok(Gate::Proceed(Box::new(claim)))
}

/// Settles a claimed payment after the engine produced a chargeable result. A resumed claim
/// returns its earlier settlement (no second charge). On failure: 402 with `PAYMENT-RESPONSE`
/// (success false) and a closed body; the claim is released unless the outcome is still pending.
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
    let failure = |error: PaymentError| -> Response {
        let header = payment::payment_response_header(&network, &claim.checked.payer, None);
        json_response(
            402,
            &refusal_body(&error, false),
            &[("PAYMENT-RESPONSE", header)],
        )
        .unwrap_or_else(|_| ResponseBuilder::new().with_status(402).empty())
    };
    let facilitator = match var(env, "FACILITATOR_URL") {
        Ok(url) => url.trim_end_matches('/').to_owned(),
        Err(error) => return Err(failure(error)),
    };
    let body = facilitator_request(&claim.checked, &claim.idempotency_key);
    let url = format!("{facilitator}/settle");
    let mut outcome = SettleOutcome::Failed;
    for _attempt in 0..2 {
        outcome = match post_json(&url, &body).await {
            Ok(answer) => read_settle_response(&answer),
            Err(_) => SettleOutcome::Failed,
        };
        if outcome != SettleOutcome::Pending {
            break;
        }
    }
    match outcome {
        SettleOutcome::Settled { tx_sig } => {
            let facts = SettledFacts {
                tx_sig,
                payer: claim.checked.payer.clone(),
                fee_lamports: claim.checked.fee_lamports,
                house: claim.checked.house,
                settled_ms: now_ms(),
            };
            // The money moved: record it; a guard failure here must not hide the settlement.
            let recorded: Result<TransitionAnswer> = guard_call(
                env,
                claim.claim_key(),
                &Command::Settled {
                    facts: facts.clone(),
                },
            )
            .await;
            if !recorded.map(|a| a.ok).unwrap_or(false) {
                worker::console_error!("payment guard: settled state not recorded");
            }
            Ok(settled(&facts, false))
        }
        SettleOutcome::Pending => Err(failure(PaymentError::SettlementPending)),
        SettleOutcome::Failed => {
            let _ = release(env, claim.clone()).await;
            Err(failure(PaymentError::SettlementFailed))
        }
    }
}

/// Records delivery: from now on the same payment is answered 409.
pub async fn delivered(env: &Env, claim: &Claim) -> Result<()> {
    let answer: TransitionAnswer = guard_call(
        env,
        claim.claim_key(),
        &Command::Delivered { now_ms: now_ms() },
    )
    .await?;
    if answer.ok {
        Ok(())
    } else {
        Err(worker::Error::RustError(
            "payment guard refused delivery".into(),
        ))
    }
}

/// Nothing was delivered: frees an unsettled claim (the payment can be used again) or, if it was
/// settled, keeps the settlement and lets the same payment resume at once.
pub async fn release(env: &Env, claim: Claim) -> Result<()> {
    let _: TransitionAnswer = guard_call(env, claim.claim_key(), &Command::Release).await?;
    Ok(())
}
