//! The imperative shell: the Worker's fetch entry point and the request pipeline
//! route → Content-Type → capped body → free validation → (free tier | payment) → engine → sign →
//! respond. The only module that touches the Workers runtime (Request/Response, D1, Durable Objects,
//! secrets, fetch). Nothing from a request body is ever logged, stored or echoed here.

pub mod allowance;
pub mod body;
pub mod config;
pub mod describe;
pub mod error;
pub mod families;
pub mod guard;
pub mod ledger;
pub mod metrics;
pub mod payment;
pub mod respond;
pub mod routes;

use crate::edge::error::EdgeError;
use crate::edge::families::Refused;
use crate::edge::routes::{Family, Handler, PaidOp, Route, Verb};
use crate::engine::allowance::{Decision, Limits};
use crate::engine::base58::is_solana_address;
use crate::engine::ClosedError;
use serde_json::{json, Value};
use worker::{event, Context, Date, Env, Method, Request, Response, Result};

/// The caller's wallet was missing or is not a Solana address (free tier only).
#[derive(Debug, Clone, Copy)]
struct CallerInvalid;

impl ClosedError for CallerInvalid {
    fn code(&self) -> &'static str {
        "caller_invalid"
    }
    fn status(&self) -> u16 {
        400
    }
    fn message(&self) -> &'static str {
        "caller must be a Solana address (base58 of 32 bytes) for the free tier"
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

fn now_ms() -> u64 {
    Date::now().as_millis()
}

fn family_of(handler: Handler) -> &'static str {
    match handler {
        Handler::Document(f) | Handler::Free(f) => f.id(),
        Handler::Paid(op) => op.family().id(),
        Handler::Index | Handler::OpenApi | Handler::Metrics => "service",
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
    let Some(route) = verb.and_then(|v| routes::find(v, &path)) else {
        metrics::request("service", "unrouted", "404".into());
        return respond::not_covered();
    };
    let payment_header = req.headers().has("payment-signature").unwrap_or(false);
    let (response, outcome) = match handle(route, req, &env, &ctx).await {
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

async fn handle(
    route: &Route,
    mut req: Request,
    env: &Env,
    ctx: &Context,
) -> std::result::Result<Response, Refused> {
    let internal = |_: worker::Error| -> Refused { Box::new(EdgeError::Internal) };
    match route.handler {
        Handler::Index => {
            let signer = config::signer(env)?;
            respond::json(200, &describe::index(&signer, &|op| price_units(env, op)))
                .map_err(internal)
        }
        Handler::OpenApi => respond::json(200, &describe::openapi()).map_err(internal),
        Handler::Metrics => {
            let headers = worker::Headers::new();
            let _ = headers.set("content-type", "text/plain; version=0.0.4; charset=utf-8");
            let _ = headers.set("cache-control", "no-store");
            Ok(Response::ok(metrics::render())
                .map_err(internal)?
                .with_headers(headers))
        }
        Handler::Document(family) => {
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
            }
            respond::json(200, &doc).map_err(internal)
        }
        Handler::Free(family) => {
            let body = intake(route, &mut req).await?;
            let parsed = families::parse(route.handler, &body)?;
            drop(body);
            // The wallet comes from the body's `caller` where the family's input has one, else from
            // the `X-Caller` header (the budget-pack contract's input schema admits no caller member).
            let header_caller = req.headers().get("x-caller").ok().flatten();
            let caller = families::caller(&parsed)
                .map(str::to_owned)
                .or(header_caller)
                .filter(|c| is_solana_address(c))
                .ok_or(CallerInvalid)?;
            let now = now_ms();
            spend_allowance(env, family, &caller, now).await?;
            let signer = config::signer(env)?;
            let started = now_ms();
            let report = families::precheck(&parsed, now)?;
            metrics::engine_latency(now_ms().saturating_sub(started));
            count_free_use(env, ctx, family, now);
            respond::signed(200, report, &signer).map_err(internal)
        }
        Handler::Paid(_) => {
            let body = intake(route, &mut req).await?;
            let _parsed = families::parse(route.handler, &body)?;
            Err(Box::new(EdgeError::NotCovered))
        }
    }
}

/// Content-Type check and capped body read for a POST route.
async fn intake(route: &Route, req: &mut Request) -> std::result::Result<Vec<u8>, Refused> {
    if !body::is_json_content_type(req) {
        return Err(Box::new(EdgeError::UnsupportedMediaType));
    }
    Ok(body::read_capped(req, families::body_cap(route.handler)).await?)
}

/// Asks the (family, wallet) Allowance object for one free call.
async fn spend_allowance(
    env: &Env,
    family: Family,
    caller: &str,
    now: u64,
) -> std::result::Result<(), Refused> {
    let limits = Limits {
        per_day: config::var_u64(env, "FREE_PER_DAY", 100) as u32,
        min_interval_ms: config::var_u64(env, "FREE_MIN_INTERVAL_MS", 5_000),
    };
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
        Decision::Allowed { .. } => Ok(()),
        Decision::Exhausted { .. } => {
            metrics::free_tier_exhausted(family.id());
            Err(Box::new(FreeTierSpent { wait_ms: 0 }))
        }
        Decision::TooSoon { wait_ms } => {
            metrics::free_tier_exhausted(family.id());
            Err(Box::new(FreeTierSpent {
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
