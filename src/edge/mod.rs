//! The imperative shell: the Worker's fetch entry point. A request's path is the pipeline
//! (`pipeline`: intake → free check | paid → sign → respond), each family's facts are the family
//! table (`family`), the route table is built from it (`routes`). The only code that touches the
//! Workers runtime (Request/Response, D1, Durable Objects, secrets, fetch). Nothing from a request
//! body is ever logged, stored or echoed here.

pub mod allowance;
#[cfg(feature = "bench-routes")]
pub mod bench;
pub mod body;
pub mod config;
pub mod deliver;
pub mod describe;
pub mod engines;
pub mod error;
pub mod family;
pub mod guard;
pub mod ledger;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod payment;
pub mod pipeline;
pub mod ready;
pub mod respond;
pub mod route_docs;
pub mod routes;
pub mod schemas;
#[cfg(feature = "bench-routes")]
pub mod sha512;
pub mod warm;

use crate::edge::error::Refused;
use crate::edge::pipeline::{apart, handle};
use crate::edge::routes::{Handler, Route, Verb};
use worker::{event, Context, Env, Method, Request, Response, Result};

pub use crate::edge::pipeline::price_units;

/// The fetch entry. Its body is compiled into the runtime glue's poll function, which V8 compiles
/// on the first request, so it stays small: routing and the synchronous answers live in
/// [`answer_now`], the bookkeeping in [`finish`], and only a body route awaits its pipeline.
#[event(fetch)]
pub async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    #[cfg(feature = "bench-routes")]
    if req.method() == Method::Post && bench::enabled(&env) {
        match req.path().as_str() {
            bench::PATH => return bench::tokenizer(req).await,
            bench::TOKEN_EFFICIENCY_PATH => return bench::token_efficiency(req, &env).await,
            _ => {}
        }
    }
    match answer_now(&req, &env) {
        Answer::Now(response) => response,
        Answer::Pipeline(route) => {
            let payment_header = req.headers().has("payment-signature").unwrap_or(false);
            // MCP runs the routes' pipeline per tool call (edge::mcp), above it, never inside it.
            let result = if route.handler == Handler::Mcp {
                apart(mcp::serve(req, &env, &ctx)).await
            } else {
                apart(handle(route, req, None, &env, &ctx)).await
            };
            finish(route, result, payment_header)
        }
    }
}

/// What [`answer_now`] decided: the response, or the route whose pipeline must be awaited.
enum Answer {
    Now(Result<Response>),
    Pipeline(&'static Route),
}

/// Routes the request and answers it at once when nothing needs awaiting: an unrouted request (the
/// static 404) or a service document (`pipeline::answer_now`).
#[inline(never)]
fn answer_now(req: &Request, env: &Env) -> Answer {
    let verb = match req.method() {
        Method::Get => Some(Verb::Get),
        Method::Post => Some(Verb::Post),
        _ => None,
    };
    let path = req.path();
    let Some(route) = verb.and_then(|v| routes::find(v, &path)) else {
        if path == mcp::PATH {
            // Streamable HTTP's other methods: no server-sent stream, no session to delete.
            metrics::request("service", mcp::PATH, "405".into());
            return Answer::Now(respond::not_allowed("POST"));
        }
        metrics::request("service", "unrouted", "404".into());
        return Answer::Now(respond::not_covered());
    };
    match pipeline::answer_now(route, req, env) {
        Some(result) => Answer::Now(finish(route, result, false)),
        None => Answer::Pipeline(route),
    }
}

/// Turns a route's result into the response (a refusal becomes its closed body) and counts it.
/// `payment_header`: the request carried `Payment-Signature` (a refusal of a paid route then says
/// the payment was not consumed).
#[inline(never)]
pub(crate) fn finish(
    route: &'static Route,
    result: std::result::Result<Response, Refused>,
    payment_header: bool,
) -> Result<Response> {
    let (response, outcome) = match result {
        Ok(resp) => {
            let outcome = match resp.status_code() {
                200..=299 => "ok".to_owned(),
                s => s.to_string(),
            };
            (resp, outcome)
        }
        Err(refused) => {
            let untouched = payment_header && matches!(route.handler, Handler::Paid(..));
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
    let family = route.handler.family().map_or("service", |f| f.id);
    metrics::request(family, route.path, outcome);
    Ok(response)
}
