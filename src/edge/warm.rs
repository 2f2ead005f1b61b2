//! Start-up warm-up (issue 31, first request near the floor). V8 compiles a wasm function on its
//! first call, and a fresh isolate's first `GET /` called about 290 functions (150 KB of code) for
//! the first time: with `--no-wasm-lazy-compilation` that request cost what a hello-world worker's
//! does. So the module's start function runs, once, while the isolate starts: the pure part of
//! `GET /` and `GET /metrics`; the runtime glue every request crosses (a `Request` made from a
//! JavaScript one, its method and path, a response turned back into a JavaScript one); the request
//! counter's map code on a throwaway map; and enough allocations that V8 optimises the allocator
//! now rather than in the background of the first request. Nothing here touches a request, the
//! environment or the metrics counters, and nothing it computes is kept.

use crate::edge::describe;
use crate::edge::family::PaidOp;
use crate::edge::metrics;
use crate::edge::routes::{self, Verb};
use crate::engine::allowance::Limits;
use crate::engine::sign::ReportSigner;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::hint::black_box;
use worker::{event, FromRequest, Headers, IntoResponse, Request, Response};

/// A throwaway seed in the `SIGNING_KEY` format (base64 of 32 bytes): the real secret is not
/// readable before a request, and only the code path matters here.
const WARM_SEED_B64: &str = "d2FybS11cCBvbmx5OiBub3QgYSBzaWduaW5nIGtleSE=";

/// A URL no route holds: the warm-up's request is never answered, only converted.
const WARM_URL: &str = "http://warm-up.invalid/unrouted";

/// Allocations (with their frees) the start function makes so V8's tiering budget for the
/// allocator runs out during start-up: measured with `--trace-wasm-compilation-times`, the first
/// `GET /` otherwise set off the allocator's optimising compile (about 12 ms of CPU on a second
/// thread) in the middle of the request.
const WARM_ALLOCATIONS: usize = 6_000;

/// Runs once when the module is instantiated, before the first request.
#[event(start)]
fn warm_up() {
    black_box(routes::find(Verb::Get, black_box("/")));
    black_box(routes::find(Verb::Get, black_box("/metrics")));
    let seed = STANDARD
        .decode(black_box(WARM_SEED_B64).trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
        .unwrap_or([7; 32]);
    let signer = ReportSigner::from_seed(&seed);
    let index = describe::index(
        &signer,
        &|op: &PaidOp| op.default_price_units,
        Limits::default(),
    );
    black_box(serde_json::to_vec(&index).ok());
    black_box(metrics::render());
    metrics::warm_request_counter();
    warm_runtime_glue();
    warm_allocator();
}

/// Converts a JavaScript request into the worker's `Request` as the fetch glue does, reads what
/// routing reads, and turns a response back into a JavaScript one. That response has no body and
/// no `unwrap` of the conversion can fail on it: workerd refuses a body built at start-up
/// ("Disallowed operation called within global scope"), which would panic the conversion, while
/// `new Response(null, init)` is allowed. Compiling the conversion does not depend on the branch
/// taken: V8 compiles the whole function on its first call.
fn warm_runtime_glue() {
    if let Ok(raw) = worker::web_sys::Request::new_with_str(black_box(WARM_URL)) {
        if let Ok(req) = <Request as FromRequest>::from_raw(raw) {
            black_box(req.method());
            black_box(routes::find(Verb::Get, &req.path()));
            black_box(req.headers().has("payment-signature").ok());
        }
    }
    let headers = Headers::new();
    let _ = headers.set("content-type", "text/plain; charset=utf-8");
    let bodiless = Response::empty().map(|r| r.with_status(204).with_headers(headers));
    if let Ok(response) = bodiless {
        black_box(response.into_raw().ok());
    }
}

/// Allocates and frees buffers of varied sizes [`WARM_ALLOCATIONS`] times.
fn warm_allocator() {
    let mut kept: Vec<Vec<u8>> = Vec::with_capacity(64);
    for i in 0..WARM_ALLOCATIONS {
        let buffer = Vec::<u8>::with_capacity(black_box(8 + (i * 37) % 2048));
        if kept.len() == kept.capacity() {
            kept.clear();
        }
        kept.push(black_box(buffer));
    }
}
