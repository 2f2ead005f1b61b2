//! Benchmark-only route `POST /bench/tokenizer?repeat=N`: tokenizes the text body N times with
//! [`crate::engine::tokenizer::count`] and answers the count, so bench/workerd.mjs can time the
//! tokenizer inside workerd without the free tier's JSON parsing, Durable Object and D1 round trips.
//!
//! Invariants: served only when the `BENCH_ROUTES` var is exactly "1" (absent from wrangler.toml,
//! so production never serves it; otherwise the request falls through to the router and gets the
//! same `404 NOT COVERED` as any unknown path). It is not in the route table, so neither the index
//! nor the OpenAPI document lists it. It touches no Durable Object, D1 or ledger, logs nothing,
//! retains nothing and never echoes the body; `repeat` is capped at [`MAX_REPEAT`], the body at
//! [`BODY_CAP`] bytes.

use crate::edge::body::{read_capped, Unread};
use crate::edge::config;
use serde_json::json;
use std::hint::black_box;
use worker::{Env, Request, Response, Result};

/// The route's path (POST only).
pub const PATH: &str = "/bench/tokenizer";

/// Most tokenizations one request may ask for.
pub const MAX_REPEAT: u32 = 64;

/// Largest body read (the benchmark corpus is 1 MiB).
pub const BODY_CAP: usize = 4 << 20;

/// Whether this worker serves the benchmark route (`BENCH_ROUTES = "1"`).
pub fn enabled(env: &Env) -> bool {
    config::var(env, "BENCH_ROUTES").as_deref() == Some("1")
}

/// `repeat` from the query: 0..=MAX_REPEAT (0 measures the request overhead alone), default 1.
fn repeat_of(req: &Request) -> Option<u32> {
    let url = req.url().ok()?;
    let Some((_, value)) = url.query_pairs().find(|(k, _)| k == "repeat") else {
        return Some(1);
    };
    value.parse().ok().filter(|n| *n <= MAX_REPEAT)
}

fn bad_request(message: &'static str) -> Result<Response> {
    Response::error(message, 400)
}

/// Answers `{"tokens": count(body), "repeat": N, "bytes": body length}` after N tokenizations.
pub async fn tokenizer(mut req: Request) -> Result<Response> {
    let Some(repeat) = repeat_of(&req) else {
        return bad_request("repeat must be an integer from 0 to 64");
    };
    let body = match read_capped(&mut req, BODY_CAP).await {
        Ok(body) => body,
        Err(Unread::TooLarge { .. }) => return Response::error("body over 4 MiB", 413),
        Err(Unread::Failed(_)) => return bad_request("body unreadable"),
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return bad_request("body must be UTF-8 text");
    };
    let mut tokens = None;
    for _ in 0..repeat {
        // black_box keeps every pass: the count is pure and would otherwise be computed once.
        let n = crate::engine::tokenizer::count(black_box(text));
        if tokens.is_some_and(|t| t != n) {
            return Response::error("counts differ between passes", 500);
        }
        tokens = Some(black_box(n));
    }
    Response::from_json(&json!({"tokens": tokens, "repeat": repeat, "bytes": body.len()}))
}
