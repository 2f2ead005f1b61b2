//! A request's path through the edge (ARCHITECTURE §2): `intake` (Content-Type, capped body, free
//! validation, the call's binding) → `free` (the free check and its allowance) or `paid` (payment,
//! engine, settle, ledger, delivered) → sign → respond. The service documents are `service`.
//! Every refusal travels as [`Refused`] by `?`.

pub mod free;
pub mod intake;
pub mod paid;
pub mod service;

pub(crate) use crate::edge::deliver::{now_ms, sign_for};

use crate::edge::config;
use crate::edge::error::Refused;
use crate::edge::family::PaidOp;
use crate::edge::routes::{Handler, Route};
use std::future::Future;
use std::pin::Pin;
use worker::{Context, Env, Request, Response};

/// `future` behind a vtable: its poll function stays a wasm function of its own instead of being
/// inlined into its caller's. V8 compiles a wasm function on its first call, so a fresh isolate's
/// first request compiles only the pipeline it runs (issue 31: with the free and paid pipelines
/// inlined, `handle`'s poll was one 226 KB function, 19% of the code, and a first `GET /` cost 3.7x
/// a hello-world worker's while an unrouted 404, which never entered it, cost 0.9x).
pub(crate) fn apart<'a, T>(
    future: impl Future<Output = T> + 'a,
) -> Pin<Box<dyn Future<Output = T> + 'a>> {
    Box::pin(future)
}

/// Runs `f` in a function of its own (one per call site): the synchronous routes' code stays out
/// of `handle`'s poll function, so a first request compiles only its own route (see [`apart`]).
#[inline(never)]
fn not_inlined<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// Runs the route's pipeline.
pub async fn handle(
    route: &'static Route,
    req: Request,
    env: &Env,
    ctx: &Context,
) -> Result<Response, Refused> {
    match route.handler {
        Handler::Index => not_inlined(|| service::index(env)),
        Handler::LlmsTxt => not_inlined(|| service::llms_txt(env)),
        Handler::OpenApi => not_inlined(|| service::openapi(env)),
        Handler::WellKnownX402 => not_inlined(|| service::well_known_x402(&req)),
        Handler::Metrics => not_inlined(service::metrics),
        Handler::Document(family) => not_inlined(|| service::document(env, family)),
        Handler::Free(family) => apart(free::check(req, env, ctx, family)).await,
        Handler::Paid(op, rail) => apart(paid::call(route, op, rail, req, env)).await,
    }
}

/// The price of a paid op: `[vars]` override, else the published price.
pub fn price_units(env: &Env, op: &PaidOp) -> u64 {
    config::var_u64(env, op.price_var, op.default_price_units)
}
