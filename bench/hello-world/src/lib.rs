//! The smallest workers-rs worker: every request answers `Hello, world` (200, text/plain). It is the
//! floor of issue 31's first-request target: a fresh workerd isolate's first request costs at least
//! what this one costs with the same toolchain (scripts/first-request.sh measures both).

use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
pub async fn fetch(_req: Request, _env: Env, _ctx: Context) -> Result<Response> {
    Response::ok("Hello, world")
}
