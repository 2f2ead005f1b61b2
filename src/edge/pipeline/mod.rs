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
use crate::edge::error::{EdgeError, Refused};
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

/// Answers the routes that await nothing (the service documents and `/metrics`), in a function of
/// its own: a first request for one of them never calls `handle`, so V8 never compiles `handle`'s
/// poll function for it (issue 31; see [`apart`]). `None` for a route that reads a body.
#[inline(never)]
pub fn answer_now(route: &Route, req: &Request, env: &Env) -> Option<Result<Response, Refused>> {
    Some(match route.handler {
        Handler::Index => apart_fn(&|| service::index(env)),
        Handler::LlmsTxt => apart_fn(&|| service::llms_txt(env)),
        Handler::OpenApi => apart_fn(&|| service::openapi(env)),
        Handler::WellKnownX402 => apart_fn(&|| service::well_known_x402(req)),
        Handler::Metrics => apart_fn(&service::metrics),
        Handler::Document(family) => apart_fn(&|| service::document(env, family)),
        Handler::Free(_) | Handler::Paid(..) | Handler::Ready | Handler::Mcp => return None,
    })
}

/// Runs `f` through a vtable neither the compiler nor wasm-opt can see through, so each service
/// route's code stays a function of its own, out of [`answer_now`], and a first request compiles
/// only its own route. `#[inline(never)]` on a helper is not enough: wasm-opt inlines a function
/// with one caller whatever its size (measured: with that helper `answer_now` was one 24 KB
/// function holding every service route).
#[inline(never)]
fn apart_fn<T>(f: &dyn Fn() -> T) -> T {
    std::hint::black_box(f)()
}

/// Runs the route's pipeline. `given`: a body already read (an MCP tool's arguments), else the
/// request's own is streamed.
pub async fn handle(
    route: &'static Route,
    req: Request,
    given: Option<Vec<u8>>,
    env: &Env,
    ctx: &Context,
) -> Result<Response, Refused> {
    match route.handler {
        Handler::Free(family) => apart(free::check(req, given, env, ctx, family)).await,
        Handler::Paid(op, rail) => apart(paid::call(route, op, rail, req, given, env)).await,
        Handler::Ready => apart(crate::edge::ready::check(env)).await,
        _ => answer_now(route, &req, env).unwrap_or_else(|| Err(EdgeError::Internal.into())),
    }
}

/// The price of a paid op: `[vars]` override, else the published price.
pub fn price_units(env: &Env, op: &PaidOp) -> u64 {
    config::var_u64(env, op.price_var, op.default_price_units)
}
