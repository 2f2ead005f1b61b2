//! The imperative shell: the Worker's fetch entry point and the request pipeline
//! route → Content-Type → capped body → free validation → (free tier | payment) → engine → sign →
//! respond. The only module that touches the Workers runtime (Request/Response, D1, Durable Objects,
//! secrets, fetch). Nothing from a request body is ever logged, stored or echoed here.

pub mod allowance;
pub mod bench;
pub mod binding;
pub mod body;
pub mod config;
pub mod describe;
pub mod error;
pub mod evm;
pub mod facilitator;
pub mod facilitator_auth;
pub mod families;
pub mod guard;
pub mod ledger;
pub mod metrics;
pub mod mpp;
pub mod openapi;
pub mod payment;
pub mod reconcile;
pub mod respond;
pub mod routes;
pub mod schemas;
pub mod warm;

use crate::edge::error::EdgeError;
use crate::edge::families::Refused;
use crate::edge::routes::{Family, Handler, PaidOp, Route, Verb};
use crate::engine::allowance::Decision;
use crate::engine::payment::binding::CallBinding;
use crate::engine::ClosedError;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use worker::{event, Context, Date, Env, Method, Request, Response, Result};

/// The caller's wallet was missing or is not a Solana or EVM address (free tier only).
#[derive(Debug, Clone, Copy)]
pub struct CallerInvalid;

impl ClosedError for CallerInvalid {
    fn code(&self) -> &'static str {
        "caller_invalid"
    }
    fn status(&self) -> u16 {
        400
    }
    fn message(&self) -> &'static str {
        "caller must be a Solana address (base58 of 32 bytes) or an EVM address (0x and 40 hex digits) for the free tier"
    }
}

/// A free check named no caller wallet (neither `caller` in the body nor `X-Caller`).
#[derive(Debug, Clone, Copy)]
pub struct CallerMissing;

impl ClosedError for CallerMissing {
    fn code(&self) -> &'static str {
        "caller_missing"
    }
    fn status(&self) -> u16 {
        400
    }
    fn message(&self) -> &'static str {
        "the free tier needs a caller wallet: `caller` in the body or the X-Caller header"
    }
}

/// A paid call with a malformed `Idempotency-Key` (16–128 of `[A-Za-z0-9_-]`), or the pack
/// without one.
#[derive(Debug, Clone, Copy)]
struct IdempotencyKeyInvalid;

impl ClosedError for IdempotencyKeyInvalid {
    fn code(&self) -> &'static str {
        "idempotency_key_invalid"
    }
    fn status(&self) -> u16 {
        400
    }
    fn message(&self) -> &'static str {
        "an Idempotency-Key header must be 16-128 characters [A-Za-z0-9_-]; the pack route requires one"
    }
}

/// The free allowance is spent or the call came too early.
#[derive(Debug, Clone, Copy)]
struct FreeTierSpent {
    wait_ms: u64,
}

impl ClosedError for FreeTierSpent {
    fn code(&self) -> &'static str {
        if self.wait_ms > 0 {
            "free_tier_too_early"
        } else {
            "free_tier_exhausted"
        }
    }
    fn status(&self) -> u16 {
        402
    }
    fn message(&self) -> &'static str {
        "free allowance spent or call too early; use the paid route"
    }
    fn figures(&self) -> Vec<(&'static str, u64)> {
        if self.wait_ms > 0 {
            vec![("retry_after_ms", self.wait_ms)]
        } else {
            Vec::new()
        }
    }
}

/// A runtime failure as the closed `internal` refusal (the runtime's text is dropped: it may quote
/// request data).
pub(crate) fn internal(err: worker::Error) -> Refused {
    Box::new(EdgeError::from(err))
}

/// The request's `Idempotency-Key` when it is well formed (16–128 of `[A-Za-z0-9_-]`).
fn sent_idempotency_key(req: &Request) -> Option<String> {
    req.headers()
        .get("idempotency-key")
        .ok()
        .flatten()
        .filter(|k| crate::engine::payment::is_valid_idempotency_key(k))
}

fn now_ms() -> u64 {
    Date::now().as_millis()
}

fn family_of(handler: Handler) -> &'static str {
    match handler {
        Handler::Document(f) | Handler::Free(f) => f.id(),
        Handler::Paid(op) => op.family().id(),
        Handler::Index
        | Handler::LlmsTxt
        | Handler::OpenApi
        | Handler::WellKnownX402
        | Handler::Metrics => "service",
    }
}

/// The price of a paid op: `[vars]` override, else the published price.
pub fn price_units(env: &Env, op: PaidOp) -> u64 {
    config::var_u64(env, op.price_var(), op.default_price_units())
}

#[event(fetch)]
pub async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    let verb = match req.method() {
        Method::Get => Some(Verb::Get),
        Method::Post => Some(Verb::Post),
        _ => None,
    };
    let path = req.path();
    if verb == Some(Verb::Post) && bench::enabled(&env) {
        match path.as_str() {
            bench::PATH => return bench::tokenizer(req).await,
            bench::TOKEN_EFFICIENCY_PATH => return bench::token_efficiency(req, &env).await,
            _ => {}
        }
    }
    let Some(route) = verb.and_then(|v| routes::find(v, &path)) else {
        metrics::request("service", "unrouted", "404".into());
        return respond::not_covered();
    };
    let payment_header = req.headers().has("payment-signature").unwrap_or(false);
    let (response, outcome) = match apart(handle(route, req, &env, &ctx)).await {
        Ok(resp) => {
            let outcome = match resp.status_code() {
                200..=299 => "ok".to_owned(),
                s => s.to_string(),
            };
            (resp, outcome)
        }
        Err(refused) => {
            let untouched = payment_header && matches!(route.handler, Handler::Paid(_));
            (
                respond::refusal(&*refused, untouched)?,
                refused.code().to_owned(),
            )
        }
    };
    let outcome = if response.status_code() >= 500 {
        "5xx".to_owned()
    } else {
        outcome
    };
    metrics::request(family_of(route.handler), route.path, outcome);
    Ok(response)
}

/// `future` behind a vtable: its poll function stays a wasm function of its own instead of being
/// inlined into its caller's. V8 compiles a wasm function on its first call, so a fresh isolate's
/// first request compiles only the pipeline it runs (issue 31: with the free and paid pipelines
/// inlined, `handle`'s poll was one 226 KB function, 19% of the code, and a first `GET /` cost 3.7x
/// a hello-world worker's while an unrouted 404, which never entered it, cost 0.9x).
fn apart<'a, T>(future: impl Future<Output = T> + 'a) -> Pin<Box<dyn Future<Output = T> + 'a>> {
    Box::pin(future)
}

/// Runs `f` in a function of its own (one per call site): the synchronous routes' code stays out
/// of `handle`'s poll function, so a first request compiles only its own route (see [`apart`]).
#[inline(never)]
fn not_inlined<T>(f: impl FnOnce() -> T) -> T {
    f()
}

async fn handle(
    route: &Route,
    req: Request,
    env: &Env,
    ctx: &Context,
) -> std::result::Result<Response, Refused> {
    match route.handler {
        Handler::Index => not_inlined(|| {
            let signer = config::signer(env)?;
            let index = describe::index(
                &signer,
                &|op| price_units(env, op),
                config::free_limits(env),
            );
            respond::json(200, &index).map_err(internal)
        }),
        Handler::LlmsTxt => not_inlined(|| {
            let signer = config::signer(env)?;
            let index = describe::index(
                &signer,
                &|op| price_units(env, op),
                config::free_limits(env),
            );
            let headers = worker::Headers::new();
            let _ = headers.set("content-type", "text/markdown; charset=utf-8");
            Ok(Response::ok(describe::llms_txt(&index))
                .map_err(internal)?
                .with_headers(headers))
        }),
        Handler::OpenApi => not_inlined(|| {
            respond::json(
                200,
                &openapi::openapi(&|op| price_units(env, op), config::free_limits(env)),
            )
            .map_err(internal)
        }),
        Handler::WellKnownX402 => not_inlined(|| {
            let origin = req
                .url()
                .map(|u| u.origin().ascii_serialization())
                .map_err(internal)?;
            respond::json(200, &describe::well_known_x402(&origin)).map_err(internal)
        }),
        Handler::Metrics => not_inlined(|| {
            let headers = worker::Headers::new();
            let _ = headers.set("content-type", "text/plain; version=0.0.4; charset=utf-8");
            let _ = headers.set("cache-control", "no-store");
            Ok(Response::ok(metrics::render())
                .map_err(internal)?
                .with_headers(headers))
        }),
        Handler::Document(family) => not_inlined(|| {
            let signer = config::signer(env)?;
            let mut doc = families::document(family).ok_or(EdgeError::NotCovered)?;
            if let Some(obj) = doc.as_object_mut() {
                obj.insert(
                    "signing".into(),
                    json!({"alg": "Ed25519", "public_key": signer.public_key_b64(), "key_id": signer.key_id()}),
                );
                // The D1 ledger table's columns, in order: the edge's payment columns, then the
                // family's closed columns (an e2e test holds this equal to PRAGMA table_info).
                let columns: Vec<&str> = ledger::PAYMENT_COLUMNS
                    .iter()
                    .chain(families::ledger_columns(family))
                    .copied()
                    .collect();
                obj.insert("ledger_table".into(), Value::from(ledger::table(family)));
                obj.insert("ledger_columns".into(), json!(columns));
                // Payment states, retry rules and payment refusals (ARCHITECTURE §4).
                obj.insert(
                    "payment".into(),
                    crate::engine::payment::idempotency::served_rules(family == Family::BudgetPack),
                );
            }
            respond::json(200, &doc).map_err(internal)
        }),
        Handler::Free(family) => apart(free_check(route, req, env, ctx, family)).await,
        Handler::Paid(op) => apart(paid_call(route, op, req, env)).await,
    }
}

/// A paid route from its capped body to its answer: free validation, the call's binding, then the
/// rail's pipeline. A function of its own (see [`apart`]): inlined, it made `handle`'s poll a 50 KB
/// function that every first request, `GET /` included, compiled.
async fn paid_call(
    route: &Route,
    op: PaidOp,
    mut req: Request,
    env: &Env,
) -> std::result::Result<Response, Refused> {
    let body = apart(intake(route, &mut req)).await?;
    let parsed = families::parse(route.handler, &body)?;
    let binding = call_binding(op, &req)?;
    // The pack's contract asks for INVALID_RETRY_INPUT on a changed body: a keyed HMAC of
    // (release, route, body) goes into the key's record. The criteria families keep nothing.
    let fingerprint = match op {
        PaidOp::BudgetPack => Some(
            payment::pack_fingerprint(env, route.path, &body).ok_or(EdgeError::Misconfigured)?,
        ),
        _ => None,
    };
    drop(body);
    if route.path == crate::engine::payment::mpp::PATH {
        // The contract's second rail: same validation, engine and delivery; MPP payment.
        let CallBinding::IdempotencyKey { key, .. } = &binding else {
            return Err(Box::new(IdempotencyKeyInvalid));
        };
        return apart(mpp::paid(
            route,
            op,
            &req,
            env,
            &parsed,
            key,
            fingerprint.as_deref(),
        ))
        .await;
    }
    apart(paid(
        route,
        op,
        &req,
        env,
        &parsed,
        &binding,
        fingerprint.as_deref(),
    ))
    .await
}

/// How a paid call is bound to its payment, decided here only (free, before any payment): the
/// pack requires its Idempotency-Key (the contract's own code when it is missing or malformed)
/// and a payment-identifier equal to it; a criteria-family call is bound by its key when it sends
/// one (a malformed key is refused, never ignored) and by a server nonce in the challenge when it
/// sends none (ARCHITECTURE §4).
fn call_binding(op: PaidOp, req: &Request) -> std::result::Result<CallBinding, Refused> {
    let raw = req.headers().get("idempotency-key").ok().flatten();
    if op == PaidOp::BudgetPack {
        crate::engine::budget_pack::check_idempotency_key(raw.as_deref())?;
        let key = sent_idempotency_key(req).ok_or(IdempotencyKeyInvalid)?;
        return Ok(CallBinding::pack(key));
    }
    match raw {
        None => Ok(CallBinding::criteria(None)),
        Some(key) if crate::engine::payment::is_valid_idempotency_key(&key) => {
            Ok(CallBinding::criteria(Some(key)))
        }
        Some(_) => Err(Box::new(IdempotencyKeyInvalid)),
    }
}

/// A free check (`Handler::Free`): capped body, free validation, the engine's precheck, then the
/// daily allowance; the report is signed only when the allowance admits the call.
async fn free_check(
    route: &Route,
    mut req: Request,
    env: &Env,
    ctx: &Context,
    family: Family,
) -> std::result::Result<Response, Refused> {
    let body = apart(intake(route, &mut req)).await?;
    let mut parsed = families::parse(route.handler, &body)?;
    drop(body);
    let header_caller = req
        .headers()
        .get("x-caller")
        .ok()
        .flatten()
        .filter(|h| !h.is_empty());
    let caller = families::free_caller(&mut parsed, family, header_caller)?;
    // Every refusal a free check can give is decided before the allowance is touched: the
    // engine is pure and deterministic, so the report is computed first, and dropped unseen
    // when the allowance then refuses the call.
    let signer = config::signer(env)?;
    let now = now_ms();
    let report = families::precheck(&parsed, now)?;
    metrics::engine_latency(now_ms().saturating_sub(now));
    if let Some(spent) = apart(spend_allowance(env, family, &caller, now)).await? {
        drop(report);
        return apart(free_tier_refusal(&req, env, family, &spent)).await;
    }
    count_free_use(env, ctx, family, now);
    sign_for(family, 200, report, &signer).map_err(internal)
}

/// The paid pipeline after free validation: payment gate (local checks, guard claim, facilitator
/// verify) → engine → settle only when the result is chargeable → ledger row → delivered → 200 with
/// `PAYMENT-RESPONSE`. Anything not delivered releases the claim; nothing is settled for it.
async fn paid(
    route: &Route,
    op: PaidOp,
    req: &Request,
    env: &Env,
    parsed: &families::Parsed,
    binding: &CallBinding,
    fingerprint: Option<&str>,
) -> std::result::Result<Response, Refused> {
    let family = op.family();
    let signer = config::signer(env)?;
    let price = price_units(env, op);
    let claim = match payment::gate(req, env, route.path, price, binding, fingerprint)
        .await
        .map_err(internal)?
    {
        payment::Gate::Challenge(r) | payment::Gate::Refused(r) | payment::Gate::Replay(r) => {
            return Ok(r)
        }
        payment::Gate::Proceed(claim) => claim,
    };
    let now = now_ms();
    let outcome = families::run(parsed, now);
    metrics::engine_latency(now_ms().saturating_sub(now));
    let delivery = match outcome {
        Ok(delivery) if delivery.chargeable => delivery,
        Ok(unpaid) => {
            // Could-not-measure: delivered, signed, and not charged.
            let _ = payment::release(env, *claim).await;
            return sign_for(family, unpaid.status, unpaid.report, &signer).map_err(internal);
        }
        Err(refused) => {
            let _ = payment::release(env, *claim).await;
            return Err(refused);
        }
    };
    let settled = match payment::settle(env, &claim).await {
        Ok(settled) => settled,
        Err(response) => {
            let outcome = if response.status_code() == 409 {
                "uncertain"
            } else {
                "failed"
            };
            metrics::payment(family.id(), outcome);
            return Ok(response);
        }
    };
    metrics::payment(
        family.id(),
        if settled.resumed {
            "resumed"
        } else {
            "settled"
        },
    );
    let facts = ledger::PaymentFacts {
        payer: settled.payer.clone(),
        ts_ms: now,
        price_usdc_units: settled.price_units,
        tx_sig: settled.tx_sig.clone(),
        fee_lamports: settled.fee_lamports,
        house: settled.house,
    };
    if ledger::record(env, family, &facts, &delivery.ledger)
        .await
        .is_err()
    {
        // The payer has paid: the result is still delivered; the gap shows in the metrics.
        metrics::payment(family.id(), "ledger_failed");
    }
    count_unmarked_delivery(family, payment::delivered(env, &claim).await);
    let mut response =
        sign_for(family, delivery.status, delivery.report, &signer).map_err(internal)?;
    let _ = response
        .headers_mut()
        .set("payment-response", &settled.payment_response_header);
    Ok(response)
}

/// The payer has the result either way; a guard that could not mark it delivered leaves the claim
/// settled-undelivered (a retry resumes it), and the gap shows in the metrics.
pub(crate) fn count_unmarked_delivery(family: Family, marked: Result<()>) {
    if marked.is_err() {
        metrics::payment(family.id(), "delivered_unmarked");
    }
}

/// Content-Type check and capped body read for a POST route.
async fn intake(route: &Route, req: &mut Request) -> std::result::Result<Vec<u8>, Refused> {
    if !body::is_json_content_type(req) {
        return Err(Box::new(EdgeError::UnsupportedMediaType));
    }
    // Compressed bodies are refused (the pack contract's 415 "unsupported media type or compression").
    let encoding = req.headers().get("content-encoding").ok().flatten();
    if encoding.is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity") && !e.trim().is_empty())
    {
        return Err(Box::new(EdgeError::ContentEncodingUnsupported));
    }
    match body::read_capped(req, families::body_cap(route.handler)).await {
        Ok(bytes) => Ok(bytes),
        // Over the cap: the family's own published refusal (its code, message and figures).
        Err(body::Unread::TooLarge { seen }) => Err(families::over_cap(route.handler, seen)),
        Err(body::Unread::Failed(e)) => Err(Box::new(e)),
    }
}

/// Signs a family's report: in the body, or detached into `Report-Signature` where the family's
/// published output schema is closed (context-budget-pack), so the body stays byte-exact to it.
pub(crate) fn sign_for(
    family: Family,
    status: u16,
    report: serde_json::Map<String, Value>,
    signer: &crate::engine::sign::ReportSigner,
) -> Result<Response> {
    if family == Family::BudgetPack {
        respond::signed_detached(status, report, signer)
    } else {
        respond::signed(status, report, signer)
    }
}

/// The paid op a family's free check upgrades to.
fn paid_op_of(family: Family) -> PaidOp {
    match family {
        Family::TokenEfficiency => PaidOp::TokenEfficiencyBudget,
        Family::ContextComposition => PaidOp::CompositionAudit,
        Family::BudgetPack => PaidOp::BudgetPack,
        Family::TokenOpt => PaidOp::TokenOptLevers,
    }
}

/// 402 for a spent free allowance, carrying the paid route's `PAYMENT-REQUIRED` challenge. The
/// challenge's memo binds the request's Idempotency-Key when it sent a valid one; otherwise a fresh
/// key is drawn and returned in the body, to be sent with the paid call.
async fn free_tier_refusal(
    req: &Request,
    env: &Env,
    family: Family,
    spent: &FreeTierSpent,
) -> std::result::Result<Response, Refused> {
    let op = paid_op_of(family);
    let paid_path = routes::ROUTES
        .iter()
        .find(|r| r.handler == Handler::Paid(op))
        .map_or("", |r| r.path);
    let (key, drawn) = match sent_idempotency_key(req) {
        Some(k) => (k, false),
        None => (fresh_idempotency_key()?, true),
    };
    let binding = if op == PaidOp::BudgetPack {
        CallBinding::pack(key.clone())
    } else {
        CallBinding::criteria(Some(key.clone()))
    };
    let challenge = payment::challenge(req, env, paid_path, price_units(env, op), &binding)
        .await
        .map_err(internal)?;
    let mut body = respond::refusal_body(spent, false);
    body["paid_route"] = Value::from(paid_path);
    if drawn {
        body["idempotency_key"] = Value::from(key);
    }
    let mut response = respond::json(402, &body).map_err(internal)?;
    if let Ok(Some(required)) = challenge.headers().get("payment-required") {
        let _ = response.headers_mut().set("payment-required", &required);
    }
    Ok(response)
}

/// 32 random characters of `[0-9a-f]` from the runtime's CSPRNG.
fn fresh_idempotency_key() -> std::result::Result<String, Refused> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| Box::new(EdgeError::Internal) as Refused)?;
    Ok(crate::engine::sign::hex(&bytes))
}

/// Asks the (family, wallet) Allowance object for one free call: `None` when it is free,
/// `Some(why)` when the allowance refuses it.
async fn spend_allowance(
    env: &Env,
    family: Family,
    caller: &str,
    now: u64,
) -> std::result::Result<Option<FreeTierSpent>, Refused> {
    let limits = config::free_limits(env);
    let unavailable = |_: worker::Error| -> Refused { Box::new(EdgeError::AllowanceUnavailable) };
    let namespace = env.durable_object("ALLOWANCE").map_err(unavailable)?;
    let stub = namespace
        .id_from_name(&format!("{}:{caller}", family.id()))
        .and_then(|id| id.get_stub())
        .map_err(unavailable)?;
    let query = json!({"now_ms": now, "limits": limits});
    let mut init = worker::RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(query.to_string().into()));
    let request = Request::new_with_init("https://allowance/", &init).map_err(unavailable)?;
    let mut answer = stub
        .fetch_with_request(request)
        .await
        .map_err(unavailable)?;
    let decision: Decision = answer.json().await.map_err(unavailable)?;
    match decision {
        Decision::Allowed { .. } => Ok(None),
        Decision::Exhausted { .. } => {
            metrics::free_tier_exhausted(family.id());
            Ok(Some(FreeTierSpent { wait_ms: 0 }))
        }
        Decision::TooSoon { wait_ms } => {
            metrics::free_tier_exhausted(family.id());
            Ok(Some(FreeTierSpent {
                wait_ms: wait_ms.max(1),
            }))
        }
    }
}

/// Adds one to the (family, UTC day) free-use aggregate after the response is sent.
fn count_free_use(env: &Env, ctx: &Context, family: Family, now: u64) {
    let Ok(db) = env.d1("DB") else { return };
    let day = crate::engine::time::utc_day(now);
    ctx.wait_until(async move {
        let statement = db.prepare(
            "INSERT INTO free_use (family, day, count) VALUES (?1, ?2, 1) \
             ON CONFLICT (family, day) DO UPDATE SET count = count + 1",
        );
        if let Ok(bound) = statement.bind(&[family.id().into(), day.into()]) {
            let _ = bound.run().await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_the_guard_did_not_mark_is_counted() {
        let line = "cm_payments_total{family=\"token-opt\",result=\"delivered_unmarked\"}";
        count_unmarked_delivery(Family::TokenOpt, Ok(()));
        assert!(!metrics::render().contains(line));
        count_unmarked_delivery(
            Family::TokenOpt,
            Err(worker::Error::RustError("guard refused".into())),
        );
        assert!(metrics::render().contains(&format!("{line} 1")));
    }
}
