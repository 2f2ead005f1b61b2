//! The imperative shell: the Worker's fetch entry point, routing, body reading with byte caps,
//! payment, ledger, Durable Objects and metrics. The only module that touches the Workers runtime.

pub mod guard;
pub mod payment;

use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
pub async fn fetch(_req: Request, _env: Env, _ctx: Context) -> Result<Response> {
    Response::error("NOT COVERED", 404)
}
