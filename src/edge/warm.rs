//! Start-up warm-up (issue 31, first request near the floor). V8 compiles a wasm function on its
//! first call, and a fresh isolate's first `GET /` called about 290 functions (150 KB of code) for
//! the first time: with `--no-wasm-lazy-compilation` that request cost what a hello-world worker's
//! does. So the module's start function runs the pure part of `GET /` and `GET /metrics` once,
//! while the isolate starts, and the first request finds their code compiled. Nothing here touches
//! a request, the environment or the metrics counters, and nothing it computes is kept.

use crate::edge::describe;
use crate::edge::family::PaidOp;
use crate::edge::metrics;
use crate::edge::routes::{self, Verb};
use crate::engine::allowance::Limits;
use crate::engine::sign::ReportSigner;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::hint::black_box;
use worker::event;

/// A throwaway seed in the `SIGNING_KEY` format (base64 of 32 bytes): the real secret is not
/// readable before a request, and only the code path matters here.
const WARM_SEED_B64: &str = "d2FybS11cCBvbmx5OiBub3QgYSBzaWduaW5nIGtleSE=";

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
}
