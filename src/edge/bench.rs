//! Benchmark-only routes, so bench/*.mjs can time engine work inside workerd without the free
//! tier's Durable Object and D1 round trips or a payment:
//! - `POST /bench/tokenizer?repeat=N`: tokenizes the text body N times with
//!   [`crate::engine::tokenizer::count`] and answers the count;
//! - `POST /bench/token-efficiency?op=OP&repeat=N`: the body is a token-efficiency request; `OP`
//!   `count` parses it once and counts its canonical payload N times (the issue's "one
//!   tokenization"), `analyse` likewise tokenizes it N times with the S-4 prefix analysis the
//!   budget op and an over-budget precheck build ([`crate::engine::tokenizer::Tokenized`]), `parse`
//!   runs N times its parse and free validation alone (no count), and
//!   `precheck` and `budget` run N times the whole path their routes run after the
//!   free tier and payment (parse and free validation, the engine, the signed response body), and
//!   `digest` runs the budget path once and then hashes N times, with SHA-512, the exact bytes its
//!   Ed25519 signature covers (the report's JCS form): with one tokenization, the least any budget
//!   path can cost, since the signature must cover the whole shaped payload; `digest-native` hashes
//!   the same bytes through WebCrypto ([`crate::edge::sha512`]) instead of wasm `sha2`, after
//!   checking once that both give the same digest. `chunk=N` has both digest ops hash the bytes as
//!   messages of at most N bytes (where the per-call cost of crossing into JavaScript shows). `write`
//!   likewise runs the budget path once and then writes those bytes N times (the JCS writer
//!   alone: the signed body's share of the budget path). `engine` runs N times the budget path
//!   without its signed body (parse, free validation, S-1..S-4), and `sign` computes the
//!   precheck's report once and signs it N times as the routes sign (a signature's fixed cost).
//!   It answers the figures of the last pass.
//!
//! Compiled in only with the `bench-routes` cargo feature (scripts/bench.sh builds with it; the
//! production build leaves them out; ARCHITECTURE §10).
//!
//! Invariants: served only when the `BENCH_ROUTES` var is exactly "1" (absent from wrangler.toml,
//! so even a bench build does not serve them by default; otherwise the request falls through to the router and gets the
//! same `404 NOT COVERED` as any unknown path). They are not in the route table, so neither the
//! index nor the OpenAPI document lists them. They touch no Durable Object, D1 or ledger, log
//! nothing, retain nothing and never echo the body (answers are numbers and the op's name);
//! `repeat` is capped at [`MAX_REPEAT`], the bodies at [`BODY_CAP`] and the token-efficiency cap.
//! Refusals are closed-form JSON like every other route's (static message, numbers only).

use crate::edge::body::{read_capped, Unread};
use crate::edge::error::EdgeError;
use crate::edge::{config, respond};
use crate::engine::sign::{signed_bytes, ReportSigner};
use crate::engine::token_efficiency as te;
use crate::engine::{ClosedError, Delivery};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha512};
use std::hint::black_box;
use worker::{Env, Request, Response, Result};

/// The tokenizer route's path (POST only).
pub const PATH: &str = "/bench/tokenizer";

/// The token-efficiency route's path (POST only).
pub const TOKEN_EFFICIENCY_PATH: &str = "/bench/token-efficiency";

/// Most tokenizations one request may ask for.
pub const MAX_REPEAT: u32 = 64;

/// Largest body read (the benchmark corpus is 1 MiB).
pub const BODY_CAP: usize = 4 << 20;

/// Whether this worker serves the benchmark route (`BENCH_ROUTES = "1"`).
pub fn enabled(env: &Env) -> bool {
    config::var(env, "BENCH_ROUTES").as_deref() == Some("1")
}

/// The value of query parameter `name`, if the URL has it.
fn query(req: &Request, name: &str) -> Option<String> {
    let url = req.url().ok()?;
    let value = url.query_pairs().find(|(k, _)| k == name)?.1;
    Some(value.into_owned())
}

/// `repeat` from the query: 0..=MAX_REPEAT (0 measures the request overhead alone), default 1.
fn repeat_of(req: &Request) -> Option<u32> {
    match query(req, "repeat") {
        None => Some(1),
        Some(value) => value.parse().ok().filter(|n| *n <= MAX_REPEAT),
    }
}

/// `chunk` from the query (the digest ops): a positive byte count, default the whole message.
fn chunk_of(req: &Request) -> Option<usize> {
    match query(req, "chunk") {
        None => Some(usize::MAX),
        Some(value) => value.parse().ok().filter(|n| *n > 0),
    }
}

/// What `/bench/token-efficiency` repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenEfficiencyOp {
    Count,
    Analyse,
    Parse,
    Precheck,
    Budget,
    Engine,
    Sign,
    Digest,
    DigestNative,
    Write,
}

impl TokenEfficiencyOp {
    fn of(req: &Request) -> Option<TokenEfficiencyOp> {
        match query(req, "op")?.as_str() {
            "count" => Some(TokenEfficiencyOp::Count),
            "analyse" => Some(TokenEfficiencyOp::Analyse),
            "parse" => Some(TokenEfficiencyOp::Parse),
            "precheck" => Some(TokenEfficiencyOp::Precheck),
            "budget" => Some(TokenEfficiencyOp::Budget),
            "engine" => Some(TokenEfficiencyOp::Engine),
            "sign" => Some(TokenEfficiencyOp::Sign),
            "digest" => Some(TokenEfficiencyOp::Digest),
            "digest-native" => Some(TokenEfficiencyOp::DigestNative),
            "write" => Some(TokenEfficiencyOp::Write),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            TokenEfficiencyOp::Count => "count",
            TokenEfficiencyOp::Analyse => "analyse",
            TokenEfficiencyOp::Parse => "parse",
            TokenEfficiencyOp::Precheck => "precheck",
            TokenEfficiencyOp::Budget => "budget",
            TokenEfficiencyOp::Engine => "engine",
            TokenEfficiencyOp::Sign => "sign",
            TokenEfficiencyOp::Digest => "digest",
            TokenEfficiencyOp::DigestNative => "digest-native",
            TokenEfficiencyOp::Write => "write",
        }
    }
}

/// The route's own refusals (body-reading failures are the shell's [`EdgeError`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchRefusal {
    RepeatInvalid,
    OpInvalid,
    ChunkInvalid,
    BodyNotUtf8,
    /// WebCrypto failed a digest, or its digest is not the wasm one.
    DigestFailed,
    /// Two passes over the same body disagreed: the path is not deterministic.
    CountsDiffer,
}

impl ClosedError for BenchRefusal {
    fn code(&self) -> &'static str {
        match self {
            BenchRefusal::RepeatInvalid => "repeat_invalid",
            BenchRefusal::OpInvalid => "op_invalid",
            BenchRefusal::ChunkInvalid => "chunk_invalid",
            BenchRefusal::DigestFailed => "digest_failed",
            BenchRefusal::BodyNotUtf8 => "body_not_utf8",
            BenchRefusal::CountsDiffer => "counts_differ",
        }
    }

    fn status(&self) -> u16 {
        match self {
            BenchRefusal::RepeatInvalid
            | BenchRefusal::OpInvalid
            | BenchRefusal::ChunkInvalid
            | BenchRefusal::BodyNotUtf8 => 400,
            BenchRefusal::CountsDiffer | BenchRefusal::DigestFailed => 500,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            BenchRefusal::RepeatInvalid => "repeat must be an integer from 0 to 64",
            BenchRefusal::OpInvalid => {
                "op must be count, analyse, parse, precheck, budget, engine, sign, digest, digest-native or write"
            }
            BenchRefusal::ChunkInvalid => "chunk must be a positive integer",
            BenchRefusal::BodyNotUtf8 => "body must be UTF-8 text",
            BenchRefusal::DigestFailed => "the runtime failed a digest or it differs from sha2's",
            BenchRefusal::CountsDiffer => "figures differ between passes",
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        match self {
            BenchRefusal::RepeatInvalid => vec![("max_repeat", u64::from(MAX_REPEAT))],
            _ => Vec::new(),
        }
    }
}

/// The body, at most `cap` bytes, or the refusal to answer (`over_cap` when it is longer).
async fn body_of(
    req: &mut Request,
    cap: usize,
    over_cap: &dyn ClosedError,
) -> std::result::Result<Vec<u8>, Result<Response>> {
    match read_capped(req, cap).await {
        Ok(body) => Ok(body),
        Err(Unread::TooLarge { .. }) => Err(respond::refusal(over_cap, false)),
        Err(Unread::Failed(err)) => Err(respond::refusal(&err, false)),
    }
}

/// Answers `{"tokens": count(body), "repeat": N, "bytes": body length}` after N tokenizations.
pub async fn tokenizer(mut req: Request) -> Result<Response> {
    let Some(repeat) = repeat_of(&req) else {
        return respond::refusal(&BenchRefusal::RepeatInvalid, false);
    };
    let over_cap = EdgeError::BodyTooLarge {
        cap: BODY_CAP as u64,
    };
    let body = match body_of(&mut req, BODY_CAP, &over_cap).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
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

/// Figures of one pass of `/bench/token-efficiency`: the payload's tokens (all but `parse`), the
/// shaped payload's (budget only) and the length of the signed body the route would answer (precheck, budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pass {
    tokens: Option<u64>,
    shaped_tokens: Option<u64>,
    answer_bytes: Option<usize>,
}

fn figure(report: &serde_json::Map<String, Value>, outer: &str, inner: Option<&str>) -> u64 {
    let value = report.get(outer);
    let value = match inner {
        Some(inner) => value.and_then(|v| v.get(inner)),
        None => value,
    };
    value.and_then(Value::as_u64).unwrap_or(0)
}

/// One pass of `precheck` as its route runs it after the free tier. The signed body's length
/// stands in for the answer: its timestamp and fresh nonce vary, its length does not.
fn precheck_pass(body: &[u8], signer: &ReportSigner) -> std::result::Result<Pass, te::Refusal> {
    let parsed = te::parse(body)?;
    let report = te::precheck(&parsed, worker::Date::now().as_millis())?;
    let tokens = figure(&report, "payload_tokens", None);
    let answer = signer.signed_body(report);
    Ok(Pass {
        tokens: Some(tokens),
        shaped_tokens: None,
        answer_bytes: Some(answer.len()),
    })
}

/// The budget op's delivery for `body`, as its route computes it after the payment is verified.
fn budget_delivery(body: &[u8]) -> std::result::Result<Delivery, te::Refusal> {
    te::run(
        &te::parse_for_budget(body)?,
        worker::Date::now().as_millis(),
    )
}

/// One pass of `engine`: the budget op's delivery and its figures, no answer written. `budget`
/// runs exactly this and then signs, so the two ops differ by the signed body alone.
fn engine_pass(body: &[u8]) -> std::result::Result<(Delivery, Pass), te::Refusal> {
    let delivery = budget_delivery(body)?;
    let pass = Pass {
        tokens: Some(figure(&delivery.report, "submitted", Some("tokens"))),
        shaped_tokens: Some(figure(&delivery.report, "shaped", Some("tokens"))),
        answer_bytes: None,
    };
    Ok((delivery, pass))
}

/// One pass of `budget` as its route runs it after the payment is verified.
fn budget_pass(body: &[u8], signer: &ReportSigner) -> std::result::Result<Pass, te::Refusal> {
    let (delivery, pass) = engine_pass(body)?;
    let answer = signer.signed_body(delivery.report);
    Ok(Pass {
        answer_bytes: Some(answer.len()),
        ..pass
    })
}

/// Answers `{"op", "repeat", "bytes", "tokens", "shaped_tokens", "answer_bytes"}` after N passes
/// of `op` over the token-efficiency request in the body (figures of the last pass, `null` when N
/// is 0 or the op has none). `count` parses once, before its passes, so a pass is one tokenization.
pub async fn token_efficiency(mut req: Request, env: &Env) -> Result<Response> {
    let Some(repeat) = repeat_of(&req) else {
        return respond::refusal(&BenchRefusal::RepeatInvalid, false);
    };
    let Some(op) = TokenEfficiencyOp::of(&req) else {
        return respond::refusal(&BenchRefusal::OpInvalid, false);
    };
    let Some(chunk) = chunk_of(&req) else {
        return respond::refusal(&BenchRefusal::ChunkInvalid, false);
    };
    // Over the cap: token-efficiency's own published refusal, as its routes answer it.
    let body = match body_of(&mut req, te::BODY_CAP, &te::Refusal::BodyOverCap).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let signer = match config::signer(env) {
        Ok(signer) => signer,
        Err(err) => return respond::refusal(&err, false),
    };
    type PassFn<'a> = Box<dyn Fn() -> std::result::Result<Pass, te::Refusal> + 'a>;
    let pass: PassFn = match op {
        TokenEfficiencyOp::Count | TokenEfficiencyOp::Analyse => {
            let parsed = match te::parse(&body) {
                Ok(parsed) => parsed,
                Err(refusal) => return respond::refusal(&refusal, false),
            };
            let analyse = op == TokenEfficiencyOp::Analyse;
            Box::new(move || {
                let text = black_box(parsed.canonical());
                let tokens = if analyse {
                    black_box(crate::engine::tokenizer::Tokenized::new(text)).count()
                } else {
                    crate::engine::tokenizer::count(text)
                };
                Ok(Pass {
                    tokens: Some(tokens as u64),
                    shaped_tokens: None,
                    answer_bytes: None,
                })
            })
        }
        TokenEfficiencyOp::Parse => Box::new(|| {
            black_box(te::parse(black_box(&body))?);
            Ok(Pass {
                tokens: None,
                shaped_tokens: None,
                answer_bytes: None,
            })
        }),
        TokenEfficiencyOp::Precheck => Box::new(|| precheck_pass(black_box(&body), &signer)),
        TokenEfficiencyOp::Budget => Box::new(|| budget_pass(black_box(&body), &signer)),
        // The budget op without its signed body: parse, free validation and the engine, so
        // `budget` less `engine` is what writing and signing the report cost.
        TokenEfficiencyOp::Engine => Box::new(|| Ok(engine_pass(black_box(&body))?.1)),
        // A signature's fixed cost: the precheck's report (about 1.6 KB), computed once,
        // signed N times as the route signs it (RFC 8032: two SHA-512 of it).
        TokenEfficiencyOp::Sign => {
            let report = match te::parse(&body).and_then(|parsed| te::precheck(&parsed, 0)) {
                Ok(report) => report,
                Err(refusal) => return respond::refusal(&refusal, false),
            };
            let tokens = figure(&report, "payload_tokens", None);
            let signer = &signer;
            Box::new(move || {
                let answer = signer.signed_body(black_box(report.clone()));
                Ok(Pass {
                    tokens: Some(tokens),
                    shaped_tokens: None,
                    answer_bytes: Some(answer.len()),
                })
            })
        }
        TokenEfficiencyOp::Digest | TokenEfficiencyOp::DigestNative => {
            return digest_passes(&body, op, repeat, chunk).await;
        }
        TokenEfficiencyOp::Write => {
            let delivery = match budget_delivery(&body) {
                Ok(delivery) => delivery,
                Err(refusal) => return respond::refusal(&refusal, false),
            };
            let tokens = figure(&delivery.report, "submitted", Some("tokens"));
            Box::new(move || {
                let written = black_box(signed_bytes(black_box(&delivery.report))).len();
                Ok(Pass {
                    tokens: Some(tokens),
                    shaped_tokens: None,
                    answer_bytes: Some(written),
                })
            })
        }
    };
    let mut last: Option<Pass> = None;
    for _ in 0..repeat {
        let this = match pass() {
            Ok(this) => black_box(this),
            Err(refusal) => return respond::refusal(&refusal, false),
        };
        if last.is_some_and(|l| l != this) {
            return respond::refusal(&BenchRefusal::CountsDiffer, false);
        }
        last = Some(this);
    }
    Response::from_json(&json!({
        "op": op.name(),
        "repeat": repeat,
        "bytes": body.len(),
        "tokens": last.and_then(|p| p.tokens),
        "shaped_tokens": last.and_then(|p| p.shaped_tokens),
        "answer_bytes": last.and_then(|p| p.answer_bytes),
    }))
}

/// The `digest` and `digest-native` ops: runs the budget path once, then N times hashes with
/// SHA-512 the bytes its signature covers, in wasm (`sha2`) or through WebCrypto, as messages of at
/// most `chunk` bytes (the whole signed bytes by default; smaller chunks find the size below which
/// wasm is the faster). Answers as [`token_efficiency`] does, the answer bytes being the signed bytes'.
async fn digest_passes(
    body: &[u8],
    op: TokenEfficiencyOp,
    repeat: u32,
    chunk: usize,
) -> Result<Response> {
    let delivery = match budget_delivery(body) {
        Ok(delivery) => delivery,
        Err(refusal) => return respond::refusal(&refusal, false),
    };
    let tokens = figure(&delivery.report, "submitted", Some("tokens"));
    let signed = signed_bytes(&delivery.report);
    // Once, before the timed passes (so a repeat=0 request pays it too): WebCrypto's digest of the
    // first message is the wasm one, or the op refuses.
    if op == TokenEfficiencyOp::DigestNative {
        let first = signed.as_bytes().chunks(chunk).next().unwrap_or_default();
        let wasm: [u8; 64] = Sha512::digest(first).into();
        if crate::edge::sha512::native(first).await != Some(wasm) {
            return respond::refusal(&BenchRefusal::DigestFailed, false);
        }
    }
    let mut last = None;
    for _ in 0..repeat {
        let mut folded = [0u8; 64];
        for message in black_box(signed.as_bytes()).chunks(chunk) {
            let digest: [u8; 64] = if op == TokenEfficiencyOp::DigestNative {
                match crate::edge::sha512::native(message).await {
                    Some(digest) => digest,
                    None => return respond::refusal(&BenchRefusal::DigestFailed, false),
                }
            } else {
                Sha512::digest(message).into()
            };
            folded.iter_mut().zip(digest).for_each(|(f, d)| *f ^= d);
        }
        if last.is_some_and(|l| l != folded) {
            return respond::refusal(&BenchRefusal::CountsDiffer, false);
        }
        last = Some(black_box(folded));
    }
    Response::from_json(&json!({
        "op": op.name(),
        "repeat": repeat,
        "bytes": body.len(),
        "tokens": (repeat > 0).then_some(tokens),
        "shaped_tokens": null,
        "answer_bytes": (repeat > 0).then_some(signed.len()),
    }))
}
