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
pub mod metrics;
pub mod openapi;
pub mod payment;
pub mod pipeline;
pub mod respond;
pub mod route_docs;
pub mod routes;
pub mod schemas;
pub mod warm;

use crate::edge::pipeline::{apart, handle};
use crate::edge::routes::{Handler, Verb};
use worker::{event, Context, Env, Method, Request, Response, Result};

pub use crate::edge::pipeline::price_units;

#[event(fetch)]
pub async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    let verb = match req.method() {
        Method::Get => Some(Verb::Get),
        Method::Post => Some(Verb::Post),
        _ => None,
    };
    let path = req.path();
    #[cfg(feature = "bench-routes")]
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
