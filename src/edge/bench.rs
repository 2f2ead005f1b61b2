//! Benchmark-only route `POST /bench/tokenizer?repeat=N`: tokenizes the text body N times with
//! [`crate::engine::tokenizer::count`] and answers the count, so bench/workerd.mjs can time the
//! tokenizer inside workerd without the free tier's JSON parsing, Durable Object and D1 round trips.
//!
//! Invariants: served only when the `BENCH_ROUTES` var is exactly "1" (absent from wrangler.toml,
//! so production never serves it; otherwise the request falls through to the router and gets the
//! same `404 NOT COVERED` as any unknown path). It is not in the route table, so neither the index
//! nor the OpenAPI document lists it. It touches no Durable Object, D1 or ledger, logs nothing,
//! retains nothing and never echoes the body; `repeat` is capped at [`MAX_REPEAT`], the body at
//! [`BODY_CAP`] bytes. Refusals are closed-form JSON like every other route's (static message,
//! numbers only).

use crate::edge::body::{read_capped, Unread};
use crate::edge::error::EdgeError;
use crate::edge::{config, respond};
use crate::engine::ClosedError;
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

/// The route's own refusals (body-reading failures are the shell's [`EdgeError`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchRefusal {
    RepeatInvalid,
    BodyNotUtf8,
    /// Two passes over the same text disagreed: the tokenizer is not deterministic.
    CountsDiffer,
}

impl ClosedError for BenchRefusal {
    fn code(&self) -> &'static str {
        match self {
            BenchRefusal::RepeatInvalid => "repeat_invalid",
            BenchRefusal::BodyNotUtf8 => "body_not_utf8",
            BenchRefusal::CountsDiffer => "counts_differ",
        }
    }

    fn status(&self) -> u16 {
        match self {
            BenchRefusal::RepeatInvalid | BenchRefusal::BodyNotUtf8 => 400,
            BenchRefusal::CountsDiffer => 500,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            BenchRefusal::RepeatInvalid => "repeat must be an integer from 0 to 64",
            BenchRefusal::BodyNotUtf8 => "body must be UTF-8 text",
            BenchRefusal::CountsDiffer => "counts differ between passes",
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            BenchRefusal::RepeatInvalid => vec![("max_repeat", u64::from(MAX_REPEAT))],
            _ => Vec::new(),
        }
    }
}

/// Answers `{"tokens": count(body), "repeat": N, "bytes": body length}` after N tokenizations.
pub async fn tokenizer(mut req: Request) -> Result<Response> {
    let Some(repeat) = repeat_of(&req) else {
        return respond::refusal(&BenchRefusal::RepeatInvalid, false);
    };
    let body = match read_capped(&mut req, BODY_CAP).await {
        Ok(body) => body,
        Err(Unread::TooLarge { .. }) => {
            let cap = EdgeError::BodyTooLarge {
                cap: BODY_CAP as u64,
            };
            return respond::refusal(&cap, false);
        }
        Err(Unread::Failed(err)) => return respond::refusal(&err, false),
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return respond::refusal(&BenchRefusal::BodyNotUtf8, false);
    };
    let mut tokens = None;
    for _ in 0..repeat {
        // black_box keeps every pass: the count is pure and would otherwise be computed once.
        let n = crate::engine::tokenizer::count(black_box(text));
        if tokens.is_some_and(|t| t != n) {
            return respond::refusal(&BenchRefusal::CountsDiffer, false);
        }
        tokens = Some(black_box(n));
    }
    Response::from_json(&json!({"tokens": tokens, "repeat": repeat, "bytes": body.len()}))
}
